// Any process. Money calls (ledger/money-ops.ts MoneyCall) to the owner of a partition, over core NATS
// request-reply: the caller names the partition, whichever node holds it answers, once the owner's decision
// is durable. At least once: a call not answered within `resendMs` is sent again, the same call, until its
// deadline; the first answer wins. Each call has an id of its own, the same in every send, and the owner
// keeps the answer to each id with its decision (engine/owner.ts MoneyOwner.call): a repeat is told the
// first's answer, a refusal included, and moves nothing, even across the owner's restart. A call with no node
// holding its partition, or without an answer by its deadline, is UNAVAILABLE to the caller (503), never a
// guess: it may have been decided, and what the caller repeats is keyed as every money call already is.
import { randomUUID } from 'node:crypto';
import { ErrorCode, type NatsConnection, type NatsError } from 'nats';
import type { MoneyAnswer, MoneyCall } from '../ledger/money-ops.js';
import type { BlindWrite } from '../store/records.js';
import { decode, encode, subjects } from './wire.js';

export interface MoneyRequest {
  /** The call's own id, the same in every send of it: its owner tells a repeat the first's answer. */
  id: string;
  call: MoneyCall;
  facts: readonly BlindWrite[];
}

/**
 * The owner's answer, or why there is none: no node holds the partition or none answered in time
 * (UNAVAILABLE), its journal is behind (OVERLOADED), or the request is not a money call its owner decides
 * (INVALID: a caller's bug, never worth repeating).
 */
export type MoneyReply = MoneyAnswer | { ok: false; code: 'UNAVAILABLE' | 'OVERLOADED' | 'INVALID' };

export interface MoneyCallsOptions {
  /** How long a call may go unanswered in all: then UNAVAILABLE. */
  deadlineMs: number;
  /** How long one send waits for its answer before the call is sent again. */
  resendMs: number;
}

export class MoneyCalls {
  constructor(
    private readonly nc: NatsConnection,
    private readonly options: MoneyCallsOptions,
  ) {}

  async call(partition: number, call: MoneyCall, facts: readonly BlindWrite[] = []): Promise<MoneyReply> {
    const request = encode({ id: randomUUID(), call, facts } satisfies MoneyRequest);
    const deadlineMs = Date.now() + this.options.deadlineMs;
    for (;;) {
      const timeout = Math.max(1, Math.min(this.options.resendMs, deadlineMs - Date.now()));
      try {
        return decode<MoneyReply>((await this.nc.request(subjects.partitionMoney(partition), request, { timeout })).data);
      } catch (error) {
        const code = (error as NatsError).code;
        if (code === ErrorCode.NoResponders) return UNAVAILABLE; // no node holds the partition now
        if (code !== ErrorCode.Timeout) throw error;
        if (Date.now() >= deadlineMs) return UNAVAILABLE;
      }
    }
  }
}

const UNAVAILABLE: MoneyReply = { ok: false, code: 'UNAVAILABLE' };
