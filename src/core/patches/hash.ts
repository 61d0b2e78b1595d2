import { createHash } from 'node:crypto';
import { ABSENT } from './schema';

export { ABSENT };

const BOM = Uint8Array.of(0xef, 0xbb, 0xbf);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

export function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2];
}

/** Binary = contains a NUL byte or is not valid UTF-8. */
export function isBinary(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return true;
  try {
    strictUtf8.decode(bytes);
    return false;
  } catch {
    return true;
  }
}

/**
 * sha256 hex of content. Text ignores a leading UTF-8 BOM, so an editor buffer's text encoded
 * as UTF-8 (no BOM) and the same file on disk (with BOM) hash alike; line endings are kept,
 * as VS Code's getText keeps the document's EOL. Binary content hashes its raw bytes.
 */
export function hashContent(bytes: Uint8Array): string {
  return sha256Hex(hasUtf8Bom(bytes) && !isBinary(bytes) ? bytes.subarray(3) : bytes);
}

/** sha256 hex of the bytes as they are (a blob's name). */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** hashContent, or `absent` for a file that does not exist. */
export function hashOrAbsent(bytes: Uint8Array | null): string {
  return bytes === null ? ABSENT : hashContent(bytes);
}

export interface DecodedText {
  readonly text: string;
  readonly bom: boolean;
}

/** Decodes UTF-8 text, remembering a leading BOM; null for binary content. */
export function decodeText(bytes: Uint8Array): DecodedText | null {
  if (isBinary(bytes)) return null;
  const bom = hasUtf8Bom(bytes);
  return { text: strictUtf8.decode(bom ? bytes.subarray(3) : bytes), bom };
}

/** Encodes text as UTF-8, with a leading BOM when the original had one. */
export function encodeText(text: string, bom: boolean): Uint8Array {
  const body = utf8Encoder.encode(text);
  if (!bom) return body;
  const out = new Uint8Array(body.length + 3);
  out.set(BOM, 0);
  out.set(body, 3);
  return out;
}

export function bytesEqual(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
