// Main thread. The money routes of contract section 11: makers' and the protocol's balances and credits,
// withdrawals (the account holder's request and lists, the operator's queue and decision), the ledger check.
import { defineRoute, json, type PageRequest } from '../route.js';
import type { Services } from '../services.js';
import { errors } from '../../lib/errors.js';
import { parseAddress } from '../../crypto/address.js';
import { makerAccount, PROTOCOL, userAccount, type AccountId } from '../../records/ledger.js';
import type { WithdrawalRecord, WithdrawalStatus } from '../../records/withdrawals.js';
import { StrictObject, AddressInput, positiveMicrosOf } from '../../contract/common.js';
import {
  AccountCreditRequest,
  AdminWithdrawalList,
  AdminWithdrawalsQuery,
  LedgerCheckResponse,
  MakerBalance,
  MakerCreditResponse,
  ProtocolBalance,
  ProtocolCreditResponse,
  Withdrawal,
  WITHDRAWAL_PAGE,
  WithdrawalIdParams,
  WithdrawalList,
  WithdrawalRequest,
  WithdrawalsQuery,
  AdminWithdrawal,
} from '../../contract/money.js';
import { positionOf } from '../../contract/paging.js';

/** What these routes use of the services: no more (routes get narrow dependencies). */
type MoneyRouteDeps = Pick<Services, 'credits' | 'ledgerCheck' | 'ownedViews' | 'store' | 'withdrawals'>;

const MakerAddressParams = StrictObject({ address: AddressInput });
const isKeyPosition = (values: readonly unknown[]): values is [string] => values.length === 1 && typeof values[0] === 'string';
/** Every withdrawals list pages by the withdrawal's key in its index. */
const WITHDRAWALS_PAGED = { items: 'withdrawals', defaultLimit: WITHDRAWAL_PAGE.defaultLimit, isPosition: isKeyPosition } as const;

function addressOrThrow(input: string, path: string): string {
  const address = parseAddress(input);
  if (address === null) throw errors.badChecksum(path);
  return address;
}

const makerBalanceBody = (s: MoneyRouteDeps, address: string) => s.ownedViews.read(makerAccount(address), 'makerBalance', { address });
const protocolBalanceBody = (s: MoneyRouteDeps) => s.ownedViews.read(PROTOCOL, 'protocolBalance', {});

function withdrawalBody(r: WithdrawalRecord) {
  return {
    withdrawal_id: r.withdrawalId,
    status: r.status,
    amount_micros: r.amountMicros,
    destination: r.destination,
    created_at_ms: r.createdAtMs,
    finished_at_ms: r.finishedAtMs,
  };
}

export function moneyRoutes(s: MoneyRouteDeps) {
  const request = async (account: AccountId, userId: string | null, body: WithdrawalRequest) => {
    const destination = addressOrThrow(body.destination, '/destination');
    const { record, isReplay } = await s.withdrawals.request({
      account,
      userId,
      amountMicros: positiveMicrosOf(body.amount_micros, '/amount_micros'),
      destination,
      idempotencyKey: body.idempotency_key,
    });
    return json(isReplay ? 200 : 201, withdrawalBody(record));
  };
  const ownPage = async (account: AccountId, { after, limit }: PageRequest<[string]>) => {
    const page = await s.withdrawals.pageOfAccount(account, limit, after?.[0] ?? null);
    return { items: page.items.map(withdrawalBody), next: positionOf(page.next) };
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/admin/market-makers/{address}/credit',
      tag: 'admin',
      auth: 'admin',
      summary: "Fund a registered maker's collateral; idempotent by idempotency_key",
      params: MakerAddressParams,
      body: AccountCreditRequest,
      responses: { 200: MakerCreditResponse },
      handler: async ({ params, body }) => {
        const address = addressOrThrow(params.address, '/address');
        const amountMicros = positiveMicrosOf(body.amount_micros, '/amount_micros');
        await s.credits.creditMaker(address, amountMicros, body.idempotency_key);
        return json(200, { address, credited_micros: String(amountMicros), balance: await makerBalanceBody(s, address) });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/protocol/credit',
      tag: 'admin',
      auth: 'admin',
      summary: "Fund the protocol account (contests' prize pools); idempotent by idempotency_key",
      body: AccountCreditRequest,
      responses: { 200: ProtocolCreditResponse },
      handler: async ({ body }) => {
        const amountMicros = positiveMicrosOf(body.amount_micros, '/amount_micros');
        await s.credits.creditProtocol(amountMicros, body.idempotency_key);
        return json(200, { credited_micros: String(amountMicros), balance: await protocolBalanceBody(s) });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/protocol/balance',
      readsOwnWrites: true,
      tag: 'admin',
      auth: 'admin',
      summary: "The protocol account: available, and committed to unsettled contests' pools",
      responses: { 200: ProtocolBalance },
      handler: async () => json(200, await protocolBalanceBody(s)),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mm/balance',
      readsOwnWrites: true,
      tag: 'mm',
      auth: 'maker',
      summary: "The maker's collateral: available, locked by open fills, pending withdrawal",
      responses: { 200: MakerBalance },
      handler: async ({ auth }) => json(200, await makerBalanceBody(s, auth.address)),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/user/withdrawals',
      tag: 'user',
      auth: 'user',
      summary: 'Withdraw from available to an address: pending until the operator completes or fails it; idempotent by key',
      body: WithdrawalRequest,
      responses: { 201: Withdrawal, 200: Withdrawal },
      handler: ({ auth, body }) => request(userAccount(auth.userId), auth.userId, body),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/mm/withdrawals',
      tag: 'mm',
      auth: 'maker',
      summary: "Withdraw from the maker's available collateral: pending until the operator decides; idempotent by key",
      body: WithdrawalRequest,
      responses: { 201: Withdrawal, 200: Withdrawal },
      handler: ({ auth, body }) => request(makerAccount(auth.address), null, body),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/user/withdrawals',
      tag: 'user',
      auth: 'user',
      summary: "The caller's withdrawals, newest first (paged)",
      query: WithdrawalsQuery,
      responses: { 200: WithdrawalList },
      paged: WITHDRAWALS_PAGED,
      handler: ({ auth }, page) => ownPage(userAccount(auth.userId), page),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/mm/withdrawals',
      tag: 'mm',
      auth: 'maker',
      summary: "The maker's withdrawals, newest first (paged)",
      query: WithdrawalsQuery,
      responses: { 200: WithdrawalList },
      paged: WITHDRAWALS_PAGED,
      handler: ({ auth }, page) => ownPage(makerAccount(auth.address), page),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/withdrawals',
      tag: 'admin',
      auth: 'admin',
      summary: 'Withdrawals of one status (default pending), oldest first (paged)',
      query: AdminWithdrawalsQuery,
      responses: { 200: AdminWithdrawalList },
      paged: WITHDRAWALS_PAGED,
      handler: async ({ query }, { after, limit }) => {
        const status: WithdrawalStatus = query.status ?? 'pending';
        const page = await s.withdrawals.pageOfStatus(status, limit, after?.[0] ?? null);
        const withdrawals = page.items.map((r) => Object.assign(withdrawalBody(r), { account: r.account }));
        return { items: withdrawals, next: positionOf(page.next) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/withdrawals/{id}/complete',
      tag: 'admin',
      auth: 'admin',
      summary: 'The money has left the system: final (again: 200 unchanged; after fail: 409 WITHDRAWAL_FINAL)',
      params: WithdrawalIdParams,
      responses: { 200: AdminWithdrawal },
      handler: async ({ params }) => {
        const r = await s.withdrawals.finish(params.id, true);
        return json(200, Object.assign(withdrawalBody(r), { account: r.account }));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/admin/withdrawals/{id}/fail',
      tag: 'admin',
      auth: 'admin',
      summary: 'The money comes back to available: final (again: 200 unchanged; after complete: 409 WITHDRAWAL_FINAL)',
      params: WithdrawalIdParams,
      responses: { 200: AdminWithdrawal },
      handler: async ({ params }) => {
        const r = await s.withdrawals.finish(params.id, false);
        return json(200, Object.assign(withdrawalBody(r), { account: r.account }));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/admin/ledger/check',
      readsOwnWrites: true,
      tag: 'admin',
      auth: 'admin',
      summary:
        'Every bucket recomputed from the transfers, none negative, and total = credited − withdrawn (one snapshot, on a worker thread; writers go on)',
      responses: { 200: LedgerCheckResponse },
      handler: async () => json(200, await s.ledgerCheck.run()),
    }),
  ];
}
