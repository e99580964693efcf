// The profile renderer (bench/profile): a real V8 profile, taken with `node --cpu-prof` of a workload whose
// shape is known (one function does three times the work of another, then the thread sleeps), must come
// out with that shape: the heavier function about three times as wide, the sleep not drawn and not counted
// as busy, every frame inside its caller. No timing is asserted beyond those ratios.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');

const WORKLOAD = `
function spin(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }
function heavyWork() { return spin(3 * N); }
function lightWork() { return spin(N); }
const N = 4_000_000;
let sink = 0;
for (let round = 0; round < 8; round++) sink += heavyWork() + lightWork();
setTimeout(() => console.log(sink), 400); // sleeps: (idle) samples
`;

/** `<title>` of each drawn frame: its label and sample count; and the geometry of each rect. */
function drawnFrames(svg: string): Array<{ label: string; samples: number; x: number; y: number; width: number }> {
  const frames = [...svg.matchAll(/<g><title>(.*?): (\d+) samples [^<]*<\/title><rect x="([\d.]+)" y="(\d+)" width="([\d.]+)"/g)];
  return frames.map((m) => ({ label: m[1]!, samples: Number(m[2]), x: Number(m[3]), y: Number(m[4]), width: Number(m[5]) }));
}

test("a CPU profile renders as a flame graph and a table with the workload's shape", () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-flame-'));
  try {
    writeFileSync(join(dir, 'workload.js'), WORKLOAD);
    const profiled = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'prof')}`, join(dir, 'workload.js')], {
      encoding: 'utf8',
    });
    assert.equal(profiled.status, 0, profiled.stderr);

    const rendered = spawnSync(process.execPath, [join(repoRoot, 'dist/bench/profile/index.js'), join(dir, 'prof'), join(dir, 'out')], {
      encoding: 'utf8',
    });
    assert.equal(rendered.status, 0, rendered.stderr);
    const svgName = readdirSync(join(dir, 'out')).find((name) => name.endsWith('-main-thread-t0.svg'));
    assert.ok(svgName !== undefined, `a flame graph for the main thread: ${readdirSync(join(dir, 'out')).join(', ')}`);
    const frames = drawnFrames(readFileSync(join(dir, 'out', svgName), 'utf8'));

    const widest = (name: string) => frames.filter((f) => f.label.startsWith(`${name} `)).sort((a, b) => b.width - a.width)[0];
    const heavy = widest('heavyWork');
    const light = widest('lightWork');
    assert.ok(heavy !== undefined && light !== undefined, 'both functions are drawn');
    assert.match(heavy.label, /workload\.js:3$/, 'frames carry file:line, 1-based');
    const ratio = heavy.samples / light.samples;
    assert.ok(ratio > 1.8 && ratio < 5, `heavyWork drawn ${ratio.toFixed(2)}x lightWork (the workload: 3x)`);
    assert.ok(Math.abs(heavy.width / light.width - ratio) < 0.01 * ratio, 'width is proportional to samples');
    assert.ok(!frames.some((f) => f.label.startsWith('(idle)')), 'sleeping is not drawn');

    // Geometry: the root spans the width; every other frame lies within a frame one row below it. x and
    // width are written rounded to 0.01 px, so an edge may be off by up to 0.02; frames are at least 0.3 px
    // wide, so that slack cannot put one frame within two callers.
    const root = frames.find((f) => f.label === 'all busy samples')!;
    assert.equal(root.width, 1200);
    const slackPx = 0.05;
    for (const f of frames) {
      if (f === root) continue;
      const callers = frames.filter((c) => c.y === f.y + 17 && c.x <= f.x + slackPx && f.x + f.width <= c.x + c.width + slackPx);
      assert.equal(callers.length, 1, `${f.label} sits on exactly one caller`);
    }

    const table = readFileSync(join(dir, 'out', 'profiles.md'), 'utf8');
    const busy = Number(/samples over [\d.]+ s, ([\d.]+) % busy/.exec(table)?.[1]);
    assert.ok(busy > 5 && busy < 95, `the 400 ms sleep is not busy: ${busy} % busy`);
    assert.match(table, /\| [\d.]+ % \| `heavyWork` \| `.*workload\.js:3` \|/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
