import { strict as assert } from 'node:assert';
import { parseCli, UsageError } from '../../../src/host/cli/args';
import { isPowerShell, powerShellArgs, shellLaunch, shellOf, windowsProfileProgram } from '../../../src/host/node/shell';

describe('the shell a command runs in, per platform', () => {
  it('--shell is for Windows, and names cmd or a PowerShell there; elsewhere it is refused in words', () => {
    const run = ['run', '--workspace', 'w', '--task', 't'];
    if (process.platform !== 'win32')
      assert.throws(() => parseCli([...run, '--shell', 'pwsh']), /--shell is for Windows: elsewhere commands run in \/bin\/sh/);
    else {
      assert.equal(parseCli([...run, '--shell', 'pwsh.exe']).shell, 'pwsh.exe');
      assert.throws(() => parseCli([...run, '--shell', 'bash.exe']), /unsupported shell/);
    }
    assert.throws(() => parseCli(['status', '--shell', 'cmd']), UsageError);
  });

  it('Linux and macOS: /bin/sh -c, the command as one argument', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      const shell = shellOf(platform, {});
      assert.deepEqual(shell, { kind: 'posix', file: '/bin/sh' });
      assert.deepEqual(shellLaunch(shell, 'echo "a b"; ls'), {
        file: '/bin/sh',
        args: ['-c', 'echo "a b"; ls'],
        windowsVerbatimArguments: false,
      });
    }
  });

  it('Windows: %ComSpec% (else cmd.exe) with /d /s /c and the command quoted whole, passed verbatim', () => {
    assert.deepEqual(shellOf('win32', { ComSpec: 'C:\\Windows\\System32\\cmd.exe' }), {
      kind: 'cmd',
      file: 'C:\\Windows\\System32\\cmd.exe',
    });
    assert.deepEqual(shellOf('win32', {}), { kind: 'cmd', file: 'cmd.exe' });
    const launch = shellLaunch(shellOf('win32', {}), 'echo "x" & dir');
    assert.deepEqual(launch.args, ['/d', '/s', '/c', '"echo "x" & dir"']);
    assert.equal(launch.windowsVerbatimArguments, true);
  });

  it('Windows: the person’s PowerShell or cmd (--shell, or the terminal profile); any other shell is refused in words', () => {
    assert.equal(shellOf('win32', {}, 'C:\\Program Files\\PowerShell\\7\\pwsh.exe').kind, 'powershell');
    assert.equal(shellOf('win32', {}, 'powershell').kind, 'powershell');
    assert.equal(shellOf('win32', {}, 'CMD.EXE').kind, 'cmd');
    assert.throws(
      () => shellOf('win32', {}, 'C:\\Program Files\\Git\\bin\\bash.exe'),
      /unsupported shell .*bash\.exe.*cmd\.exe or PowerShell/,
    );
    assert.equal(isPowerShell('PWSH'), true);
    assert.equal(isPowerShell('powershell_ise.exe'), false);
  });

  it("PowerShell's command is encoded, never quoted: quotes, $, ;, backticks, newlines and non-ASCII arrive as written", () => {
    const command = `Write-Output "it's \`$HOME: $env:USERPROFILE"; echo 'a "b" c' | Out-String\nGet-Item 'Grüße.txt' -ErrorAction Stop`;
    const args = powerShellArgs(command);
    assert.deepEqual(args.slice(0, 6), ['-NoLogo', '-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand']);
    assert.equal(args.length, 7);
    assert.match(args[6]!, /^[A-Za-z0-9+/]+=*$/, 'base64 only: nothing for Windows argument rules to mangle');
    const script = Buffer.from(args[6]!, 'base64').toString('utf16le');
    assert.ok(
      script.startsWith(
        `[Console]::OutputEncoding = [System.Text.Encoding]::UTF8; $OutputEncoding = [System.Text.Encoding]::UTF8\n${command}\n`,
      ),
      script,
    );
    assert.match(
      script,
      /\$agentCode -is \[int\] -and \$agentCode -ne 0\) \{ exit \$agentCode \}/,
      'a failed native program’s exit code is kept',
    );
    assert.match(script, /if \(-not \$agentOk\) \{ exit 1 \}/, 'a failed cmdlet exits 1');
    assert.deepEqual(shellLaunch({ kind: 'powershell', file: 'pwsh.exe' }, command).args, args);
  });

  it("the editor's default Windows terminal profile names the shell: built-in names, a profile's path, or none", () => {
    assert.equal(windowsProfileProgram('PowerShell', {}), 'powershell.exe');
    assert.equal(windowsProfileProgram('Command Prompt', undefined), 'cmd.exe');
    const profiles = {
      Pwsh7: { path: ['C:\\Program Files\\PowerShell\\7\\pwsh.exe'] },
      'Git Bash': { path: 'C:\\Program Files\\Git\\bin\\bash.exe' },
    };
    assert.equal(windowsProfileProgram('Pwsh7', profiles), 'C:\\Program Files\\PowerShell\\7\\pwsh.exe');
    assert.equal(windowsProfileProgram('Git Bash', profiles), undefined, 'not a shell commands run in: cmd.exe then');
    assert.equal(windowsProfileProgram(undefined, profiles), undefined);
    assert.equal(windowsProfileProgram('Nope', 'garbage'), undefined);
  });
});
