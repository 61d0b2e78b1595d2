// What a command printed, as text: UTF-8 unless the bytes say UTF-16 (a BOM, or the zero bytes
// of mostly-ASCII UTF-16, as `cmd /u` and some Windows tools print); on Windows, bytes that are not
// UTF-8 are in the system's ANSI code page (what cmd.exe and most programs write to a pipe), and
// `\r\n` is a line end.
import { spawnSync } from 'node:child_process';

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

/** TextDecoder's label of a Windows ANSI code page (the ones ICU decodes). */
function codePageLabel(codePage: number): string {
  const named: Record<number, string> = { 932: 'shift_jis', 936: 'gbk', 949: 'euc-kr', 950: 'big5', 874: 'windows-874' };
  return named[codePage] ?? (codePage >= 1250 && codePage <= 1258 ? `windows-${codePage}` : 'windows-1252');
}

let ansiDecoder: TextDecoder | undefined;

/** The system's ANSI code page (read once from the registry, as `reg` reports it); windows-1252 when it cannot be read. */
function windowsAnsiDecoder(): TextDecoder {
  if (ansiDecoder !== undefined) return ansiDecoder;
  const out = spawnSync('reg', ['query', 'HKLM\\SYSTEM\\CurrentControlSet\\Control\\Nls\\CodePage', '/v', 'ACP'], {
    encoding: 'utf8',
    timeout: 5000,
    windowsHide: true,
  });
  const codePage = Number(/ACP\s+REG_SZ\s+(\d+)/.exec(out.stdout ?? '')?.[1] ?? 1252);
  ansiDecoder = new TextDecoder(codePageLabel(codePage));
  return ansiDecoder;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 when the bytes are UTF-8; otherwise (Windows) the ANSI code page's text. */
function utf8OrAnsi(bytes: Uint8Array, platform: NodeJS.Platform, ansi: () => TextDecoder): string {
  if (platform !== 'win32') return Buffer.from(bytes).toString('utf8');
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return ansi().decode(bytes);
  }
}

function decodeBytes(bytes: Uint8Array, platform: NodeJS.Platform, ansi: () => TextDecoder): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return Buffer.from(bytes.subarray(2, bytes.length & ~1)).toString('utf16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return Buffer.from(swapPairs(bytes.subarray(2))).toString('utf16le');
  if (UTF8_BOM.every((b, i) => bytes[i] === b)) return Buffer.from(bytes.subarray(3)).toString('utf8');
  if (looksUtf16le(bytes)) return Buffer.from(bytes.subarray(0, bytes.length & ~1)).toString('utf16le');
  return utf8OrAnsi(bytes, platform, ansi);
}

/** The text of one output stream of a command on `platform` (`ansi`: the system code page's decoder, read once by default). */
export function decodeCommandOutput(
  bytes: Uint8Array,
  platform: NodeJS.Platform = process.platform,
  ansi: () => TextDecoder = windowsAnsiDecoder,
): string {
  const text = decodeBytes(bytes, platform, ansi);
  return platform === 'win32' ? text.replace(/\r\n/g, '\n') : text;
}
