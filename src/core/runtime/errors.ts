import { StoreError } from '../store/contract';
import { errorText } from '../error-text';

/** Thrown by an Approver when nobody can answer now (headless without --yes, window closed): the run pauses. */
export class ApprovalUnavailableError extends Error {
  constructor(message = 'approval needed and nobody is there to give it') {
    super(message);
    this.name = 'ApprovalUnavailableError';
  }
}

/** A store operation failed (disk full, I/O error, lease lost): the run stops writing and pauses. */
export class StorageFailure extends Error {
  constructor(override readonly cause: unknown) {
    super(`storage error: ${errorText(cause)}`);
    this.name = 'StorageFailure';
  }

  get leaseLost(): boolean {
    return this.cause instanceof StoreError && this.cause.code === 'lease_lost';
  }
}

/** A run that cannot be resumed: not found, damaged, newer format, held by another writer. */
export class ResumeError extends Error {
  constructor(
    message: string,
    readonly code: 'not_found' | 'damaged' | 'future_version' | 'lease_held' | 'invalid',
  ) {
    super(message);
    this.name = 'ResumeError';
  }
}

/** Runs a store operation, turning any failure into a StorageFailure. */
export async function guardStore<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof StorageFailure) throw error;
    throw new StorageFailure(error);
  }
}
