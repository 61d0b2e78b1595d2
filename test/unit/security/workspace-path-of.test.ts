import { strict as assert } from 'node:assert';
import { WorkspacePaths } from '../../../src/host/node/path-rules';

// The inverse of the path rules: an editor's file to the workspace path the journal names it by.
describe('workspacePathOf: an absolute path to its workspace path, the inverse of the path rules', () => {
  const identity = (path: string) => path;
  const rules = new WorkspacePaths(['/w/app', '/w/lib'], '/store', { platform: 'linux', realpath: identity });

  it('names a file of the first folder bare and one of another folder by its folder, and both resolve back', () => {
    assert.equal(rules.workspacePathOf('/w/app/src/a.ts'), 'src/a.ts');
    assert.equal(rules.workspacePathOf('/w/lib/src/b.ts'), 'lib/src/b.ts');
    assert.equal(rules.lexical('src/a.ts'), '/w/app/src/a.ts');
    assert.equal(rules.lexical('lib/src/b.ts'), '/w/lib/src/b.ts');
  });

  it('names nothing outside every folder, a folder itself, .git or the store', () => {
    assert.equal(rules.workspacePathOf('/elsewhere/c.ts'), undefined);
    assert.equal(rules.workspacePathOf('/w/lib'), undefined);
    assert.equal(rules.workspacePathOf('/w/app/.git/config'), undefined);
    assert.equal(rules.workspacePathOf('/w/app/x/.GIT/HEAD'), undefined);
    const inStore = new WorkspacePaths(['/w/app'], '/w/app/.store', { platform: 'linux', realpath: identity });
    assert.equal(inStore.workspacePathOf('/w/app/.store/runs/x'), undefined);
  });

  it("names nothing the rules would read as another file (a first-folder path that begins with another folder's name)", () => {
    assert.equal(rules.workspacePathOf('/w/app/lib/x.ts'), undefined);
    assert.equal(rules.lexical('lib/x.ts'), '/w/lib/x.ts');
  });

  it('on Windows: either slash, any case of the drive, the canonical forward slashes', () => {
    const win = new WorkspacePaths(['C:\\w\\app', 'C:\\w\\lib'], undefined, { platform: 'win32', realpath: identity });
    assert.equal(win.workspacePathOf('c:\\w\\lib\\src\\b.ts'), 'lib/src/b.ts');
    assert.equal(win.workspacePathOf('C:/w/app/src/a.ts'), 'src/a.ts');
  });
});
