// Any thread. The ledger's bucket and transfer kinds (contract section 11): the API's views name them, and the
// ledger's records (records/ledger.ts) are made of them.
import { Type, type Static } from '@sinclair/typebox';

export const Bucket = Type.Union([
  Type.Literal('available'),
  Type.Literal('reserved'),
  Type.Literal('at_risk'),
  Type.Literal('pending_withdrawal'),
  Type.Literal('locked'),
  Type.Literal('committed'),
]);
export type Bucket = Static<typeof Bucket>;

export const TransferKind = Type.Union([
  Type.Literal('credit'), // world → available
  Type.Literal('reserve'), // user available → reserved (an RFQ or a contest entry)
  Type.Literal('release'), // reserved → available (an RFQ that ended unfilled, the unfilled rest, a voided entry)
  Type.Literal('fill'), // taker reserved → at_risk
  Type.Literal('lock'), // maker available → locked (the fill's liability)
  Type.Literal('settle_stake'), // taker at_risk → taker or maker available
  Type.Literal('settle_liability'), // maker locked → taker or maker available
  Type.Literal('pool'), // protocol available → committed (a contest's prize pool)
  Type.Literal('collect'), // entry's reserved stake → protocol committed (the contest's pot)
  Type.Literal('prize'), // protocol committed → a winner's available
  Type.Literal('pool_return'), // protocol committed → protocol available (what a contest did not pay)
  Type.Literal('withdraw'), // available → pending_withdrawal
  Type.Literal('withdraw_complete'), // pending_withdrawal → world
  Type.Literal('withdraw_fail'), // pending_withdrawal → available
  Type.Literal('opening'), // world → a bucket: a balance carried over from a data directory of before this ledger
]);
export type TransferKind = Static<typeof TransferKind>;
