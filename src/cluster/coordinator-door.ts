// The coordinator's side of its gateways (docs/scaling.md, "The coordinator"). The coordinator is the service
// as one process runs it, with its users, sessions, makers' registry, markets, oracle and contests in its own
// LMDB; this door lets gateways that keep none of that serve the RFQ path and the maker socket:
// - it answers their calls (coordinator-wire.ts CoordinatorCall): a session by its key, with its user's facts;
//   a maker's session made or ended for a gateway's socket; pages of the makers and of the markets;
// - it tells them, on one subject, what changed of what they hold copies of: a revocation, a maker
//   registered or removed, a user's preferences, a market written, a maker's protection limits. Each is published once durable, before
//   the answer to the request that made it leaves, so the gateway that forwarded that request has it first;
// - it runs the requests they forward on its own HTTP listener, for the caller they name. That listener
//   takes the caller's address from such a request only when it carries this process's door key, which is
//   drawn at start and never leaves the process (http/server.ts HttpDeps.forwardedKey).
import { randomUUID } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import type { StoredMarket } from '../contract/markets.js';
import type { Services } from '../http/services.js';
import { FORWARDED_CLIENT_HEADER, FORWARDED_KEY_HEADER } from '../http/forwarding.js';
import { storedMarketsAfter } from '../markets/market-table.js';
import type { MakerRecord } from '../records/makers.js';
import { marketKey } from '../records/markets.js';
import { Batcher } from '../lib/batcher.js';
import { errors } from '../lib/errors.js';
import {
  MAKERS_PER_PAGE,
  MARKETS_PER_PAGE,
  type CoordinatorAnswer,
  type CoordinatorCall,
  type CoordinatorChange,
  type ForwardedReply,
  type ForwardedRequest,
  type Page,
  type ProtectionCopy,
  type SessionCopy,
  PROTECTION_PER_PAGE,
} from './coordinator-wire.js';
import { decode, encode, subjects } from './wire.js';

export interface CoordinatorDoorOptions {
  nc: NatsConnection;
  services: Pick<Services, 'sessions' | 'users' | 'preferences' | 'makers' | 'markets' | 'store' | 'makerProtection'>;
  /** Where this process's HTTP listens (loopback when it listens on every address). */
  httpOrigin: string;
  /** The key a forwarded request carries (FORWARDED_KEY_HEADER). */
  forwardedKey: string;
  log: Logger;
}

export class CoordinatorDoor {
  readonly #incarnation = randomUUID();
  readonly #subscriptions: Subscription[];
  readonly #changes: Batcher<CoordinatorChange>;

  constructor(private readonly options: CoordinatorDoorOptions) {
    const { nc, services, log } = options;
    this.#changes = new Batcher((batch) => this.#publish(batch));
    services.sessions.onRevoked = (revocation) =>
      this.#changes.add(
        'sessionKeys' in revocation
          ? { k: 'revoked', sessionKeys: revocation.sessionKeys }
          : { k: 'maker-sessions-revoked', address: revocation.makerAddress },
      );
    services.makers.onChanged = (address, maker) => this.#changes.add({ k: 'maker', address, maker });
    services.preferences.onUpdated = (userId, preferences) => this.#changes.add({ k: 'preferences', userId, preferences });
    services.markets.onWritten((market) => this.#changes.add({ k: 'markets', markets: [market] }));
    services.makerProtection.onLimitsSet = (side, address, limits) => this.#changes.add({ k: 'protection', side, address, limits });
    const listen = (subject: string, handle: (msg: Msg) => void) =>
      nc.subscribe(subject, {
        callback: (error, msg) => {
          if (error !== null) return log.warn({ err: error, subject }, 'coordinator subscription error');
          handle(msg);
        },
      });
    this.#subscriptions = [
      listen(subjects.coordinatorCall, (msg) => this.#answer(msg)),
      listen(subjects.coordinatorHttp, (msg) => void this.#forward(msg)),
    ];
  }

  close(): void {
    for (const subscription of this.#subscriptions) subscription.unsubscribe();
  }

  #answer(msg: Msg): void {
    const reply = (answer: CoordinatorAnswer<unknown>) => void msg.respond(encode(answer));
    let call: CoordinatorCall;
    try {
      call = decode<CoordinatorCall>(msg.data);
    } catch {
      return reply({ ok: false, message: 'not a coordinator call' });
    }
    const answered = this.#decide(call);
    if (!(answered instanceof Promise)) return void reply({ ok: true, value: answered });
    answered.then(
      (value) => reply({ ok: true, value }),
      (err: unknown) => {
        this.options.log.warn({ err, call: call.k }, 'coordinator call failed');
        reply({ ok: false, message: (err as Error).message });
      },
    );
  }

  #decide(call: CoordinatorCall): unknown {
    const { sessions, users, preferences, makers, store, makerProtection } = this.options.services;
    switch (call.k) {
      case 'hello':
        return this.#incarnation;
      case 'session': {
        const record = sessions.liveRecordOf(call.sessionKey);
        if (record === undefined) return null;
        if (record.kind === 'maker')
          return { kind: 'maker', address: record.address, expiresAtMs: record.expiresAtMs } satisfies SessionCopy;
        const user = { tier: users.get(record.userId)?.tier ?? 0, preferences: preferences.get(record.userId) };
        return { kind: 'user', userId: record.userId, wallet: record.wallet, expiresAtMs: record.expiresAtMs, user } satisfies SessionCopy;
      }
      case 'issue-maker':
        return sessions.issueMaker(call.address, call.ttlMs);
      case 'revoke':
        return sessions.revoke(call.sessionKey).then(() => null);
      case 'makers': {
        const all = makers.list().sort((a, b) => (a.address < b.address ? -1 : 1));
        const from = call.after === null ? 0 : all.findIndex((m) => m.address > call.after!);
        const items = from < 0 ? [] : all.slice(from, from + MAKERS_PER_PAGE);
        const isLast = from < 0 || from + MAKERS_PER_PAGE >= all.length;
        return { items, next: isLast ? null : items.at(-1)!.address } satisfies Page<MakerRecord>;
      }
      case 'markets': {
        const items = storedMarketsAfter(store, call.afterKey, MARKETS_PER_PAGE);
        const next = items.length < MARKETS_PER_PAGE ? null : marketKey(items.at(-1)!.market_id);
        return { items, next } satisfies Page<StoredMarket>;
      }
      case 'protection': {
        const items = makerProtection.limitsAfter(call.afterKey, PROTECTION_PER_PAGE);
        const last = items.at(-1);
        const next = items.length < PROTECTION_PER_PAGE || last === undefined ? null : `${last.side}:${last.address}`;
        return { items, next } satisfies Page<ProtectionCopy>;
      }
    }
  }

  /** The request on this process's own listener, as the caller sent it to the gateway. */
  async #forward(msg: Msg): Promise<void> {
    let request: ForwardedRequest;
    try {
      request = decode<ForwardedRequest>(msg.data);
    } catch {
      return;
    }
    // As the gateway passed them on (http/forwarding.ts UNFORWARDED_HEADERS left out there, both ways).
    const headers = new Headers();
    for (const [name, value] of request.headers) headers.append(name, value);
    headers.set(FORWARDED_KEY_HEADER, this.options.forwardedKey);
    headers.set(FORWARDED_CLIENT_HEADER, request.client);
    try {
      const response = await fetch(this.options.httpOrigin + request.url, {
        method: request.method,
        headers,
        body: request.body === null || request.method === 'GET' || request.method === 'HEAD' ? null : request.body,
        redirect: 'manual',
      });
      const replyHeaders: [string, string][] = [];
      response.headers.forEach((value, name) => void replyHeaders.push([name, value]));
      const body = new Uint8Array(await response.arrayBuffer());
      msg.respond(encode({ status: response.status, headers: replyHeaders, body } satisfies ForwardedReply));
    } catch (err) {
      // Its own listener did not answer (it is stopping, or it is not listening yet): 503 at once, as for a
      // coordinator out of reach, rather than the gateway's deadline later.
      this.options.log.warn({ err, method: request.method }, 'forwarded request failed on the coordinator');
      const refusal = errors.coordinatorUnreachable();
      const headers: [string, string][] = [['content-type', 'application/json'], ...Object.entries(refusal.headers ?? {})];
      msg.respond(
        encode({ status: refusal.status, headers, body: Buffer.from(JSON.stringify(refusal.toBody())) } satisfies ForwardedReply),
      );
    }
  }

  #publish(batch: CoordinatorChange[]): void {
    try {
      this.options.nc.publish(subjects.coordinatorChanges, encode({ incarnation: this.#incarnation, changes: batch }));
    } catch (err) {
      // A closed connection: every gateway finds it (its beat, its disconnect) and takes its copies again.
      this.options.log.warn({ err }, 'coordinator changes could not be published');
    }
  }
}
