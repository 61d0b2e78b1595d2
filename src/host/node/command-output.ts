// What a command printed, as text: UTF-8 unless the bytes say UTF-16 (a BOM, or the zero bytes
// of mostly-ASCII UTF-16, as `cmd /u` and some Windows tools print); on Windows `\r\n` is a line end.

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** UTF-16LE without a BOM: in mostly-ASCII text every second byte is zero and the others are not. */
function looksUtf16le(bytes: Uint8Array): boolean {
  const pairs = bytes.length >> 1;
  if (pairs < 2) return false;
  let zeroHigh = 0;
  let zeroLow = 0;
  for (let i = 0; i + 1 < bytes.length; i += 2) {
    if (bytes[i] === 0) zeroLow++;
    if (bytes[i + 1] === 0) zeroHigh++;
  }
  return zeroHigh >= pairs * 0.6 && zeroLow <= pairs * 0.05;
}

function swapPairs(bytes: Uint8Array): Uint8Array {
  const swapped = new Uint8Array(bytes.length & ~1);
  for (let i = 0; i + 1 < bytes.length; i += 2) {
    swapped[i] = bytes[i + 1]!;
    swapped[i + 1] = bytes[i]!;
  }
  return swapped;
}

function decodeBytes(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return Buffer.from(bytes.subarray(2, bytes.length & ~1)).toString('utf16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return Buffer.from(swapPairs(bytes.subarray(2))).toString('utf16le');
  if (UTF8_BOM.every((b, i) => bytes[i] === b)) return Buffer.from(bytes.subarray(3)).toString('utf8');
  if (looksUtf16le(bytes)) return Buffer.from(bytes.subarray(0, bytes.length & ~1)).toString('utf16le');
  return Buffer.from(bytes).toString('utf8');
}

/** The text of one output stream of a command on `platform`. */
export function decodeCommandOutput(bytes: Uint8Array, platform: NodeJS.Platform = process.platform): string {
  const text = decodeBytes(bytes);
  return platform === 'win32' ? text.replace(/\r\n/g, '\n') : text;
}
