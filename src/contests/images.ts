// Pure. Contest images (contract section 8): an uploaded image is base64 of PNG, JPEG or WebP, at most 1 MiB,
// its type decided by its magic bytes (never by what the client claims); without one, each category has a
// built-in default. The defaults are tiny SVGs written here, so the service needs no asset files.
import { validationError } from '../lib/errors.js';
import { CONTEST_LIMITS, type ContestCategory, type CreateContest, type ImageContentType } from '../contract/contests.js';
import type { ImageRecord } from '../records/contests.js';

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG_MAGIC = [0xff, 0xd8, 0xff];
const RIFF = [0x52, 0x49, 0x46, 0x46];
const WEBP = [0x57, 0x45, 0x42, 0x50];

const startsWith = (bytes: Uint8Array, magic: readonly number[], offset = 0) =>
  bytes.length >= offset + magic.length && magic.every((b, i) => bytes[offset + i] === b);

/** The image type named by the leading bytes, or null when they are none of PNG, JPEG, WebP. */
export function detectImageType(bytes: Uint8Array): ImageContentType | null {
  if (startsWith(bytes, PNG_MAGIC)) return 'image/png';
  if (startsWith(bytes, JPEG_MAGIC)) return 'image/jpeg';
  // RIFF container: "RIFF" <u32 size> "WEBP".
  if (startsWith(bytes, RIFF) && startsWith(bytes, WEBP, 8)) return 'image/webp';
  return null;
}

/** Decodes and checks an uploaded image; VALIDATION_FAILED (path /image/...) on any problem. */
export function decodeImage(image: NonNullable<CreateContest['image']>): ImageRecord {
  // Canonical base64 only: the schema checks the alphabet; here the length and a round trip, because
  // Buffer.from(..., 'base64') silently skips anything it does not understand.
  const bytes = Buffer.from(image.base64, 'base64');
  if (image.base64.length % 4 !== 0 || bytes.toString('base64') !== image.base64) {
    throw validationError([{ path: '/image/base64', message: 'not canonical padded base64' }]);
  }
  if (bytes.length > CONTEST_LIMITS.maxImageBytes) {
    throw validationError([{ path: '/image/base64', message: `image is ${bytes.length} bytes, more than 1 MiB` }]);
  }
  const contentType = detectImageType(bytes);
  if (contentType === null) {
    throw validationError([{ path: '/image/base64', message: 'not a PNG, JPEG or WebP image (magic bytes)' }]);
  }
  if (image.content_type !== undefined && image.content_type !== contentType) {
    throw validationError([{ path: '/image/content_type', message: `the bytes are ${contentType}` }]);
  }
  return { contentType, bytes: new Uint8Array(bytes) };
}

export interface ServedImage {
  contentType: string;
  bytes: Uint8Array;
}

const svg = (background: string, label: string) =>
  new Uint8Array(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="144" viewBox="0 0 256 144">` +
        `<rect width="256" height="144" fill="${background}"/>` +
        `<text x="128" y="80" font-family="sans-serif" font-size="28" fill="#ffffff" text-anchor="middle">${label}</text>` +
        `</svg>`,
      'utf8',
    ),
  );

const DEFAULT_IMAGES: Record<ContestCategory, ServedImage> = {
  mentions: { contentType: 'image/svg+xml', bytes: svg('#4b3fbf', 'Mentions') },
  sports: { contentType: 'image/svg+xml', bytes: svg('#1f8a4c', 'Sports') },
  culture: { contentType: 'image/svg+xml', bytes: svg('#c2410c', 'Culture') },
};

export function defaultImage(category: ContestCategory): ServedImage {
  return DEFAULT_IMAGES[category];
}
