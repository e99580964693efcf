// A demo market maker on the SDK (src/sdk): connects, authenticates, and quotes every RFQ with a simple rule.
//   node dist/scripts/demo-maker.js --url ws://127.0.0.1:8080 [--key 0x...] [--register] [--edge-bps 300]
//        [--max-payout-micros 1000000000] [--last-look] [--domain-tag parlayd:mm:ws-auth:v1:localhost.dev]
// The key defaults to MAKER_PRIVATE_KEY (a fresh random key when unset: fine for a demo, printed as an
// address only). --register registers the address first with PARLAYD_ADMIN_TOKEN (local development only).
// One JSON line per event on stdout; nothing secret is ever printed.
//
// Pricing rule: every leg is treated as a fair coin, so n legs pay 2^n when fair. The maker keeps an edge of
// edge-bps plus 100 bps per leg beyond the first, rounds the odds down to 4 decimals, and sizes the quote so
// that the payout never exceeds max-payout-micros. FOK requests it cannot fill in full are declined.
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { MakerClient, privateKeySigner, type RfqMessage } from '../src/sdk/index.js';

export interface PricingParams {
  edgeBps: number;
  maxPayoutMicros: bigint;
}

export type PriceDecision = { kind: 'quote'; odds: number; maxWagerMicros: bigint } | { kind: 'decline'; why: string };

const EXTRA_LEG_EDGE_BPS = 100;

/** The demo's pricing rule (pure). Odds in units of 1e-4 all the way, as the service does (contract section 1). */
export function priceRfq(rfq: Pick<RfqMessage, 'legs' | 'wager_micros' | 'order_type'>, params: PricingParams): PriceDecision {
  const legCount = rfq.legs.length;
  const edgeBps = params.edgeBps + EXTRA_LEG_EDGE_BPS * (legCount - 1);
  if (edgeBps >= 10_000) return { kind: 'decline', why: 'edge would eat the whole price' };
  const fairOddsE4 = 10_000n * 2n ** BigInt(legCount);
  const oddsE4 = (fairOddsE4 * BigInt(10_000 - edgeBps)) / 10_000n; // rounded down: never better than the rule
  if (oddsE4 <= 10_000n) return { kind: 'decline', why: 'odds would not exceed 1' };
  const maxWagerMicros = (params.maxPayoutMicros * 10_000n) / oddsE4;
  if (maxWagerMicros < 1n) return { kind: 'decline', why: 'payout budget too small' };
  if (rfq.order_type === 2 && maxWagerMicros < BigInt(rfq.wager_micros)) return { kind: 'decline', why: 'FOK above the size limit' };
  return { kind: 'quote', odds: Number(oddsE4) / 10_000, maxWagerMicros };
}

function log(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(JSON.stringify({ ts: new Date().toISOString(), event, ...fields }) + '\n');
}

function fail(message: string): never {
  process.stderr.write(`demo-maker: ${message}\n`);
  process.exit(2);
}

/** What --register funds the maker's collateral with: 1,000,000 USDC. */
const DEMO_COLLATERAL_MICROS = 1_000_000_000_000;

async function register(url: string, address: string): Promise<void> {
  const adminToken = process.env['PARLAYD_ADMIN_TOKEN'];
  if (adminToken === undefined || adminToken === '') fail('--register needs PARLAYD_ADMIN_TOKEN');
  const httpUrl = new URL(url);
  httpUrl.protocol = httpUrl.protocol === 'wss:' ? 'https:' : 'http:';
  httpUrl.pathname = '/v1/admin/market-makers';
  const res = await fetch(httpUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ address, name: 'demo maker' }),
  });
  if (res.status !== 200 && res.status !== 201) fail(`registration failed: HTTP ${res.status} ${await res.text()}`);
  // A maker quotes only what its collateral covers (docs/money.md): fund it once, idempotently by address.
  httpUrl.pathname = `/v1/admin/market-makers/${address}/credit`;
  const funded = await fetch(httpUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ amount_micros: DEMO_COLLATERAL_MICROS, idempotency_key: `demo-maker-collateral:${address}` }),
  });
  if (funded.status !== 200) fail(`funding the collateral failed: HTTP ${funded.status} ${await funded.text()}`);
  log('registered and funded', { address, collateral_micros: DEMO_COLLATERAL_MICROS });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: process.env['PARLAYD_URL'] ?? 'ws://127.0.0.1:8080' },
      key: { type: 'string' },
      'domain-tag': { type: 'string', default: process.env['PARLAYD_MM_DOMAIN_TAG'] ?? 'parlayd:mm:ws-auth:v1:localhost.dev' },
      'edge-bps': { type: 'string', default: '300' },
      'max-payout-micros': { type: 'string', default: '1000000000' },
      'last-look': { type: 'boolean', default: false },
      register: { type: 'boolean', default: false },
    },
  });
  const edgeBps = Number(values['edge-bps']);
  if (!Number.isInteger(edgeBps) || edgeBps < 0 || edgeBps >= 10_000) fail('--edge-bps must be an integer in [0, 10000)');
  if (!/^[1-9][0-9]*$/.test(values['max-payout-micros'])) fail('--max-payout-micros must be a positive integer');
  const params: PricingParams = { edgeBps, maxPayoutMicros: BigInt(values['max-payout-micros']) };
  const key = values.key ?? process.env['MAKER_PRIVATE_KEY'] ?? '0x' + randomBytes(32).toString('hex');
  const signer = privateKeySigner(key);
  if (values.register) await register(values.url, signer.address);

  // Open quotes (quote_id -> max wager), for the last-look rule; bounded, oldest dropped first.
  const openQuotes = new Map<string, bigint>();
  const MAX_OPEN_QUOTES = 10_000;
  const client = new MakerClient({
    url: values.url,
    signer,
    domainTag: values['domain-tag'],
    // Demo rule: confirm a last look only for a quote we still hold, at no more than its quoted size.
    onLastLook: (msg) => {
      const maxWagerMicros = openQuotes.get(msg.quote_id);
      return maxWagerMicros !== undefined && BigInt(msg.fill_wager_micros) <= maxWagerMicros;
    },
  });
  client.on('authenticated', (s) => log('authenticated', { address: s.address, expires_at_ms: s.expiresAtMs }));
  client.on('disconnected', (d) => log('disconnected', d));
  client.on('auth_failed', (f) => log('auth_failed', f));
  client.on('server_error', (e) => log('server_error', { code: e.code, message: e.message }));
  client.on('quote_ack', (m) => log('quote_ack', { request_id: m.request_id, quote_id: m.quote_id }));
  client.on('quote_reject', (m) => log('quote_reject', { request_id: m.request_id, quote_id: m.quote_id, reason: m.reason }));
  client.on('last_look', (m) => log('last_look', { request_id: m.request_id, quote_id: m.quote_id }));
  client.on('rfq_result', (m) => {
    openQuotes.delete(`${m.request_id}/1`); // the demo quotes once per RFQ, as <request_id>/1
    log('rfq_result', { ...m });
  });
  client.on('rfq', (rfq) => {
    const decision = priceRfq(rfq, params);
    if (decision.kind === 'decline') {
      client.decline(rfq.request_id);
      return log('declined', { request_id: rfq.request_id, why: decision.why });
    }
    const quoteId = client.quote(rfq.request_id, {
      odds: decision.odds,
      maxWagerMicros: decision.maxWagerMicros,
      lastLook: values['last-look'],
      quoteId: `${rfq.request_id}/1`,
    });
    openQuotes.set(quoteId, decision.maxWagerMicros);
    if (openQuotes.size > MAX_OPEN_QUOTES) openQuotes.delete(openQuotes.keys().next().value!);
    log('quoted', {
      request_id: rfq.request_id,
      quote_id: quoteId,
      odds: decision.odds,
      max_wager_micros: String(decision.maxWagerMicros),
    });
  });
  const stop = () => {
    log('stopping');
    client.close();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  log('starting', { url: values.url, address: signer.address });
  await client.connect().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));
}

// Runs only when executed, so tests can import priceRfq.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
