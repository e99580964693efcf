// Any thread; pure. The bytes of an owner's journal records (one record: the effects of one input) and of its
// snapshots (its whole durable state at a journal seq). JSON, checked by the journal's framing (wal/record.ts).
// Amounts are written as decimal strings and read back as bigints where the format says an amount is, and
// nowhere else, so a user's string that looks like a number stays a string.
import assert from 'node:assert/strict';
import { bucketsOf, transferId, type AccountId } from '../records/ledger.js';
import type { Bucket } from '../contract/ledger-kinds.js';
import { Book, type Buckets, type Outbox } from './book.js';
import type { BlindWrite } from '../store/records.js';
import type { MoneyAnswer } from '../ledger/money-ops.js';
import type { ChannelCommand, Effect, Half, Hold, Transfer } from './effects.js';

// A record is a JSON array of effects, each a positional array (a tag first): no field names, no reviver, so
// a record is ~3x smaller than the objects' JSON and replays several times faster (bench/micro/engine-owner.ts).
// Amounts are decimal strings. A transfer's id is its reference and its step (transferId), stored as the step.
type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const HALVES: readonly Half[] = ['both', 'debit', 'credit'];
const OUTCOMES = ['won', 'lost', 'voided'] as const;

function transferJson(transfer: Transfer): Json[] {
  assert.ok(transfer.id.startsWith(`${transfer.ref}/`), `transfer id ${transfer.id} is not of its reference`);
  return [
    transfer.kind,
    transfer.ref,
    transfer.id.slice(transfer.ref.length + 1),
    transfer.debit?.account ?? null,
    transfer.debit?.bucket ?? null,
    transfer.credit?.account ?? null,
    transfer.credit?.bucket ?? null,
    transfer.amountMicros.toString(),
    transfer.atMs,
  ];
}

/** The transfer written by transferJson at `json[at…]` (read in place: a replay decodes every record). */
function transferOf(json: Json[], at: number): Transfer {
  const ref = json[at + 1] as string;
  const debitAccount = json[at + 3] as string | null;
  const creditAccount = json[at + 5] as string | null;
  return {
    id: transferId(ref, json[at + 2] as string),
    kind: json[at] as Transfer['kind'],
    ref,
    debit: debitAccount === null ? null : { account: debitAccount, bucket: json[at + 4] as Bucket },
    credit: creditAccount === null ? null : { account: creditAccount, bucket: json[at + 6] as Bucket },
    amountMicros: BigInt(json[at + 7] as string),
    atMs: json[at + 8] as number,
  };
}

function commandJson(command: ChannelCommand): Json[] {
  switch (command.c) {
    case 'credit':
      return command.poolRef === undefined ? [0, transferJson(command.transfer)] : [0, transferJson(command.transfer), command.poolRef];
    case 'post_lock':
      return [1, command.key, command.ref];
    case 'void_lock':
      return [2, command.key];
    case 'settle_lock':
      return [3, command.ref, OUTCOMES.indexOf(command.outcome), command.taker, command.atMs];
  }
}

function commandOf(json: Json[]): ChannelCommand {
  switch (json[0]) {
    case 0:
      return json.length > 2
        ? { c: 'credit', transfer: transferOf(json[1] as Json[], 0), poolRef: json[2] as string }
        : { c: 'credit', transfer: transferOf(json[1] as Json[], 0) };
    case 1:
      return { c: 'post_lock', key: json[1] as string, ref: json[2] as string };
    case 2:
      return { c: 'void_lock', key: json[1] as string };
    case 3:
      return {
        c: 'settle_lock',
        ref: json[1] as string,
        outcome: OUTCOMES[json[2] as number]!,
        taker: json[3] as string,
        atMs: json[4] as number,
      };
    default:
      throw new Error(`unknown channel command tag ${String(json[0])}`);
  }
}

function effectJson(effect: Effect): Json[] {
  switch (effect.t) {
    case 'transfer':
      return [0, HALVES.indexOf(effect.half), ...transferJson(effect.transfer)];
    case 'hold': {
      const { hold } = effect;
      if (hold === null) return [1, effect.ref];
      const json: Json[] = [1, effect.ref, hold.account, hold.bucket, hold.amountMicros.toString()];
      if (hold.pendingFor !== undefined) json.push(hold.pendingFor.owner, hold.pendingFor.ref, hold.pendingFor.atMs);
      return json;
    }
    case 'credit_key':
      return [2, effect.key, effect.account, effect.amountMicros.toString()];
    case 'prize':
      return [3, effect.poolRef, effect.ref];
    case 'send':
      return [4, effect.to, effect.seq, commandJson(effect.command)];
    case 'acked':
      return [5, effect.to, effect.seq];
    case 'received':
      return [6, effect.from, effect.seq];
    case 'fact': {
      // A client's record as it is: its own JSON (no amounts become bigints: its amounts are strings).
      const { db, key, value } = effect.write;
      return value === undefined ? [7, db, key] : [7, db, key, value as Json];
    }
    case 'reply':
      return [8, effect.id, effect.answer as unknown as Json]; // an answer has no amounts: its JSON as it is
  }
}

function effectOf(json: Json[]): Effect {
  switch (json[0]) {
    case 0:
      return { t: 'transfer', half: HALVES[json[1] as number]!, transfer: transferOf(json, 2) };
    case 1: {
      const ref = json[1] as string;
      if (json.length === 2) return { t: 'hold', ref, hold: null };
      const hold: Hold = { account: json[2] as string, bucket: json[3] as Hold['bucket'], amountMicros: BigInt(json[4] as string) };
      if (json.length > 5) hold.pendingFor = { owner: json[5] as number, ref: json[6] as string, atMs: json[7] as number };
      return { t: 'hold', ref, hold };
    }
    case 2:
      return { t: 'credit_key', key: json[1] as string, account: json[2] as string, amountMicros: BigInt(json[3] as string) };
    case 3:
      return { t: 'prize', poolRef: json[1] as string, ref: json[2] as string };
    case 4:
      return { t: 'send', to: json[1] as number, seq: json[2] as number, command: commandOf(json[3] as Json[]) };
    case 5:
      return { t: 'acked', to: json[1] as number, seq: json[2] as number };
    case 6:
      return { t: 'received', from: json[1] as number, seq: json[2] as number };
    case 7: {
      const write = { db: json[1], key: json[2], value: json.length > 3 ? json[3] : undefined } as BlindWrite;
      return { t: 'fact', write };
    }
    case 8:
      return { t: 'reply', id: json[1] as string, answer: json[2] as unknown as MoneyAnswer };
    default:
      throw new Error(`unknown effect tag ${String(json[0])}`);
  }
}

export function encodeEffects(effects: readonly Effect[]): Buffer {
  return Buffer.from(JSON.stringify(effects.map(effectJson)));
}

export function decodeEffects(payload: Uint8Array): Effect[] {
  return (JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString()) as Json[][]).map(effectOf);
}

// A snapshot is positional too, its amounts decimal strings: JSON.stringify and JSON.parse then take their
// native paths (a replacer or reviver called for every value made the encoding ~2x slower), and the encoding
// runs on the owner's thread (owner-host.ts), a pause of the actor that grows with its book.
interface SnapshotJson {
  self: number;
  /** The journal seq the state is as of: recovery replays the records after it. */
  seq: number;
  /** [account, bucket, amount, bucket, amount, …]: the buckets ever touched. */
  accounts: Json[][];
  /** As a hold effect is written (effectJson), without its tag. */
  holds: Json[][];
  /** [key, account, amount]. */
  creditKeys: Json[][];
  prizesPaid: Array<[string, string[]]>;
  /** [peer, nextSeq, [seq, command]…]. */
  outboxes: Json[][];
  /** [request id, answer], oldest first (absent from snapshots written before replies were kept). */
  replies?: Array<[string, Json]>;
  received: Array<[number, number]>;
}

/** The whole snapshot of `book` at `seq`, at once (tests, tools; the host encodes its accounts in slices). */
export function encodeSnapshot(book: Book, seq: number): Buffer {
  return Buffer.from(snapshotChunks(snapshotHead(book, seq), [accountRowsJson(book.accounts)]).join(''));
}

/**
 * Everything of a snapshot but its accounts, as JSON text without its closing brace: small (holds, recent
 * credit keys, channels), so it is encoded at once, at the snapshot's seq.
 */
export function snapshotHead(book: Book, seq: number): string {
  const holds: Json[][] = [];
  for (const [ref, hold] of book.holds) holds.push(effectJson({ t: 'hold', ref, hold }).slice(1));
  const creditKeys: Json[][] = [];
  for (const [key, used] of book.creditKeys) creditKeys.push([key, used.account, used.amountMicros.toString()]);
  const outboxes: Json[][] = [];
  for (const [peer, outbox] of book.outboxes)
    outboxes.push([peer, outbox.nextSeq, ...outbox.entries.map(({ seq: entrySeq, command }): Json => [entrySeq, commandJson(command)])]);
  const head: Omit<SnapshotJson, 'accounts'> = {
    self: book.self,
    seq,
    holds,
    creditKeys,
    prizesPaid: [...book.prizesPaid].map(([pool, refs]) => [pool, [...refs]]),
    outboxes,
    received: [...book.received],
    replies: [...book.replies].map(([id, answer]): [string, Json] => [id, answer as unknown as Json]),
  };
  return JSON.stringify(head).slice(0, -1);
}

/** Accounts as snapshot rows, JSON text without the enclosing brackets ('' for none): one slice of `accounts`. */
export function accountRowsJson(accounts: Iterable<[AccountId, Buckets]>): string {
  const rows: Json[][] = [];
  for (const [account, buckets] of accounts) {
    const row: Json[] = [account];
    for (const bucket of bucketsOf(account)) {
      const micros = buckets[bucket];
      if (micros !== undefined) row.push(bucket, micros.toString());
    }
    rows.push(row);
  }
  return JSON.stringify(rows).slice(1, -1);
}

/** The snapshot's text in pieces to write one after another: its head, then its account rows' slices. */
export function snapshotChunks(head: string, accountSlices: readonly string[]): string[] {
  const chunks = [`${head},"accounts":[`];
  let isFirst = true;
  for (const slice of accountSlices) {
    if (slice === '') continue;
    chunks.push(isFirst ? slice : `,${slice}`);
    isFirst = false;
  }
  chunks.push(']}');
  return chunks;
}

/** The book a snapshot holds, and the seq it is as of. */
export function decodeSnapshot(bytes: Uint8Array, ownerOf: (account: AccountId) => number): { book: Book; seq: number } {
  const snapshot = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString()) as SnapshotJson;
  const book = new Book(snapshot.self, ownerOf);
  for (const row of snapshot.accounts) {
    const restored: Buckets = {};
    for (let i = 1; i < row.length; i += 2) restored[row[i] as Bucket] = BigInt(row[i + 1] as string);
    book.accounts.set(row[0] as AccountId, restored);
  }
  for (const row of snapshot.holds) {
    const effect = effectOf([1, ...row]);
    assert.ok(effect.t === 'hold' && effect.hold !== null, 'a snapshot holds whole holds');
    book.holds.set(effect.ref, effect.hold);
  }
  for (const [key, account, micros] of snapshot.creditKeys)
    book.creditKeys.set(key as string, { account: account as AccountId, amountMicros: BigInt(micros as string) });
  for (const [pool, refs] of snapshot.prizesPaid) book.prizesPaid.set(pool, new Set(refs));
  for (const [peer, nextSeq, ...entries] of snapshot.outboxes) {
    const outbox: Outbox = { nextSeq: nextSeq as number, entries: [] };
    for (const entry of entries as Json[][]) outbox.entries.push({ seq: entry[0] as number, command: commandOf(entry[1] as Json[]) });
    book.outboxes.set(peer as number, outbox);
  }
  for (const [peer, seq] of snapshot.received) book.received.set(peer, seq);
  for (const [id, answer] of snapshot.replies ?? []) book.replies.set(id, answer as unknown as MoneyAnswer);
  return { book, seq: snapshot.seq };
}
