import type { RunFailureFacts as RunFailure } from './statuses';

// A run's failure in words: the one place a failure kind becomes text, with the action that helps,
// for every host (timeline, notification, CLI stderr). Pure, so the webview bundles it too.

/** An action that helps after a failure; each host turns it into its own button or hint. */
export type FailureAction = 'set_key' | 'retry' | 'raise_limit' | 'resume' | 'show_log';

export interface FailureWords {
  /** One line: "The API key was refused". */
  readonly title: string;
  /** What the cause said, or what resuming does. */
  readonly detail?: string;
  /** What helps, the first one most. */
  readonly actions: readonly FailureAction[];
}

const LIMIT_TITLES = { turns: 'Turn limit reached', tokens: 'Token limit reached', cost: 'Cost limit reached' } as const;

/** The words and the action for a failure: the one place a failure becomes text. */
export function describeFailure(failure: RunFailure): FailureWords {
  const { message } = failure;
  const http = failure.status !== undefined ? ` (HTTP ${failure.status})` : '';
  switch (failure.kind) {
    case 'auth':
      return { title: 'The API key was refused', detail: `${message}${http}`, actions: ['set_key', 'retry'] };
    case 'network':
      return { title: 'Could not reach the API', detail: message, actions: ['retry'] };
    case 'refused':
      // 413 comes before the API reads the request (over its 32 MB): not a rule this extension broke.
      if (failure.status === 413)
        return {
          title: 'The request was too large for the API (HTTP 413)',
          detail: `${message}; Retry sends it again, Fork from here an earlier step sends less`,
          actions: ['retry', 'show_log'],
        };
      return {
        title: `The request was refused: ${message}`,
        detail: 'resuming sends the same request (a defect of this extension, logged with the rule)',
        actions: ['show_log'],
      };
    case 'rate_limit':
      return { title: 'The API rate limit was reached', detail: message, actions: ['retry'] };
    case 'overloaded':
      return { title: 'The API is overloaded', detail: message, actions: ['retry'] };
    case 'server':
      return { title: `The API failed${http}`, detail: message, actions: ['retry'] };
    case 'invalid_response':
      // A malformed answer, or none at all (an empty reply, again when asked to continue).
      return { title: "The API's answer could not be used", detail: message, actions: ['retry'] };
    case 'limit':
      return failure.limit
        ? { title: LIMIT_TITLES[failure.limit.kind], detail: /\(([^()]*)\)$/.exec(message)?.[1] ?? message, actions: ['raise_limit'] }
        : { title: capitalised(message), actions: ['show_log'] };
    case 'approval':
      return { title: 'An approval was needed and nobody could give it', detail: message, actions: ['resume'] };
    case 'storage':
      return { title: 'The run could not be saved', detail: message, actions: ['retry'] };
    case 'interrupted':
      return { title: 'Interrupted', detail: message, actions: ['resume'] };
    case 'internal':
      return { title: 'Internal error', detail: message, actions: ['show_log'] };
  }
}

/** Title and detail as one line: "The API key was refused — invalid x-api-key (HTTP 401)". */
export function failureLine(failure: RunFailure): string {
  const words = describeFailure(failure);
  return words.detail !== undefined ? `${words.title} — ${words.detail}` : words.title;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The button text of each action, the same in every window. */
export const FAILURE_ACTION_LABELS: Record<FailureAction, string> = {
  set_key: 'Set API Key',
  retry: 'Retry',
  raise_limit: 'Raise to…',
  resume: 'Resume',
  show_log: 'Show Log',
};
