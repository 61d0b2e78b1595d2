import { strict as assert } from 'node:assert';
import { rmSync } from 'node:fs';
import { storeReach } from '../../../src/host/node/netproxy/index';
import { decideAddress, decideName, parseHostRule, restrictedRange } from '../../../src/host/node/netproxy/policy';
import { gitConfigHosts, npmrcHosts, pipHosts } from '../../../src/host/node/netproxy/user-hosts';
import { tempDir } from '../runtime/harness';

describe('the network allowlist: what the proxy lets through', () => {
  it('refuses loopback, link-local (cloud metadata), private and mapped addresses; public ones pass', () => {
    for (const address of [
      '127.0.0.1',
      '127.8.9.1',
      '::1',
      '169.254.169.254',
      'fe80::1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
    ])
      assert.notEqual(restrictedRange(address), undefined, address);
    for (const address of ['93.184.216.34', '2606:4700::1111', '172.32.0.1', '8.8.8.8'])
      assert.equal(restrictedRange(address), undefined, address);
  });

  it('a rule without a port covers 443 through CONNECT and 80 for plain HTTP only; HOST:PORT covers its port', () => {
    const rules = [parseHostRule('Example.COM.', 'flag')!, parseHostRule('example.com:8443', 'flag')!];
    assert.equal(rules[0]!.host, 'example.com');
    assert.deepEqual(decideName(rules, [], 'example.com', 443, 'connect'), { allowed: true, named: true });
    assert.deepEqual(decideName(rules, [], 'example.com', 80, 'http'), { allowed: true, named: true });
    assert.deepEqual(decideName(rules, [], 'example.com', 8443, 'connect'), { allowed: true, named: true });
    const other = decideName(rules, [], 'example.com', 22, 'connect');
    assert.ok(!other.allowed && /port 22 of example\.com is not allowed.*example\.com:22/.test(other.reason));
    const sub = decideName(rules, [], 'api.example.com', 443, 'connect');
    assert.ok(!sub.allowed && /not on the allowlist/.test(sub.reason));
  });

  it("the store's server is refused whatever was allowed, by name and by the address it resolves to", () => {
    const rules = [parseHostRule('db.internal:5432', 'flag')!];
    const blocked = [{ host: 'db.internal', port: 5432, what: 'the run store (PostgreSQL)' }];
    assert.equal(decideName(rules, blocked, 'DB.internal', 5432, 'connect').allowed, false);
    const alias = decideAddress('10.0.0.5', 5432, 'alias.internal', true, [
      { address: '10.0.0.5', port: 5432, what: 'the run store (PostgreSQL)' },
    ]);
    assert.ok(!alias.allowed && /run store/.test(alias.reason));
    assert.equal(decideAddress('10.0.0.5', 5433, 'alias.internal', true, [{ address: '10.0.0.5', port: 5432, what: 'x' }]).allowed, true);
  });

  it("a PostgreSQL address's server and socket folder (the host= parameter, PGHOST) are what is kept from commands", () => {
    assert.deepEqual(storeReach('postgres://u:p@db.example:6543/x', {}).blocked, [
      { host: 'db.example', port: 6543, what: 'the run store (PostgreSQL)' },
    ]);
    assert.deepEqual(storeReach('postgres:///x?host=%2Fsrv%2Fpg', {}), {
      blocked: [{ host: 'localhost', port: 5432, what: 'the run store (PostgreSQL)' }],
      socketDirs: ['/srv/pg'],
    });
    assert.deepEqual(storeReach('/some/folder', {}), { blocked: [], socketDirs: [] });
  });

  it('--allow-host takes HOST, HOST:PORT and [v6]:PORT, nothing else', () => {
    assert.deepEqual(parseHostRule('[::1]:8080', 'f'), { host: '::1', port: 8080, source: 'f' });
    for (const bad of ['http://x.com', 'x.com:0', 'x.com:99999', 'a b', '', 'x.com/path'])
      assert.equal(parseHostRule(bad, 'f'), undefined, bad);
  });
});

describe("the allowlist by default: hosts the person's user-level configuration names", () => {
  let home = '';
  beforeEach(() => {
    home = tempDir('net-hosts');
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('reads registries of ~/.npmrc, pip user config and git --global URLs', () => {
    assert.deepEqual(
      npmrcHosts(
        'registry=https://npm.corp.example/\n@acme:registry=https://npm.acme.example:8443/r/\n//auth.example/:_authToken=x\n# registry=https://commented.example/\n',
        'n',
      ).map((r) => [r.host, r.port]),
      [
        ['npm.corp.example', undefined],
        ['npm.acme.example', 8443],
        ['auth.example', undefined],
      ],
    );
    assert.deepEqual(
      pipHosts(
        '[global]\nindex-url = https://pypi.corp.example/simple\nextra-index-url =\n    https://a.example/simple\n    http://b.example:8080/simple\ntrusted-host = b.example\n',
        'p',
      ).map((r) => [r.host, r.port]),
      [
        ['pypi.corp.example', undefined],
        ['a.example', undefined],
        ['b.example', 8080],
        ['b.example', undefined],
      ],
    );
    assert.deepEqual(
      gitConfigHosts(
        'url.https://git.corp.example/.insteadof=gh:\nhttp.https://proxy.example:9443/.sslverify=false\nuser.name=x\n',
        'g',
      ).map((r) => [r.host, r.port]),
      [
        ['git.corp.example', undefined],
        ['proxy.example', 9443],
      ],
    );
  });
});
