// Price reports (contract section 12) against the real service: signed by ethers with a configured oracle
// key, each report judged alone (index and code), durable, idempotent per (asset, ts_ms), conflicts and
// out-of-order reports refused; the admin's unsigned route beside it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { assertApiError } from '../helpers/errors.js';
import { client } from '../helpers/http.js';
import { postAdminReports, postSigned, signReport, signReports, type Report } from '../helpers/oracle.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';

const ORACLE = Wallet.createRandom();
const STRANGER = Wallet.createRandom();
const MINUTE_MS = 60_000;
/** Past, minute-aligned: far enough back that every report is before now. */
const BASE_MS = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS;

const ok = (accepted: number, duplicates = 0, rejected: { index: number; code: string }[] = []) => ({
  status: 200,
  body: { accepted, duplicates, rejected },
});
const answer = (res: { status: number; body: unknown }) => ({ status: res.status, body: res.body });

describe('signed price reports', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({
      env: {
        PARLAYD_ORACLE_ADDRESSES: ORACLE.address,
        PARLAYD_PRICE_ASSETS: 'BTC,ETH,SOL,XRP,ADA,DOT,LONGASSET1',
        PARLAYD_PRICE_DURATIONS_SECS: '60',
      },
    });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('reports signed by a configured oracle are accepted; the same again are duplicates, also after a restart', async () => {
    const reports = await signReports(ORACLE, [
      { asset: 'BTC', ts_ms: BASE_MS, price_e8: 9_000_000_000_000 },
      { asset: 'BTC', ts_ms: BASE_MS + 1_000, price_e8: 9_000_100_000_000 },
      { asset: 'ETH', ts_ms: BASE_MS, price_e8: 300_000_000_000 },
    ]);
    assert.deepEqual(answer(await postSigned(server, reports)), ok(3));
    assert.deepEqual(answer(await postSigned(server, reports)), ok(0, 3));
    await server.stop();
    server = await restartServer(server);
    assert.deepEqual(answer(await postSigned(server, reports)), ok(0, 3));
  });

  it('a bad report is refused with its index and code and changes nothing else in its batch', async () => {
    const good1 = await signReport(ORACLE, { asset: 'SOL', ts_ms: BASE_MS, price_e8: 15_000_000_000 });
    const wrongSigner = await signReport(STRANGER, { asset: 'SOL', ts_ms: BASE_MS + 1_000, price_e8: 15_100_000_000 });
    // Signed over other bytes than those sent: the recovered signer is some other address.
    const signedOther = await signReport(ORACLE, { asset: 'SOL', ts_ms: BASE_MS + 2_000, price_e8: 15_200_000_000 });
    const wrongBytes = { ...signedOther, price_e8: 15_200_000_001 };
    const malformed = { asset: 'SOL', ts_ms: BASE_MS + 3_000, price_e8: 15_300_000_000, signature: 'not base64 of 65 bytes' };
    const good2 = await signReport(ORACLE, { asset: 'SOL', ts_ms: BASE_MS + 4_000, price_e8: 15_400_000_000 });
    const res = await postSigned(server, [good1, wrongSigner, wrongBytes, malformed, good2]);
    assert.deepEqual(
      answer(res),
      ok(2, 0, [
        { index: 1, code: 'ORACLE_SIGNER_UNKNOWN' },
        { index: 2, code: 'ORACLE_SIGNER_UNKNOWN' },
        { index: 3, code: 'INVALID_SIGNATURE' },
      ]),
    );
    // The good ones are stored (duplicates now); the refused ones were not (their (asset, ts_ms) is free,
    // though now before the asset's latest report, so out of order).
    assert.deepEqual(answer(await postSigned(server, [good1, good2])), ok(0, 2));
    const retried = await signReport(ORACLE, { asset: 'SOL', ts_ms: BASE_MS + 1_000, price_e8: 15_100_000_000 });
    assert.deepEqual(answer(await postSigned(server, [retried])), ok(0, 0, [{ index: 0, code: 'ORACLE_OUT_OF_ORDER' }]));
  });

  it('another price for a stored (asset, ts_ms) is ORACLE_CONFLICT and the first price stays', async () => {
    const first = await signReport(ORACLE, { asset: 'XRP', ts_ms: BASE_MS, price_e8: 50_000_000 });
    const other = await signReport(ORACLE, { asset: 'XRP', ts_ms: BASE_MS, price_e8: 50_000_001 });
    assert.deepEqual(answer(await postSigned(server, [first])), ok(1));
    assert.deepEqual(answer(await postSigned(server, [other])), ok(0, 0, [{ index: 0, code: 'ORACLE_CONFLICT' }]));
    assert.deepEqual(answer(await postSigned(server, [first])), ok(0, 1));
    // Within one batch: the first in the request wins, the second conflicts.
    const a = await signReport(ORACLE, { asset: 'XRP', ts_ms: BASE_MS + 1_000, price_e8: 51_000_000 });
    const b = await signReport(ORACLE, { asset: 'XRP', ts_ms: BASE_MS + 1_000, price_e8: 52_000_000 });
    assert.deepEqual(answer(await postSigned(server, [a, b, a])), ok(1, 1, [{ index: 1, code: 'ORACLE_CONFLICT' }]));
  });

  it("a report before its asset's latest is ORACLE_OUT_OF_ORDER; within a batch the order does not matter", async () => {
    const later = await signReport(ORACLE, { asset: 'ADA', ts_ms: BASE_MS + 10_000, price_e8: 40_000_000 });
    const earlier = await signReport(ORACLE, { asset: 'ADA', ts_ms: BASE_MS + 5_000, price_e8: 41_000_000 });
    // One batch, newest first: both are stored (a batch is applied in ts_ms order).
    assert.deepEqual(answer(await postSigned(server, [later, earlier])), ok(2));
    const late = await signReport(ORACLE, { asset: 'ADA', ts_ms: BASE_MS + 7_000, price_e8: 42_000_000 });
    const next = await signReport(ORACLE, { asset: 'ADA', ts_ms: BASE_MS + 11_000, price_e8: 43_000_000 });
    assert.deepEqual(answer(await postSigned(server, [late, next])), ok(1, 0, [{ index: 0, code: 'ORACLE_OUT_OF_ORDER' }]));
  });

  it('an unknown asset is MARKET_NOT_FOUND; a ts_ms ahead of now, or a symbol too long to sign, VALIDATION_FAILED', async () => {
    const unknown = await signReport(ORACLE, { asset: 'DOGE', ts_ms: BASE_MS, price_e8: 1 });
    const ahead = await signReport(ORACLE, { asset: 'DOT', ts_ms: Date.now() + 60_000, price_e8: 1 });
    const long = { asset: 'LONGASSET1', ts_ms: BASE_MS, price_e8: 1, signature: unknown.signature };
    const fine = await signReport(ORACLE, { asset: 'DOT', ts_ms: BASE_MS, price_e8: 7_000_000_00 });
    assert.deepEqual(
      answer(await postSigned(server, [unknown, ahead, long, fine])),
      ok(1, 0, [
        { index: 0, code: 'MARKET_NOT_FOUND' },
        { index: 1, code: 'VALIDATION_FAILED' },
        { index: 2, code: 'VALIDATION_FAILED' },
      ]),
    );
  });

  it('a malformed request is refused whole: 400 with the failing path, nothing stored', async () => {
    const report = await signReport(ORACLE, { asset: 'DOT', ts_ms: BASE_MS + 60_000, price_e8: 1 });
    const bad = await postSigned(server, [report, { ...report, price_e8: '1' }]);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'VALIDATION_FAILED');
    assert.equal(bad.body.details[0].path, '/reports/1/price_e8');
    assert.deepEqual(answer(await postSigned(server, [report])), ok(1));
    const tooMany = await client(server.baseUrl).post('/v1/oracle/prices', {
      reports: Array.from({ length: 1_001 }, () => ({ asset: 'DOT', ts_ms: 1, price_e8: 1, signature: '' })),
    });
    assert.equal(tooMany.status, 400);
    assert.deepEqual(tooMany.body.details, [{ path: '/reports', message: 'Expected array length to be less or equal to 1000' }]);
    assert.equal((await client(server.baseUrl).post('/v1/oracle/prices', { reports: [] })).status, 400);
  });

  it('400 signed reports do not fit in the 64 KiB body (413): the body limit binds before maxItems', async () => {
    const one = await signReport(ORACLE, { asset: 'BTC', ts_ms: 1_764_107_000_000, price_e8: 9_876_543_210_000 });
    const reports = Array.from({ length: 400 }, () => one);
    assert.ok(JSON.stringify({ reports }).length > 64 * 1024);
    const res = await postSigned(server, reports);
    assert.equal(res.status, 413);
    assert.ok(JSON.stringify({ reports: reports.slice(0, 390) }).length <= 64 * 1024, '390 realistic reports fit');
  });

  it('the admin route takes unsigned reports under the admin bearer only, with the same rules', async () => {
    const reports: Report[] = [
      { asset: 'DOT', ts_ms: BASE_MS + 120_000, price_e8: 700_000_000 },
      { asset: 'DOT', ts_ms: BASE_MS + 120_000, price_e8: 700_000_001 },
      { asset: 'DOGE', ts_ms: BASE_MS, price_e8: 1 },
    ];
    const anonymous = await client(server.baseUrl).post('/v1/admin/oracle/prices', { reports });
    assert.equal(anonymous.status, 401);
    assert.deepEqual(
      answer(await postAdminReports(server, reports)),
      ok(1, 0, [
        { index: 1, code: 'ORACLE_CONFLICT' },
        { index: 2, code: 'MARKET_NOT_FOUND' },
      ]),
    );
    // The same (asset, ts_ms) signed by the oracle with the admin's price is a duplicate: one price per time.
    const signed = await signReport(ORACLE, reports[0]!);
    assert.deepEqual(answer(await postSigned(server, [signed])), ok(0, 1));
  });
});

describe('a verify pool that cannot take a batch', () => {
  it('answers 503 OVERLOADED with Retry-After and stores none of its reports', async () => {
    const server = await startServer({ env: { PARLAYD_ORACLE_ADDRESSES: ORACLE.address, PARLAYD_VERIFY_MAX_QUEUE: '4' } });
    try {
      const reports = await signReports(
        ORACLE,
        Array.from({ length: 10 }, (_, i) => ({ asset: 'BTC', ts_ms: BASE_MS + i * 1_000, price_e8: 100 + i })),
      );
      const res = await postSigned(server, reports);
      assert.deepEqual(
        { status: res.status, body: res.body, retryAfter: res.headers.get('retry-after') },
        { status: 503, body: { code: 'OVERLOADED', message: 'service is overloaded, nothing was accepted' }, retryAfter: '1' },
      );
      // Nothing was stored: the first four, within the pool's bound now, are new (accepted, not duplicates).
      assert.deepEqual(answer(await postSigned(server, reports.slice(0, 4))), ok(4));
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});

describe('the rate limit of signed reports (issue 33 item 8)', () => {
  it('a post pays a token per report: 60 reports from a bucket of 100 pass, the next 60 get 429 RATE_LIMITED', async () => {
    const server = await startServer({
      env: { PARLAYD_ORACLE_ADDRESSES: ORACLE.address, PARLAYD_RATE_LIMIT_PER_S: '1', PARLAYD_RATE_LIMIT_BURST: '100' },
    });
    try {
      // Signed by a stranger: each costs a recovery and is refused, as a flood's would be.
      const flood = await signReports(
        STRANGER,
        Array.from({ length: 120 }, (_, i) => ({ asset: 'BTC', ts_ms: BASE_MS + i * 1_000, price_e8: 100 + i })),
      );
      const first = await postSigned(server, flood.slice(0, 60));
      assert.equal(first.status, 200);
      assert.equal((first.body as { rejected: unknown[] }).rejected.length, 60);
      const second = await postSigned(server, flood.slice(60));
      assertApiError(second, 429, 'RATE_LIMITED');
      // 40 tokens left and 60 wanted, at 1 a second: 20 s until there are enough.
      assert.equal(second.headers.get('retry-after'), '20');
      // One report still fits the bucket: a small post is not refused for its neighbours' size.
      const good = await signReports(ORACLE, [{ asset: 'BTC', ts_ms: BASE_MS, price_e8: 100 }]);
      assert.deepEqual(answer(await postSigned(server, good)), ok(1));
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});

describe('oracle configuration', () => {
  it('without PARLAYD_ORACLE_ADDRESSES every signed report is ORACLE_SIGNER_UNKNOWN', async () => {
    const server = await startServer();
    try {
      const report = await signReport(ORACLE, { asset: 'BTC', ts_ms: BASE_MS, price_e8: 1 });
      assert.deepEqual(answer(await postSigned(server, [report])), ok(0, 0, [{ index: 0, code: 'ORACLE_SIGNER_UNKNOWN' }]));
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });

  it('a bad address stops the start with a message naming the variable and the entry', async () => {
    // One letter's case flipped: still mixed case, no longer the EIP-55 checksum.
    const wrongChecksum = ORACLE.address.replace(/[a-fA-F]/, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
    for (const value of [`${ORACLE.address},0x1234`, wrongChecksum]) {
      const started = await startServer({ env: { PARLAYD_ORACLE_ADDRESSES: value } }).then(
        () => null,
        (err: Error) => err.message,
      );
      assert.ok(started !== null && started.includes('PARLAYD_ORACLE_ADDRESSES entry'), String(started));
    }
  });
});
