import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { decodeText, encodeText } from '../../../src/core/patches/hash';
import { diffTexts } from '../../../src/core/patches/hunks';
import { applyPreparedWrite, prepareWrite } from '../../../src/core/patches/record';
import type { Patch } from '../../../src/core/patches/schema';
import { rollbackFiles } from '../../../src/core/restore/rollback';
import type { RestoreDeps } from '../../../src/core/restore/types';
import { undoFileRestore } from '../../../src/core/restore/undo';
import { MemoryBlobs, MemoryJournal, MemoryLog, MemoryWorkspace, fixedClock, newId } from '../patches/fakes';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

interface Scenario {
  readonly eol: string;
  readonly bom: boolean;
  readonly finalNewline: boolean;
  readonly base: readonly string[];
  /** Agent edits: [position, kind] applied to the base lines. */
  readonly agent: readonly (readonly [number, 'replace' | 'insert' | 'delete'])[];
  /** User edits after the agent: [position, kind]. */
  readonly user: readonly (readonly [number, 'insert' | 'replace'])[];
  readonly unsaved: boolean;
}

// A small pool makes repeated lines likely, so hunks must be located exactly, not by luck.
const baseLine = fc.oneof(
  fc.constantFrom('a', 'b', '', '}', '  x'),
  fc.nat(50).map((n) => `l${n}`),
);
const scenario: fc.Arbitrary<Scenario> = fc.record({
  eol: fc.constantFrom('\n', '\r\n'),
  bom: fc.boolean(),
  finalNewline: fc.boolean(),
  base: fc.array(baseLine, { minLength: 0, maxLength: 40 }),
  agent: fc.array(fc.tuple(fc.nat(60), fc.constantFrom('replace' as const, 'insert' as const, 'delete' as const)), {
    minLength: 1,
    maxLength: 6,
  }),
  user: fc.array(fc.tuple(fc.nat(80), fc.constantFrom('insert' as const, 'replace' as const)), { maxLength: 4 }),
  unsaved: fc.boolean(),
});

function render(lines: readonly string[], s: Scenario): Uint8Array {
  const body = lines.join(s.eol) + (s.finalNewline && lines.length > 0 ? s.eol : '');
  return encodeText(body, s.bom);
}

function edit(lines: readonly string[], ops: Scenario['agent'] | Scenario['user'], tag: string): string[] {
  const out = [...lines];
  ops.forEach(([pos, kind], i) => {
    const at = out.length === 0 ? 0 : pos % (kind === 'insert' ? out.length + 1 : out.length);
    const line = `${tag}${i}`;
    if (kind === 'insert' || out.length === 0) out.splice(at, 0, line);
    else if (kind === 'replace') out[at] = line;
    else out.splice(at, 1);
  });
  return out;
}

async function setup(s: Scenario) {
  const workspace = new MemoryWorkspace();
  const deps: RestoreDeps = {
    workspace,
    blobs: new MemoryBlobs(),
    journal: new MemoryJournal(),
    clock: fixedClock,
    log: new MemoryLog(),
    newId,
  };
  const baseBytes = render(s.base, s);
  workspace.userSave('f.txt', baseBytes);
  const agentLines = edit(s.base, s.agent, 'AGENT-');
  const write = await prepareWrite(workspace, 'f.txt', render(agentLines, s));
  const patch: Patch = await applyPreparedWrite(deps, { runId: 'r', stepId: 1, toolCallId: 'c' }, write);
  const userLines = edit(agentLines, s.user, 'USER-');
  const userBytes = render(userLines, s);
  if (s.unsaved) workspace.userType('f.txt', userBytes);
  else workspace.userSave('f.txt', userBytes);
  return { workspace, deps, patch, baseBytes, userLines };
}

const decode = (bytes: Uint8Array | null) => (bytes === null ? '' : new TextDecoder().decode(bytes));
const userLinesIn = (lines: readonly string[]) => lines.filter((l) => l.startsWith('USER-'));
const splitText = (bytes: Uint8Array | null) =>
  decode(bytes)
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/);

describe('restore: property-based rollback and undo', function () {
  this.timeout(120_000);

  it(`whole-patch rollback loses 0 user bytes, conflicts touch nothing, undo is byte-identical (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { workspace, deps, patch, baseBytes, userLines } = await setup(s);
        const before = workspace.live('f.txt');
        const result = await rollbackFiles(deps, { patches: [patch], allCheckpoints: [] }, { kind: 'patch', patchId: patch.patchId });
        const after = workspace.live('f.txt');
        const file = result.plan.files[0]!;
        if (file.status === 'conflict') {
          assert.deepEqual(after, before, 'a conflict leaves the file untouched');
          return;
        }
        const kept = splitText(after);
        for (const line of userLinesIn(userLines)) assert.ok(kept.includes(line), `user line ${line} lost`);
        assert.ok(!kept.some((l) => l.startsWith('AGENT-')), 'every agent line is undone');
        if (s.user.length === 0) assert.deepEqual(after, baseBytes, 'no user edit: exactly the before bytes');
        if (result.restore) {
          await undoFileRestore(deps, result.restore);
          assert.deepEqual(workspace.live('f.txt'), before, 'undo brings back the exact bytes');
        }
      }),
      { numRuns: RUNS },
    );
  });

  it(`per-hunk rollback keeps every user edit and every other hunk (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.nat(10), async (s, pick) => {
        const { workspace, deps, patch, userLines } = await setup(s);
        const before = workspace.live('f.txt');
        const dry = await rollbackFiles(
          deps,
          { patches: [patch], allCheckpoints: [] },
          { kind: 'patch', patchId: patch.patchId },
          { dryRun: true },
        );
        const hunkCount = dry.plan.files[0]?.patches[0]?.hunks.length ?? 0;
        if (hunkCount === 0) return;
        const hunkIndex = pick % hunkCount;
        const result = await rollbackFiles(
          deps,
          { patches: [patch], allCheckpoints: [] },
          { kind: 'hunk', patchId: patch.patchId, hunkIndex },
        );
        const after = workspace.live('f.txt');
        const file = result.plan.files[0]!;
        if (file.status === 'conflict') {
          assert.deepEqual(after, before, 'a conflicting hunk leaves the file untouched');
          return;
        }
        const kept = splitText(after);
        for (const line of userLinesIn(userLines)) assert.ok(kept.includes(line), `user line ${line} lost`);
        const hunks = diffTexts(
          'f.txt',
          decodeText(await deps.blobs.getBlob(patch.beforeBlob!))!.text,
          decodeText(await deps.blobs.getBlob(patch.afterBlob!))!.text,
        ).hunks;
        const agentLinesOf = (i: number) => hunks[i]!.newLines.map((l) => l.replace(/\r?\n$/, '')).filter((l) => l.startsWith('AGENT-'));
        const liveBefore = splitText(before);
        for (let i = 0; i < hunks.length; i++) {
          if (i === hunkIndex) continue;
          for (const line of agentLinesOf(i))
            if (liveBefore.includes(line)) assert.ok(kept.includes(line), `agent line ${line} of hunk ${i} undone`);
        }
        for (const line of agentLinesOf(hunkIndex)) assert.ok(!kept.includes(line), `agent line ${line} of the reverted hunk survived`);
        if (result.restore) {
          await undoFileRestore(deps, result.restore);
          assert.deepEqual(workspace.live('f.txt'), before, 'undo brings back the exact bytes');
        }
      }),
      { numRuns: RUNS },
    );
  });
});
