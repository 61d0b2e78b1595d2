import { MAX_DIAGNOSTICS, type CallDiagnostics } from '../ledger/schema';
import type { Diagnostic, Log } from '../ports';
import { errorText } from '../error-text';
import { counted } from '../../words/words';
import type { RuntimeDeps } from './types';

// The editor's problems after a call's writes: what the language services report for the files it
// wrote, once they settled, less what they reported before the write. Named in the call's result
// (the model reads them) and recorded on its ledger entry (the Timeline shows them; a reload too).
// A failure here never fails the write: the call's result just says nothing of problems.

/** Longest message kept of one problem (some compilers write pages). */
const MESSAGE_MAX = 400;

/** Said once a session, with a write's result, by a host without language services (the CLI). */
export const NO_LANGUAGE_SERVICE =
  "No language service runs here (a headless run): the editor's errors and warnings are not checked after writes. Run the project's compiler, linter or tests to check a change.";

/** What makes two reports the same problem: not the line, which an edit above it moves. */
function sameness(d: Diagnostic): string {
  return JSON.stringify([d.path, d.severity, d.message, d.code ?? '']);
}

function byWeight(a: Diagnostic, b: Diagnostic): number {
  if (a.severity !== b.severity) return a.severity === 'error' ? -1 : 1;
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  return a.line - b.line;
}

function kept(d: Diagnostic, unchecked: ReadonlySet<string>): CallDiagnostics['items'][number] {
  const message = d.message.length > MESSAGE_MAX ? `${d.message.slice(0, MESSAGE_MAX)}…` : d.message;
  return {
    path: d.path,
    line: d.line,
    severity: d.severity,
    message,
    ...(d.code !== undefined ? { code: d.code } : {}),
    ...(d.source !== undefined ? { source: d.source } : {}),
    ...(unchecked.has(d.path) ? { unchecked: true as const } : {}),
  };
}

/**
 * The problems of `after` that `before` did not have, compared by file, severity, message and code
 * (a problem moved by lines added above it is not new; one reported twice where it was once, is).
 * Errors first, then by file and line; at most `max`, the rest counted. Those of an `unchecked` file
 * (no service spoke of it before the write) are kept, marked: they may be older than the write.
 */
export function newDiagnostics(
  before: readonly Diagnostic[],
  after: readonly Diagnostic[],
  unchecked: ReadonlySet<string> = new Set(),
  max = MAX_DIAGNOSTICS,
): CallDiagnostics {
  const left = new Map<string, number>();
  for (const d of before) left.set(sameness(d), (left.get(sameness(d)) ?? 0) + 1);
  const fresh: Diagnostic[] = [];
  for (const d of after) {
    const seen = left.get(sameness(d)) ?? 0;
    if (seen > 0) left.set(sameness(d), seen - 1);
    else fresh.push(d);
  }
  fresh.sort(byWeight);
  return { items: fresh.slice(0, max).map((d) => kept(d, unchecked)), more: Math.max(0, fresh.length - max) };
}

/** One problem in a line: `src/a.ts:3: error: Type 'number' is not assignable to type 'string'. (ts 2322)`. */
export function diagnosticLine(d: Diagnostic): string {
  const origin = [d.source, d.code].filter((part) => part !== undefined && part !== '').join(' ');
  return `${d.path}:${d.line}: ${d.severity}: ${d.message}${origin !== '' ? ` (${origin})` : ''}`;
}

/** Which written files no language service looked at, when there are some. */
function notCheckedLine(found: CallDiagnostics, written: number): string | undefined {
  const paths = found.notChecked ?? [];
  if (paths.length === 0) return undefined;
  const files = paths.length === written ? 'the changed files' : paths.join(', ');
  return `No language service looked at ${files} (some check only the files open in an editor), so their errors and warnings are not known: run the project's compiler, linter or tests to check.`;
}

/** The problems as the model reads them, after the call's own result; `written`: how many files the call wrote. */
export function diagnosticsText(found: CallDiagnostics, written = Infinity): string {
  const total = found.items.length + found.more;
  const notChecked = notCheckedLine(found, written);
  if (total === 0 && (found.notChecked?.length ?? 0) === written) return notChecked!;
  if (total === 0)
    return ['The editor reports no new errors or warnings in the changed files.', ...(notChecked ? [notChecked] : [])].join('\n');
  const lines = found.items.map((d) => `  ${diagnosticLine(d)}`);
  if (found.more > 0) lines.push(`  +${found.more} more`);
  const unchecked = [...new Set(found.items.filter((d) => d.unchecked).map((d) => d.path))];
  if (unchecked.length > 0)
    lines.push(
      `Found after the edit in ${unchecked.join(', ')}, which the editor had not checked before it: some may be older than the edit.`,
    );
  if (notChecked) lines.push(notChecked);
  return [`The editor reports ${counted(total, 'new problem')} in the changed files:`, ...lines].join('\n');
}

/** What a call's check found: the words for its result, and what its ledger entry records. */
export interface Checked {
  readonly text: string;
  readonly record?: CallDiagnostics;
}

/** One call's check: the problems of each file before its first write, then the new ones once the services settled. */
export class WriteDiagnostics {
  private readonly before = new Map<string, readonly Diagnostic[]>();
  /** Written files whose problems before the write are unknown (no service spoke of them then). */
  private readonly unchecked = new Set<string>();
  private failed = false;

  constructor(
    private readonly source: RuntimeDeps['diagnostics'],
    private readonly log: Log,
  ) {}

  /** Before a write: what is reported for its file now (once a call per file). A delete is not checked. */
  async beforeWrite(write: { readonly path: string; readonly after: Uint8Array | null }): Promise<void> {
    if (write.after === null || this.before.has(write.path)) return;
    const source = this.source;
    this.before.set(write.path, []);
    if (typeof source !== 'object' || this.failed) return;
    try {
      const { reported, unchecked } = await source.snapshot([write.path]);
      this.before.set(write.path, reported);
      for (const path of unchecked) this.unchecked.add(path);
    } catch (error) {
      this.fail(error);
    }
  }

  /** After the call's writes: the new problems, or that this host has none to tell (once a session); undefined when nothing is said. */
  async afterCall(session: { noLanguageServiceSaid: boolean }, signal: AbortSignal): Promise<Checked | undefined> {
    const paths = [...this.before.keys()];
    const source = this.source;
    if (paths.length === 0 || source === undefined || this.failed) return undefined;
    if (source === 'none') {
      if (session.noLanguageServiceSaid) return undefined;
      session.noLanguageServiceSaid = true;
      return { text: NO_LANGUAGE_SERVICE };
    }
    let after: { reported: readonly Diagnostic[]; unchecked: readonly string[] };
    try {
      after = await source.settled(paths, signal);
    } catch (error) {
      this.fail(error);
      return undefined;
    }
    // A cancel cut the wait short: what is reported now may be half of it, so nothing is said.
    if (signal.aborted) return undefined;
    const written = new Set(paths);
    const found = newDiagnostics(
      [...this.before.values()].flat(),
      after.reported.filter((d) => written.has(d.path)),
      this.unchecked,
    );
    const notChecked = after.unchecked.filter((path) => written.has(path)).slice(0, MAX_DIAGNOSTICS);
    const record = notChecked.length > 0 ? { ...found, notChecked } : found;
    return { text: diagnosticsText(record, written.size), record };
  }

  private fail(error: unknown): void {
    this.failed = true;
    this.log.log('warn', `the editor's problems could not be read: ${errorText(error)}`);
  }
}
