import { excludedByGlob, fromBase, globTest, IgnoreRules, type PathFilter, type PathTest } from './filters';

/** A search as both engines receive it: everything compiled and checked once. */
export interface EngineQuery {
  readonly filter: PathFilter;
  /** The pattern as a JavaScript source and flags (plain text escaped). */
  readonly source: string;
  readonly flags: string;
  readonly pattern: string;
  readonly regex: boolean;
  readonly caseSensitive: boolean;
  readonly contextLines: number;
  /** Matching lines shown at most. */
  readonly maxMatches: number;
  readonly maxFileBytes: number;
  readonly budgetMs: number;
  readonly deadline: number;
  /** Whether a file (root-relative path) passes the include globs. */
  selected(path: string): boolean;
}

export interface SearchSpec {
  readonly rootAbs: string;
  /** Folder searched, relative to rootAbs ('' for the root). */
  readonly base: string;
  readonly pattern: string;
  readonly regex: boolean;
  readonly caseSensitive: boolean;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  /** Globs relative to the root excluded by the host (VS Code's files.exclude and search.exclude). */
  readonly hostExclude?: readonly string[];
  /** A root-relative folder never searched (the checkpoint store, when it is inside the folder). */
  readonly skip?: string;
  /** Root-relative files whose disk content is not searched (an editor buffer stands for them). */
  readonly skipFiles?: ReadonlySet<string>;
  readonly contextLines: number;
  readonly maxMatches: number;
  readonly maxFileBytes: number;
  readonly budgetMs: number;
}

export class PatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternError';
  }
}

const REGEX_SYNTAX = /[.*+?^${}()|[\]\\]/g;

/** The JavaScript form of a pattern: Unicode-aware when the pattern allows it, as ripgrep is. */
export function compilePattern(pattern: string, regex: boolean, caseSensitive: boolean): { source: string; flags: string } {
  const source = regex ? pattern : pattern.replace(REGEX_SYNTAX, '\\$&');
  const base = caseSensitive ? '' : 'i';
  for (const flags of [`${base}u`, base]) {
    try {
      new RegExp(source, flags);
      return { source, flags };
    } catch (error) {
      if (flags === base) throw new PatternError(`invalid regular expression: ${(error as Error).message}`);
    }
  }
  throw new PatternError('invalid regular expression');
}

/** The filter of a query; a base folder that is itself ignored is searched by the rules from it down. */
export async function filterOf(
  rootAbs: string,
  base: string,
  exclude: readonly string[],
  hostExclude: readonly string[] = [],
  skip?: string,
  skipFiles?: ReadonlySet<string>,
): Promise<PathFilter> {
  const rules = new IgnoreRules(rootAbs);
  const ignoredBase = base !== '' && (await rules.pathIgnored(base, '', true));
  const hostGlobs = globTest(hostExclude);
  const host: PathTest | null =
    skip === undefined && skipFiles === undefined
      ? hostGlobs
      : (path) => path === skip || (skipFiles?.has(path) ?? false) || (hostGlobs?.(path) ?? false);
  return { ignore: ignoredBase ? new IgnoreRules(rootAbs, base) : rules, base, exclude: globTest(exclude), hostExclude: host };
}

export async function engineQuery(spec: SearchSpec, now: number): Promise<EngineQuery> {
  const { source, flags } = compilePattern(spec.pattern, spec.regex, spec.caseSensitive);
  const filter = await filterOf(spec.rootAbs, spec.base, spec.exclude, spec.hostExclude, spec.skip, spec.skipFiles);
  const include: PathTest | null = globTest(spec.include);
  return {
    filter,
    source,
    flags,
    pattern: spec.pattern,
    regex: spec.regex,
    caseSensitive: spec.caseSensitive,
    contextLines: spec.contextLines,
    maxMatches: spec.maxMatches,
    maxFileBytes: spec.maxFileBytes,
    budgetMs: spec.budgetMs,
    deadline: now + spec.budgetMs,
    selected: (path) => include === null || include(fromBase(spec.base, path)),
  };
}

/** A ripgrep hit passes the same filter as a walked file: not excluded, not ignored below the base, included. */
export async function passes(query: EngineQuery, path: string): Promise<boolean> {
  if (!query.selected(path) || excludedByGlob(query.filter, path)) return false;
  return !(await query.filter.ignore.pathIgnored(path, query.filter.base));
}
