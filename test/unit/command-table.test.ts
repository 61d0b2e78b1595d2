import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND_TABLE, contributesOf, type CommandContributions } from '../../src/host/vscode/commands/command-table';

// One command table (src/host/vscode/commands/command-table.ts): package.json contributes exactly what it
// says, every command, menu entry and key; nothing there that the table does not have.

const ROOT = join(__dirname, '..', '..');

function packageContributes(): CommandContributions {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { contributes: CommandContributions };
  return pkg.contributes;
}

/** Menu entries and keys compared by command and place, whatever their order in the file. */
function sorted<T extends { command: string }>(items: readonly T[]): string[] {
  return items.map((i) => JSON.stringify(i, Object.keys(i).sort())).sort();
}

function menus(c: CommandContributions): Record<string, string[]> {
  return Object.fromEntries(Object.entries(c.menus).map(([place, items]) => [place, sorted(items)]));
}

describe('command table', () => {
  it('package.json contributes the table: the same commands in the same order, titles, icons and enablement', () => {
    assert.deepEqual(packageContributes().commands, contributesOf().commands);
  });

  it('package.json has the menu entries and keys of the table, and no others', () => {
    const pkg = packageContributes();
    const table = contributesOf();
    assert.deepEqual(menus(pkg), menus(table));
    assert.deepEqual(sorted(pkg.keybindings), sorted(table.keybindings));
  });

  it('the comparison catches a command missing from package.json and a key the table does not have', () => {
    const table = contributesOf();
    const missing = contributesOf({ ...COMMAND_TABLE, 'agentCheckpoints.extra': { title: 'Extra' } });
    assert.notDeepEqual(missing.commands, table.commands);
    const keyed = contributesOf({
      ...COMMAND_TABLE,
      'agentCheckpoints.run': { title: 'Run...', icon: 'play', keys: [{ key: 'f9', when: 'true' }] },
    });
    assert.notDeepEqual(sorted(keyed.keybindings), sorted(table.keybindings));
  });
});
