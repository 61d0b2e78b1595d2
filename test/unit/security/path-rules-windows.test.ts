import { strict as assert } from 'node:assert';
import { realpathSync } from 'node:fs';
import { win32 } from 'node:path';
import { PathRefusedError } from '../../../src/core/ports';
import { isInside, realpathOfExisting, samePath, withoutLongPrefix, WorkspacePaths } from '../../../src/host/node/path-rules';

/**
 * realpath on a case-insensitive Windows volume holding `files` (true case): the existing part
 * of a path comes back in its true case with an upper-case drive letter, the missing rest as
 * given, as fs.realpathSync.native does there.
 */
function windowsRealpath(files: readonly string[]): (path: string) => string {
  const known = new Map<string, string>();
  for (const file of files) {
    for (let at = file; win32.dirname(at) !== at; at = win32.dirname(at)) known.set(at.toLowerCase(), at);
  }
  return (path: string) => {
    assert.ok(win32.isAbsolute(path) && !path.includes('/') && !path.startsWith('\\\\?\\'), `realpath of a raw path: ${path}`);
    const missing: string[] = [];
    for (let at = path; ; at = win32.dirname(at)) {
      const real = known.get(at.toLowerCase());
      if (real !== undefined) return win32.join(real, ...missing.reverse());
      if (win32.dirname(at) === at)
        return win32.join(
          at.replace(/^[a-z]:/, (d) => d.toUpperCase()),
          ...missing.reverse(),
        );
      missing.push(win32.basename(at));
    }
  };
}

const FILES = ['C:\\Work\\Proj\\Notes.txt', 'C:\\Work\\Proj\\src\\Main.ts', 'C:\\Work\\Lib\\x.ts', '\\\\server\\share\\team\\Plan.md'];

function paths(roots: string[], storeDir?: string): WorkspacePaths {
  return new WorkspacePaths(roots, storeDir, { platform: 'win32', realpath: windowsRealpath(FILES) });
}

async function relativeOf(p: WorkspacePaths, input: string): Promise<string> {
  return (await p.resolve(input)).relative;
}

describe('path rules with Windows inputs (win32 rules injected, on any platform)', () => {
  it('isInside and samePath: drive letters in either case, / and \\, UNC, \\\\?\\ long paths; other drives and shares are outside', () => {
    assert.ok(isInside('c:\\work\\proj\\a.txt', 'C:\\Work\\Proj', 'win32'));
    assert.ok(isInside('C:/Work/Proj/src/a.txt', 'c:\\WORK\\proj', 'win32'));
    assert.ok(isInside('\\\\?\\C:\\Work\\Proj\\a.txt', 'C:\\Work\\Proj', 'win32'));
    assert.ok(isInside('\\\\?\\UNC\\server\\share\\team\\a', '\\\\SERVER\\share\\team', 'win32'));
    assert.ok(isInside('C:\\Work\\Proj\\..notes', 'C:\\Work\\Proj', 'win32'), 'a name starting with two dots is inside');
    assert.ok(isInside('/ws/..notes', '/ws', 'linux'));
    assert.ok(!isInside('D:\\Work\\Proj\\a.txt', 'C:\\Work\\Proj', 'win32'));
    assert.ok(!isInside('C:\\Work\\Project\\a.txt', 'C:\\Work\\Proj', 'win32'));
    assert.ok(!isInside('\\\\server\\other\\team\\a', '\\\\server\\share\\team', 'win32'));
    assert.ok(!isInside('C:\\Work\\a.txt', 'C:\\Work\\Proj', 'win32'));
    assert.ok(samePath('c:\\work\\proj\\NOTES.txt', 'C:/Work/Proj/Notes.txt', 'win32'));
    assert.ok(samePath('\\\\?\\C:\\Work\\x', 'c:\\work\\X', 'win32'));
    assert.ok(!samePath('C:\\Work\\x', 'D:\\Work\\x', 'win32'));
    assert.ok(!samePath('/ws/Notes.txt', '/ws/notes.txt', 'linux'));
    assert.equal(withoutLongPrefix('//?/C:/x', 'win32'), 'C:/x');
    assert.equal(withoutLongPrefix('\\\\?\\C:\\x', 'linux'), '\\\\?\\C:\\x');
  });

  it('Notes.txt, notes.txt, .\\Notes.txt and every absolute spelling are one file with one relative path', async () => {
    const p = paths(['c:\\work\\proj']);
    const spellings = [
      'Notes.txt',
      'notes.txt',
      '.\\Notes.txt',
      './NOTES.TXT',
      'src\\..\\notes.txt',
      'C:\\Work\\Proj\\Notes.txt',
      'c:\\work\\proj\\notes.txt',
      'C:/Work/Proj/Notes.txt',
      '\\\\?\\C:\\Work\\Proj\\Notes.txt',
      '//?/c:/work/proj/notes.txt',
    ];
    for (const input of spellings) assert.equal(await relativeOf(p, input), 'Notes.txt', input);
  });

  it('the journal form: forward slashes, the true case of what exists, the given case of what does not', async () => {
    const p = paths(['C:\\Work\\Proj']);
    assert.equal(await relativeOf(p, 'SRC\\main.ts'), 'src/Main.ts');
    assert.equal(await relativeOf(p, 'src\\new\\Deep.ts'), 'src/new/Deep.ts');
    assert.equal(await relativeOf(p, 'C:\\Work\\Proj\\src/new\\Deep.ts'), 'src/new/Deep.ts');
    assert.equal(await relativeOf(p, '..notes'), '..notes');
    assert.equal((await p.resolve('.')).isFolder, true);
  });

  it('UNC and long UNC roots and inputs', async () => {
    const p = paths(['\\\\server\\share\\team']);
    for (const input of [
      'plan.md',
      '\\\\SERVER\\share\\team\\plan.md',
      '//server/share/team/Plan.md',
      '\\\\?\\UNC\\server\\share\\team\\PLAN.md',
    ])
      assert.equal(await relativeOf(p, input), 'Plan.md', input);
    await assert.rejects(p.resolve('\\\\server\\other\\team\\plan.md'), /outside every workspace folder/);
    const long = paths(['\\\\?\\C:\\Work\\Proj']);
    assert.equal(await relativeOf(long, 'c:\\work\\proj\\notes.txt'), 'Notes.txt');
  });

  it('multi-root: the folder a path names first is found in any case', async () => {
    const p = paths(['C:\\Work\\Proj', 'C:\\Work\\Lib']);
    assert.equal(await relativeOf(p, 'lib/X.ts'), 'Lib/x.ts');
    assert.equal(await relativeOf(p, 'LIB\\x.ts'), 'Lib/x.ts');
    assert.equal(await relativeOf(p, 'c:\\work\\lib\\x.ts'), 'Lib/x.ts');
    assert.equal(await relativeOf(p, 'notes.txt'), 'Notes.txt');
  });

  it('refuses other drives, escapes, .git and the store in any spelling', async () => {
    const p = paths(['C:\\Work\\Proj'], 'c:\\work\\proj\\.store');
    const refusals: [string, RegExp][] = [
      ['D:\\Work\\Proj\\Notes.txt', /absolute path outside/],
      ['\\\\?\\D:\\Work\\Proj\\Notes.txt', /absolute path outside/],
      ['..\\Lib\\x.ts', /`\.\.` escapes/],
      ['src\\..\\..\\Lib\\x.ts', /`\.\.` escapes/],
      ['C:\\Work\\Project\\x', /absolute path outside/],
      ['\\\\server\\share\\x', /absolute path outside/],
      ['.GIT\\config', /\.git/],
      ['src\\.Git\\HEAD', /\.git/],
      ['.STORE\\runs\\x', /checkpoint store/],
      ['C:/WORK/PROJ/.store/blobs', /checkpoint store/],
    ];
    for (const [input, reason] of refusals) {
      await assert.rejects(p.resolve(input), (e: unknown) => e instanceof PathRefusedError && reason.test(e.message), input);
    }
  });

  it('a full path of 260 characters or more that this Windows refuses fails in words naming the limit and the way out', async () => {
    const long = `C:\\Work\\Proj\\${'n'.repeat(250)}.txt`;
    const refusing = (path: string): string => {
      if (path.length >= 260) throw Object.assign(new Error(`UNKNOWN: unknown error, realpath '${path}'`), { code: 'UNKNOWN' });
      return windowsRealpath(FILES)(path);
    };
    const p = new WorkspacePaths(['C:\\Work\\Proj'], undefined, { platform: 'win32', realpath: refusing });
    await assert.rejects(
      p.resolve(long),
      (e: unknown) =>
        e instanceof PathRefusedError &&
        /is 267 characters long as a full path, and this Windows refused it \(UNKNOWN\): paths of 260 characters or more need long paths enabled \(LongPathsEnabled/.test(
          e.message,
        ),
    );
    assert.equal(await relativeOf(paths(['C:\\Work\\Proj']), long), `${'n'.repeat(250)}.txt`, 'where Windows allows long paths, it works');
  });
});

describe('realpath of an existing file past 260 characters on Windows', () => {
  const unknown = (): string => {
    throw Object.assign(new Error('UNKNOWN: unknown error, realpath'), { code: 'UNKNOWN' });
  };

  it('when the system cannot give it (UNKNOWN), the path is walked link by link instead; elsewhere the error stands', () => {
    const here = realpathSync(__dirname);
    assert.equal(realpathOfExisting(__dirname, unknown, 'win32'), here);
    assert.throws(() => realpathOfExisting(__dirname, unknown, 'linux'), /UNKNOWN/);
    const missing = (): string => {
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    };
    assert.throws(() => realpathOfExisting(__dirname, missing, 'win32'), /ENOENT/);
  });
});
