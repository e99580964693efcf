// Any thread, inside the crediting transaction. The idempotency keys of admin credits (contract sections 4 and
// 11): one key space for users, makers and the protocol. A key replayed with the same account and amount is
// a replay (nothing more is credited); with anything else, 409 IDEMPOTENCY_CONFLICT.
import { ApiError } from '../lib/errors.js';
import type { Store } from '../store/db.js';
import { userAccount, type AccountId } from '../records/ledger.js';
import { table } from '../store/records.js';
import type { CreditRecord, LegacyCreditRecord } from '../records/credits.js';

/** What a key's record says it was used for: its account and amount, whichever form the record has. */
export function creditKeyUse(record: CreditRecord | LegacyCreditRecord): { account: AccountId; amountMicros: string } {
  return { account: 'account' in record ? record.account : userAccount(record.userId), amountMicros: record.amountMicros };
}

/** What a key was used for, if it was. */
export function readCreditKey(store: Store, idempotencyKey: string): { account: AccountId; amountMicros: string } | undefined {
  const previous = table(store, 'credits').get(idempotencyKey);
  return previous === undefined ? undefined : creditKeyUse(previous);
}

/** True when the key was used for exactly this credit (a replay); records it when new; 409 when used otherwise. */
export function checkCreditKey(store: Store, idempotencyKey: string, record: CreditRecord): boolean {
  const previous = readCreditKey(store, idempotencyKey);
  if (previous === undefined) {
    void table(store, 'credits').put(idempotencyKey, record);
    return false;
  }
  if (previous.account !== record.account || previous.amountMicros !== record.amountMicros) throw new ApiError('IDEMPOTENCY_CONFLICT');
  return true;
}
