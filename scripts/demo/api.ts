// The demo's calls to the service's REST API (docs/api.md), as an operator and its users would make them.
import { randomUUID } from 'node:crypto';
import { Wallet, type HDNodeWallet } from 'ethers';

export interface Api {
  baseUrl: string;
  adminToken: string;
}

export interface DemoUser {
  wallet: HDNodeWallet;
  address: string;
  token: string;
}

/** A JSON call; anything but 2xx throws with the service's error body (the demo has no other error path). */
export async function call<T = Record<string, unknown>>(
  api: Api,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = {};
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(api.baseUrl + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

export const asAdmin = <T = Record<string, unknown>>(api: Api, method: string, path: string, body?: unknown) =>
  call<T>(api, method, path, api.adminToken, body);

/** A fresh wallet logged in through the SIWE flow (contract section 3) and credited `fundsMicros`. */
export async function fundedUser(api: Api, fundsMicros: number): Promise<DemoUser> {
  const wallet = Wallet.createRandom();
  const challenge = await call<{ message: string }>(api, 'POST', '/v1/auth/wallet/challenge', null, { address: wallet.address });
  const signature = await wallet.signMessage(challenge.message);
  const login = await call<{ session_token: string }>(api, 'POST', '/v1/auth/wallet', null, { message: challenge.message, signature });
  const address = wallet.address.toLowerCase();
  await asAdmin(api, 'POST', '/v1/admin/users/credit', { wallet: address, amount_micros: fundsMicros, idempotency_key: randomUUID() });
  return { wallet, address, token: login.session_token };
}

/** A mention market whose betting closes at `closesAtMs`, for the demo's contests and parlays. */
export async function mentionMarket(api: Api, name: string, closesAtMs: number): Promise<number> {
  const created = await asAdmin<{ market_id: number }>(api, 'POST', '/v1/admin/mention-markets', {
    name,
    source_kind: 'demo',
    source_event_id: randomUUID(),
    source_market_id: randomUUID(),
    betting_closes_at_ms: closesAtMs,
  });
  return created.market_id;
}

/** The market of the price window of `durationSecs` that is open now (created by the lookup). */
export async function windowMarket(api: Api, asset: string, durationSecs: number): Promise<number> {
  const found = await call<{ market: { market_id: number } }>(
    api,
    'GET',
    `/v1/markets/lookup?asset=${asset}&duration_secs=${durationSecs}&at_ms=${Date.now()}`,
    null,
  );
  return found.market.market_id;
}
