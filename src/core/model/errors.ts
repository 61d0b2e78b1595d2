import {
  AnthropicError,
  APIConnectionError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  PermissionDeniedError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import { ModelError } from './provider';
import { errorText } from '../error-text';

type Kind = ModelError['kind'];

/** Replaces every occurrence of each secret with a placeholder. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}

function kindOfStatus(status: number): Kind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limit';
  if (status === 529) return 'overloaded';
  if (status >= 500) return 'server';
  return 'bad_request';
}

/** An error event inside an SSE stream has no HTTP status, only its error type. */
function kindOfErrorType(type: string | undefined): Kind {
  switch (type) {
    case 'overloaded_error':
      return 'overloaded';
    case 'rate_limit_error':
      return 'rate_limit';
    case 'authentication_error':
    case 'permission_error':
      return 'auth';
    case 'invalid_request_error':
    case 'not_found_error':
    case 'request_too_large':
      return 'bad_request';
    default:
      return 'server';
  }
}

function kindOf(error: unknown, aborted: boolean): Kind {
  if (aborted || error instanceof APIUserAbortError) return 'aborted';
  if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) return 'auth';
  if (error instanceof RateLimitError) return 'rate_limit';
  if (error instanceof APIConnectionError) return 'network';
  if (error instanceof APIError) {
    if (typeof error.status === 'number') return kindOfStatus(error.status);
    return kindOfErrorType(error.type ?? undefined);
  }
  // The stream helper wraps a failed body read (socket reset mid-stream) in a bare AnthropicError.
  const cause = (error as { cause?: unknown }).cause;
  if (error instanceof AnthropicError && cause instanceof Error && !(cause instanceof AnthropicError)) {
    return cause instanceof SyntaxError ? 'invalid_response' : 'network';
  }
  // Anything else from the SDK (a stream that ended early, unparseable chunks) is a bad response.
  if (error instanceof AnthropicError || error instanceof SyntaxError) return 'invalid_response';
  // A body read failing after the headers arrived (socket reset mid-stream) surfaces as a plain error.
  return 'network';
}

/** Maps whatever the SDK threw to a ModelError whose message never contains a secret. */
export function toModelError(error: unknown, secrets: readonly string[], aborted: boolean): ModelError {
  const scrub = (text: string | undefined) => (text === undefined ? undefined : scrubSecrets(text, secrets));
  if (error instanceof ModelError)
    return new ModelError(scrubSecrets(error.message, secrets), error.kind, error.status, scrub(error.apiMessage));
  const kind = kindOf(error, aborted);
  const status = error instanceof APIError && typeof error.status === 'number' ? error.status : undefined;
  const apiMessage = error instanceof APIError ? (error.apiMessage ?? undefined) : undefined;
  const detail = kind === 'aborted' ? 'request aborted' : errorText(error);
  return new ModelError(scrubSecrets(`Anthropic API ${kind}: ${detail}`, secrets), kind, status, scrub(apiMessage));
}
