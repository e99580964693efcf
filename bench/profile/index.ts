// `npm run bench:flame -- DIR [OUT]` (`node dist/bench/profile/index.js DIR [OUT]`): renders every
// .cpuprofile in DIR (from `bench:load -- <scenario> --cpu-prof DIR`, or any `node --cpu-prof`) as an SVG
// flame graph, and writes OUT/profiles.md: per thread, how busy it was and its hottest functions. OUT
// defaults to DIR. A thread is named by what it ran: the service's main thread, an RFQ shard, a verify thread.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { flameGraphSvg, summarize, type CpuProfile, type HotFunction } from './flamegraph.js';

/** `CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile`, as Node names them. */
const FILE_NAME = /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/;

function threadRole(profile: CpuProfile, threadId: number): string {
  const urls = new Set(profile.nodes.map((node) => node.callFrame.url));
  const ran = (suffix: string) => [...urls].some((url) => url.endsWith(suffix));
  if (threadId === 0) return ran('/src/main.js') ? 'main' : 'main-thread';
  if (ran('/rfq/shard-worker.js')) return 'shard';
  if (ran('/crypto/verify-worker.js')) return 'verify';
  return 'worker';
}

const pct = (share: number) => `${(100 * share).toFixed(1)} %`;
const row = (f: HotFunction) => `| ${pct(f.share)} | \`${f.name}\` | ${f.location === '' ? '(V8)' : `\`${f.location}\``} |`;

function main(): void {
  const [dir, outArg] = process.argv.slice(2);
  if (dir === undefined) {
    console.log('usage: node dist/bench/profile/index.js DIR [OUT]   (DIR holds .cpuprofile files)');
    process.exitCode = 2;
    return;
  }
  const out = outArg ?? dir;
  mkdirSync(out, { recursive: true });
  const files = readdirSync(dir)
    .filter((name) => FILE_NAME.test(name))
    .sort();
  if (files.length === 0) throw new Error(`no .cpuprofile files in ${dir}`);
  const sections = [
    '# CPU profiles',
    '',
    `From \`${dir}\`. Shares are of each thread's samples. Busy = not sleeping (V8's \`(idle)\`, or piscina's wait for a task); waiting inside a native call, such as an fsync, counts as busy.`,
    '',
  ];
  for (const file of files) {
    const [, pid, tid] = FILE_NAME.exec(file)!;
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const role = threadRole(profile, Number(tid));
    const name = `${pid}-${role}-t${tid}`;
    const summary = summarize(profile);
    writeFileSync(
      join(out, `${name}.svg`),
      flameGraphSvg(
        profile,
        `${role} (pid ${pid}, thread ${tid}): ${pct(summary.busyShare)} busy over ${(summary.durationMs / 1000).toFixed(1)} s`,
      ),
    );
    sections.push(
      `## ${role}: pid ${pid}, thread ${tid}`,
      '',
      `${summary.totalSamples} samples over ${(summary.durationMs / 1000).toFixed(1)} s, ${pct(summary.busyShare)} busy. Flame graph: [${name}.svg](${name}.svg). Source: \`${basename(file)}\`.`,
      '',
      '| own samples | function | where |',
      '|---|---|---|',
      ...summary.topSelf.map(row),
      '',
      '| with callees | function | where |',
      '|---|---|---|',
      ...summary.topInclusive.map(row),
      '',
    );
    console.log(`${name}: ${pct(summary.busyShare)} busy, ${summary.totalSamples} samples -> ${join(out, `${name}.svg`)}`);
  }
  writeFileSync(join(out, 'profiles.md'), sections.join('\n'));
  console.log(`summary: ${join(out, 'profiles.md')}`);
}

main();
