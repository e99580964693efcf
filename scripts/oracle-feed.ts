// A price feed for local use (issue 19): signs and pushes a random-walk price stream for the configured
// assets to a running parlayd, as an oracle would.
//   npm run oracle:feed -- [--url http://127.0.0.1:8080] [--assets BTC,ETH,SOL] [--interval-ms 1000]
//                          [--count N | --seconds N]
// Env: PARLAYD_ORACLE_FEED_URL, PARLAYD_ORACLE_FEED_ASSETS, PARLAYD_ORACLE_FEED_INTERVAL_MS for the same
// options; PARLAYD_ORACLE_KEY (0x + 64 hex) for the key. Without a key it generates a dev key and prints it
// once, marked as a dev key, with the PARLAYD_ORACLE_ADDRESSES line to start the service with: the key of a
// throwaway local feed, never one that guards money. A key from the environment is never printed.
//
// Reports are for ts_ms aligned to the interval (floor(now / interval) × interval), sent at each boundary,
// so with an interval that divides the window durations (1 s does 300, 900, 3600 s) every window boundary
// gets a report exactly at it: its start price, and the report that makes its end final. It talks only to
// --url. Stops after --count batches or --seconds, or cleanly on SIGINT / SIGTERM (the batch in flight is
// answered first). One line per batch on stdout.
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { oracleKeyFromHex, randomOracleKey, signOracleReport, type OracleKey } from '../src/oracle/report-signer.js';
import { toChecksumAddress } from '../src/crypto/address.js';

/** Start prices (× 10^8) of the random walk; another asset starts at 100. */
const START_PRICES: Readonly<Record<string, number>> = { BTC: 90_000, ETH: 3_000, SOL: 150 };
/** Standard deviation of one step's log return: ~0.05 % a second, about a crypto asset's quiet hour. */
const STEP_SIGMA = 0.0005;

/** The report time of the tick at `nowMs`: the latest interval boundary. */
export function alignedTsMs(nowMs: number, intervalMs: number): number {
  return Math.floor(nowMs / intervalMs) * intervalMs;
}

/** One random-walk step, an integer price_e8 of at least 1. `gaussian` is a standard normal draw. */
export function nextPriceE8(priceE8: number, gaussian: number): number {
  return Math.max(1, Math.round(priceE8 * Math.exp(STEP_SIGMA * gaussian)));
}

function standardNormal(): number {
  // Box-Muller; 1 - random() is in (0, 1], so the log is finite.
  return Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
}

interface FeedOptions {
  url: string;
  assets: string[];
  intervalMs: number;
  maxBatches: number | null;
  untilMs: number | null;
}

function fail(message: string): never {
  process.stderr.write(`oracle-feed: ${message}\n`);
  process.exit(2);
}

function parseOptions(): FeedOptions {
  const env = process.env;
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: env['PARLAYD_ORACLE_FEED_URL'] ?? 'http://127.0.0.1:8080' },
      assets: { type: 'string', default: env['PARLAYD_ORACLE_FEED_ASSETS'] ?? 'BTC,ETH,SOL' },
      'interval-ms': { type: 'string', default: env['PARLAYD_ORACLE_FEED_INTERVAL_MS'] ?? '1000' },
      count: { type: 'string' },
      seconds: { type: 'string' },
    },
  });
  if (!/^https?:\/\/[^/]+$/.test(values.url.replace(/\/$/, ''))) fail('--url must be http(s)://host[:port]');
  const assets = values.assets.split(',');
  if (!assets.every((a) => /^[A-Z0-9]{1,8}$/.test(a))) fail('--assets must be comma-separated symbols of 1..8 of A-Z, 0-9');
  const positive = (text: string | undefined, name: string): number | null => {
    if (text === undefined) return null;
    if (!/^[1-9][0-9]{0,8}$/.test(text)) fail(`${name} must be a positive integer`);
    return Number(text);
  };
  const intervalMs = positive(values['interval-ms'], '--interval-ms')!;
  const seconds = positive(values.seconds, '--seconds');
  return {
    url: values.url.replace(/\/$/, ''),
    assets,
    intervalMs,
    maxBatches: positive(values.count, '--count'),
    untilMs: seconds === null ? null : Date.now() + seconds * 1000,
  };
}

function loadKey(): OracleKey {
  const fromEnv = process.env['PARLAYD_ORACLE_KEY'];
  if (fromEnv !== undefined && fromEnv !== '') {
    try {
      return oracleKeyFromHex(fromEnv);
    } catch (err) {
      fail(`PARLAYD_ORACLE_KEY: ${(err as Error).message}`);
    }
  }
  const key = randomOracleKey();
  // Printed once, on purpose (issue 19): a generated key for a local feed, so it can be reused in a restart.
  process.stderr.write(
    `oracle-feed: DEV KEY, generated for local use only; never use it for real money:\n` +
      `PARLAYD_ORACLE_KEY=0x${Buffer.from(key.privateKey).toString('hex')}\n` +
      `oracle-feed: start parlayd with:\nPARLAYD_ORACLE_ADDRESSES=${toChecksumAddress(key.address)}\n`,
  );
  return key;
}

async function run(options: FeedOptions, key: OracleKey, stopped: Promise<void>): Promise<void> {
  const prices = new Map(options.assets.map((a) => [a, Math.round((START_PRICES[a] ?? 100) * 1e8)]));
  let isStopping = false;
  void stopped.then(() => (isStopping = true));
  let lastTsMs = -Infinity;
  for (let batch = 0; options.maxBatches === null || batch < options.maxBatches; batch++) {
    // A timer may fire a little before its boundary: wait until the clock reaches it, so no two batches share
    // a ts_ms (the same time with another random price would be refused ORACLE_CONFLICT).
    while (Date.now() < lastTsMs + options.intervalMs && !isStopping) {
      await Promise.race([new Promise((r) => setTimeout(r, lastTsMs + options.intervalMs - Date.now())), stopped]);
    }
    if (isStopping) return;
    const tsMs = alignedTsMs(Date.now(), options.intervalMs);
    lastTsMs = tsMs;
    const reports = options.assets.map((asset) => {
      const priceE8 = nextPriceE8(prices.get(asset)!, standardNormal());
      prices.set(asset, priceE8);
      return { asset, ts_ms: tsMs, price_e8: priceE8, signature: signOracleReport(key, { asset, tsMs, priceE8 }) };
    });
    const line: Record<string, unknown> = { ts_ms: tsMs };
    try {
      const res = await fetch(`${options.url}/v1/oracle/prices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reports }),
      });
      line['status'] = res.status;
      Object.assign(line, (await res.json()) as Record<string, unknown>);
    } catch (err) {
      // The service may be restarting: keep feeding, the next boundary's report makes the prices final.
      line['error'] = (err as Error).message;
    }
    process.stdout.write(`${JSON.stringify(line)}\n`);
    if (isStopping) return;
    const nowMs = Date.now();
    if (options.untilMs !== null && nowMs >= options.untilMs) return;
    // Sleep to the next boundary, or until a stop signal.
    const waitMs = options.intervalMs - (nowMs % options.intervalMs);
    await Promise.race([new Promise((r) => setTimeout(r, waitMs)), stopped]);
    if (isStopping) return;
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  const key = loadKey();
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  process.stderr.write(
    `oracle-feed: ${options.assets.join(',')} every ${options.intervalMs} ms to ${options.url} as ${toChecksumAddress(key.address)}\n`,
  );
  await run(options, key, stopped);
  process.exit(0);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
