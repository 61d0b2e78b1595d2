import { strict as assert } from 'node:assert';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';

/** Busy work on the event loop for `ms` milliseconds (what a cold schema parse is to the loop). */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("the Node port's pause between slices of a long read", () => {
  it('lets the event loop run once a few ms of work went by, and not at every slice', async () => {
    const fs = new NodeStoreFs();
    await fs.yieldToEventLoop(); // the loop ran: the clock starts now
    let ran = 0;
    const tick = () => void ran++;
    setImmediate(tick);
    await fs.yieldToEventLoop();
    await fs.yieldToEventLoop();
    assert.equal(ran, 0, 'slices right after the loop ran go on without waiting for it');
    work(5);
    await fs.yieldToEventLoop();
    assert.equal(ran, 1, 'after 5 ms of work the loop ran (a waiting callback got its turn)');
    setImmediate(tick);
    work(1);
    await fs.yieldToEventLoop();
    assert.equal(ran, 1, 'the clock restarted when the loop ran');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ran, 2);
  });
});
