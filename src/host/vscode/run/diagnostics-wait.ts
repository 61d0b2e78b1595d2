import { z } from 'zod';

// How long a write waits for the editor's language services (the logic without `vscode`, so that a
// unit test can drive it): until they have been quiet for a spell, or at most a longest wait.

/** `agentCheckpoints.diagnostics.*`: the quiet spell that counts as settled, and the longest wait (ms). */
export const DiagnosticsWait = z.object({
  quietMs: z.number().int().min(0).max(10_000).default(500),
  maxWaitMs: z.number().int().min(0).max(60_000).default(3000),
});
export type DiagnosticsWait = z.infer<typeof DiagnosticsWait>;

/** The settings' values read (undefined: the default); a bad one is an error naming the setting. */
export function diagnosticsWaitOf(raw: { quietMs: unknown; maxWaitMs: unknown }): DiagnosticsWait {
  const parsed = DiagnosticsWait.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Error(`setting agentCheckpoints.diagnostics.${issue?.path.join('.') ?? ''} is invalid: ${issue?.message ?? 'bad value'}`);
}

/** A source of change notices: `listen` is called at each one until the returned handle is disposed. */
export type ChangeNotices = (listen: () => void) => { dispose(): void };

/**
 * Resolves once `notices` has said nothing for `quietMs` (counted from the call, and again from each
 * notice), or `maxWaitMs` after the call, or at once when `signal` aborts. Never rejects.
 */
export function untilQuiet(notices: ChangeNotices, wait: DiagnosticsWait, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(quiet);
      clearTimeout(longest);
      handle.dispose();
      signal.removeEventListener('abort', done);
      resolve();
    };
    let quiet = setTimeout(done, wait.quietMs);
    const longest = setTimeout(done, wait.maxWaitMs);
    const handle = notices(() => {
      clearTimeout(quiet);
      quiet = setTimeout(done, wait.quietMs);
    });
    signal.addEventListener('abort', done, { once: true });
  });
}
