// The no-key banner: when a new run would use Anthropic and no API key is set, the view itself
// says so, with the button that sets one (the host runs "Agent: Set API Key"). It goes once a key is set.

export interface KeyBanner {
  readonly element: HTMLElement;
  /** Shows the banner when the key is missing, hides it otherwise. */
  show(missing: boolean): void;
}

export const NO_KEY_WORDS = 'Set your Anthropic API key to start.';

export function keyBanner(setKey: () => void): KeyBanner {
  const element = document.createElement('div');
  element.className = 'key-banner';
  element.setAttribute('role', 'region');
  element.setAttribute('aria-label', 'API key needed');
  element.hidden = true;
  const words = document.createElement('span');
  words.className = 'key-words';
  words.textContent = NO_KEY_WORDS;
  const button = document.createElement('button');
  button.className = 'key-button';
  button.textContent = 'Set API Key';
  button.addEventListener('click', setKey);
  element.append(words, button);
  return {
    element,
    show: (missing) => {
      element.hidden = !missing;
    },
  };
}
