import { strict as assert } from 'node:assert';
import { z } from 'zod';
import { BlobRef } from '../../../src/core/patches/schema';
import { StoreRecord, type StoredRecord } from '../../../src/core/store/records';
import { BLOB_PATHS, blobRefs, pathsTo } from '../../../src/core/store/refs';
import { ledgerEntry } from './fixtures';

/** Every object field reachable in `schema`, as dotted paths (`*` for array elements) with its schema, optionals unwrapped. */
function fieldsOf(schema: z.ZodType, path = '', seen = new Set<z.ZodType>()): Array<{ path: string; schema: z.ZodType }> {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const def = (schema as unknown as { def: Record<string, unknown> }).def;
  const out: Array<{ path: string; schema: z.ZodType }> = [];
  const shape = def['shape'] as Record<string, z.ZodType> | undefined;
  for (const [key, child] of Object.entries(shape ?? {})) {
    let inner = child;
    while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
    const at = path === '' ? key : `${path}.${key}`;
    out.push({ path: at, schema: inner }, ...fieldsOf(child, at, seen));
  }
  for (const key of ['innerType', 'getter', 'left', 'right', 'in', 'out'] as const) {
    const value = def[key];
    const child = typeof value === 'function' ? (value as () => z.ZodType)() : (value as z.ZodType | undefined);
    if (child) out.push(...fieldsOf(child, path, seen));
  }
  for (const child of (def['options'] as z.ZodType[] | undefined) ?? []) out.push(...fieldsOf(child, path, seen));
  for (const key of ['element', 'valueType'] as const) {
    const child = def[key] as z.ZodType | undefined;
    if (child) out.push(...fieldsOf(child, `${path}.*`, seen));
  }
  seen.delete(schema);
  return out;
}

const recordSchemas = (StoreRecord as unknown as { options: z.ZodObject[] }).options;
const typeOf = (schema: z.ZodObject) => (schema.shape['type'] as z.ZodLiteral<string>).value;
const HASH = (n: number) => n.toString(16).padStart(64, '0');

describe('blob references derive from the record schemas', () => {
  it('every field named like a blob (…Blob, …Ref) in any record schema is a BlobRef, and refs counts its path', () => {
    const checked: string[] = [];
    for (const schema of recordSchemas) {
      const type = typeOf(schema);
      const counted = new Set((BLOB_PATHS.get(type) ?? []).map((p) => p.join('.')));
      for (const field of fieldsOf(schema)) {
        if (!/(blob|ref)$/i.test(field.path)) continue;
        checked.push(`${type}:${field.path}`);
        assert.equal(field.schema, BlobRef, `${type} ${field.path} names a blob: give it the BlobRef schema`);
        assert.ok(counted.has(field.path), `${type} ${field.path} is not counted by refs`);
      }
    }
    assert.deepEqual(checked.sort(), [
      'ledger:entry.intents.*.afterBlob',
      'ledger:entry.intents.*.beforeBlob',
      'ledger:entry.resultRef',
      'patch:patch.afterBlob',
      'patch:patch.beforeBlob',
      'restore:files.*.replacedBlob',
      'restore:files.*.writtenBlob',
    ]);
  });

  it('refs counts exactly the BlobRef fields: none of another name is left out', () => {
    const counted = [...BLOB_PATHS].flatMap(([type, paths]) => paths.map((p) => `${type}:${p.join('.')}`));
    const marked = recordSchemas.flatMap((schema) =>
      fieldsOf(schema)
        .filter((f) => f.schema === BlobRef)
        .map((f) => `${typeOf(schema)}:${f.path}`),
    );
    assert.deepEqual(counted.sort(), [...new Set(marked)].sort());
  });

  it('finds a BlobRef wherever a schema puts it: nested, optional, in arrays, maps, unions and lazy schemas', () => {
    const schema = z.object({
      a: z.array(z.object({ x: BlobRef.optional(), y: z.string() })),
      m: z.record(z.string(), BlobRef),
      u: z.union([z.object({ p: BlobRef }), z.number()]),
      l: z.lazy(() => z.object({ q: BlobRef.nullable() })),
      other: z.string(),
    });
    assert.deepEqual(
      pathsTo(schema, BlobRef).map((p) => p.join('.')),
      ['a.*.x', 'm.*', 'u.p', 'l.q'],
    );
  });

  it("a ledger entry's write-ahead intents count, with its result", () => {
    const record = ledgerEntry('k', 1, 'started', HASH(1));
    if (record.type !== 'ledger') throw new Error('a ledger record');
    const intents = [{ path: 'a.txt', beforeHash: HASH(2), afterHash: HASH(3), beforeBlob: HASH(2), afterBlob: HASH(3) }];
    const stored = { ...record, v: 1, at: 0, seq: 2, entry: { ...record.entry, intents } } as StoredRecord;
    assert.deepEqual(blobRefs(stored).sort(), [HASH(1), HASH(2), HASH(3)]);
  });
});
