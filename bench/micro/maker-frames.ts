// `node dist/bench/micro/maker-frames.js [--quick]`: the main thread's share of a maker's messages (issue 35),
// one table of ops/s and p50/p99 (µs), also written to bench/results/maker-frames.json. Each stage is
// measured both ways, side by side in one process:
// - outbound, one RFQ's frames at 10 quoting makers (10 quote_ack, 9 rfq_result lost, 1 won) as a shard
//   sends them: the batch's structured clone (v8.serialize on the shard, v8.deserialize on main: the same
//   V8 serializer as the worker port) and what main does to learn its facts. "text": frames alone, main
//   recognises results by their prefix and JSON.parses them (the desk before issue 35); "typed": the fact's
//   fields beside the frame in the event (rfq/maker-facts.ts), as now; "nested": the fact as an object in the event,
//   the shape not taken (its keys are cloned per event).
// - inbound, one quote frame to its shard message: "two checks": decode, the compiled schema with its
//   result object, then odds * 10^4 from the number's text (codec.ts oddsToE4), as before; "one check":
//   decode, the compiled schema (isMakerMessage), odds * 10^4 by rounding (quoteOddsE4), as now.
// - inbound, a fan-out turn's 1,000 declines of one RFQ across the port to the shard (serialize on main,
//   deserialize on the shard): "objects", one message each, as before; "packed", one message with the
//   makers' ids (rfq/pack-declines.ts), as now.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { Bench } from 'tinybench';
import { makerFactOf, type MakerFact } from '../../src/rfq/maker-facts.js';
import { decodeFrame, isMakerMessage, validateMakerMessage } from '../../src/mm/inbound.js';
import { oddsToE4 } from '../../src/contract/order-codec.js';
import type { MainToShard, ShardToMain } from '../../src/rfq/messages.js';
import { packDeclines } from '../../src/rfq/pack-declines.js';
import { quoteOddsE4, type QuoteMessage, type ServerToMakerMessage } from '../../src/contract/mm.js';
import { repoRoot } from '../../test/helpers/paths.js';
import { benchRows } from './rows.js';

const MAKERS = 10;
const REQUEST_ID = '01c0ffee-0000-4000-8000-000000000000';

/** One RFQ's messages to its 10 quoting makers, in the order the shard sends them. */
function rfqMessages(): Array<{ makerId: string; message: ServerToMakerMessage }> {
  const out: Array<{ makerId: string; message: ServerToMakerMessage }> = [];
  const makerId = (i: number) => `${i + 1}`;
  for (let i = 0; i < MAKERS; i++) {
    out.push({
      makerId: makerId(i),
      message: { type: 'quote_ack', request_id: REQUEST_ID, quote_id: `q-${i}`, received_at_ms: 1_800_000_000_000 + i },
    });
  }
  for (let i = 0; i < MAKERS; i++) {
    const message: ServerToMakerMessage =
      i === 0
        ? { type: 'rfq_result', request_id: REQUEST_ID, outcome: 'won', quote_id: 'q-0', odds: 1.85, filled_wager_micros: '5000000' }
        : { type: 'rfq_result', request_id: REQUEST_ID, outcome: 'lost' };
    out.push({ makerId: makerId(i), message });
  }
  return out;
}

const RESULT = '{"type":"rfq_result",';

/**
 * Adds the stages to `bench`: all of them, or (`now`) only the two paths the service takes today, as
 * bench/micro/index.ts does for its stage table. Returns a check, to call after the run, that they ran, and
 * the bytes one RFQ's frames take across the port each way.
 */
export function addMakerFrameStages(
  bench: Bench,
  which: 'all' | 'now',
): { checkRan: () => void; bytes: { text: number; typed: number; nested: number } } {
  const messages = rfqMessages();
  const textBatch = (): ShardToMain[] =>
    messages.map(({ makerId, message }) => ({ kind: 'to_maker', makerId, frame: JSON.stringify(message) }));
  // As the shard makes them (shard.ts toMaker).
  const typedBatch = (): ShardToMain[] =>
    messages.map(({ makerId, message }): ShardToMain => {
      const frame = JSON.stringify(message);
      const fact = makerFactOf(message);
      return fact === null ? { kind: 'to_maker', makerId, frame } : { kind: 'to_maker', makerId, frame, ...fact };
    });
  const nestedBatch = () =>
    messages.map(({ makerId, message }) => {
      const frame = JSON.stringify(message);
      const fact = makerFactOf(message);
      return fact === null ? { kind: 'to_maker', makerId, frame } : { kind: 'to_maker', makerId, frame, fact };
    });
  const textBytes = serialize(textBatch());
  const typedBytes = serialize(typedBatch());
  const nestedBytes = serialize(nestedBatch());
  let sink = 0;
  // What the desk did before: a prefix check per frame, a JSON.parse per result (and per reject, cancel, last look).
  const learnFromText = (batch: ShardToMain[]) => {
    for (const event of batch) {
      if (event.kind !== 'to_maker' || !event.frame.startsWith(RESULT)) continue;
      const result = JSON.parse(event.frame) as { request_id: string; outcome: string; filled_wager_micros?: string };
      sink += result.request_id.length + (result.filled_wager_micros === undefined ? 0 : 1);
    }
  };
  const learnFromFacts = (batch: ShardToMain[]) => {
    for (const event of batch) {
      if (event.kind !== 'to_maker' || event.fact === undefined) continue;
      if (event.fact === 'rfq_ended') sink += event.requestId.length + (event.filledWagerMicros === null ? 0 : 1);
    }
  };
  const learnFromNested = (batch: Array<{ fact?: MakerFact }>) => {
    for (const { fact } of batch) {
      if (fact?.fact === 'rfq_ended') sink += fact.requestId.length + (fact.filledWagerMicros === null ? 0 : 1);
    }
  };

  const quote: QuoteMessage = { type: 'quote', request_id: REQUEST_ID, quote_id: 'q-000001', odds: 1.85, max_wager_micros: '5000000' };
  const quoteFrame = new TextEncoder().encode(JSON.stringify(quote)).buffer;
  let shardMessage: MainToShard | null = null;
  const toShard = (msg: QuoteMessage, oddsE4: number): MainToShard => ({
    kind: 'quote',
    requestId: msg.request_id,
    makerId: '1',
    makerAddress: '0x0000000000000000000000000000000000000001',
    quoteId: msg.quote_id,
    oddsE4,
    maxWagerMicros: msg.max_wager_micros,
    isLastLook: msg.last_look === true,
    receivedAtMs: 0,
  });

  const declines = Array.from({ length: 1_000 }, (_, i): MainToShard => ({ kind: 'decline', requestId: REQUEST_ID, makerId: `${i + 1}` }));
  const acrossThePort = (batch: MainToShard[]) => {
    sink += (deserialize(serialize(batch)) as MainToShard[]).length;
  };

  const isAll = which === 'all';
  if (isAll) {
    bench
      .add('outbound, text: shard serializes 20 frames', () => void serialize(textBatch()))
      .add('outbound, typed: shard serializes 20 frames + facts', () => void serialize(typedBatch()))
      .add('outbound, text: main deserializes + parses results', () => learnFromText(deserialize(textBytes) as ShardToMain[]));
  }
  bench.add('outbound, typed: main deserializes + reads facts', () => learnFromFacts(deserialize(typedBytes) as ShardToMain[]));
  if (isAll) {
    bench
      .add('outbound, nested: main deserializes + reads facts', () =>
        learnFromNested(deserialize(nestedBytes) as Array<{ fact?: MakerFact }>),
      )
      .add('inbound quote, two checks: decode + validate + oddsToE4', () => {
        const inbound = validateMakerMessage(decodeFrame(quoteFrame, false)!);
        if (!inbound.ok || inbound.message.type !== 'quote') throw new Error('a valid quote was refused');
        const oddsE4 = oddsToE4(inbound.message.odds);
        if (oddsE4 === null) throw new Error('odds refused');
        shardMessage = toShard(inbound.message, oddsE4);
      });
  }
  if (isAll) bench.add('inbound, 1,000 declines as objects: across the port', () => acrossThePort(declines));
  bench.add('inbound, 1,000 declines packed: packDeclines + across the port', () => acrossThePort(packDeclines(declines)));
  bench.add('inbound quote, one check: decode + isMakerMessage + quoteOddsE4', () => {
    const value = decodeFrame(quoteFrame, false)!;
    if (!isMakerMessage(value) || value.type !== 'quote') throw new Error('a valid quote was refused');
    shardMessage = toShard(value, quoteOddsE4(value.odds));
  });
  const checkRan = () => {
    if (sink === 0 || shardMessage === null) throw new Error('nothing measured');
  };
  return { checkRan, bytes: { text: textBytes.length, typed: typedBytes.length, nested: nestedBytes.length } };
}

async function main(): Promise<void> {
  const isQuick = process.argv.includes('--quick');
  const bench = new Bench({ time: isQuick ? 150 : 1000, warmupIterations: isQuick ? 5 : 50 });
  const { checkRan, bytes } = addMakerFrameStages(bench, 'all');
  await bench.run();
  checkRan();

  const rows = benchRows(bench);
  console.table(rows);
  console.log(`bytes across the port per RFQ (20 frames): text ${bytes.text}, typed ${bytes.typed}, nested ${bytes.nested}`);
  const summary = { when: new Date().toISOString(), node: process.version, isQuick, bytes, rows };
  const outDir = resolve(repoRoot, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'maker-frames.json'), JSON.stringify(summary, null, 2) + '\n');
}

// Run as a script; bench/micro/index.ts imports the stages alone.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
