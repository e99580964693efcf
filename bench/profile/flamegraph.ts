// Flame graphs and hot-function tables from V8 CPU profiles (`node --cpu-prof`, or `bench:load --cpu-prof
// DIR`), with no dependency: the issue asks for profiles where a target is missed, and a .cpuprofile read in
// a browser's devtools is one thread at a time and not something to commit. Pure functions; index.ts reads
// the files and writes what these return.
//
// A profile's samples are stacks taken every ~1 ms whether the thread runs JavaScript, waits inside a native
// call (an fsync in a commit counts) or sleeps. Sleeping is V8's `(idle)` (the event loop waiting), and, in
// a piscina thread, the own samples of piscina's `atomicsWaitLoop` (it waits for tasks in Atomics.wait, not
// in the event loop). The graph leaves both out, so its width is the thread's busy time, and the table says
// how busy that was.

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface CpuProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

/** One frame of the merged call tree: `samples` counts this frame and everything it called. */
export interface Frame {
  name: string;
  /** `file:line` (1-based) when the frame has a script; empty for V8's own entries. */
  location: string;
  selfSamples: number;
  samples: number;
  children: Frame[];
}

export interface HotFunction {
  name: string;
  location: string;
  /** Share of the thread's samples, 0..1. */
  share: number;
}

export interface ProfileSummary {
  totalSamples: number;
  /** Share of samples in which the thread did not sleep: it ran, collected garbage, or waited inside a native call. */
  busyShare: number;
  durationMs: number;
  topSelf: HotFunction[];
  topInclusive: HotFunction[];
}

/** Samples of `node` in which its thread slept (see the header). */
function idleSamples(node: CpuProfileNode): number {
  const { functionName, url } = node.callFrame;
  const isIdle = functionName === '(idle)' || (functionName === 'atomicsWaitLoop' && url.includes('/piscina/'));
  return isIdle ? (node.hitCount ?? 0) : 0;
}

function frameName(frame: CallFrame): string {
  return frame.functionName === '' ? '(anonymous)' : frame.functionName;
}

/** `file:line`, the file from `node_modules/` or our `dist/` on (colour() keys on those prefixes). */
function frameLocation(frame: CallFrame): string {
  if (frame.url === '') return '';
  const path = frame.url.replace(/^file:\/\//, '');
  const dependency = path.lastIndexOf('/node_modules/');
  const file = dependency >= 0 ? path.slice(dependency + 1) : path.replace(/^.*?\/dist\//, 'dist/');
  return `${file}:${frame.lineNumber + 1}`;
}

/** The call tree without the samples that slept, children merged by function and location, heaviest first. */
export function callTree(profile: CpuProfile): Frame {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const childIds = new Set(profile.nodes.flatMap((node) => node.children ?? []));
  const root = profile.nodes.find((node) => !childIds.has(node.id));
  if (root === undefined) throw new Error('profile has no root node');

  const build = (node: CpuProfileNode): Frame => {
    const selfSamples = (node.hitCount ?? 0) - idleSamples(node);
    const frame: Frame = {
      name: frameName(node.callFrame),
      location: frameLocation(node.callFrame),
      selfSamples,
      samples: 0,
      children: [],
    };
    const merged = new Map<string, Frame>();
    for (const id of node.children ?? []) {
      const child = byId.get(id);
      if (child === undefined) continue;
      const built = build(child);
      const key = `${built.name}\u0000${built.location}`;
      const same = merged.get(key);
      if (same === undefined) merged.set(key, built);
      else mergeInto(same, built);
    }
    frame.children = [...merged.values()].filter((child) => child.samples > 0).sort((a, b) => b.samples - a.samples);
    frame.samples = frame.selfSamples + frame.children.reduce((sum, child) => sum + child.samples, 0);
    return frame;
  };
  return build(root);
}

function mergeInto(into: Frame, from: Frame): void {
  into.selfSamples += from.selfSamples;
  into.samples += from.samples;
  for (const child of from.children) {
    const same = into.children.find((c) => c.name === child.name && c.location === child.location);
    if (same === undefined) into.children.push(child);
    else mergeInto(same, child);
  }
  into.children.sort((a, b) => b.samples - a.samples);
}

/** Busy share and the hottest functions, by own samples and by samples including their callees. */
export function summarize(profile: CpuProfile, top = 15): ProfileSummary {
  const totalSamples = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const sleptSamples = profile.nodes.reduce((sum, node) => sum + idleSamples(node), 0);
  const self = new Map<string, HotFunction & { samples: number }>();
  const inclusive = new Map<string, HotFunction & { samples: number }>();
  const count = (into: typeof self, frame: Frame, samples: number) => {
    const key = `${frame.name}\u0000${frame.location}`;
    const row = into.get(key) ?? { name: frame.name, location: frame.location, share: 0, samples: 0 };
    row.samples += samples;
    into.set(key, row);
  };
  // Inclusive: a function counts once per stack however often it recurses.
  const walk = (frame: Frame, onStack: Set<string>) => {
    count(self, frame, frame.selfSamples);
    const key = `${frame.name}\u0000${frame.location}`;
    const isOuter = !onStack.has(key);
    if (isOuter) {
      count(inclusive, frame, frame.samples);
      onStack.add(key);
    }
    for (const child of frame.children) walk(child, onStack);
    if (isOuter) onStack.delete(key);
  };
  const tree = callTree(profile);
  for (const child of tree.children) walk(child, new Set());
  const ranked = (rows: typeof self) =>
    [...rows.values()]
      .sort((a, b) => b.samples - a.samples)
      .slice(0, top)
      .map(({ name, location, samples }) => ({ name, location, share: totalSamples === 0 ? 0 : samples / totalSamples }));
  return {
    totalSamples,
    busyShare: totalSamples === 0 ? 0 : (totalSamples - sleptSamples) / totalSamples,
    durationMs: (profile.endTime - profile.startTime) / 1000,
    topSelf: ranked(self),
    topInclusive: ranked(inclusive),
  };
}

const WIDTH = 1200;
const ROW = 17;
const TOP = 44;
/** Frames narrower than this are left out: unreadable, and thousands of them bloat the file. */
const MIN_WIDTH_PX = 0.3;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Warm for our code, green for dependencies, blue for Node's own JavaScript, grey for V8 and native. */
function colour(frame: Frame, seed: number): string {
  const jitter = seed % 20;
  if (frame.location.startsWith('dist/')) return `hsl(${20 + jitter}, 85%, ${58 + (seed % 8)}%)`;
  if (frame.location.startsWith('node_modules/')) return `hsl(${100 + jitter}, 45%, ${55 + (seed % 8)}%)`;
  if (frame.location.startsWith('node:')) return `hsl(${205 + jitter}, 55%, ${65 + (seed % 8)}%)`;
  return `hsl(0, 0%, ${66 + (seed % 10)}%)`;
}

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * An SVG flame graph of the busy samples: callers below their callees, each frame as wide as its share of
 * them. Every frame's tooltip gives its samples and share; names are written where they fit.
 */
export function flameGraphSvg(profile: CpuProfile, title: string): string {
  const tree = callTree(profile);
  const total = tree.samples;
  const placed: Array<{ frame: Frame; depth: number; x: number; width: number }> = [];
  const place = (frame: Frame, depth: number, x: number, width: number) => {
    if (width < MIN_WIDTH_PX) return;
    placed.push({ frame, depth, x, width });
    let childX = x;
    for (const child of frame.children) {
      const childWidth = (child.samples / frame.samples) * width;
      place(child, depth + 1, childX, childWidth);
      childX += childWidth;
    }
  };
  // The root, V8's `(root)`, stands for all busy samples.
  if (total > 0) place({ ...tree, name: 'all busy samples', location: '' }, 0, 0, WIDTH);
  const depthMax = placed.reduce((max, p) => Math.max(max, p.depth), 0);
  const height = TOP + (depthMax + 1) * ROW + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="monospace" font-size="11">`,
    `<rect width="${WIDTH}" height="${height}" fill="#fdfdf8"/>`,
    `<text x="6" y="18" font-size="14">${esc(title)}</text>`,
    `<text x="6" y="34" fill="#555">${total} busy samples; width = share of them. Orange: parlayd, green: dependencies, blue: Node, grey: V8/native. Hover for figures.</text>`,
    // Callers below their callees: the root row is the lowest.
    ...placed.map((p) => frameRect(p.frame, TOP + (depthMax - p.depth) * ROW, p.x, p.width, total)),
    '</svg>',
    '',
  ].join('\n');
}

function frameRect(frame: Frame, y: number, x: number, width: number, total: number): string {
  const share = ((100 * frame.samples) / total).toFixed(2);
  const label = `${frame.name}${frame.location === '' ? '' : ` ${frame.location}`}`;
  const chars = Math.floor((width - 4) / 6.6);
  const text = chars >= 3 ? (label.length <= chars ? label : `${label.slice(0, chars - 1)}…`) : '';
  return [
    `<g><title>${esc(label)}: ${frame.samples} samples (${share} %), ${frame.selfSamples} own</title>`,
    `<rect x="${x.toFixed(2)}" y="${y}" width="${width.toFixed(2)}" height="${ROW - 1}" fill="${colour(frame, hash(label))}"/>`,
    text === '' ? '' : `<text x="${(x + 2).toFixed(2)}" y="${y + ROW - 5}">${esc(text)}</text>`,
    '</g>',
  ].join('');
}
