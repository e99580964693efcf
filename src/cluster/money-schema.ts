// Any process. The shape of a money call as it crosses NATS (money-calls.ts), checked by the owner node before
// its owner sees it: what arrives from the network is never trusted to be a MoneyCall. The engine asserts what
// must never happen (a call for an account it does not own, an amount below zero) and stops the thread: that
// is right for a bug inside one process, wrong for a message another process got wrong, which must be refused
// and leave the node running.
import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { creditRef, PROTOCOL, userAccount, type AccountId } from '../records/ledger.js';
import type { MoneyCall } from '../ledger/money-ops.js';
import { DB_NAMES } from '../store/db.js';

/** Amounts are BigInts on the wire (wire.ts) and never negative; 0 is a real amount (a pool of nothing). */
const Micros = Type.BigInt({ minimum: 0n });
const Positive = Type.BigInt({ minimum: 1n });
/** Ids, keys, references and addresses: bounded, so a message cannot make the owner keep megabytes per hold. */
const Name = Type.String({ minLength: 1, maxLength: 256 });
const call = <O extends string, P extends TProperties>(op: O, properties: P) =>
  Type.Object({ op: Type.Literal(op), ...properties }, { additionalProperties: false });

const MoneyCallSchema = Type.Union([
  call('credit', { account: Name, amountMicros: Positive, key: Name }),
  call('withdraw', { account: Name, amountMicros: Positive, ref: Name }),
  call('finish_withdrawal', { ref: Name, isCompleted: Type.Boolean() }),
  call('open_pool', { contestId: Name, amountMicros: Micros }),
  call('close_pool', { contestId: Name, expectedMicros: Micros }),
  call('reserve', { userId: Name, amountMicros: Positive, ref: Name }),
  call('release', { ref: Name }),
  call('fill', { ref: Name, filledMicros: Positive, makerAddress: Name, liabilityMicros: Micros }),
  call('abort_fill', { ref: Name }),
  call('settle', {
    ref: Name,
    makerAddress: Name,
    outcome: Type.Union([Type.Literal('won'), Type.Literal('lost'), Type.Literal('voided')]),
  }),
  call('collect', { contestId: Name, ref: Name }),
  call('pay_prize', { contestId: Name, ref: Name, userId: Name, amountMicros: Positive }),
]);

/** The records that go with a call (its facts): into the owner's read model, so bounded in number. */
const MoneyRequestSchema = Type.Object(
  {
    id: Name,
    call: MoneyCallSchema,
    facts: Type.Array(
      Type.Object(
        { db: Type.Union(DB_NAMES.map((name) => Type.Literal(name))), key: Name, value: Type.Unknown() },
        { additionalProperties: false },
      ),
      { maxItems: 64 },
    ),
  },
  { additionalProperties: false },
);

export type CheckedMoneyRequest = Static<typeof MoneyRequestSchema>;
// Every call the schema lets through is a MoneyCall the owner takes (a compile-time check, nothing at run time).
((checked: Static<typeof MoneyCallSchema>): MoneyCall => checked) satisfies unknown;

const compiled = TypeCompiler.Compile(MoneyRequestSchema);

export function isMoneyRequest(value: unknown): value is CheckedMoneyRequest {
  return compiled.Check(value);
}

/**
 * The name whose owner must decide `call` (its account, its credit key, the protocol), or null for a call by
 * reference alone, which any owner answers safely (a reference it does not hold moves nothing).
 */
export function decidingName(call: MoneyCall): AccountId | null {
  switch (call.op) {
    case 'credit':
      return creditRef(call.key);
    case 'withdraw':
      return call.account;
    case 'reserve':
      return userAccount(call.userId);
    case 'open_pool':
    case 'close_pool':
    case 'pay_prize':
      return PROTOCOL;
    default:
      return null;
  }
}
