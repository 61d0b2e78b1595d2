import { classifyHash } from '../patches/classify';
import { liveExec } from '../patches/exec-bit';
import { ABSENT, bytesEqual, decodeText, encodeText, hashOrAbsent } from '../patches/hash';
import { diffTexts } from '../patches/hunks';
import type { BlobStore } from '../patches/record';
import { reverseHunks } from '../patches/reverse';
import type { Patch } from '../patches/schema';
import type { Workspace } from '../ports';
import type { FileRollbackPlan, PatchRollbackPlan, RollbackStatus } from './types';

/** A file's plan plus the bytes it was made against and the bytes it would write. */
export interface FileWork {
  readonly plan: FileRollbackPlan;
  readonly live: Uint8Array | null;
  readonly result: Uint8Array | null;
}

interface ChainStep {
  readonly content: Uint8Array | null;
  readonly plan: PatchRollbackPlan;
}

async function blobOrNull(blobs: BlobStore, hash: string, blob: string | undefined): Promise<Uint8Array | null | undefined> {
  if (hash === ABSENT) return null;
  return blob === undefined ? undefined : blobs.getBlob(blob);
}

async function hunkCount(blobs: BlobStore, patch: Patch): Promise<number> {
  const sides = await patchTexts(blobs, patch);
  return sides === undefined ? 1 : diffTexts(patch.path, sides.before, sides.after).hunks.length;
}

async function patchTexts(blobs: BlobStore, patch: Patch): Promise<{ before: string; after: string } | undefined> {
  if (patch.binary || patch.contentOmitted) return undefined;
  const before = await blobOrNull(blobs, patch.beforeHash, patch.beforeBlob);
  const after = await blobOrNull(blobs, patch.afterHash, patch.afterBlob);
  if (before === undefined || after === undefined) return undefined;
  const beforeText = before === null ? { text: '' } : decodeText(before);
  const afterText = after === null ? { text: '' } : decodeText(after);
  return beforeText && afterText ? { before: beforeText.text, after: afterText.text } : undefined;
}

function allHunks(count: number, status: RollbackStatus): RollbackStatus[] {
  return Array.from({ length: count }, () => status);
}

/** Undoes one patch against `content` (newest-first walk of a file's chain). */
async function undoPatch(
  blobs: BlobStore,
  patch: Patch,
  content: Uint8Array | null,
  hunk: number | undefined,
  force: boolean,
): Promise<ChainStep> {
  const state = classifyHash(patch, hashOrAbsent(content));
  const count = await hunkCount(blobs, patch);
  const plan = (status: RollbackStatus, hunks: RollbackStatus[], reason?: string): PatchRollbackPlan => ({
    patchId: patch.patchId,
    status,
    hunks,
    ...(reason ? { reason } : {}),
  });
  if (state === 'not_applied')
    return { content, plan: plan('already', allHunks(count, 'already'), 'live content is already the before content') };
  if (state === 'applied' && (hunk === undefined || patch.afterHash === ABSENT)) {
    const before = await blobOrNull(blobs, patch.beforeHash, patch.beforeBlob);
    if (before === undefined)
      return { content, plan: plan('conflict', allHunks(count, 'conflict'), 'before content was not kept (over the size cap)') };
    return { content: before, plan: plan('revert', allHunks(count, 'revert')) };
  }
  const reversed = await reverseAgainst(blobs, patch, content, hunk);
  if (reversed.status !== 'conflict' || !force || hunk !== undefined)
    return { content: reversed.content, plan: plan(reversed.status, reversed.hunks, reversed.reason) };
  const before = await blobOrNull(blobs, patch.beforeHash, patch.beforeBlob);
  if (before === undefined) return { content, plan: plan('conflict', reversed.hunks, 'before content was not kept (over the size cap)') };
  return {
    content: before,
    plan: plan(
      'revert',
      reversed.hunks.map((h) => (h === 'conflict' ? 'revert' : h)),
      'forced over conflicting user edits',
    ),
  };
}

interface Reversed {
  readonly status: RollbackStatus;
  readonly content: Uint8Array | null;
  readonly hunks: RollbackStatus[];
  readonly reason?: string;
}

async function reverseAgainst(blobs: BlobStore, patch: Patch, content: Uint8Array | null, hunk: number | undefined): Promise<Reversed> {
  const sides = await patchTexts(blobs, patch);
  const current = content === null ? null : decodeText(content);
  if (sides === undefined || current === null || patch.afterHash === ABSENT) {
    const reason =
      content === null
        ? 'the file no longer exists'
        : patch.afterHash === ABSENT
          ? 'the deleted file was created again'
          : 'binary or uncapped content cannot be merged hunk by hunk';
    return { status: 'conflict', content, hunks: ['conflict'], reason };
  }
  const { hunks } = diffTexts(patch.path, sides.before, sides.after);
  if (hunk !== undefined && hunk >= hunks.length)
    return { status: 'conflict', content, hunks: allHunks(hunks.length, 'skip'), reason: `no hunk ${hunk}` };
  const result = reverseHunks(current.text, hunks, hunk === undefined ? undefined : new Set([hunk]));
  const statuses = [...result.outcomes] as RollbackStatus[];
  if (result.outcomes.includes('conflict'))
    return { status: 'conflict', content, hunks: statuses, reason: 'the user changed lines of a hunk' };
  return { status: 'revert', content: encodeText(result.text, current.bom), hunks: statuses };
}

export interface FileTarget {
  readonly path: string;
  /** Oldest first; those to undo. */
  readonly patches: readonly Patch[];
  /** Only this hunk of the single patch. */
  readonly hunk?: number;
}

/**
 * Undoes a mode-only patch (a command's chmod: the same bytes on both sides) against the bit: the
 * bit the command left is set back; one the person changed since is left as it is.
 */
function undoModeOnly(patch: Patch, content: Uint8Array | null, exec: boolean | undefined): ChainStep {
  const plan = (status: RollbackStatus, reason?: string): PatchRollbackPlan => ({
    patchId: patch.patchId,
    status,
    hunks: [],
    ...(reason ? { reason } : {}),
  });
  if (content === null) return { content, plan: plan('conflict', 'the file no longer exists') };
  if (exec === undefined || exec !== patch.execAfter)
    return { content, plan: plan('already', 'the executable bit is already as before (or this host has no file modes)') };
  return { content, plan: plan('revert') };
}

/** The bit once a patch is undone: the side before where the patch holds it, else the bit as it is (the person's). */
function execAfterUndo(patch: Patch, content: Uint8Array | null, exec: boolean | undefined): boolean | undefined {
  if (content === null) return undefined;
  if (patch.execBefore === undefined) return exec;
  return patch.execAfter === undefined || exec === patch.execAfter ? patch.execBefore : exec;
}

const isModeOnly = (patch: Patch): boolean => patch.beforeHash === patch.afterHash && patch.execAfter !== undefined;

/** Plans the rollback of one file's patches against its live content (and executable bit), newest first. */
export async function planFile(workspace: Workspace, blobs: BlobStore, target: FileTarget, force: boolean): Promise<FileWork> {
  const liveFile = await workspace.read(target.path);
  const live = liveFile === null ? null : liveFile.bytes;
  // The bit is read only for a file one of whose patches holds it.
  const modes = target.patches.some((p) => p.execBefore !== undefined || p.execAfter !== undefined);
  const liveBit = (modes ? await liveExec(workspace, target.path) : undefined) ?? undefined;
  let content = live;
  let exec = liveBit;
  const steps: PatchRollbackPlan[] = [];
  let conflict: string | undefined;
  for (const patch of [...target.patches].reverse()) {
    if (conflict !== undefined) {
      steps.push({ patchId: patch.patchId, status: 'skip', reason: 'a newer patch of this file conflicts', hunks: [] });
      continue;
    }
    const step = isModeOnly(patch) ? undoModeOnly(patch, content, exec) : await undoPatch(blobs, patch, content, target.hunk, force);
    steps.push(step.plan);
    if (step.plan.status === 'conflict') {
      conflict = `${step.plan.reason ?? 'conflict'} (the agent's change of step ${patch.stepId})`;
      continue;
    }
    if (step.plan.status === 'revert') exec = execAfterUndo(patch, step.content, exec);
    content = step.content;
  }
  const same = bytesEqual(content, live) && (content === null || liveBit === undefined || exec === liveBit);
  const status: RollbackStatus = conflict ? 'conflict' : same ? 'already' : 'revert';
  const result = status === 'revert' ? content : live;
  const plan: FileRollbackPlan = {
    path: target.path,
    status,
    ...(conflict ? { reason: conflict } : {}),
    liveHash: liveFile?.hash ?? ABSENT,
    resultHash: hashOrAbsent(result),
    ...(liveBit === undefined ? {} : { liveExec: liveBit }),
    ...(status !== 'revert' || exec === undefined || result === null ? {} : { resultExec: exec }),
    patches: steps,
  };
  return { plan, live, result };
}
