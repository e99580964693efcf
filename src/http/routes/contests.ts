// Main thread. Contest routes (interface.md "Contest ..." parts, contract section 8): the public list, detail
// and image, the user's entry, and the admin create, void and entries view. Decisions live in contests/.
import { Type } from '@sinclair/typebox';
import { defineRoute, json } from '../route.js';
import { MAX_BODY_BYTES } from '../server.js';
import type { Services } from '../services.js';
import {
  CallerEntry,
  CONTEST_LIMITS,
  ContestDetail,
  ContestEntryRequest,
  ContestEntryResponse,
  ContestIdParams,
  ContestImageBody,
  ContestList,
  ContestListQuery,
  CreateContest,
} from '../../contract/contests.js';
import { StrictObject, Uuid } from '../../contract/common.js';
import { isEntryKeyOf, MAX_ADMIN_ENTRIES_PAGE } from '../../contests/queries.js';
import { PageCache } from '../page-cache.js';
import { isOneString, isSafeIntegers, nextCursorProperty, pageQueryProperties } from '../../contract/paging.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type ContestsRouteDeps = Pick<Services, 'contests'>;

/** A page of the admin entries view; pages go in entry key order (user_id, then entry_index). */
const AdminEntriesQuery = StrictObject(pageQueryProperties({ maxLimit: MAX_ADMIN_ENTRIES_PAGE, defaultLimit: MAX_ADMIN_ENTRIES_PAGE }));
const AdminEntries = Type.Object({
  entries: Type.Array(Type.Composite([Type.Object({ user_id: Uuid }), CallerEntry])),
  ...nextCursorProperty,
});

/** Cursor positions (contract/paging.ts): the list's (created_at_ms, seq) of its last contest; an entry key. */
const isListPosition = isSafeIntegers(2);
const isEntryKeyOfContest =
  (contestId: string) =>
  (values: readonly unknown[]): values is [string] =>
    isOneString(values) && isEntryKeyOf(contestId, values[0]);

export function contestRoutes(s: ContestsRouteDeps) {
  const contests = s.contests;
  /** Serialized list pages, valid while contests.listVersion stays (http/page-cache.ts). */
  const listPages = new PageCache();
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/contests',
      tag: 'contests',
      auth: 'none',
      summary: 'Contests of every game_type, newest first, optionally filtered by status and category',
      query: ContestListQuery,
      responses: { 200: ContestList },
      // Not the `paged` option: a cached page is served without decoding its cursor or reading the records
      // again, and the option decodes the cursor and builds the body on every request.
      handler: (ctx) => {
        const { query } = ctx;
        const filter = { status: query.status || undefined, category: query.category || undefined };
        // The key is the whole query, its cursor text included. A page is cached only once its cursor was
        // verified for this route and filter (every caller of this list is the same anonymous caller to
        // cursors), so a hit needs no second check, and its next_cursor is everyone's. A refused cursor is
        // never cached: it is checked (one HMAC) on each request.
        const version = contests.listVersion;
        const key = JSON.stringify([filter.status ?? null, filter.category ?? null, query.limit ?? null, query.cursor ?? null]);
        let body = listPages.get(version, key);
        if (body === null) {
          const after = ctx.paging.after(isListPosition);
          const page = contests.list(filter, {
            limit: query.limit,
            after: after === null ? null : { createdAtMs: after[0]!, seq: after[1]! },
          });
          const nextCursor = ctx.paging.next(page.next === null ? null : [page.next.createdAtMs, page.next.seq]);
          body = JSON.stringify({ contests: page.contests, next_cursor: nextCursor });
          listPages.set(version, key, body);
        }
        return { status: 200, body, contentType: 'application/json' };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/contests/{id}',
      tag: 'contests',
      auth: 'optional-user',
      summary: 'Contest detail (lineups and outcast); caller is null without a bearer',
      params: ContestIdParams,
      responses: { 200: ContestDetail },
      handler: ({ params, auth }) => json(200, contests.detail(params.id, auth)),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/contests/{id}/image',
      tag: 'contests',
      auth: 'none',
      summary: "The contest's image (PNG, JPEG or WebP as uploaded; an SVG default per category otherwise)",
      params: ContestIdParams,
      responses: { 200: ContestImageBody },
      produces: 'image/*',
      handler: ({ params }) => {
        const image = contests.image(params.id);
        return {
          status: 200,
          body: image.bytes,
          contentType: image.contentType,
          // Uploaded bytes are served with the type their magic bytes proved, never sniffed as something else.
          headers: { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'public, max-age=300' },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/user/contest_bet',
      tag: 'contests',
      auth: 'user',
      summary: 'Enter a contest (201, reserves bet_amount_micros) or continue a survivor/streak entry (200, reserves nothing)',
      body: ContestEntryRequest,
      responses: { 200: ContestEntryResponse, 201: ContestEntryResponse },
      handler: async ({ auth, body }) => {
        const accepted = await contests.enter(auth.userId, body);
        return json(accepted.status, accepted.body);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/contests',
      tag: 'admin',
      auth: 'admin',
      summary: 'Create a contest; an optional base64 image (PNG, JPEG or WebP, at most 1 MiB)',
      body: CreateContest,
      responses: { 201: ContestDetail },
      // The contract's 64 KiB body limit plus the base64 of a 1 MiB image.
      maxBodyBytes: MAX_BODY_BYTES + CONTEST_LIMITS.maxImageBase64Chars,
      handler: async ({ body }) => json(201, await contests.create(body)),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/contests/{id}/void',
      tag: 'admin',
      auth: 'admin',
      summary: 'Void an open contest: every entry is refunded',
      params: ContestIdParams,
      responses: { 200: ContestDetail },
      handler: async ({ params }) => json(200, await contests.voidContest(params.id)),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/contests/{id}/entries',
      tag: 'admin',
      auth: 'admin',
      summary:
        'A page of the entries of a contest of any game_type, with their user_id, in key order (user_id, then entry_index); follow next_cursor until null',
      params: ContestIdParams,
      query: AdminEntriesQuery,
      responses: { 200: AdminEntries },
      // Not the `paged` option, which reads the cursor before the handler: here an unknown contest is 404
      // CONTEST_NOT_FOUND before its cursor is read (afterKey), as a cursor's entry key names its contest.
      handler: ({ params, paging, query }) => {
        const page = contests.adminEntries(params.id, {
          limit: query.limit ?? MAX_ADMIN_ENTRIES_PAGE,
          afterKey: () => paging.after(isEntryKeyOfContest(params.id))?.[0] ?? null,
        });
        return json(200, { entries: page.entries, next_cursor: paging.next(page.nextKey === null ? null : [page.nextKey]) });
      },
    }),
  ];
}
