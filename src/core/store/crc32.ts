import * as zlib from 'node:zlib';

let table: Uint32Array | undefined;

function crc32Portable(bytes: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = table[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// zlib.crc32 is native from Node 20.15; older runtimes get the table version.
const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

export const crc32 = (bytes: Uint8Array): number => (native ? native(bytes) : crc32Portable(bytes));
