// Any process. Money calls (ledger/money-ops.ts MoneyCall) to the owner of a partition, over core NATS
// request-reply: the caller names the partition, whichever node holds it answers, once the owner's decision
// is durable. A call without an answer within its deadline, or with no node holding the partition, is
// UNAVAILABLE to the caller (503), never a guess: the call may have been decided, so what the caller repeats
// must be keyed (a credit's idempotency key, a reservation's reference), as every money call already is.
import { ErrorCode, type NatsConnection, type NatsError } from 'nats';
import type { MoneyAnswer, MoneyCall } from '../ledger/money-ops.js';
import type { BlindWrite } from '../store/records.js';
import { decode, encode, subjects } from './wire.js';

export interface MoneyRequest {
  call: MoneyCall;
  facts: readonly BlindWrite[];
}

/** The owner's answer, or why there is none: no node holds the partition or none answered in time, or its journal is behind. */
export type MoneyReply = MoneyAnswer | { ok: false; code: 'UNAVAILABLE' | 'OVERLOADED' };

export class MoneyCalls {
  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {}

  async call(partition: number, call: MoneyCall, facts: readonly BlindWrite[] = []): Promise<MoneyReply> {
    const request: MoneyRequest = { call, facts };
    try {
      const reply = await this.nc.request(subjects.partitionMoney(partition), encode(request), { timeout: this.timeoutMs });
      return decode<MoneyReply>(reply.data);
    } catch (error) {
      const code = (error as NatsError).code;
      if (code === ErrorCode.NoResponders || code === ErrorCode.Timeout) return { ok: false, code: 'UNAVAILABLE' };
      throw error;
    }
  }
}
