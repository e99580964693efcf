// Main thread, at start. The dashboard's static files, read once into memory: the page from the source tree
// (src/dashboard/page/, plain HTML/JS/CSS that tsc does not copy, found from the package root so the same
// code serves it from dist/ and from a clean clone) and uPlot from node_modules, where npm put it. No build
// step at run time and nothing fetched from elsewhere: the page loads only what this service serves.
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  contentType: string;
  body: Buffer;
}

const PAGE_FILES = {
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
  'charts.js': 'text/javascript; charset=utf-8',
} as const;

const UPLOT_FILES = {
  'uPlot.iife.min.js': 'text/javascript; charset=utf-8',
  'uPlot.min.css': 'text/css; charset=utf-8',
} as const;

/** Served under /dashboard/{name}: the page's own files and uPlot's, nothing else (no path from a request reaches the disk). */
export type AssetName = keyof typeof PAGE_FILES | keyof typeof UPLOT_FILES;

export interface DashboardAssets {
  page: Asset;
  byName: ReadonlyMap<string, Asset>;
}

/** The directory holding this package's package.json (parlayd), from this module's file. */
export function packageRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src', 'dashboard', 'page'))) return dir;
  }
  throw new Error('parlayd package root not found above ' + fileURLToPath(import.meta.url)); // a broken install
}

/** Reads every file once; a missing one stops the start (the package is incomplete). ~60 KB in all. */
export function loadDashboardAssets(): DashboardAssets {
  const pageDir = join(packageRoot(), 'src', 'dashboard', 'page');
  const uplotDir = dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'));
  const byName = new Map<string, Asset>();
  for (const [name, contentType] of Object.entries(PAGE_FILES)) byName.set(name, { contentType, body: readFileSync(join(pageDir, name)) });
  for (const [name, contentType] of Object.entries(UPLOT_FILES))
    byName.set(name, { contentType, body: readFileSync(join(uplotDir, name)) });
  return { page: { contentType: 'text/html; charset=utf-8', body: readFileSync(join(pageDir, 'index.html')) }, byName };
}
