// The demo's users: takers sending parlay RFQs at a modest rate over the current price windows and a few
// mention markets, and contest players. Each contest cycle creates three mention markets and a contest on
// them, lets the players fill it, closes betting, resolves the markets and so the contest (which pays out),
// then starts the next. Every loop stops at its next step once stop() is called.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { asAdmin, call, fundedUser, mentionMarket, windowMarket, type Api, type DemoUser } from './api.js';

const ASSETS = ['BTC', 'ETH', 'SOL'] as const;
/** Between one taker's RFQs, ms: three takers make about 4 RFQs a second. */
const TAKER_PAUSE_MS = 600;
const TAKER_FUNDS_MICROS = 9_000_000_000;
const CONTEST_PLAYERS = 8;
/** A contest takes entries this long, then its markets resolve. */
const CONTEST_OPEN_MS = 45_000;
/** Each round's prize pool, credited to the protocol account just before the contest takes it. */
const DEMO_PRIZE_POOL_MICROS = 50_000_000;

export interface Traffic {
  stop(): Promise<void>;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const direction = () => (Math.random() < 0.5 ? 'up' : 'down');

export async function startTraffic(api: Api, takerCount: number, onEvent: (line: string) => void): Promise<Traffic> {
  const takers = await Promise.all(Array.from({ length: takerCount }, () => fundedUser(api, TAKER_FUNDS_MICROS)));
  const players = await Promise.all(Array.from({ length: CONTEST_PLAYERS }, () => fundedUser(api, 500_000_000)));
  const longMarkets = await Promise.all([1, 2, 3].map((i) => mentionMarket(api, `Demo mention ${i}`, Date.now() + 24 * 3_600_000)));
  let isStopped = false;
  const loops = [
    ...takers.map((taker) => takerLoop(api, taker, longMarkets, () => isStopped)),
    contestLoop(api, players, () => isStopped, onEvent),
  ];
  return {
    stop: async () => {
      isStopped = true;
      await Promise.allSettled(loops);
    },
  };
}

async function takerLoop(api: Api, taker: DemoUser, longMarkets: readonly number[], isStopped: () => boolean): Promise<void> {
  while (!isStopped()) {
    try {
      // The current 5-minute windows change as time passes: looked up for each RFQ (the lookup is cheap).
      const windows = await Promise.all(ASSETS.map((asset) => windowMarket(api, asset, 300)));
      const pool = [...windows, ...longMarkets];
      const legCount = 1 + Math.floor(Math.random() * 3);
      const marketIds = [...new Set(Array.from({ length: legCount }, () => pick(pool)))];
      await call(api, 'POST', '/v1/rfq/unsigned?wait_ms=2000', taker.token, {
        wager_micros: (1 + Math.floor(Math.random() * 20)) * 1_000_000,
        min_odds: 1.1,
        legs: marketIds.map((market_id) => ({ market_id, direction: direction() })),
        shield_on: false,
        idempotency_key: randomUUID(),
      });
    } catch {
      // A refused RFQ (a window that just closed, the service stopping) is part of a live market.
    }
    await sleep(TAKER_PAUSE_MS * (0.5 + Math.random()));
  }
}

async function contestLoop(
  api: Api,
  players: readonly DemoUser[],
  isStopped: () => boolean,
  onEvent: (line: string) => void,
): Promise<void> {
  for (let round = 1; !isStopped(); round++) {
    const closesMs = Date.now() + CONTEST_OPEN_MS;
    const markets = await Promise.all(['A', 'B', 'C'].map((x) => mentionMarket(api, `Round ${round} market ${x}`, closesMs + 1_000)));
    // The prize pool comes from the protocol account (docs/money.md): fund it first.
    await asAdmin(api, 'POST', '/v1/admin/protocol/credit', { amount_micros: DEMO_PRIZE_POOL_MICROS, idempotency_key: randomUUID() });
    const contest = await asAdmin<{ contest_id: string }>(api, 'POST', '/v1/admin/contests', {
      title: `Demo lineup #${round}`,
      category: 'mentions',
      bet_amount_micros: 5_000_000,
      protocol_prize_pool_micros: DEMO_PRIZE_POOL_MICROS,
      entry_cap: players.length,
      betting_closes_ms: closesMs,
      bet_type: { kind: 'num_bets', value: 2 },
      game_type: 'lineups',
      winning_split_bps: [6_000, 4_000],
      markets: markets.map((market_id) => ({ market_id, category: 'main' })),
    });
    onEvent(`contest "Demo lineup #${round}" open for ${CONTEST_OPEN_MS / 1000} s`);
    // Players enter one by one over most of the window, so the dashboard sees entries and the pot grow.
    for (const player of players) {
      if (isStopped()) return;
      await sleep((CONTEST_OPEN_MS * 0.7) / players.length);
      const bets = [...markets]
        .sort(() => Math.random() - 0.5)
        .slice(0, 2)
        .map((market_id) => ({ market_id, direction: direction() }));
      await call(api, 'POST', '/v1/user/contest_bet', player.token, { contest_id: contest.contest_id, bets }).catch(() => undefined);
    }
    while (Date.now() < closesMs + 1_500) {
      if (isStopped()) return;
      await sleep(250);
    }
    for (const market of markets)
      await asAdmin(api, 'POST', `/v1/admin/markets/${market}/resolve`, { outcome: Math.random() < 0.5 ? 'YES' : 'NO' });
    onEvent(`contest "Demo lineup #${round}" resolved`);
  }
}
