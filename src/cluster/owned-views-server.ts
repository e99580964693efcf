// A shard node's answers to the views of what its owner holds (http/owned-views.ts), on its owner's thread:
// each read once the node's LMDB holds everything the owner decided before the request arrived (its read
// barrier), so a caller that was told of a write (a 201, a credit's answer) finds it, as in one process.
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import type { MarketOf } from '../contract/markets.js';
import { isOwnedViewName, runOwnedView } from '../http/owned-views.js';
import { withOracleFields } from '../markets/due-index.js';
import { readStoredMarket } from '../markets/market-table.js';
import type { Store } from '../store/db.js';
import type { OwnedViewReply, OwnedViewRequest } from './rfq-wire.js';
import { decode, encode, subjects } from './wire.js';

/** The largest page a view is asked for: the routes' limits are below it (contract: paging). */
const MAX_VIEW_LIMIT = 1_000;

export interface OwnedViewsServerOptions {
  nc: NatsConnection;
  owner: number;
  store: Store;
  /** Resolves once the store holds everything the owner decided before the call. */
  barrier(): Promise<void>;
  log: Logger;
}

export function serveOwnedViews({ nc, owner, store, barrier, log }: OwnedViewsServerOptions): Subscription {
  const marketOf: MarketOf = (marketId) => {
    const stored = readStoredMarket(store, marketId);
    return stored === undefined ? undefined : withOracleFields(stored);
  };
  const refuse = { ok: false } satisfies OwnedViewReply;
  return nc.subscribe(subjects.ownerView(owner), {
    callback: (error, msg) => {
      if (error !== null) return log.warn({ err: error }, 'view subscription error');
      let request: OwnedViewRequest;
      try {
        request = decode<OwnedViewRequest>(msg.data);
      } catch {
        return void msg.respond(encode(refuse));
      }
      if (!isOwnedViewName(request?.name) || !isBoundedArgs(request.args)) return void msg.respond(encode(refuse));
      const { name, args } = request;
      barrier().then(
        () => {
          store.root.resetReadTxn(); // the commits the barrier waited for
          let reply: OwnedViewReply;
          try {
            reply = { ok: true, value: runOwnedView(name, store, marketOf, args as never) };
          } catch (err) {
            // Arguments the view cannot take (a caller's bug): refused, the node goes on.
            log.warn({ err, view: name }, 'a view could not be read');
            reply = refuse;
          }
          msg.respond(encode(reply));
        },
        (err: unknown) => log.warn({ err }, 'a view could not wait for the read model: not answered'),
      );
    },
  });
}

/** An object of arguments whose page, if it has one, is of a size the routes could ask for. */
function isBoundedArgs(args: unknown): boolean {
  if (typeof args !== 'object' || args === null) return false;
  const { limit } = args as { limit?: unknown };
  return limit === undefined || (Number.isSafeInteger(limit) && (limit as number) >= 1 && (limit as number) <= MAX_VIEW_LIMIT);
}
