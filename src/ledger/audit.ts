// Any thread; reads only. The ledger check (check.ts: transfers, holds and the records they stand for) as the
// tests, the chaos rounds and the fuzzer want it: one line per difference, to print. It reads a stopped
// service's data (no time: an RFQ left active by a stop is what the next start ends), from one read snapshot.
import type { Store } from '../store/db.js';
import { checkLedger } from './check.js';

export interface AuditReport {
  accounts: number;
  differences: string[];
}

export function auditLedger(store: Store): AuditReport {
  const check = checkLedger(store);
  const differences = check.differences.map(
    (d) =>
      `${d.reason}${d.ref === undefined ? '' : ` ${d.ref}`}: ${d.account} ${d.bucket} is ${d.actual_micros}, expected ${d.expected_micros}`,
  );
  if (BigInt(check.total_micros) !== BigInt(check.credited_micros) - BigInt(check.withdrawn_micros)) {
    differences.push(
      `money is not conserved: ${check.total_micros} held, ${check.credited_micros} credited − ${check.withdrawn_micros} withdrawn`,
    );
  }
  return { accounts: check.accounts, differences };
}
