// The demo's market makers, on the SDK (src/sdk) like any maker's bot: each with its own pricing edge, its
// own answer latency and its own last-look habit, so the dashboard shows them apart (quote rate, hit rate,
// last-look rejects). Prices follow scripts/demo-maker.ts's rule (every leg a fair coin, less an edge).
import { randomUUID } from 'node:crypto';
import { MakerClient, privateKeySigner } from '../../src/sdk/index.js';
import { priceRfq } from '../demo-maker.js';
import { asAdmin, type Api } from './api.js';

/** Each demo maker's collateral: 1,000,000 USDC, more than the demo's takers can win from it in a day. */
const DEMO_MAKER_COLLATERAL_MICROS = 1_000_000_000_000;

export interface MakerProfile {
  name: string;
  /** Kept from the fair price, in basis points: a lower edge wins more often. */
  edgeBps: number;
  /** How long the maker "thinks" before it answers an RFQ, ms (the quote window is 300 ms by default). */
  latencyMs: number;
  /** Whether it asks for a last look, and the share of those it then rejects. */
  lastLookRejectShare: number | null;
  /** Legs beyond which it declines. */
  maxLegs: number;
}

export const MAKER_PROFILES: readonly MakerProfile[] = [
  { name: 'steady (no last look)', edgeBps: 400, latencyMs: 5, lastLookRejectShare: null, maxLegs: 8 },
  { name: 'sharp (last look, rejects 1 in 4)', edgeBps: 250, latencyMs: 40, lastLookRejectShare: 0.25, maxLegs: 8 },
  { name: 'cheap but slow', edgeBps: 150, latencyMs: 260, lastLookRejectShare: null, maxLegs: 8 },
  { name: 'picky (1-2 legs, rejects half)', edgeBps: 200, latencyMs: 15, lastLookRejectShare: 0.5, maxLegs: 2 },
];

/** Big enough for the demo's wagers, small enough that a maker's payout budget is a real limit. */
const MAX_PAYOUT_MICROS = 200_000_000n;

export interface RunningMaker {
  close(): void;
}

/** Registers each profile under a fresh key and connects it; resolves once every one is authenticated. */
export async function startMakers(api: Api, wsUrl: string, profiles: readonly MakerProfile[] = MAKER_PROFILES): Promise<RunningMaker[]> {
  return Promise.all(profiles.map((profile) => startMaker(api, wsUrl, profile)));
}

async function startMaker(api: Api, wsUrl: string, profile: MakerProfile): Promise<RunningMaker> {
  const signer = privateKeySigner('0x' + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex'));
  await asAdmin(api, 'POST', '/v1/admin/market-makers', { address: signer.address, name: profile.name });
  // A maker quotes only what its collateral covers (docs/money.md): fund it for the whole demo.
  await asAdmin(api, 'POST', `/v1/admin/market-makers/${signer.address}/credit`, {
    amount_micros: DEMO_MAKER_COLLATERAL_MICROS,
    idempotency_key: randomUUID(),
  });
  const isLastLook = profile.lastLookRejectShare !== null;
  const client = new MakerClient({
    url: wsUrl,
    signer,
    onLastLook: () => Math.random() >= (profile.lastLookRejectShare ?? 0),
  });
  // Timers of answers not yet sent, so close() leaves nothing behind.
  const pending = new Set<NodeJS.Timeout>();
  client.on('rfq', (rfq) => {
    const timer = setTimeout(
      () => {
        pending.delete(timer);
        const decision =
          rfq.legs.length > profile.maxLegs ? null : priceRfq(rfq, { edgeBps: profile.edgeBps, maxPayoutMicros: MAX_PAYOUT_MICROS });
        try {
          if (decision === null || decision.kind === 'decline') client.decline(rfq.request_id);
          else
            client.quote(rfq.request_id, {
              odds: decision.odds,
              maxWagerMicros: decision.maxWagerMicros,
              lastLook: isLastLook,
              quoteId: randomUUID(),
            });
        } catch {
          // Disconnected meanwhile (the demo is stopping): nothing to answer on.
        }
      },
      profile.latencyMs * (0.5 + Math.random()),
    );
    pending.add(timer);
  });
  client.on('client_error', () => undefined);
  await client.connect();
  return {
    close: () => {
      for (const timer of pending) clearTimeout(timer);
      client.close();
    },
  };
}
