// Where things are, from a compiled test file's point of view (dist/test/...).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url)); // <repo>/dist/test/helpers
export const repoRoot = resolve(here, '../../..');
export const mainScript = resolve(repoRoot, 'dist/src/main.js');
