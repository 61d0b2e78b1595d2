import { strict as assert } from 'node:assert';
import { PendingIds } from '../../../src/core/store/pending-ids';
import { Prng } from '../../support/faults/prng';

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('pending ids (the text of pending.json until looked up often)', () => {
  it('answers as a Set does through random moves and lookups, before and after it becomes one', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const prng = new Prng(seed);
      const random = () => prng.next();
      const start = Array.from({ length: 200 }, (_, i) => `p-${i}`);
      const ids = new PendingIds([], start.join('\n'));
      const truth = new Set(start);
      // 600 operations: past the text lookups a PendingIds answers before it builds its Set.
      for (let op = 0; op < 600; op++) {
        const id = `p-${Math.floor(random() * 260)}`;
        const pick = random();
        // A move is trusted (its caller knows the id's state): half of them here follow no lookup.
        if (pick < 0.7 && truth.has(id) !== pick < 0.35) {
          ids.move(id, pick < 0.35);
          if (pick < 0.35) truth.add(id);
          else truth.delete(id);
        } else assert.equal(ids.has(id), truth.has(id), `seed ${seed} op ${op}: has ${id}`);
        assert.equal(ids.size, truth.size, `seed ${seed} op ${op}: size`);
        if (op % 50 === 0)
          assert.deepEqual(sorted(ids.lines()!.split('\n').filter(Boolean)), sorted(truth), `seed ${seed} op ${op}: lines`);
      }
      assert.deepEqual(sorted(ids), sorted(truth));
    }
  });

  it('counts the ids of a text, reads a text with empty lines as its ids, and refuses to write an id that is not one line', () => {
    assert.equal(new PendingIds([], 'a\nb\nc').size, 3);
    assert.equal(new PendingIds([], 'a\nb\nc', 3).size, 3, 'the count a file states');
    assert.equal(new PendingIds([], '').size, 0);
    const gappy = new PendingIds([], 'a\n\nb');
    assert.equal(gappy.size, 2);
    assert.deepEqual(sorted(gappy), ['a', 'b']);
    const ids = new PendingIds([], 'a\nb');
    assert.equal(ids.has('a\nb'), false, 'an id with a line break never matches across two lines');
    assert.equal(ids.has(''), false);
    ids.move('a', false);
    ids.move('a', true);
    assert.equal(ids.size, 2, 'a removed id added back counts once');
    assert.deepEqual(sorted(ids.lines()!.split('\n')), ['a', 'b']);
    ids.move('x\ny', true);
    assert.equal(ids.lines(), null);
    assert.equal(new PendingIds(['', 'q']).lines(), null);
  });
});
