// Load generator, main thread. Arranges what a scenario needs through the public API, as a client would:
// users logged in by Sign-In with Ethereum and funded by the admin credit route, OPEN mention markets, and
// registered makers. Setup is not measured.
import { randomUUID } from 'node:crypto';
import type { BenchServer } from './server.js';
import { personalSign, randomWallet, signatureHex, type BenchWallet } from './sign.js';

export interface BenchUser extends BenchWallet {
  token: string;
  userId: string;
}

async function call<T>(server: BenchServer, method: string, path: string, body: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  const res = await fetch(server.baseUrl + path, { method, headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

export const adminPost = <T>(server: BenchServer, path: string, body: unknown) => call<T>(server, 'POST', path, body, server.adminToken);

/** A new wallet logged in through SIWE and credited with `creditMicros`. */
export async function fundedUser(server: BenchServer, creditMicros: number): Promise<BenchUser> {
  const wallet = randomWallet();
  const challenge = await call<{ message: string }>(server, 'POST', '/v1/auth/wallet/challenge', { address: wallet.checksumAddress });
  const signature = signatureHex(personalSign(wallet.privateKey, challenge.message));
  const login = await call<{ session_token: string; user_id: string }>(server, 'POST', '/v1/auth/wallet', {
    message: challenge.message,
    signature,
  });
  await adminPost(server, '/v1/admin/users/credit', { wallet: wallet.address, amount_micros: creditMicros, idempotency_key: randomUUID() });
  return { ...wallet, token: login.session_token, userId: login.user_id };
}

export async function fundedUsers(server: BenchServer, count: number, creditMicros: number): Promise<BenchUser[]> {
  const users: BenchUser[] = [];
  for (let i = 0; i < count; i++) users.push(await fundedUser(server, creditMicros));
  return users;
}

/** OPEN mention markets whose betting closes in a day. */
export async function openMarkets(server: BenchServer, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const market = await adminPost<{ market_id: number }>(server, '/v1/admin/mention-markets', {
      name: `bench market ${i}`,
      source_kind: 'bench',
      source_event_id: randomUUID(),
      source_market_id: randomUUID(),
      betting_closes_at_ms: Date.now() + 86_400_000,
    });
    ids.push(market.market_id);
  }
  return ids;
}

/** Collateral per bench maker: more than a whole run's fills can lock (contract section 11). */
const BENCH_MAKER_COLLATERAL_MICROS = 1_000_000_000_000_000;

/**
 * Registers and funds `count` new maker wallets, `concurrency` admin calls at a time (thousands of makers
 * for the fan-out scenario); returns them (the private keys sign the handshakes).
 */
export async function registerMakers(server: BenchServer, count: number, concurrency = 1): Promise<BenchWallet[]> {
  const makers: BenchWallet[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const wallet = randomWallet();
        await adminPost(server, '/v1/admin/market-makers', { address: wallet.checksumAddress, name: `bench maker ${i}` });
        await adminPost(server, `/v1/admin/market-makers/${wallet.checksumAddress}/credit`, {
          amount_micros: BENCH_MAKER_COLLATERAL_MICROS,
          idempotency_key: `bench-collateral:${wallet.checksumAddress}`,
        });
        makers.push(wallet);
      }
    }),
  );
  return makers;
}
