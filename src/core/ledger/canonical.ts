import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped. Two inputs that
 * mean the same thing give the same text, whatever order the model wrote the keys in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}

/** sha256 hex of the canonical JSON of a tool input: the ledger's inputHash. */
export function inputHash(input: unknown): string {
  return createHash('sha256').update(canonicalJson(input), 'utf8').digest('hex');
}
