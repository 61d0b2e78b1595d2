import picomatch from 'picomatch';

/**
 * Paths that configure the editor or the tools: a write there could widen what the agent may do
 * (settings, tasks that run on folder open, dev containers, direnv, git hooks). Writing, editing or
 * deleting one always asks the person, whatever the tool's policy. Matched at any depth, case
 * insensitively, against the workspace-relative path with symlinks resolved.
 */
export const BUILTIN_PROTECTED_PATHS: readonly string[] = [
  '**/.vscode{,/**}',
  '**/*.code-workspace',
  '**/.devcontainer{,/**}',
  '**/.devcontainer.json',
  '**/.envrc',
  '**/.githooks{,/**}',
  '**/.husky{,/**}',
];

const OPTIONS = { dot: true, nocase: true, nonegate: true } as const;

/** Compiled patterns (compiling is most of a match's cost; the sandbox matches every entry of a tree). */
const compiled = new Map<string, (path: string) => boolean>();

function matcherOf(pattern: string): (path: string) => boolean {
  let matcher = compiled.get(pattern);
  if (matcher === undefined) {
    const here = picomatch(pattern, OPTIONS);
    const anywhere = picomatch(`**/${pattern}`, OPTIONS);
    matcher = (path) => here(path) || anywhere(path);
    if (compiled.size > 500) compiled.clear();
    compiled.set(pattern, matcher);
  }
  return matcher;
}

/**
 * Why `path` is protected (the pattern it matches), or undefined. `extra` can only add patterns:
 * the built-in ones always apply.
 */
export function protectedPathReason(path: string, extra: readonly string[] = []): string | undefined {
  const slashed = path.replace(/\\/g, '/').replace(/^\.\//, '');
  for (const pattern of [...BUILTIN_PROTECTED_PATHS, ...extra]) {
    if (pattern.trim() === '') continue;
    if (matcherOf(pattern)(slashed))
      return `${slashed} configures the editor or the tools (protected path ${pattern}): a change there could alter what the agent may do, so it always needs your approval`;
  }
  return undefined;
}
