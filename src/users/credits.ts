// Main thread. Admin funding with an idempotency key (contract section 4): the credit, its key record, the
// user (created if new) and the journal entry are one transaction, so a retried request can neither credit
// twice nor half-apply.
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Store } from '../store/db.js';
import type { UserRecord, Users } from './users.js';

interface CreditRecord {
  wallet: string;
  amountMicros: string;
  userId: string;
  atMs: number;
}

export class Credits {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly users: Users,
    private readonly ledger: Ledger,
  ) {}

  /** Durable before it resolves. Same key and content: no second credit. Same key, other content: 409. */
  credit(wallet: string, amountMicros: bigint, idempotencyKey: string): Promise<UserRecord> {
    const credits = this.store.db<CreditRecord>('credits');
    return this.store.transact(() => {
      const previous = credits.get(idempotencyKey);
      if (previous !== undefined) {
        if (previous.wallet !== wallet || previous.amountMicros !== amountMicros.toString()) {
          throw new ApiError('IDEMPOTENCY_CONFLICT');
        }
        return this.users.get(previous.userId)!;
      }
      const user = this.users.ensureInTxn(wallet);
      const atMs = this.clock.nowMs();
      this.ledger.creditInTxn(user.userId, amountMicros, `credit:${idempotencyKey}`, atMs);
      void credits.put(idempotencyKey, { wallet, amountMicros: amountMicros.toString(), userId: user.userId, atMs });
      return user;
    });
  }
}
