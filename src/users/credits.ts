// Main thread. Admin funding with an idempotency key (contract section 4). The user is created here if new
// (users are this thread's); the credit itself is decided and written by the user's shard, the balance's one
// owner, together with its key record and journal entry (rfq/shard-money.ts), so a retried request can
// neither credit twice nor half-apply. A crash between the two leaves a user without the credit, which the
// retry completes.
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { BalanceOwners } from '../ledger/owners.js';
import type { MoneyResult } from '../rfq/messages.js';
import type { CreditRecord } from '../rfq/shard-money.js';
import type { Store } from '../store/db.js';
import type { UserRecord, Users } from './users.js';

export interface Credited {
  user: UserRecord;
  balance: Extract<MoneyResult, { op: 'credit' }>['balance'];
}

export class Credits {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly users: Users,
    private readonly owners: BalanceOwners,
  ) {}

  /** Durable before it resolves. Same key and content: no second credit. Same key, other content: 409. */
  async credit(wallet: string, amountMicros: bigint, idempotencyKey: string): Promise<Credited> {
    // A key already used for another wallet is refused before a user is made for this one. The shard checks
    // the key again in its transaction: that check decides.
    const previous = this.store.db<CreditRecord>('credits').get(idempotencyKey);
    if (previous !== undefined && (previous.wallet !== wallet || previous.amountMicros !== amountMicros.toString())) {
      throw new ApiError('IDEMPOTENCY_CONFLICT');
    }
    // A new credit on a full store is refused before a user is made for its wallet: a refused request
    // writes nothing (the shard checks again before the money moves; a replay writes nothing, so it passes).
    if (previous === undefined) this.store.assertRoom();
    const user = await this.users.ensure(wallet);
    const result = await this.owners.moveMoney<Extract<MoneyResult, { op: 'credit' }>>(this.owners.shardOfUser(user.userId), {
      op: 'credit',
      userId: user.userId,
      wallet,
      amountMicros: amountMicros.toString(),
      idempotencyKey,
      atMs: this.clock.nowMs(),
    });
    return { user, balance: result.balance };
  }
}
