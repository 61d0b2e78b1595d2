import type { z } from 'zod';
import { BlobRef, SHA256_HEX } from '../patches/schema';
import { StoreRecord } from './records';

export const BLOB_HASH = SHA256_HEX;

/** A way from a record to a field: a key, or `*` for every element of an array (every value of a map). */
export type BlobPath = readonly string[];

/** The parts of a zod schema's definition the walk reads. */
type Def = Partial<Record<'innerType' | 'left' | 'right' | 'in' | 'out' | 'element' | 'valueType', z.ZodType>> & {
  readonly shape?: Record<string, z.ZodType>;
  readonly options?: readonly z.ZodType[];
  readonly items?: readonly z.ZodType[];
  readonly getter?: () => z.ZodType;
  readonly values?: readonly unknown[];
};

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { def: Def }).def;
}

/** The schemas inside `schema` with the step that leads to each ('' for the same value). */
function children(def: Def): Array<readonly [string, z.ZodType]> {
  if (def.shape) return Object.entries(def.shape);
  const same = [def.innerType, def.left, def.right, def.in, def.out, def.getter?.(), ...(def.options ?? [])];
  const each = [def.element, def.valueType, ...(def.items ?? [])];
  return [
    ...same.filter((s): s is z.ZodType => s !== undefined).map((s) => ['', s] as const),
    ...each.filter((s): s is z.ZodType => s !== undefined).map((s) => ['*', s] as const),
  ];
}

/**
 * Every path in `schema` to a field whose schema is `target`, found by walking the schema
 * (objects, optionals, arrays, maps, unions, lazy and recursive schemas).
 */
export function pathsTo(schema: z.ZodType, target: z.ZodType, path: BlobPath = [], ancestors = new Set<z.ZodType>()): BlobPath[] {
  if (schema === target) return [path];
  if (ancestors.has(schema)) return [];
  ancestors.add(schema);
  const found: BlobPath[] = [];
  for (const [step, child] of children(defOf(schema)))
    found.push(...pathsTo(child, target, step === '' ? path : [...path, step], ancestors));
  ancestors.delete(schema);
  return [...new Map(found.map((p) => [p.join('.'), p])).values()];
}

/** Per record type, the paths of every field that names a blob: derived once from the record schemas. */
export const BLOB_PATHS: ReadonlyMap<string, readonly BlobPath[]> = new Map(
  (defOf(StoreRecord).options ?? []).map((option) => {
    const type = defOf(defOf(option).shape!['type']!).values![0] as string;
    return [type, pathsTo(option, BlobRef)] as const;
  }),
);

function collect(value: unknown, path: BlobPath, at: number, refs: string[]): void {
  if (at === path.length) {
    if (typeof value === 'string' && BLOB_HASH.test(value)) refs.push(value);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const step = path[at]!;
  if (step !== '*') return collect((value as Record<string, unknown>)[step], path, at + 1, refs);
  for (const item of Array.isArray(value) ? value : Object.values(value)) collect(item, path, at + 1, refs);
}

export function refsAt(value: unknown, paths: readonly BlobPath[]): string[] {
  const refs: string[] = [];
  for (const path of paths) collect(value, path, 0, refs);
  return refs;
}

/** Blob hashes a record names: every BlobRef field of its schema (patch contents, results, intents, restores). */
export function blobRefs(record: StoreRecord): string[] {
  return refsAt(record, BLOB_PATHS.get(record.type) ?? []);
}

/** Runs a record stands on (a fork's parent): garbage collection keeps them while the record's run exists. */
export function runRefs(record: StoreRecord): string[] {
  return record.type === 'fork' ? [record.parent.runId] : [];
}
