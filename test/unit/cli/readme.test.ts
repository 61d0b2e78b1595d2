import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HELP, wantsHelp } from '../../../src/host/cli/args';

const ROOT = join(__dirname, '..', '..', '..');

describe('headless CLI: the README and --help agree', () => {
  it('the README shows the --help text as it is', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    assert.ok(readme.includes(`\`\`\`text\n${HELP}\n\`\`\``), 'README.md must show HELP from src/host/cli/args.ts verbatim');
  });

  it('every flag the parser takes is described, and only those', () => {
    const source = readFileSync(join(ROOT, 'src/host/cli/args.ts'), 'utf8');
    const options = source.slice(source.indexOf('const OPTIONS = {'), source.indexOf('} as const;'));
    const parsed = [...options.matchAll(/^\s+'?([a-z-]+)'?: \{ type:/gm)].map((m) => m[1]!);
    assert.ok(parsed.length > 10, `found ${parsed.length} flags`);
    const described = [...HELP.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1]!).filter((f) => f !== 'help');
    assert.deepEqual([...described].sort(), [...parsed].sort());
  });

  it('--help, -h and help ask for the help text', () => {
    assert.ok(wantsHelp(['--help']));
    assert.ok(wantsHelp(['run', '-h']));
    assert.ok(wantsHelp(['help']));
    assert.ok(!wantsHelp(['run', '--task', 'help me']));
  });
});
