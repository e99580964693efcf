// The contest refusals' messages (src/contests/errors.ts) are the texts the contest code wrote inline before
// they became factories, word for word: clients may show them, so moving them changed none. Each keeps the
// contract's code, and with it the status of the error table (src/errors.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiError } from '../../src/errors.js';
import * as refusals from '../../src/contests/errors.js';

const body = (err: ApiError) => ({ status: err.status, ...err.toBody() });

test('each contest refusal has its contract code, status and message', () => {
  const table: [ApiError, { status: number; code: string; message: string }][] = [
    [refusals.contestNotOpen('resolved'), { status: 422, code: 'CONTEST_CLOSED', message: 'contest is resolved' }],
    [refusals.contestSettling('void'), { status: 422, code: 'CONTEST_CLOSED', message: 'contest is being voided' }],
    [refusals.contestSettling('resolve'), { status: 422, code: 'CONTEST_CLOSED', message: 'contest is being resolved' }],
    [refusals.entryNotOpenYet(), { status: 422, code: 'CONTEST_CLOSED', message: 'contest entry has not opened yet' }],
    [refusals.bettingClosed(), { status: 422, code: 'CONTEST_CLOSED', message: 'contest betting has closed' }],
    [refusals.voidRefused('resolved'), { status: 422, code: 'CONTEST_CLOSED', message: 'contest is resolved and can no longer be voided' }],
    [refusals.voidRefused('being resolved'), { status: 422, code: 'CONTEST_CLOSED', message: 'contest is being resolved and can no longer be voided' }],
    [refusals.marketNotFound(7), { status: 404, code: 'MARKET_NOT_FOUND', message: 'market 7 does not exist' }],
    [refusals.marketNotOpen(7), { status: 422, code: 'MARKET_NOT_OPEN', message: 'market 7 is not open for betting' }],
    [refusals.prizePoolUnfunded(), { status: 422, code: 'INSUFFICIENT_BALANCE', message: 'the protocol account cannot fund this prize pool' }],
    [refusals.marketPickedTwice(7), { status: 422, code: 'DUPLICATE_MARKET', message: 'market 7 is picked twice in this entry' }],
    [refusals.marketNotInContest(7), { status: 422, code: 'INVALID_PICKS', message: 'market 7 is not a market of this contest' }],
    [refusals.wrongPickCount(3, 2), { status: 422, code: 'INVALID_PICKS', message: 'exactly 3 picks are required, got 2' }],
    [refusals.wrongCategoryPickCount(1, 'goals', 0), { status: 422, code: 'INVALID_PICKS', message: 'exactly 1 picks are required in category "goals", got 0' }],
    [refusals.entryNotContinuable('lineups'), { status: 422, code: 'ENTRY_NOT_FOUND', message: 'lineups entries cannot be continued; omit entry_index' }],
    [refusals.entryNotFound(4), { status: 422, code: 'ENTRY_NOT_FOUND', message: 'you have no entry 4 in this contest' }],
  ];
  for (const [err, expected] of table) assert.deepEqual(body(err), expected);
  // Every factory of the module is in the table above.
  assert.equal(Object.keys(refusals).length, 14);
});
