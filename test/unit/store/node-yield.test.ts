import { strict as assert } from 'node:assert';
import { NodeStoreFs } from '../../../src/host/node/node-store-fs';

/** Work on the event loop as the pause's clock sees it (a cold schema parse, say): a test clock, so a loaded machine cannot move it. */
let clock = 100;
function work(ms: number): void {
  clock += ms;
}

describe("the Node port's pause between slices of a long read", () => {
  it('lets the event loop run once a few ms of work went by, and not at every slice', async () => {
    const fs = new NodeStoreFs(undefined, () => clock);
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
