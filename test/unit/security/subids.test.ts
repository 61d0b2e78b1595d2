import { strict as assert } from 'node:assert';
import { idsFrom, mappedText, mapsOwner, ownIdsOnly, subordinateRange, type IdFacts } from '../../../src/host/node/sandbox/subids';

// The ids a command's copy-on-write view maps: the person's own, plus their first subordinate range
// of /etc/subuid and /etc/subgid, read strictly (a bad line is skipped, never half-used).

const ann = { name: 'ann', uid: 1000, own: 1000 };

describe('subordinate ids of a copy-on-write view', () => {
  it('takes the first well-formed range of the person, by name or by uid', () => {
    assert.deepEqual(subordinateRange('bob:100000:65536\nann:165536:65536\nann:300000:10\n', ann), { start: 165536, count: 65536 });
    assert.deepEqual(subordinateRange('1000:200000:5\r\n', ann), { start: 200000, count: 5 });
    assert.equal(subordinateRange('', ann), undefined);
  });

  it('skips malformed lines and ranges that are no ids, hold id 0 or the person’s own id', () => {
    const bad = [
      '# ann:1:2',
      'ann:100000',
      'ann:100000:65536:x',
      ' ann:100000:65536',
      'ann:+100000:65536',
      'ann:-1:65536',
      'ann:100000:0',
      'ann:0:65536',
      'ann:4294967290:10',
      'ann:99999999999:1',
      'ann:1:1000',
      'anna:100000:65536',
      'ann:1e5:10',
    ];
    assert.equal(subordinateRange(bad.join('\n'), ann), undefined);
    assert.deepEqual(subordinateRange([...bad, 'ann:4294967285:10'].join('\n'), ann), { start: 4294967285, count: 10 });
  });

  const facts: IdFacts = {
    uid: 1000,
    gid: 1000,
    name: 'ann',
    subuid: 'ann:100000:65536\n',
    subgid: 'ann:200000:1000\n',
    newuidmap: true,
    newgidmap: true,
  };

  it('maps the ranges through unshare where newuidmap and newgidmap exist; a file is copied up when both its ids are mapped', () => {
    const ids = idsFrom(facts);
    assert.deepEqual(ids.args, ['-Urm', '--map-users=100000,1,65536', '--map-groups=200000,1,1000']);
    assert.equal(mapsOwner(ids, 1000, 1000), true);
    assert.equal(mapsOwner(ids, 100999, 200999), true);
    assert.equal(mapsOwner(ids, 165536, 1000), false, 'past the uid range');
    assert.equal(mapsOwner(ids, 100000, 201000), false, 'past the gid range');
    assert.equal(mapsOwner(ids, 0, 0), false);
    assert.match(mappedText(ids), /uid 1000, gid 1000 and subordinate uids 100000-165535, subordinate gids 200000-200999/);
  });

  it('without the helpers, or without ranges, the view maps the person’s ids only (as before), and says so', () => {
    for (const ids of [idsFrom({ ...facts, newuidmap: false, newgidmap: false }), idsFrom({ ...facts, subuid: '', subgid: '' })]) {
      assert.deepEqual(ids.args, ['-Urm']);
      assert.equal(mapsOwner(ids, 100999, 200999), false);
      assert.match(mappedText(ids), /uid 1000, gid 1000 only \(no subordinate ids of yours[^)]*apt-get install uidmap\)/);
    }
    const refused = ownIdsOnly(idsFrom(facts), 'newuidmap: uid range not allowed');
    assert.deepEqual(refused.args, ['-Urm']);
    assert.equal(mapsOwner(refused, 100999, 200999), false);
    assert.match(mappedText(refused), /only \(newuidmap\/newgidmap refused your subordinate ids: newuidmap: uid range not allowed\)/);
    const usersOnly = idsFrom({ ...facts, newgidmap: false });
    assert.deepEqual(usersOnly.args, ['-Urm', '--map-users=100000,1,65536']);
    assert.equal(mapsOwner(usersOnly, 100999, 1000), true);
    assert.equal(mapsOwner(usersOnly, 100999, 200999), false);
  });
});
