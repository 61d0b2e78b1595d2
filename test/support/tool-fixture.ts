import { rmSync } from 'node:fs';
import type { Patch } from '../../src/core/patches/schema';
import { applyPreparedWrite } from '../../src/core/patches/record';
import { silentLog } from '../../src/core/ports';
import { createToolRegistry } from '../../src/core/tools/registry';
import type { PreparedWrite, ToolContext, ToolOutput } from '../../src/core/tools/types';
import { createNodeCommandRunner } from '../../src/host/node/command-runner';
import { NodeWorkspace } from '../../src/host/node/node-workspace';
import { tempDir, writeFiles } from '../unit/runtime/harness';
import { MemoryCheckpointStore } from './memory-store';

export interface ToolFixture {
  /** The workspace folder of the current test (two files: a.txt and dir/b.txt). */
  readonly root: string;
  readonly ctx: ToolContext;
  /** Parses the input, prepares and executes the built-in tool `name` as the runtime does. */
  run(name: string, input: unknown): Promise<{ prepared: readonly PreparedWrite[]; output: ToolOutput }>;
}

/**
 * Registers a beforeEach/afterEach pair giving each test a fresh workspace, the built-in tools over
 * the Node workspace and command runner, and writes recorded as patches in a memory store.
 */
export function useToolFixture(): ToolFixture {
  const registry = createToolRegistry();
  const state = { root: '', ctx: undefined as ToolContext | undefined };
  beforeEach(() => {
    state.root = tempDir('tools');
    writeFiles(state.root, { 'a.txt': 'alpha beta\nbeta\n', 'dir/b.txt': 'gamma\n' });
    const workspace = new NodeWorkspace({ roots: [state.root] });
    const store = new MemoryCheckpointStore();
    let n = 0;
    state.ctx = {
      runId: 'r',
      callId: 'c',
      stepId: 1,
      workspace,
      // Only base variables: no note of withheld ones, so the result's format is exact.
      commands: createNodeCommandRunner({ env: { PATH: process.env['PATH'], HOME: process.env['HOME'] } }),
      signal: new AbortController().signal,
      applyWrite: (write: PreparedWrite): Promise<Patch> =>
        applyPreparedWrite(
          { workspace, blobs: store, clock: { now: () => 1 }, log: silentLog, newId: () => `p${++n}` },
          { runId: 'r', stepId: 1, toolCallId: 'c' },
          write,
        ),
    };
  });
  afterEach(() => rmSync(state.root, { recursive: true, force: true }));
  return {
    get root() {
      return state.root;
    },
    get ctx() {
      return state.ctx!;
    },
    async run(name, input) {
      const tool = registry.get(name)!;
      const parsed = tool.input.parse(input);
      const prepared = tool.prepare ? await tool.prepare(parsed, state.ctx!) : [];
      return { prepared, output: await tool.execute(parsed, state.ctx!, prepared) };
    },
  };
}
