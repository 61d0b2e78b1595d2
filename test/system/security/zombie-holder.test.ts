import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { nodeProcessIdentity } from '../../../src/host/node/store-factory';

describe('a lease holder that exited but was never reaped (a zombie) is not alive', () => {
  it('isAlive is false for a zombie and true for a running process', async function () {
    if (process.platform !== 'linux') this.skip();
    // The background sleep exits first; its parent has become `sleep 5`, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = await new Promise<number>((done) => parent.stdout.once('data', (d: Buffer) => done(Number(d.toString().trim()))));
    try {
      assert.equal(nodeProcessIdentity.isAlive(pid), true, 'still running');
      // Until the background sleep has exited: a zombie (state Z) its parent never reaps.
      const zombie = () => {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')')).startsWith(') Z ');
      };
      for (const end = Date.now() + 5000; !zombie() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
      assert.equal(nodeProcessIdentity.isAlive(pid), false, 'a zombie was taken for a live holder');
      assert.equal(nodeProcessIdentity.isAlive(parent.pid!), true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
