// The HTTP layer as a client meets it (contract sections 1 and 2): routing errors, content type, JSON and
// schema errors with details, the 64 KiB body limit (declared and chunked), clients that go away mid-body,
// and the request id on every response. Raw sockets are used where fetch would hide the wire behaviour.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { client, request } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';
import { fundedTaker, unsignedBody } from '../helpers/rfq.js';

const LIMIT_BYTES = 64 * 1024;
const ADDRESS = '0x' + '11'.repeat(20);

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Writes `parts` one after another on a fresh connection (each write flushed before the next) and resolves
 * with the first complete response. The socket is destroyed afterwards.
 */
function rawExchange(port: number, parts: ReadonlyArray<string | Buffer>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    const finish = (result: RawResponse | Error) => {
      socket.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const parsed = parseResponse(received);
      if (parsed !== null) finish(parsed);
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(new Error(`connection closed before a full response: ${received.toString()}`)));
    socket.on('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        await new Promise<void>((done) => socket.write(part, () => done()));
      }
    });
  });
}

/** The first complete response that arrives on `socket`. */
function firstResponse(socket: net.Socket): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const parsed = parseResponse(received);
      if (parsed === null) return;
      socket.off('data', onData).off('close', onClose);
      resolve(parsed);
    };
    const onClose = () => reject(new Error(`connection closed before a full response: ${received.toString()}`));
    socket.on('data', onData).on('close', onClose);
  });
}

function parseResponse(bytes: Buffer): RawResponse | null {
  const headerEnd = bytes.indexOf('\r\n\r\n');
  if (headerEnd < 0) return null;
  const [statusLine, ...headerLines] = bytes.subarray(0, headerEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = bytes.subarray(headerEnd + 4);
  if (body.length < length) return null;
  const text = body.subarray(0, length).toString('utf8');
  return {
    status: Number(statusLine?.split(' ')[1]),
    headers,
    body: headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : text,
  };
}

function postHead(path: string, headers: Record<string, string | number>): string {
  const lines = [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return lines.join('\r\n') + '\r\n\r\n';
}

/** A challenge request padded with an unknown field to exactly `totalBytes` bytes of JSON. */
function paddedChallengeBody(totalBytes: number): string {
  const skeleton = JSON.stringify({ address: ADDRESS, pad: '' });
  return JSON.stringify({ address: ADDRESS, pad: 'x'.repeat(totalBytes - skeleton.length) });
}

const PAYLOAD_TOO_LARGE = { code: 'PAYLOAD_TOO_LARGE', message: 'request body exceeds 64 KiB' };

describe('HTTP layer', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  before(async () => {
    server = await startServer();
    api = client(server.baseUrl);
  });
  after(async () => {
    assert.equal(await server.stop(), 0, server.stderr.join('\n'));
    removeDataDir(server);
  });

  async function assertStillServing(): Promise<void> {
    const health = await api.get('/healthz');
    assert.deepEqual({ status: health.status, body: health.body }, { status: 200, body: { status: 'ok' } });
    assert.equal(server.process.exitCode, null, 'server process is still running');
  }

  describe('routing', () => {
    it('an unknown path is 404 NOT_FOUND', async () => {
      const res = await api.get('/v1/no-such-thing');
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { code: 'NOT_FOUND', message: 'no such route' });
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    });

    it('a known path with another method is 405 METHOD_NOT_ALLOWED listing the allowed methods', async () => {
      const res = await api.delete('/v1/user/preferences');
      assert.equal(res.status, 405);
      assert.deepEqual(res.body, { code: 'METHOD_NOT_ALLOWED', message: 'method not allowed on this path' });
      assert.deepEqual(res.headers.get('allow')?.split(', ').sort(), ['GET', 'PATCH']);
    });

    it('a path parameter route matches only its own shape', async () => {
      const res = await api.post('/v1/admin/markets/1/resolve/extra', { outcome: 'YES' });
      assert.deepEqual({ status: res.status, body: res.body }, { status: 404, body: { code: 'NOT_FOUND', message: 'no such route' } });
    });

    it('every response carries its own X-Request-Id, errors included', async () => {
      const ids = [
        (await api.get('/healthz')).headers.get('x-request-id'),
        (await api.get('/v1/no-such-thing')).headers.get('x-request-id'),
        (await api.post('/v1/auth/wallet/challenge', { address: 'nope' })).headers.get('x-request-id'),
      ];
      for (const id of ids) assert.match(id ?? '', /^[0-9a-z-]{3,64}$/);
      assert.equal(new Set(ids).size, ids.length);
    });
  });

  describe('request bodies', () => {
    it('a body without Content-Type application/json is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const expected = { status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'request body must be application/json' } };
      const rawBody = JSON.stringify({ address: ADDRESS });
      const asText = await api.post('/v1/auth/wallet/challenge', undefined, { rawBody, headers: { 'content-type': 'text/plain' } });
      assert.deepEqual({ status: asText.status, body: asText.body }, expected);
      const untyped = await api.post('/v1/auth/wallet/challenge', undefined, { rawBody: new TextEncoder().encode(rawBody) });
      assert.deepEqual({ status: untyped.status, body: untyped.body }, expected);
    });

    it('application/json with a charset parameter is accepted', async () => {
      const res = await api.post('/v1/auth/wallet/challenge', undefined, {
        rawBody: JSON.stringify({ address: ADDRESS }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    });

    it('a body that is not JSON is 400 INVALID_JSON', async () => {
      for (const rawBody of ['{"address": ', 'not json', '']) {
        const res = await api.post('/v1/auth/wallet/challenge', undefined, { rawBody, headers: { 'content-type': 'application/json' } });
        assert.deepEqual(
          { status: res.status, body: res.body },
          { status: 400, body: { code: 'INVALID_JSON', message: 'request body is not valid JSON' } },
          `body ${JSON.stringify(rawBody)}`,
        );
      }
    });

    it('an unknown field is 400 VALIDATION_FAILED with a detail naming it', async () => {
      const res = await api.post('/v1/auth/wallet/challenge', { address: ADDRESS, referrer: 'x' });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        code: 'VALIDATION_FAILED',
        message: 'request failed validation',
        details: [{ path: '/referrer', message: 'Unexpected property' }],
      });
    });

    it('a missing or mistyped field is 400 VALIDATION_FAILED with details', async () => {
      const missing = await api.post('/v1/auth/wallet/challenge', {});
      assert.equal(missing.status, 400);
      assert.deepEqual(missing.body, {
        code: 'VALIDATION_FAILED',
        message: 'request failed validation',
        details: [
          { path: '/address', message: 'Expected required property' },
          { path: '/address', message: 'Expected string' },
        ],
      });
      const mistyped = await api.post('/v1/auth/wallet/challenge', { address: 42 });
      assert.equal(mistyped.status, 400);
      assert.deepEqual(mistyped.body, {
        code: 'VALIDATION_FAILED',
        message: 'request failed validation',
        details: [{ path: '/address', message: 'Expected string' }],
      });
    });

    it('a JSON body that is not an object is 400 VALIDATION_FAILED', async () => {
      const res = await api.post('/v1/auth/wallet/challenge', [ADDRESS]);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        code: 'VALIDATION_FAILED',
        message: 'request failed validation',
        details: [{ path: '/', message: 'Expected object' }],
      });
    });

    it('a query value out of range is 400 VALIDATION_FAILED with details', async () => {
      const res = await api.get('/v1/markets/lookup?asset=BTC&duration_secs=300&at_ms=-1');
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        code: 'VALIDATION_FAILED',
        message: 'request failed validation',
        details: [{ path: '/at_ms', message: 'Expected integer to be greater or equal to 0' }],
      });
    });
  });

  describe('64 KiB body limit', () => {
    it('a body of exactly 64 KiB is read and validated', async () => {
      const body = paddedChallengeBody(LIMIT_BYTES);
      assert.equal(Buffer.byteLength(body), LIMIT_BYTES);
      const res = await rawExchange(server.port, [
        postHead('/v1/auth/wallet/challenge', { 'Content-Type': 'application/json', 'Content-Length': LIMIT_BYTES }),
        body,
      ]);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        code: 'VALIDATION_FAILED',
        message: 'request failed validation',
        details: [{ path: '/pad', message: 'Unexpected property' }],
      });
    });

    it('a body one byte over 64 KiB is 413 PAYLOAD_TOO_LARGE and the server keeps serving', async () => {
      const body = paddedChallengeBody(LIMIT_BYTES + 1);
      const res = await rawExchange(server.port, [
        postHead('/v1/auth/wallet/challenge', { 'Content-Type': 'application/json', 'Content-Length': LIMIT_BYTES + 1 }),
        body,
      ]);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 413, body: PAYLOAD_TOO_LARGE });
      await assertStillServing();
    });

    it('a declared Content-Length over 64 KiB is 413 before any body byte is sent', async () => {
      const res = await rawExchange(server.port, [
        postHead('/v1/auth/wallet/challenge', { 'Content-Type': 'application/json', 'Content-Length': 10 * LIMIT_BYTES }),
      ]);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 413, body: PAYLOAD_TOO_LARGE });
      assert.equal(res.headers['connection'], 'close');
      assert.match(res.headers['x-request-id'] ?? '', /./);
      await assertStillServing();
    });

    it('a chunked body that grows past 64 KiB is 413 and the server keeps serving', async () => {
      const chunkBytes = 16 * 1024;
      const chunk = `${chunkBytes.toString(16)}\r\n${' '.repeat(chunkBytes)}\r\n`;
      // Five chunks (80 KiB) and no terminating chunk: only the running count can tell the body is too big.
      const res = await rawExchange(server.port, [
        postHead('/v1/auth/wallet/challenge', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }),
        ...Array.from({ length: 5 }, () => chunk),
      ]);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 413, body: PAYLOAD_TOO_LARGE });
      await assertStillServing();
    });

    it('a chunked body under the limit is read whole', async () => {
      const json = JSON.stringify({ address: ADDRESS });
      const half = Math.floor(json.length / 2);
      const chunks = [json.slice(0, half), json.slice(half)].map((part) => `${part.length.toString(16)}\r\n${part}\r\n`);
      const res = await rawExchange(server.port, [
        postHead('/v1/auth/wallet/challenge', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }),
        ...chunks,
        '0\r\n\r\n',
      ]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(typeof (res.body as { nonce: unknown }).nonce, 'string');
    });
  });

  describe('a bearer is checked again once the body has arrived', () => {
    /**
     * POST /v1/rfq/unsigned with `token`, its body sent in two writes. `meanwhile` runs between them, after a
     * full round trip on another connection: by then the server has read the head and resolved the bearer.
     */
    async function trickledRfq(token: string, body: object, meanwhile: () => Promise<void>): Promise<RawResponse> {
      const json = JSON.stringify(body);
      const half = Math.floor(json.length / 2);
      const head = postHead('/v1/rfq/unsigned', {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(json),
        Authorization: `Bearer ${token}`,
      });
      const socket = net.connect(server.port, '127.0.0.1');
      try {
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
        const response = firstResponse(socket);
        await new Promise<void>((resolve) => socket.write(head + json.slice(0, half), () => resolve()));
        await assertStillServing();
        await meanwhile();
        await new Promise<void>((resolve) => socket.write(json.slice(half), () => resolve()));
        return await response;
      } finally {
        socket.destroy();
      }
    }

    it('a token logged out while its POST body trickles in gets 401 UNAUTHENTICATED and creates nothing', async () => {
      const { user, market, api: taker } = await fundedTaker(server, 10_000_000);
      const body = unsignedBody([{ market_id: market, direction: 'up' }]);
      const res = await trickledRfq(user.token, body, async () => {
        const logout = await taker.post('/v1/auth/logout');
        assert.equal(logout.status, 200, JSON.stringify(logout.body));
      });
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 401, body: { code: 'UNAUTHENTICATED', message: 'missing, unknown, expired or revoked bearer token' } },
      );
      // The same submission on a new session of the same user is a first one (201), not a replay (200).
      const again = await loginWallet(server, user.wallet);
      assert.equal(again.userId, user.userId);
      const created = await client(server.baseUrl, again.token).post('/v1/rfq/unsigned', body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
    });

    it('a live token whose POST body trickles in still creates its RFQ (201)', async () => {
      const { user, market } = await fundedTaker(server, 10_000_000);
      const res = await trickledRfq(user.token, unsignedBody([{ market_id: market, direction: 'up' }]), async () => {});
      assert.equal(res.status, 201, JSON.stringify(res.body));
    });
  });

  describe('clients that go away', () => {
    it('clients that send half a body and disconnect neither crash the server nor block it', async () => {
      const user = await loginWallet(server);
      const rounds = 25;
      for (let i = 0; i < rounds; i++) {
        const socket = net.connect(server.port, '127.0.0.1');
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
        const declaredBytes = 4096;
        // Alternate between a route without auth and one that authenticates before it reads the body.
        const head =
          i % 2 === 0
            ? postHead('/v1/auth/wallet/challenge', { 'Content-Type': 'application/json', 'Content-Length': declaredBytes })
            : postHead('/v1/auth/logout', {
                'Content-Type': 'application/json',
                'Content-Length': declaredBytes,
                Authorization: `Bearer ${user.token}`,
              });
        await new Promise<void>((resolve) => socket.write(head + '{"address": "' + 'a'.repeat(1000), () => resolve()));
        // A full round trip on another connection: by then the server has taken in the partial body.
        await assertStillServing();
        await new Promise<void>((resolve) => socket.once('close', () => resolve()).destroy());
      }
      await assertStillServing();
      // The half-sent logouts never ran: the session is still live.
      const balance = await client(server.baseUrl, user.token).get('/v1/user/balance');
      assert.equal(balance.status, 200);
      const errors = server.logs.filter((entry) => typeof entry['level'] === 'number' && entry['level'] >= 50);
      assert.deepEqual(errors, []);
    });

    it('a client that disconnects before reading its response does not disturb the next ones', async () => {
      const body = JSON.stringify({ address: ADDRESS });
      for (let i = 0; i < 10; i++) {
        const socket = net.connect(server.port, '127.0.0.1');
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
        const text = postHead('/v1/auth/wallet/challenge', { 'Content-Type': 'application/json', 'Content-Length': body.length }) + body;
        await new Promise<void>((resolve) => socket.write(text, () => resolve()));
        socket.destroy();
      }
      await assertStillServing();
      const res = await request(server.baseUrl, 'POST', '/v1/auth/wallet/challenge', { body: { address: ADDRESS } });
      assert.equal(res.status, 200);
    });
  });
});
