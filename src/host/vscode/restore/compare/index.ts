import type { CommandId } from '../../commands/command-table';
import * as vscode from 'vscode';
import { z } from 'zod';
import { ABSENT, SHA256_HEX } from '../../../../core/patches/schema';
import {
  compareFiles,
  divergence,
  type Divergence,
  type FileComparison,
  type FileSide,
  type ParentLink,
} from '../../../../core/restore/compare';
import type { CheckpointStore, RunSummary } from '../../../../core/store/contract';
import { buildSteps, runHeader } from '../../timeline/view-build';
import { runItem } from '../../run/run-commands';
import type { Services } from '../../window/services';
import { branchText } from './branch-text';
import { counted } from '../../../../words/words';
import { branchName, comparisonTitle, finderOf } from '../../../../words/run-title';

// "Agent: Compare Branches...": two runs (a run and its fork, two forks, any two) side by side.
// Their steps from where they part, as two texts in a diff editor; the files each one wrote, as a
// multi-file diff of the two branches' contents, read from the store's blobs. Both sides of a
// document have the same path (their query tells them apart), so no diff reads them as a rename;
// the tabs are titled by the runs' names (words/run-title).

export const COMPARE_COMMAND = 'agentCheckpoints.compareBranches' satisfies CommandId;
/** Read-only documents of a comparison: a branch's steps, or a file's content on one branch. */
export const BRANCH_SCHEME = 'agent-checkpoints-branch';

const RunId = z.string().min(1).max(200);
/** What the command takes (from the Timeline's fork row, a test, or nothing: then it asks). */
const CompareArg = z.object({ runId: RunId.optional(), otherRunId: RunId.optional() }).optional();

/** The steps of run `runId` from `from` on, compared with run `other`. */
const StepsQuery = z.object({ kind: z.literal('steps'), runId: RunId, other: RunId });
/** One side of a file: its content's blob, or an absent file, or content the store kept by hash only. */
const FileQuery = z.object({
  kind: z.literal('file'),
  /** The run whose side it is (so the two sides' URIs differ even where their path is the same). */
  run: RunId.optional(),
  hash: z.union([z.literal(ABSENT), z.string().regex(SHA256_HEX)]),
  blob: z.string().regex(SHA256_HEX).optional(),
  binary: z.enum(['0', '1']),
});
const BranchQuery = z.discriminatedUnion('kind', [StepsQuery, FileQuery]);

export function parentsOf(runs: readonly RunSummary[]): (runId: string) => ParentLink | undefined {
  const byId = new Map(runs.map((r) => [r.runId, r]));
  return (runId) => byId.get(runId)?.parent;
}

/** Both runs' steps and what parts them, read from the store. */
async function stepsText(store: CheckpointStore, runId: string, other: string): Promise<string> {
  const at = divergence(runId, other, parentsOf(await store.listRuns()));
  const state = await store.readRun(runId, { intactPart: true });
  return branchText(runHeader(state, false), buildSteps(state, new Map()), other, at);
}

function fileText(side: z.infer<typeof FileQuery>, read: (hash: string) => Promise<Uint8Array>): Promise<string> | string {
  if (side.hash === ABSENT) return '';
  if (side.binary === '1') return `(binary content, sha256 ${side.hash})`;
  if (side.blob === undefined) return `(content over the size cap, kept by hash only: sha256 ${side.hash})`;
  return read(side.blob).then((bytes) => new TextDecoder('utf-8').decode(bytes));
}

export class BranchContentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly store: CheckpointStore) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = BranchQuery.safeParse(Object.fromEntries(new URLSearchParams(uri.query)));
    if (!query.success) throw new Error(`Not a branch document: ${uri.toString()}`);
    const q = query.data;
    return q.kind === 'steps' ? stepsText(this.store, q.runId, q.other) : fileText(q, (hash) => this.store.getBlob(hash));
  }
}

export function stepsUri(runId: string, other: string): vscode.Uri {
  const query = new URLSearchParams({ kind: 'steps', runId, other });
  return vscode.Uri.from({ scheme: BRANCH_SCHEME, path: '/steps', query: query.toString() });
}

export function fileSideUri(runId: string, path: string, side: FileSide): vscode.Uri {
  const query = new URLSearchParams({ kind: 'file', run: runId, hash: side.hash, binary: side.binary ? '1' : '0' });
  if (side.blob !== undefined) query.set('blob', side.blob);
  return vscode.Uri.from({ scheme: BRANCH_SCHEME, path: `/${path}`, query: query.toString() });
}

/** The other runs, the first run's relatives first (its parent, its forks, their siblings). */
function othersOf(runs: readonly RunSummary[], first: RunSummary): (vscode.QuickPickItem & { runId: string })[] {
  const relation = (r: RunSummary): string | undefined => {
    if (first.parent?.runId === r.runId) return `parent (forked at step ${first.parent.step})`;
    if (r.parent?.runId === first.runId) return `fork at step ${r.parent.step}`;
    if (r.parent && r.parent.runId === first.parent?.runId) return `sibling fork at step ${r.parent.step}`;
    return undefined;
  };
  const others = runs.filter((r) => r.runId !== first.runId);
  const related = others.filter((r) => relation(r) !== undefined);
  const rest = others.filter((r) => relation(r) === undefined);
  return [...related, ...rest].map((r) => {
    const item = runItem(r, runs);
    const rel = relation(r);
    return rel ? { ...item, description: `${rel} · ${item.description ?? ''}` } : item;
  });
}

async function chooseRuns(
  s: Services,
  runs: readonly RunSummary[],
  arg: z.infer<typeof CompareArg>,
): Promise<[string, string] | undefined> {
  const title = 'Agent: Compare Branches';
  if (runs.length < 2) {
    void s.prompts.message('info', `${title}: there must be two runs to compare (fork a run from one of its steps first).`, {});
    return undefined;
  }
  const first =
    arg?.runId ??
    (
      await s.prompts.quickPick(
        runs.map((run) => runItem(run, runs)),
        { title, placeHolder: 'First branch (left)' },
      )
    )?.runId;
  if (first === undefined) return undefined;
  const firstRun = runs.find((r) => r.runId === first);
  if (!firstRun) throw new Error(`no run ${first} in this workspace`);
  const second =
    arg?.otherRunId ?? (await s.prompts.quickPick(othersOf(runs, firstRun), { title, placeHolder: 'Compare it with (right)' }))?.runId;
  return second === undefined ? undefined : [firstRun.runId, second];
}

/** Opens the comparison of runs `left` and `right`; returns what it found, in words. */
export async function openComparison(s: Services, left: string, right: string, runs: readonly RunSummary[]): Promise<string> {
  if (!runs.some((r) => r.runId === right)) throw new Error(`no run ${right} in this workspace`);
  const at: Divergence = divergence(left, right, parentsOf(runs));
  const [a, b] = await Promise.all([s.store.readRun(left, { intactPart: true }), s.store.readRun(right, { intactPart: true })]);
  const changed: FileComparison[] = compareFiles(a.patches, b.patches, at.step).filter((f) => !f.same);
  const find = finderOf(runs);
  const [leftRun, rightRun] = [find(left) ?? a.run, find(right) ?? b.run];
  const names = comparisonTitle(leftRun, rightRun, find);
  const title = `Steps: ${names}`;
  await vscode.commands.executeCommand('vscode.diff', stepsUri(left, right), stepsUri(right, left), title, { preview: false });
  if (changed.length > 0) {
    const entries = changed.map((f) => {
      const rightUri = fileSideUri(right, f.path, f.right);
      return [rightUri, fileSideUri(left, f.path, f.left), rightUri];
    });
    await vscode.commands.executeCommand('vscode.changes', `Files: ${names}`, entries);
  }
  const where = at.base === undefined ? 'share no step' : `part at step ${at.step}`;
  const files =
    changed.length > 0
      ? `${counted(changed.length, 'file differs', 'files differ')}: ${changed.map((f) => f.path).join(', ')}`
      : 'their files do not differ';
  return `"${branchName(leftRun, find)}" and "${branchName(rightRun, find)}" ${where}; ${files}.`;
}

export async function compareBranches(s: Services, raw?: unknown): Promise<string | undefined> {
  const title = 'Agent: Compare Branches';
  try {
    const arg = CompareArg.parse(raw ?? undefined);
    const runs = await s.store.listRuns();
    const chosen = await chooseRuns(s, runs, arg);
    if (!chosen) return undefined;
    const summary = await openComparison(s, chosen[0], chosen[1], runs);
    s.log.log('info', `${title}: ${summary}`);
    return summary;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    s.log.log('error', `${title}: ${message}`);
    void s.prompts.message('error', `${title}: ${message}`, {});
    return undefined;
  }
}

/** The branch documents the comparison opens (its command is compareBranches, in the command table). */
export function registerBranchContent(s: Services): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(BRANCH_SCHEME, new BranchContentProvider(s.store));
}
