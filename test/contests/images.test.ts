// Contest image checks (contract section 8): the type comes from the magic bytes, the size is at most 1 MiB,
// and the base64 must be canonical. Pure; the served image is tested end to end in admin.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeImage, defaultImage, detectImageType } from '../../src/contests/images.js';
import { isApiError } from '../../src/lib/errors.js';
import { JPEG_BYTES, PNG_BYTES, WEBP_BYTES } from '../helpers/contests.js';

function assertValidation(fn: () => unknown, path: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(isApiError(err));
    assert.equal(err.code, 'VALIDATION_FAILED');
    assert.equal(err.details?.[0]?.path, path);
    return true;
  });
}

describe('contest images', () => {
  it('detects PNG, JPEG and WebP by their magic bytes only', () => {
    assert.equal(detectImageType(PNG_BYTES), 'image/png');
    assert.equal(detectImageType(JPEG_BYTES), 'image/jpeg');
    assert.equal(detectImageType(WEBP_BYTES), 'image/webp');
    assert.equal(detectImageType(Buffer.from('GIF89a......')), null);
    assert.equal(detectImageType(Buffer.from('RIFF\x24\x00\x00\x00WAVE', 'latin1')), null);
    assert.equal(detectImageType(PNG_BYTES.subarray(0, 7)), null);
    assert.equal(detectImageType(new Uint8Array(0)), null);
  });

  it('decodes an upload and keeps the detected type', () => {
    const image = decodeImage({ base64: JPEG_BYTES.toString('base64') });
    assert.equal(image.contentType, 'image/jpeg');
    assert.deepEqual(Buffer.from(image.bytes), JPEG_BYTES);
    assert.equal(decodeImage({ base64: PNG_BYTES.toString('base64'), content_type: 'image/png' }).contentType, 'image/png');
  });

  it('refuses a claimed content_type that the bytes contradict', () => {
    assertValidation(() => decodeImage({ base64: PNG_BYTES.toString('base64'), content_type: 'image/webp' }), '/image/content_type');
  });

  it('refuses bytes that are not an accepted image, and non-canonical base64', () => {
    assertValidation(() => decodeImage({ base64: Buffer.from('<svg></svg>').toString('base64') }), '/image/base64');
    assertValidation(() => decodeImage({ base64: PNG_BYTES.toString('base64').replace(/=+$/, '') + 'A' }), '/image/base64');
  });

  it('accepts exactly 1 MiB and refuses one byte more', () => {
    const exact = Buffer.alloc(1024 * 1024);
    PNG_BYTES.copy(exact);
    assert.equal(decodeImage({ base64: exact.toString('base64') }).bytes.length, 1024 * 1024);
    const over = Buffer.alloc(1024 * 1024 + 1);
    PNG_BYTES.copy(over);
    assertValidation(() => decodeImage({ base64: over.toString('base64') }), '/image/base64');
  });

  it('has a distinct default image for each category', () => {
    const images = (['mentions', 'sports', 'culture'] as const).map((c) => defaultImage(c));
    for (const image of images) {
      assert.equal(image.contentType, 'image/svg+xml');
      assert.match(Buffer.from(image.bytes).toString('utf8'), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    }
    assert.equal(new Set(images.map((i) => Buffer.from(i.bytes).toString('hex'))).size, 3);
  });
});
