import { ModelError } from '../model/provider';
import type { RunFailure } from '../store/records';
import { StorageFailure } from './errors';
import { errorText } from '../error-text';

// Why a run stopped early, as a kind the run records in its status record; words/failure-words.ts
// turns the kind into the words every host shows.

/** The abort reason a host gives when its window closes or reloads: the run is interrupted, not cancelled. */
export class HostClosing extends Error {
  constructor(message = 'the window closed while the run was going') {
    super(message);
    this.name = 'HostClosing';
  }
}

const MODEL_KINDS: Record<Exclude<ModelError['kind'], 'aborted'>, RunFailure['kind']> = {
  auth: 'auth',
  bad_request: 'refused',
  rate_limit: 'rate_limit',
  overloaded: 'overloaded',
  server: 'server',
  network: 'network',
  invalid_response: 'invalid_response',
};

/** The failure an error stopped a run with (not a cancel: that is no failure). */
export function failureOf(error: unknown): RunFailure {
  if (error instanceof ModelError && error.kind !== 'aborted') {
    return {
      kind: MODEL_KINDS[error.kind],
      message: error.apiMessage ?? error.message,
      ...(error.status !== undefined ? { status: error.status } : {}),
    };
  }
  if (error instanceof StorageFailure) return { kind: 'storage', message: errorText(error.cause) };
  return { kind: 'internal', message: errorText(error) };
}
