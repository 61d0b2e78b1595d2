import { release } from 'node:os';
import type { HostFacts } from '../../core/runtime/system-prompt';

const PLATFORM_NAMES: Record<string, string> = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };

/**
 * The operating system and the shell run_command uses, for the system prompt. The command runner
 * spawns with `shell: true`: /bin/sh on Unix, %ComSpec% (else cmd.exe) on Windows.
 */
export function nodeHostFacts(env: NodeJS.ProcessEnv = process.env): HostFacts {
  const os = `${PLATFORM_NAMES[process.platform] ?? process.platform} ${release()} (${process.arch})`;
  const shell = process.platform === 'win32' ? (env['ComSpec'] ?? 'cmd.exe') : '/bin/sh';
  return { os, shell };
}
