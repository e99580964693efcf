// Any thread; pure. The messages of the contract errors a contest refuses with (contract section 8), one
// factory each, so no contest module writes a message inline. The codes and their statuses stay in the
// contract's table (src/errors.ts); these only say which contest, market or entry the refusal is about.
import { apiError, type ApiError } from '../errors.js';
import type { ContestRecord, SettlingRecord } from './records.js';

// ---- the contest's state ----

/** An entry to a contest that is no longer open (resolved or voided). */
export const contestNotOpen = (status: ContestRecord['status']): ApiError => apiError('CONTEST_CLOSED', `contest is ${status}`);

/** An entry to a contest whose settlement has begun: its entry set is frozen (settlement.ts). */
export const contestSettling = (kind: SettlingRecord['kind']): ApiError =>
  apiError('CONTEST_CLOSED', `contest is being ${kind === 'void' ? 'voided' : 'resolved'}`);

/** An entry before entry_opens_at_ms. */
export const entryNotOpenYet = (): ApiError => apiError('CONTEST_CLOSED', 'contest entry has not opened yet');

/** An entry after betting_closes_ms. */
export const bettingClosed = (): ApiError => apiError('CONTEST_CLOSED', 'contest betting has closed');

/** A void of a contest that is resolved, or whose resolution has begun paying. */
export const voidRefused = (state: 'resolved' | 'being resolved'): ApiError =>
  apiError('CONTEST_CLOSED', `contest is ${state} and can no longer be voided`);

// ---- creation ----

/** A contest market that does not exist. */
export const marketNotFound = (marketId: number): ApiError => apiError('MARKET_NOT_FOUND', `market ${marketId} does not exist`);

/** A contest market, or a picked one, that no longer takes bets. */
export const marketNotOpen = (marketId: number): ApiError => apiError('MARKET_NOT_OPEN', `market ${marketId} is not open for betting`);

/** The protocol's available balance is below the prize pool (contract section 11). */
export const prizePoolUnfunded = (): ApiError => apiError('INSUFFICIENT_BALANCE', 'the protocol account cannot fund this prize pool');

// ---- an entry's picks ----

/** One market picked twice in an entry (counting the picks of the entry being continued). */
export const marketPickedTwice = (marketId: number): ApiError =>
  apiError('DUPLICATE_MARKET', `market ${marketId} is picked twice in this entry`);

/** A pick of a market that is not one of the contest's. */
export const marketNotInContest = (marketId: number): ApiError =>
  apiError('INVALID_PICKS', `market ${marketId} is not a market of this contest`);

/** bet_type num_bets: `requiredCount` picks, not `pickedCount`. */
export const wrongPickCount = (requiredCount: number, pickedCount: number): ApiError =>
  apiError('INVALID_PICKS', `exactly ${requiredCount} picks are required, got ${pickedCount}`);

/** bet_type bets_per_category: `requiredCount` picks in `category`, not `pickedCount`. */
export const wrongCategoryPickCount = (requiredCount: number, category: string, pickedCount: number): ApiError =>
  apiError('INVALID_PICKS', `exactly ${requiredCount} picks are required in category "${category}", got ${pickedCount}`);

// ---- continuing an entry ----

/** entry_index on a game type whose entries are not continued (lineups, outcast). */
export const entryNotContinuable = (gameType: ContestRecord['gameType']): ApiError =>
  apiError('ENTRY_NOT_FOUND', `${gameType} entries cannot be continued; omit entry_index`);

/** entry_index that the caller has no entry at in this contest. */
export const entryNotFound = (entryIndex: number): ApiError => apiError('ENTRY_NOT_FOUND', `you have no entry ${entryIndex} in this contest`);
