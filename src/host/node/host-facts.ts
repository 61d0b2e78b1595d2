import { release } from 'node:os';
import type { HostFacts } from '../../core/runtime/system-prompt';
import { detectSandbox } from './sandbox';

const PLATFORM_NAMES: Record<string, string> = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };

/**
 * The operating system, the shell run_command uses and its sandbox, for the system prompt. The
 * command runner spawns with `shell: true`: /bin/sh on Unix, %ComSpec% (else cmd.exe) on Windows.
 * `sandboxed`: the person left the sandbox on (it is used when the platform has one).
 */
export function nodeHostFacts(env: NodeJS.ProcessEnv = process.env, sandboxed = false): HostFacts {
  const os = `${PLATFORM_NAMES[process.platform] ?? process.platform} ${release()} (${process.arch})`;
  const shell = process.platform === 'win32' ? (env['ComSpec'] ?? 'cmd.exe') : '/bin/sh';
  const kind = sandboxed ? detectSandbox(env).kind : 'none';
  if (kind === 'none') return { os, shell };
  const sandbox = `in a sandbox (${kind}): the workspace is writable except .git/ and protected paths (git add and commit fail), the home folder is hidden, /tmp is private`;
  return { os, shell, sandbox };
}
