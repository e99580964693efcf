// Main thread. Admin funding with an idempotency key (contract sections 4 and 11), for the three kinds of
// account. A user's credit is written by the user's shard (its balance's owner: rfq/shard-money.ts), with
// its key record; the user is created here first if new (users are this thread's), and a crash between the
// two leaves a user without the credit, which the retry completes. A maker's or the protocol's credit is
// written here, with its key record, in one transaction (the lmdb engine), or decided by its key's owner
// shard (the journal engine).
import type { Clock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import type { Store } from '../store/db.js';
import type { Users } from '../users/users.js';
import type { UserRecord } from '../records/users.js';
import { creditRef, makerAccount, PROTOCOL, userAccount, type AccountId } from '../records/ledger.js';
import { checkCreditKey, readCreditKey } from './credit-keys.js';
import type { CreditRecord } from '../records/credits.js';
import type { Ledger } from './ledger.js';
import type { BalanceOwners } from './owners.js';

/** What a maker's credit asks of the makers' registry (mm/registry.ts): only a registered maker is credited. */
export interface RegisteredMakers {
  has(address: string): boolean;
}

export class Credits {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly users: Users,
    private readonly owners: BalanceOwners,
    private readonly makers: RegisteredMakers,
    /** The main thread's ledger (NO_USERS): makers and the protocol. */
    private readonly ledger: Ledger,
  ) {}

  /** Durable before it resolves. Same key and content: no second credit. Same key, other content: 409. */
  async creditUser(wallet: string, amountMicros: bigint, idempotencyKey: string): Promise<UserRecord> {
    // A key already used for another account or amount is refused before a user is made for this wallet. The
    // shard checks the key again in its transaction: that check decides.
    const previous = readCreditKey(this.store, idempotencyKey);
    const existing = this.users.findByWallet(wallet);
    const isSame =
      existing !== undefined && previous?.account === userAccount(existing.userId) && previous.amountMicros === amountMicros.toString();
    if (previous !== undefined && !isSame) throw new ApiError('IDEMPOTENCY_CONFLICT');
    // A new credit on a full store is refused before a user is made for its wallet: a refused request
    // writes nothing (the shard checks again before the money moves; a replay writes nothing, so it passes).
    if (previous === undefined) this.store.assertRoom();
    const user = await this.users.ensure(wallet);
    await this.owners.moveMoney(this.owners.shardOfCredit(idempotencyKey, user.userId), {
      op: 'credit',
      userId: user.userId,
      wallet,
      amountMicros: amountMicros.toString(),
      idempotencyKey,
      atMs: this.clock.nowMs(),
    });
    return user;
  }

  /** 404 MAKER_NOT_FOUND for an address no admin registered. */
  creditMaker(address: string, amountMicros: bigint, idempotencyKey: string): Promise<void> {
    if (!this.makers.has(address)) throw new ApiError('MAKER_NOT_FOUND');
    return this.creditHere(makerAccount(address), amountMicros, idempotencyKey);
  }

  creditProtocol(amountMicros: bigint, idempotencyKey: string): Promise<void> {
    return this.creditHere(PROTOCOL, amountMicros, idempotencyKey);
  }

  private async creditHere(account: AccountId, amountMicros: bigint, idempotencyKey: string): Promise<void> {
    if (readCreditKey(this.store, idempotencyKey) === undefined) this.store.assertRoom();
    if (this.owners.engine === 'journal') {
      // The key's owner decides its replay (engine/owner.ts credit); the answer follows LMDB's commit of it.
      const key = creditRef(idempotencyKey);
      const answer = await this.owners.ownerCall(this.owners.shardOfAccount(key), {
        op: 'credit',
        account,
        amountMicros,
        key: idempotencyKey,
      });
      if (!answer.ok) throw new ApiError('IDEMPOTENCY_CONFLICT');
      return;
    }
    const record: CreditRecord = { account, amountMicros: amountMicros.toString(), atMs: this.clock.nowMs() };
    await this.store.transact(() => {
      if (!checkCreditKey(this.store, idempotencyKey, record))
        this.ledger.credit(account, amountMicros, creditRef(idempotencyKey), record.atMs);
    });
  }
}
