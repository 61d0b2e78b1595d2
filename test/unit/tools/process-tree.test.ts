import { strict as assert } from 'node:assert';
import { ProcessTree, taskkillPath, type ProcessControl } from '../../../src/host/node/process-tree';

// How a command's process tree is ended, decided without a process (the system layer's
// test/system/tools/command-windows.test.ts ends real trees).
describe('commands on Windows: the tree ended by taskkill (no process started)', () => {
  it('taskkill comes from the Windows folder when the environment names it; POSIX keeps signalling the group', () => {
    assert.equal(taskkillPath({ SystemRoot: 'D:\\WINNT' }), 'D:\\WINNT\\System32\\taskkill.exe');
    assert.equal(taskkillPath({}), 'taskkill');
    const calls: string[] = [];
    const posix: ProcessControl = {
      platform: 'linux',
      kill: (pid, signal) => void calls.push(`${pid} ${signal}`),
      start: () => assert.fail('no helper on POSIX'),
    };
    const tree = new ProcessTree(posix, 42);
    tree.end('SIGTERM');
    tree.end('SIGKILL');
    assert.equal(tree.alive(), true);
    assert.deepEqual(calls, ['-42 SIGTERM', '-42 SIGKILL', '-42 0']);
  });
});
