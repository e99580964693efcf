// Main thread. Market-maker HTTP routes: the admin registry (contract section 7), the maker's own session
// (a bearer from the socket's auth_result) and the AsyncAPI document of the maker socket.
import { Type } from '@sinclair/typebox';
import { defineRoute, json } from '../route.js';
import type { Services } from '../services.js';
import { ApiError, errors } from '../../lib/errors.js';
import { parseAddress } from '../../crypto/address.js';
import { buildAsyncApi } from '../../contract/asyncapi.js';
import { Address, AddressInput, SafeInt, StrictObject } from '../../contract/common.js';
import type { MakerRecord } from '../../records/makers.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type MmRouteDeps = Pick<Services, 'makerGateway' | 'makers' | 'sessions' | 'makerStats' | 'makerProtection'>;

const MakerBody = Type.Object(
  {
    address: Address,
    name: Type.String(),
    created_at_ms: SafeInt(),
    connections: SafeInt({ description: 'authenticated sockets of this maker right now' }),
  },
  { $id: 'MarketMaker' },
);
const AddMakerRequest = StrictObject({
  address: AddressInput,
  name: Type.String({ minLength: 1, maxLength: 100, description: 'display name' }),
});
const MakerAddressParams = StrictObject({ address: AddressInput });
const RemoveMakerResponse = Type.Object({
  address: Address,
  removed: Type.Literal(true),
  closed_connections: SafeInt({ description: 'live sockets of the maker that were closed (MAKER_REMOVED)' }),
});
const MakerSessionResponse = Type.Object({
  address: Address,
  expires_at_ms: SafeInt({ description: 'session end, Unix ms; the socket gets AUTH_EXPIRED then' }),
});

export function mmRoutes(s: MmRouteDeps, version: string) {
  let asyncApi: unknown = null; // built on first ask
  const makerBody = (m: MakerRecord) => ({
    address: m.address,
    name: m.name,
    created_at_ms: m.createdAtMs,
    connections: s.makerGateway.connectionsOf(m.address),
  });
  const addressOrThrow = (input: string, path: string): string => {
    const address = parseAddress(input);
    if (address === null) throw errors.badChecksum(path);
    return address;
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/admin/market-makers',
      tag: 'admin',
      auth: 'admin',
      summary: 'Register a market maker by address (201), or rename a registered one (200)',
      body: AddMakerRequest,
      responses: { 201: MakerBody, 200: MakerBody },
      handler: async ({ body }) => {
        const outcome = await s.makers.add(addressOrThrow(body.address, '/address'), body.name);
        if (outcome.kind === 'full') throw errors.makerRegistryFull();
        return json(outcome.kind === 'created' ? 201 : 200, makerBody(outcome.maker));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/market-makers',
      tag: 'admin',
      auth: 'admin',
      summary: 'Registered market makers, oldest first, with their live connection counts',
      responses: { 200: Type.Object({ makers: Type.Array(MakerBody) }) },
      handler: () => json(200, { makers: s.makers.list().map(makerBody) }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/admin/market-makers/{address}',
      tag: 'admin',
      auth: 'admin',
      summary: 'Unregister a market maker: its live sockets are closed and its sessions revoked',
      params: MakerAddressParams,
      responses: { 200: RemoveMakerResponse },
      handler: async ({ params }) => {
        const address = addressOrThrow(params.address, '/address');
        // Registry first (synchronously, inside remove), so no handshake completes for it from here on;
        // then the live sockets; then the bearer sessions, durable before the answer.
        const removal = s.makers.remove(address);
        const closedConnections = s.makerGateway.disconnectAddress(address);
        const isRemoved = await removal;
        // Even for a maker no longer registered (404): a crash between an earlier removal and this revocation
        // left its sessions alive, and the operator's retry must still end them. Revoking is idempotent.
        await s.sessions.revokeMaker(address);
        // What the desk counted for it goes too, so memory follows the registry, not every address ever in it.
        s.makerStats.forget(address);
        s.makerProtection.reset(address);
        if (!isRemoved) throw new ApiError('MAKER_NOT_FOUND');
        return json(200, { address, removed: true, closed_connections: closedConnections });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mm/session',
      tag: 'mm',
      auth: 'maker',
      summary: "The maker bearer session's address and end",
      responses: { 200: MakerSessionResponse },
      handler: ({ auth }) => {
        // The bearer check just resolved this session, so its record exists unless revoked since.
        const expiresAtMs = s.sessions.expiresAtMsOf(auth.sessionKey);
        if (expiresAtMs === null) throw new ApiError('UNAUTHENTICATED'); // revoked between the two reads
        return json(200, { address: auth.address, expires_at_ms: expiresAtMs });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mm/asyncapi.json',
      tag: 'mm',
      auth: 'none',
      summary: 'AsyncAPI 3 document of the market-maker socket (/v1/mm/ws)',
      responses: { 200: Type.Object({}, { additionalProperties: true }) },
      handler: () => json(200, (asyncApi ??= buildAsyncApi(version))),
    }),
  ];
}
