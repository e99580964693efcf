// Any thread. The durable shapes of withdrawals and their idempotency keys (ledger/withdrawals.ts).
import type { AccountId } from './ledger.js';

export type WithdrawalStatus = 'pending' | 'completed' | 'failed';

export interface WithdrawalRecord {
  withdrawalId: string;
  account: AccountId;
  amountMicros: string;
  destination: string;
  status: WithdrawalStatus;
  createdAtMs: number;
  finishedAtMs: number | null;
}

export interface WithdrawalKeyRecord {
  withdrawalId: string;
  amountMicros: string;
  destination: string;
}
