import { release } from 'node:os';
import type { HostFacts } from '../../core/runtime/system-prompt';
import { detectSandbox, type CommandNetwork } from './sandbox';
import { shellOf, type Shell } from './shell';

/** What the prompt says of a sandboxed command's network (`allowlist` means none on macOS: the profile cannot hold a proxy). */
const NETWORK_WORDS: Record<CommandNetwork, string> = {
  on: '',
  off: '; no network',
  allowlist:
    process.platform === 'linux'
      ? '; network: HTTP(S) only, via the proxy in HTTPS_PROXY, to hosts the person allowed (no DNS; a refused host: ask the person)'
      : '; no network',
};

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
  network: CommandNetwork = 'on',
): HostFacts {
  const os = `${PLATFORM_NAMES[process.platform] ?? process.platform} ${release()} (${process.arch})`;
  const detected = detectSandbox(env);
  if (sandboxed && detected.kind !== 'none') {
    const sandbox = `in a sandbox (${detected.kind}): the workspace is writable except .git/ and protected paths (git add and commit fail), the home folder and the run store are hidden, /tmp is private${NETWORK_WORDS[network]}`;
    return { os, shell: shell.file, sandbox: sandbox.slice(0, 300) };
  }
  const why = sandboxed && detected.kind === 'none' ? detected.reason : 'the person switched the sandbox off';
  const sandbox = `WITHOUT a sandbox (${why}): a command can read and change anything the person's user can, .git/ included; each command waits for the person's approval unless they allowed commands`;
  return { os, shell: shell.file, sandbox: sandbox.slice(0, 300) };
}
