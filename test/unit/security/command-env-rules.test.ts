import { strict as assert } from 'node:assert';
import { buildEnvironment } from '../../../src/host/node/command-env';

// The rules that build a command's environment, as data (test/system/security/command-env.test.ts
// runs real commands with it).
describe('the environment rules', () => {
  it('a base variable whose value holds a password is withheld; on Windows names compare without case; the shell bookkeeping is not named', () => {
    const built = buildEnvironment(
      { Path: 'C:\\bin', ComSpec: 'cmd.exe', https_proxy: 'http://me:proxy-pw@proxy:3128', PWD: '/w', MyApp_Mode: 'x' },
      { platform: 'win32', allowed: ['MYAPP_*'] },
    );
    assert.deepEqual(built.env, { Path: 'C:\\bin', ComSpec: 'cmd.exe', MyApp_Mode: 'x' });
    assert.deepEqual([built.withheldCredentials, built.withheldOthers], [['https_proxy'], []]);
    const linux = buildEnvironment({ path: '/bin', PATH: '/usr/bin', https_proxy: 'http://proxy:3128' }, { platform: 'linux' });
    assert.deepEqual(linux.env, { PATH: '/usr/bin', https_proxy: 'http://proxy:3128' });
    assert.deepEqual(linux.withheldOthers, ['path']);
  });
});
