import { strict as assert } from 'node:assert';
import { bwrapArgs } from '../../../src/host/node/sandbox/bwrap';
import { literalOf, type SandboxPlan } from '../../../src/host/node/sandbox/plan';
import { seatbeltProfile } from '../../../src/host/node/sandbox/seatbelt';

const plan = (over: Partial<SandboxPlan> = {}): SandboxPlan => ({
  roots: ['/Users/ada/project'],
  readOnly: [
    { path: '/Users/ada/project/.git', rule: 'git' },
    { path: '/Users/ada/project/.vscode', rule: 'protected path **/.vscode{,/**}' },
  ],
  hidden: [{ path: '/Users/ada/Library/Application Support/Code', dir: true }],
  home: '/Users/ada',
  homePaths: ['/Users/ada/.npm'],
  homePrograms: ['/Users/ada/.nvm/versions/node/v20/bin'],
  network: true,
  extra: [],
  ...over,
});

describe('sandbox: the arguments and the profile a plan gives', () => {
  it('literal protected names come from the one pattern list; wildcards have none', () => {
    assert.deepEqual(literalOf('**/.vscode{,/**}'), { name: '.vscode', dir: true });
    assert.deepEqual(literalOf('**/.envrc'), { name: '.envrc', dir: false });
    assert.deepEqual(literalOf('secrets/**'), { name: 'secrets', dir: true });
    assert.equal(literalOf('**/*.code-workspace'), undefined);
    assert.equal(literalOf('../outside'), undefined);
  });

  it('bubblewrap: no capabilities, own PID namespace, the workspace bound after the hidden home, read-only binds last', () => {
    const args = bwrapArgs(plan(), '/Users/ada/project', 'make');
    const at = (flag: string, path: string) => args.findIndex((a, i) => a === flag && args[i + 1] === path);
    assert.ok(args.includes('--unshare-pid') && args.includes('--die-with-parent') && args.includes('--new-session'));
    assert.deepEqual(args.slice(args.indexOf('--cap-drop'), args.indexOf('--cap-drop') + 2), ['--cap-drop', 'ALL']);
    assert.equal(args.includes('--unshare-net'), false);
    assert.ok(bwrapArgs(plan({ network: false }), '/', 'x').includes('--unshare-net'));
    assert.ok(at('--tmpfs', '/Users/ada') < at('--bind', '/Users/ada/project'));
    assert.ok(at('--bind', '/Users/ada/project') < at('--ro-bind', '/Users/ada/project/.vscode'));
    assert.ok(at('--tmpfs', '/Users/ada/Library/Application Support/Code') > at('--bind', '/Users/ada/project'));
    assert.equal(args.at(-1), 'make');
  });

  it('sandbox-exec: writes only in the workspace and allowed folders, protected paths denied after, home and hidden folders unreadable, network off on request', () => {
    const text = seatbeltProfile(plan({ network: false }));
    const lines = text.trim().split('\n');
    assert.equal(lines[0], '(version 1)');
    const index = (needle: string) => lines.findIndex((l) => l.includes(needle));
    assert.ok(index('(deny file-write*)') < index('(allow file-write* (subpath "/Users/ada/project")'));
    const lastDenyWrite = lines
      .map((l, i) => (l.startsWith('(deny file-write*') && l.includes('.vscode') ? i : -1))
      .filter((i) => i >= 0)
      .at(-1)!;
    assert.ok(
      lastDenyWrite >
        lines
          .map((l, i) => (l.startsWith('(allow file-write*') ? i : -1))
          .filter((i) => i >= 0)
          .at(-1)!,
      'a later allow would undo the protection',
    );
    assert.match(text, /\(deny file-read\* file-write\* \(subpath "\/Users\/ada"\)/);
    assert.match(
      text,
      /\(allow file-read\* \(subpath "\/Users\/ada\/project"\) \(subpath "\/Users\/ada\/\.npm"\) \(subpath "\/Users\/ada\/\.nvm\/versions\/node\/v20\/bin"\)\)/,
    );
    assert.match(text, /\(deny network\*\)/);
    assert.doesNotMatch(seatbeltProfile(plan()), /deny network/);
    assert.match(seatbeltProfile(plan({ roots: ['/a "quoted" dir'] })), /\(subpath "\/a \\"quoted\\" dir"\)/);
  });
});
