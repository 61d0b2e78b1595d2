import { release } from 'node:os';
import type { HostFacts } from '../../core/runtime/system-prompt';
import { detectSandbox } from './sandbox';
import { shellOf, type Shell } from './shell';

const PLATFORM_NAMES: Record<string, string> = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };

/**
 * The operating system, the shell run_command uses and whether commands are sandboxed, for the
 * system prompt. `sandboxed`: the person left the sandbox on (it is used when the platform has one).
 * Where commands run without one, the prompt says so plainly: what stays out of their reach then is
 * only what the file tools refuse.
 */
export function nodeHostFacts(
  env: NodeJS.ProcessEnv = process.env,
  sandboxed = false,
  shell: Shell = shellOf(process.platform, env),
): HostFacts {
  const os = `${PLATFORM_NAMES[process.platform] ?? process.platform} ${release()} (${process.arch})`;
  const detected = detectSandbox(env);
  if (sandboxed && detected.kind !== 'none') {
    const sandbox = `in a sandbox (${detected.kind}): the workspace is writable except .git/ and protected paths (git add and commit fail), the home folder and the run store are hidden, /tmp is private`;
    return { os, shell: shell.file, sandbox };
  }
  const why = sandboxed && detected.kind === 'none' ? detected.reason : 'the person switched the sandbox off';
  const sandbox = `WITHOUT a sandbox (${why}): a command can read and change anything the person's user can, .git/ included; each command waits for the person's approval unless they allowed commands`;
  return { os, shell: shell.file, sandbox: sandbox.slice(0, 300) };
}
