// Any thread. The key of a market's records; the records themselves are contract/markets.ts StoredMarket.

/** LMDB keys sort as strings: pad ids so ranges come out in id order. */
export const marketKey = (marketId: number) => String(marketId).padStart(16, '0');
