// Main thread. The maker's desk over HTTP (docs/maker-protocol.md sections 3.6-3.8): its standing
// quotes, its protection (and the operator's), and its stats. Bearer: the maker session; the operator's
// protection route takes the admin token.
import { Type } from '@sinclair/typebox';
import { defineRoute, json } from '../route.js';
import type { Services } from '../services.js';
import { ApiError, errors } from '../../lib/errors.js';
import { parseAddress } from '../../crypto/address.js';
import { AddressInput, SafeInt, StrictObject } from '../../contract/common.js';
import { ProtectionLimitsSchema, ProtectionView, StandingQuote, StatsView } from '../../contract/mm-desk.js';
import type { ProtectionLimits } from '../../records/makers.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type MmDeskRouteDeps = Pick<Services, 'clock' | 'makerProtection' | 'makerStats' | 'quoteBook'> & {
  makers: Pick<Services['makers'], 'has'>;
};

export function mmDeskRoutes(s: MmDeskRouteDeps) {
  const view = (address: string): ProtectionView => ({
    maker: s.makerProtection.limitsOf('maker', address),
    admin: s.makerProtection.limitsOf('admin', address),
    effective: s.makerProtection.effectiveOf(address),
    tripped: s.makerProtection.trippedOf(address),
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/mm/quotes',
      tag: 'mm',
      auth: 'maker',
      summary: "The maker's standing quotes, on all its sockets, oldest first",
      responses: { 200: Type.Object({ quotes: Type.Array(StandingQuote) }) },
      handler: ({ auth }) =>
        json(200, {
          quotes: s.quoteBook.list(auth.address).map((q) => ({
            request_id: q.requestId,
            quote_id: q.quoteId,
            odds: q.odds,
            max_wager_micros: q.maxWagerMicros,
            last_look: q.isLastLook,
            received_at_ms: q.receivedAtMs,
          })),
        }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mm/protection',
      tag: 'mm',
      auth: 'maker',
      summary: "The maker's protection limits, the operator's, the tighter of each that applies, and whether it tripped",
      responses: { 200: ProtectionView },
      handler: ({ auth }) => json(200, view(auth.address)),
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/mm/protection',
      tag: 'mm',
      auth: 'maker',
      summary: "Sets the maker's own protection limits (each null: no limit); durable, applies from the next fill",
      body: ProtectionLimitsSchema,
      responses: { 200: ProtectionView },
      handler: async ({ auth, body }) => {
        await s.makerProtection.setLimits('maker', auth.address, body as ProtectionLimits);
        return json(200, view(auth.address));
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/admin/market-makers/{address}/protection',
      tag: 'admin',
      auth: 'admin',
      summary: "Sets the operator's protection limits of a maker; the tighter of the maker's and these applies",
      params: StrictObject({ address: AddressInput }),
      body: ProtectionLimitsSchema,
      responses: { 200: ProtectionView },
      handler: async ({ params, body }) => {
        const address = parseAddress(params.address);
        if (address === null) throw errors.badChecksum('/address');
        if (!s.makers.has(address)) throw new ApiError('MAKER_NOT_FOUND');
        await s.makerProtection.setLimits('admin', address, body as ProtectionLimits);
        return json(200, view(address));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mm/stats',
      tag: 'mm',
      auth: 'maker',
      summary: 'What the maker did since since_ms (at most the last hour), as the service saw it',
      query: StrictObject({ since_ms: Type.Optional(SafeInt({ description: 'Unix ms; default: an hour ago' })) }),
      responses: { 200: StatsView },
      handler: ({ auth, query }) => {
        const nowMs = s.clock.nowMs();
        return json(200, s.makerStats.view(auth.address, query.since_ms ?? 0, nowMs));
      },
    }),
  ];
}
