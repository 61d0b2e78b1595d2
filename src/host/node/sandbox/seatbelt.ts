import type { SandboxPlan } from './plan';

// macOS: the same plan as a sandbox-exec (Seatbelt) profile. Written and unit-tested for its text
// only; it has not been run on a real Mac here (the README says so). In SBPL the last matching rule
// wins, so each narrowing follows the rule it narrows.

/** A string literal of the profile language. */
function quoted(path: string): string {
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function rule(action: string, paths: readonly string[]): string[] {
  return paths.length === 0 ? [] : [`(${action} ${paths.map((p) => `(subpath ${quoted(p)})`).join(' ')})`];
}

export function seatbeltProfile(plan: SandboxPlan): string {
  const home = plan.home !== undefined ? [plan.home] : [];
  const hidden = plan.hidden.map((h) => h.path);
  const inHome = [...plan.roots, ...plan.homePaths].filter((p) => plan.home !== undefined && p.startsWith(`${plan.home}/`));
  const readOnly = plan.readOnly.map((r) => r.path);
  const lines = [
    '(version 1)',
    '(allow default)',
    '(deny process-info* (target others))',
    '(deny file-write*)',
    ...rule('allow file-write*', [
      ...(plan.readOnlyRoots === true ? [] : plan.roots),
      ...plan.homePaths,
      '/private/tmp',
      '/private/var/folders',
      '/dev',
    ]),
    ...rule('deny file-read* file-write*', [...home, ...hidden]),
    ...rule('allow file-read*', [...inHome, ...plan.homePrograms]),
    ...rule('allow file-write*', plan.readOnlyRoots === true ? plan.homePaths.filter((p) => inHome.includes(p)) : inHome),
    ...rule('deny file-write*', readOnly),
    ...rule('deny file-read* file-write*', hidden),
    ...(plan.network ? [] : ['(deny network*)', '(allow network* (remote unix-socket))']),
  ];
  return `${lines.join('\n')}\n`;
}

export function sandboxExecArgs(plan: SandboxPlan, command: string): string[] {
  return ['-p', seatbeltProfile(plan), '/bin/sh', '-c', command];
}
