// Any thread; pure. One owner's money in memory: its accounts' buckets, its holds, its recent credit keys and
// its channels to the other owners. Changed only by `apply` (effects.ts), live and at recovery alike; the owner's
// decisions (owner.ts) read it and return effects. Asserts what must never happen (a negative bucket, a side
// of an account it does not own, a command applied out of order): a bug, and the thread stops rather than
// carry on with wrong money.
import assert from 'node:assert/strict';
import { bucketsOf, type AccountId, type Side } from '../records/ledger.js';
import type { Bucket } from '../contract/ledger-kinds.js';
import type { ChannelCommand, Effect, Half, Hold, Transfer } from './effects.js';
import type { CreditKeyUse, MoneyAnswer } from '../ledger/money-ops.js';

export type Buckets = Partial<Record<Bucket, bigint>>;

export interface OutboxEntry {
  seq: number;
  command: ChannelCommand;
}

export interface Outbox {
  /** The seq the next command to this peer gets (seqs start at 1). */
  nextSeq: number;
  /** Commands not yet acknowledged, oldest first. */
  entries: OutboxEntry[];
}

/**
 * The accounts as they were when a snapshot began, read in slices while the book goes on changing (owner-host.ts
 * encodes a snapshot across turns, so that the owner is never stopped for the whole book). Accounts are never
 * removed, so those that existed then are the first `count` of the book's map, in its order; an account's
 * buckets are copied at its first change after that, and read from the copy.
 */
export class AccountsAtSnapshot {
  readonly #before = new Map<AccountId, Buckets>();
  readonly #created = new Set<AccountId>();

  constructor(
    private readonly accounts: ReadonlyMap<AccountId, Buckets>,
    /** How many accounts the book had at the snapshot. */
    readonly count: number,
  ) {}

  /** The book is about to change `account` (its buckets now: `buckets`, undefined when it is new). */
  beforeChange(account: AccountId, buckets: Buckets | undefined): void {
    if (buckets === undefined) this.#created.add(account);
    else if (!this.#before.has(account) && !this.#created.has(account)) this.#before.set(account, { ...buckets });
  }

  /** Every account of the snapshot with its buckets then, in the book's order; lazily, so it may span turns. */
  *entries(): Generator<[AccountId, Buckets]> {
    let seen = 0;
    for (const [account, buckets] of this.accounts) {
      if (seen++ === this.count) return;
      yield [account, this.#before.get(account) ?? buckets];
    }
  }
}

/**
 * Answers to requests from across the network a book keeps (effects.ts 'reply'): a caller repeats a call for
 * its deadline (seconds), and the calls that come from across the network are the coordinator's and the
 * cluster's tools', not the RFQ path's, so the latest 65,536 cover every repeat still to come.
 */
export const REPLIES_KEPT = 65_536;

export class Book {
  readonly accounts = new Map<AccountId, Buckets>();
  readonly holds = new Map<string, Hold>();
  /**
   * The credit keys this owner decided that its host has not yet seen in its read model. A host with a read
   * model forgets each once LMDB holds it and looks it up there instead (owner-host.ts), so memory and
   * snapshots hold the recent keys only, however many credits the service has taken.
   */
  readonly creditKeys = new Map<string, CreditKeyUse>();
  /** Per open contest pool: the entries whose prize it paid (a prize is paid once; forgotten when it closes). */
  readonly prizesPaid = new Map<string, Set<string>>();
  /** Answers to requests from across the network, by request id, oldest first (REPLIES_KEPT of them). */
  readonly replies = new Map<string, MoneyAnswer>();
  /** Per peer owner: what this owner sent it and it has not acknowledged. */
  readonly outboxes = new Map<number, Outbox>();
  /** Per peer owner: the seq of the last command from it that was applied here. */
  readonly received = new Map<number, number>();
  /** The accounts of a snapshot being encoded, kept as they were while they change; null between snapshots. */
  #snapshotAccounts: AccountsAtSnapshot | null = null;

  constructor(
    /** This owner's index among the owners. */
    readonly self: number,
    /**
     * Which owner an account belongs to; also a credit key's, asked with the key's reference (creditRef): keys
     * are unique across accounts, so each has one owner that decides its replays.
     */
    readonly ownerOf: (account: AccountId) => number,
  ) {}

  owns(account: AccountId): boolean {
    return this.ownerOf(account) === this.self;
  }

  bucket(account: AccountId, bucket: Bucket): bigint {
    return this.accounts.get(account)?.[bucket] ?? 0n;
  }

  available(account: AccountId): bigint {
    return this.bucket(account, 'available');
  }

  /** The accounts as they are now, readable as such until `endAccountsSnapshot` while the book changes. */
  beginAccountsSnapshot(): AccountsAtSnapshot {
    assert.equal(this.#snapshotAccounts, null, 'one snapshot of the accounts at a time');
    return (this.#snapshotAccounts = new AccountsAtSnapshot(this.accounts, this.accounts.size));
  }

  endAccountsSnapshot(): void {
    this.#snapshotAccounts = null;
  }

  /** The read model holds key's use now (owner-host.ts): memory lets it go. Not an effect: nothing moves. */
  forgetCreditKey(key: string): void {
    this.creditKeys.delete(key);
  }

  outbox(peer: number): Outbox {
    let outbox = this.outboxes.get(peer);
    if (outbox === undefined) this.outboxes.set(peer, (outbox = { nextSeq: 1, entries: [] }));
    return outbox;
  }

  apply(effect: Effect): void {
    switch (effect.t) {
      case 'transfer':
        return this.#transfer(effect.transfer, effect.half);
      case 'hold':
        if (effect.hold === null) {
          if (!this.holds.delete(effect.ref)) assert.fail(`${effect.ref} holds nothing`);
          this.prizesPaid.delete(effect.ref);
        } else {
          if (!this.owns(effect.hold.account)) assert.fail(`hold ${effect.ref} on ${effect.hold.account}, not owned here`);
          if (effect.hold.amountMicros < 0n) assert.fail(`hold ${effect.ref} would be negative`);
          this.holds.set(effect.ref, effect.hold);
        }
        return;
      case 'credit_key':
        assert.ok(!this.creditKeys.has(effect.key), `credit key ${effect.key} used twice`);
        this.creditKeys.set(effect.key, { account: effect.account, amountMicros: effect.amountMicros });
        return;
      case 'prize': {
        assert.ok(this.holds.has(effect.poolRef), `prize of ${effect.ref} from ${effect.poolRef}, which is not open`);
        const paid = this.prizesPaid.get(effect.poolRef) ?? new Set<string>();
        assert.ok(!paid.has(effect.ref), `prize of ${effect.ref} paid twice`);
        this.prizesPaid.set(effect.poolRef, paid.add(effect.ref));
        return;
      }
      case 'send': {
        const outbox = this.outbox(effect.to);
        assert.equal(effect.seq, outbox.nextSeq, `command ${effect.seq} to owner ${effect.to} out of order`);
        outbox.entries.push({ seq: effect.seq, command: effect.command });
        outbox.nextSeq++;
        return;
      }
      case 'acked': {
        const outbox = this.outbox(effect.to);
        while (outbox.entries.length > 0 && outbox.entries[0]!.seq <= effect.seq) outbox.entries.shift();
        return;
      }
      case 'received':
        assert.equal(effect.seq, (this.received.get(effect.from) ?? 0) + 1, `command ${effect.seq} from owner ${effect.from} out of order`);
        this.received.set(effect.from, effect.seq);
        return;
      case 'fact':
        return; // the read model's (read-model.ts)
      case 'reply':
        assert.ok(!this.replies.has(effect.id), `request ${effect.id} answered twice`);
        this.replies.set(effect.id, effect.answer);
        if (this.replies.size > REPLIES_KEPT) this.replies.delete(this.replies.keys().next().value!);
        return;
      default: {
        const unknown: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(unknown)}`);
      }
    }
  }

  #transfer(transfer: Transfer, half: Half): void {
    if (transfer.amountMicros <= 0n) assert.fail(`transfer ${transfer.id} moves a positive amount`);
    if (half !== 'credit' && transfer.debit !== null) this.#change(transfer.debit, -transfer.amountMicros, transfer.id);
    if (half !== 'debit' && transfer.credit !== null) this.#change(transfer.credit, transfer.amountMicros, transfer.id);
  }

  // Messages are built only on failure: this runs for every side of every transfer, live and at replay.
  #change({ account, bucket }: Side, deltaMicros: bigint, transferId: string): void {
    let buckets = this.accounts.get(account);
    if (!bucketsOf(account).includes(bucket)) assert.fail(`${account} has no ${bucket} bucket`);
    const next = (buckets?.[bucket] ?? 0n) + deltaMicros;
    if (next < 0n) assert.fail(`${transferId} would make ${account} ${bucket} negative`);
    this.#snapshotAccounts?.beforeChange(account, buckets);
    if (buckets === undefined) {
      if (!this.owns(account)) assert.fail(`${transferId} changes ${account}, which owner ${this.self} does not own`);
      this.accounts.set(account, (buckets = {}));
    }
    buckets[bucket] = next;
  }
}
