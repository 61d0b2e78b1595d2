import { strict as assert } from 'node:assert';
import { ABSENT, decodeText, encodeText, hashContent, hashOrAbsent, isBinary } from '../../../src/core/patches/hash';
import { utf8 } from './fakes';

describe('patches/hash', () => {
  it('ignores a leading UTF-8 BOM for text (buffer text and disk file hash alike)', () => {
    const disk = encodeText('héllo\n', true);
    assert.equal(disk.length, utf8('héllo\n').length + 3);
    assert.equal(hashContent(disk), hashContent(utf8('héllo\n')));
  });

  it('keeps line endings: CRLF and LF differ', () => {
    assert.notEqual(hashContent(utf8('a\r\nb\r\n')), hashContent(utf8('a\nb\n')));
  });

  it('hashes binary content by raw bytes, BOM prefix included', () => {
    const bin = Uint8Array.of(0xef, 0xbb, 0xbf, 0, 1, 2);
    assert.ok(isBinary(bin));
    assert.notEqual(hashContent(bin), hashContent(bin.subarray(3)));
    assert.ok(isBinary(Uint8Array.of(0xff, 0xfe, 0x41)), 'invalid UTF-8 is binary');
    assert.match(hashContent(bin), /^[0-9a-f]{64}$/);
  });

  it('gives `absent` for a missing file', () => {
    assert.equal(hashOrAbsent(null), ABSENT);
    assert.equal(hashOrAbsent(utf8('')), hashContent(new Uint8Array(0)));
  });

  it('decodes and re-encodes text preserving the BOM', () => {
    const withBom = encodeText('x\r\ny', true);
    const decoded = decodeText(withBom);
    assert.deepEqual(decoded, { text: 'x\r\ny', bom: true });
    assert.deepEqual(encodeText(decoded!.text, decoded!.bom), withBom);
    assert.equal(decodeText(Uint8Array.of(0, 1)), null);
  });
});
