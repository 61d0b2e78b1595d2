import type { FlatRow } from './tree';
import type { RowContent } from './rowContent';

// What a problem row shows: an error or warning the editor reported after a call's writes.

/**
 * An error or warning the editor reported after the call's writes: where on the first line (the
 * file's name, so a narrow view keeps it), what it says below, on up to two lines.
 */
export function problemContent(row: FlatRow): RowContent {
  const problem = row.problem!;
  const where = `${problem.path}:${problem.line}`;
  const name = problem.path.slice(problem.path.lastIndexOf('/') + 1);
  const severity = problem.severity === 'error' ? 'Error' : 'Warning';
  const origin = problem.origin !== undefined ? ` (${problem.origin})` : '';
  const older = problem.unchecked ? ' · may be older' : '';
  const found = problem.unchecked
    ? 'found after the edit; the file had not been checked before it, so it may be older'
    : "the editor reported after this call's writes, new since before them";
  return {
    icon: problem.severity === 'error' ? 'error' : 'warning',
    spin: false,
    tone: problem.severity === 'error' ? 'error' : 'warning',
    label: `${name}:${problem.line}`,
    description: `${problem.severity}${origin}${older}`,
    badges: [],
    meta: problem.message,
    title: `${severity} ${found}:\n${where}${origin}\n${problem.message}\nEnter or click: open it in the editor`,
    spoken: `${severity} in ${problem.path}, line ${problem.line}: ${problem.message}${problem.unchecked ? ` (${found})` : ''}`,
    actions: [],
  };
}
