import * as zlib from 'node:zlib';

let table: Uint32Array | undefined;

function crcTable(): Uint32Array {
  if (table) return table;
  table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

function crc32Portable(bytes: Uint8Array, previous = 0): number {
  const t = crcTable();
  let crc = (previous ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// zlib.crc32 is native from Node 20.15; older runtimes get the table version.
const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** The crc32 of `bytes`; with `previous`, of the bytes whose crc32 that was followed by `bytes`. */
export function crc32(bytes: Uint8Array, previous = 0): number {
  return native ? native(bytes, previous) : crc32Portable(bytes, previous);
}

export { crc32Portable };
