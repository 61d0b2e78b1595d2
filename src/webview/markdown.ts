import MarkdownIt from 'markdown-it';

// The model's text as Markdown, made safe: raw HTML is escaped (html: false), images are not
// rendered (nothing is fetched), and links lose their href: a click asks the host, which
// confirms with the person before opening anything.

const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false }).disable(['image']);

export interface MarkdownActions {
  openLink(url: string): void;
  copy(text: string): void;
}

/** Rendered Markdown in a container element; links and code blocks wired to `actions`. */
export function renderMarkdown(text: string, actions: MarkdownActions): HTMLDivElement {
  const root = document.createElement('div');
  root.className = 'markdown';
  root.innerHTML = md.render(text);
  for (const link of Array.from(root.querySelectorAll('a'))) {
    const url = link.getAttribute('href') ?? '';
    link.removeAttribute('href');
    link.dataset.href = url;
    link.title = url;
    link.tabIndex = 0;
    link.setAttribute('role', 'link');
    const open = (event: Event) => {
      event.preventDefault();
      if (url !== '') actions.openLink(url);
    };
    link.addEventListener('click', open);
    link.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') open(event);
    });
  }
  for (const pre of Array.from(root.querySelectorAll('pre'))) {
    const wrap = document.createElement('div');
    wrap.className = 'code-block';
    pre.replaceWith(wrap);
    const button = document.createElement('button');
    button.className = 'copy codicon codicon-copy';
    button.title = 'Copy code';
    button.setAttribute('aria-label', 'Copy code');
    const code = pre.textContent ?? '';
    button.addEventListener('click', () => actions.copy(code));
    wrap.append(pre, button);
  }
  return root;
}
