// Any thread. The durable shape of a credit's idempotency key (ledger/credit-keys.ts).
import type { AccountId } from './ledger.js';

export interface CreditRecord {
  account: AccountId;
  /** The wallet named by a user credit (a user is created by its first credit). */
  wallet?: string;
  amountMicros: string;
  atMs: number;
}

/** Written before the money model (schema version 5): a user credit, by user id. */
export interface LegacyCreditRecord {
  userId: string;
  wallet: string;
  amountMicros: string;
  atMs: number;
}
