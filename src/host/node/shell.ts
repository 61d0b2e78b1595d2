import * as nodePath from 'node:path';

// The shell a command runs in, per platform: /bin/sh on Linux and macOS; on Windows the person's
// (PowerShell when their terminal's default profile is a PowerShell, else cmd.exe; the CLI takes
// %ComSpec% or --shell). What to spawn is decided here once, so the runner, the system prompt and
// the tests agree.

export type ShellKind = 'posix' | 'cmd' | 'powershell';

export interface Shell {
  readonly kind: ShellKind;
  /** The program, e.g. /bin/sh, C:\Windows\System32\cmd.exe, pwsh.exe. */
  readonly file: string;
}

/** How to start `command` in `shell`: the arguments, and whether Node must pass them as they are (cmd.exe's own quoting). */
export interface ShellLaunch {
  readonly file: string;
  readonly args: readonly string[];
  readonly windowsVerbatimArguments: boolean;
}

/** Whether a program named by the person (a path or a bare name) is a PowerShell. */
export function isPowerShell(program: string): boolean {
  const name = nodePath.win32.basename(program).toLowerCase();
  return name === 'pwsh' || name === 'pwsh.exe' || name === 'powershell' || name === 'powershell.exe';
}

/**
 * The shell of a platform. `preferred` is the person's choice (the CLI's --shell, or the program
 * of the editor's default Windows terminal profile); on Windows it must be cmd or a PowerShell.
 */
export function shellOf(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, preferred?: string): Shell {
  if (platform !== 'win32') return { kind: 'posix', file: '/bin/sh' };
  if (preferred !== undefined && preferred !== '') {
    if (isPowerShell(preferred)) return { kind: 'powershell', file: preferred };
    const name = nodePath.win32.basename(preferred).toLowerCase();
    if (name === 'cmd' || name === 'cmd.exe') return { kind: 'cmd', file: preferred };
    throw new Error(`unsupported shell ${preferred}: on Windows commands run in cmd.exe or PowerShell (pwsh.exe, powershell.exe)`);
  }
  const comSpec = env['ComSpec'] ?? env['COMSPEC'];
  return { kind: 'cmd', file: comSpec !== undefined && comSpec !== '' ? comSpec : 'cmd.exe' };
}

/**
 * The program of the editor's default Windows terminal profile (`terminal.integrated.defaultProfile.windows`
 * names a profile of `terminal.integrated.profiles.windows`; the built-in names are "PowerShell" and
 * "Command Prompt"); undefined when it names neither cmd nor a PowerShell.
 */
export function windowsProfileProgram(defaultProfile: unknown, profiles: unknown): string | undefined {
  if (typeof defaultProfile !== 'string' || defaultProfile === '') return undefined;
  const profile = typeof profiles === 'object' && profiles !== null ? (profiles as Record<string, unknown>)[defaultProfile] : undefined;
  const path = typeof profile === 'object' && profile !== null ? (profile as { path?: unknown }).path : undefined;
  const program = Array.isArray(path) ? path[0] : path;
  if (typeof program === 'string' && (isPowerShell(program) || /^cmd(\.exe)?$/i.test(nodePath.win32.basename(program)))) return program;
  if (/^(windows )?powershell$/i.test(defaultProfile)) return 'powershell.exe';
  if (/^command prompt$/i.test(defaultProfile)) return 'cmd.exe';
  return undefined;
}

/**
 * PowerShell gets the command as -EncodedCommand (base64 of its UTF-16LE text): no quoting of the
 * person's or the model's text by anyone, so quotes, `$`, `;` and non-ASCII arrive as written. The
 * exit code is the last native program's when it failed, else 1 when the last statement failed.
 */
export function powerShellArgs(command: string): string[] {
  const script = [
    // Output in UTF-8 (what the runner decodes), whatever the console's code page.
    '[Console]::OutputEncoding = [System.Text.Encoding]::UTF8; $OutputEncoding = [System.Text.Encoding]::UTF8',
    command,
    '$agentOk = $?; $agentCode = $global:LASTEXITCODE',
    'if ($agentCode -is [int] -and $agentCode -ne 0) { exit $agentCode }',
    'if (-not $agentOk) { exit 1 }',
    'exit 0',
  ].join('\n');
  const encoded = Buffer.from(script, 'utf16le').toString('base64');
  return ['-NoLogo', '-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-EncodedCommand', encoded];
}

/** What to spawn for `command` in `shell`. */
export function shellLaunch(shell: Shell, command: string): ShellLaunch {
  switch (shell.kind) {
    case 'posix':
      return { file: shell.file, args: ['-c', command], windowsVerbatimArguments: false };
    case 'cmd':
      // As Node's own `shell: true` does: /d (no AutoRun), /s /c and the command quoted whole. Its
      // output is read as UTF-8, else the ANSI code page (command-output.ts); no chcp, which would set
      // ERRORLEVEL for a command that never resets it (echo).
      return { file: shell.file, args: ['/d', '/s', '/c', `"${command}"`], windowsVerbatimArguments: true };
    case 'powershell':
      return { file: shell.file, args: powerShellArgs(command), windowsVerbatimArguments: false };
  }
}
