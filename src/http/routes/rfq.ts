// Main thread. The RFQ routes (interface.md; contract section 6) and the maker PnL route (section 7).
import { defineRoute, json, type Reply } from '../route.js';
import { ApiError } from '../../lib/errors.js';
import type { Services } from '../services.js';
import type { RfqEngine } from '../../rfq/engine.js';
import type { CreateCommand } from '../../rfq/admission.js';
import { isOneString, positionOf } from '../../contract/paging.js';
import { isTerminal } from '../../records/rfqs.js';
import { TerminalResults } from '../../rfq/terminal-results.js';
import {
  RfqIdParams,
  RfqResult,
  SignedRfqRequest,
  TAKER_PNL_PAGE,
  TakerPnlQuery,
  TakerPnlResponse,
  UnsignedRfqRequest,
  WaitQuery,
} from '../../contract/rfq.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type RfqRouteDeps = Pick<Services, 'ownedViews' | 'store'>;

export function rfqRoutes(s: RfqRouteDeps, engine: RfqEngine) {
  const { pool, admission, metrics } = engine;
  const terminalResults = new TerminalResults(s.store);
  /** The journal engine: LMDB, a read model written behind, may not hold an RFQ its shard has already answered for. */
  const isReadModelBehind = pool.engine === 'journal';

  /** 201 for a new RFQ, 200 with the current status for a replay; optionally held until terminal. */
  // `ctx.signal` is read only when an answer has to wait (wait_ms): it is made on first read (http/server.ts).
  async function submit(command: CreateCommand, startNs: bigint, waitMs: number, ctx: { signal: AbortSignal }): Promise<Reply> {
    metrics.admissionSeconds.observe(Number(process.hrtime.bigint() - startNs) / 1e9);
    // A place to wait is taken before anything is created: when none is left, 503 and nothing was accepted.
    const releaseWaiter = waitMs > 0 ? pool.reserveWaiter() : null;
    try {
      const created = await pool.create(command, waitMs);
      if (!created.isReplay) metrics.createdTotal.inc({ kind: command.rfqKind });
      const status = created.isReplay ? 200 : 201;
      if (waitMs === 0 || isTerminal(created.result.status)) return json(status, created.result);
      // The create may have answered late (its write held to share the terminal commit): wait only what is
      // left of wait_ms. A terminal result that came with it is found at once whatever is left.
      const leftMs = Math.max(0, waitMs - Number(process.hrtime.bigint() - startNs) / 1e6);
      const terminal = await pool.waitForTerminal(created.result.request_id, leftMs, () => ctx.signal);
      return json(status, terminal ?? (await pool.status(created.result.request_id, command.userId)));
    } finally {
      releaseWaiter?.();
    }
  }

  async function waitForLive(requestId: string, userId: string, waitMs: number, ctx: { signal: AbortSignal }): Promise<Reply> {
    if (waitMs === 0) return json(200, await pool.status(requestId, userId));
    const releaseWaiter = pool.reserveWaiter();
    try {
      if (!isReadModelBehind) {
        const terminal = await pool.waitForTerminal(requestId, waitMs, () => ctx.signal);
        return json(200, terminal ?? (await pool.status(requestId, userId)));
      }
      // LMDB may not show an end the shard has made durable yet: the waiter is placed first, then the shard
      // asked, so an end that comes between the two is not missed.
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      ctx.signal.addEventListener('abort', onAbort);
      try {
        const waiting = pool.waitForTerminal(requestId, waitMs, () => stop.signal);
        const now = await pool.status(requestId, userId);
        if (isTerminal(now.status)) return json(200, now);
        return json(200, (await waiting) ?? (await pool.status(requestId, userId)));
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
        stop.abort();
      }
    } finally {
      releaseWaiter();
    }
  }

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/rfq',
      tag: 'rfq',
      auth: 'user',
      summary: 'Create an RFQ from a signed order (201), or replay one (200, same request_id)',
      body: SignedRfqRequest,
      query: WaitQuery,
      responses: { 201: RfqResult, 200: RfqResult },
      isShedUnderLoad: true,
      handler: async (ctx) => {
        const startNs = process.hrtime.bigint();
        return submit(await admission.signed(ctx.auth, ctx.body.order), startNs, ctx.query.wait_ms ?? 0, ctx);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/rfq/unsigned',
      tag: 'rfq',
      auth: 'user',
      summary: 'Create an RFQ for the session user without a signature (201), or replay one (200)',
      body: UnsignedRfqRequest,
      query: WaitQuery,
      responses: { 201: RfqResult, 200: RfqResult },
      isShedUnderLoad: true,
      handler: (ctx) => {
        const startNs = process.hrtime.bigint();
        return submit(admission.unsigned(ctx.auth, ctx.body), startNs, ctx.query.wait_ms ?? 0, ctx);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/rfq/{id}',
      tag: 'rfq',
      auth: 'user',
      summary: 'Live status of an active RFQ, or its stored terminal result; wait_ms holds until terminal',
      params: RfqIdParams,
      query: WaitQuery,
      responses: { 200: RfqResult },
      handler: (ctx) => {
        const { auth, params, query } = ctx;
        // Terminal results are answered here, synchronously and without a hop to the shard.
        const stored = terminalResults.lookup(params.id);
        if (stored === undefined && isReadModelBehind) return waitForLive(params.id, auth.userId, query.wait_ms ?? 0, ctx);
        if (stored === undefined || stored.userId !== auth.userId) throw new ApiError('RFQ_NOT_FOUND');
        if (stored.isTerminal) return { status: 200, body: stored.resultJson, contentType: 'application/json' };
        return waitForLive(params.id, auth.userId, query.wait_ms ?? 0, ctx);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/rfq/{id}/cancel',
      tag: 'rfq',
      auth: 'user',
      summary: 'Cancel a pending RFQ; 409 RFQ_NOT_CANCELLABLE once finalizing or terminal',
      params: RfqIdParams,
      responses: { 200: RfqResult },
      handler: async ({ auth, params }) => {
        // A terminal RFQ is answered here, as its shard would: no hop, and an id naming a shard that no
        // longer runs (the service restarted with fewer) is still 409 to its owner rather than 404.
        const stored = terminalResults.lookup(params.id);
        if (stored?.isTerminal === true && stored.userId === auth.userId) throw new ApiError('RFQ_NOT_CANCELLABLE');
        return json(200, await pool.cancel(params.id, auth.userId));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mm/taker_pnl',
      readsOwnWrites: true,
      tag: 'market-makers',
      auth: 'maker',
      summary: "The calling maker's fills grouped by taker (shielded takers by a stable opaque id), in taker order, paged",
      query: TakerPnlQuery,
      responses: { 200: TakerPnlResponse },
      paged: { items: 'takers', defaultLimit: TAKER_PNL_PAGE.defaultLimit, isPosition: isOneString },
      handler: async ({ auth, query }, { after, limit }) => {
        const args = { address: auth.address, sinceMs: query.since_ms ?? 0, limit, afterTaker: after?.[0] ?? null };
        const page = await s.ownedViews.readEvery('takerPnl', args);
        return { items: page.items, next: positionOf(page.next) };
      },
    }),
  ];
}
