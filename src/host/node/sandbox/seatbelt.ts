import type { SandboxPlan } from './plan';

// macOS: the same plan as a sandbox-exec (Seatbelt) profile. Written and unit-tested for its text
// only; it has not been run on a real Mac here (the README says so). In SBPL the last matching rule
// wins, so each narrowing follows the rule it narrows.

/** A string literal of the profile language. */
function quoted(path: string): string {
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export function seatbeltProfile(plan: SandboxPlan): string {
  const lines = ['(version 1)', '(allow default)', '(deny process-info* (target others))', '(deny file-write*)'];
  const writable = [...plan.roots, ...plan.homePaths, '/private/tmp', '/private/var/folders', '/dev'];
  lines.push(`(allow file-write* ${writable.map((p) => `(subpath ${quoted(p)})`).join(' ')})`);
  if (plan.readOnly.length > 0) lines.push(`(deny file-write* ${plan.readOnly.map((r) => `(subpath ${quoted(r.path)})`).join(' ')})`);
  const unseen = [...(plan.home !== undefined ? [plan.home] : []), ...plan.hidden.map((h) => h.path)];
  if (unseen.length > 0) lines.push(`(deny file-read* file-write* ${unseen.map((p) => `(subpath ${quoted(p)})`).join(' ')})`);
  const seen = [...plan.roots, ...plan.homePaths].filter((p) => plan.home !== undefined && p.startsWith(`${plan.home}/`));
  if (seen.length > 0) lines.push(`(allow file-read* ${seen.map((p) => `(subpath ${quoted(p)})`).join(' ')})`);
  if (seen.length > 0) lines.push(`(allow file-write* ${seen.map((p) => `(subpath ${quoted(p)})`).join(' ')})`);
  if (plan.readOnly.length > 0) lines.push(`(deny file-write* ${plan.readOnly.map((r) => `(subpath ${quoted(r.path)})`).join(' ')})`);
  const hiddenAgain = plan.hidden.map((h) => `(subpath ${quoted(h.path)})`);
  if (hiddenAgain.length > 0) lines.push(`(deny file-read* file-write* ${hiddenAgain.join(' ')})`);
  if (!plan.network) lines.push('(deny network*)', '(allow network* (remote unix-socket))');
  return `${lines.join('\n')}\n`;
}

export function sandboxExecArgs(plan: SandboxPlan, command: string): string[] {
  return ['-p', seatbeltProfile(plan), '/bin/sh', '-c', command];
}
