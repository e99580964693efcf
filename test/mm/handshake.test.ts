// The maker handshake on /v1/mm/ws (interface.md "Market-maker WebSocket flow" and "Events", contract
// section 7), driven by the `ws` package and signed by ethers: neither is ours. Every auth_result reason
// except CHALLENGE_EXPIRED (deadlines.test.ts) is produced here, with both v styles and both address forms.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Signature, Wallet, getBytes } from 'ethers';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { breakChecksum } from '../helpers/users.js';
import { MakerSocket, challengeBytes, connectMaker, domainTagOf, registerMaker, signChallenge, type TestMaker } from '../helpers/makers.js';
import type { AuthChallengeMessage } from '../../src/contract/mm.js';

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HOUR_MS = 3_600_000;
// The signing vectors' public test key; its address is mixed case, so a flipped letter breaks EIP-55.
const VECTOR_KEY = '0x1111111111111111111111111111111111111111111111111111111111111111';

describe('maker handshake', () => {
  let server: TestServer;
  let maker: TestMaker;

  before(async () => {
    server = await startServer();
    maker = await registerMaker(server);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  /** Opens a socket, waits for the challenge, sends `response(challenge)` and returns the auth_result and close. */
  async function respond(build: (challenge: AuthChallengeMessage) => Promise<unknown> | unknown) {
    const socket = await MakerSocket.open(server);
    const challenge = await socket.next('auth_challenge');
    socket.send(await build(challenge));
    return { socket, result: await socket.next('auth_result') };
  }

  async function assertRefused(reason: string, build: (challenge: AuthChallengeMessage) => Promise<unknown> | unknown) {
    const { socket, result } = await respond(build);
    assert.deepEqual(result, { type: 'auth_result', success: false, reason });
    assert.deepEqual(await socket.waitClosed(), { code: 1008, reason });
  }

  const sign = (challenge: AuthChallengeMessage, wallet = maker.wallet) => signChallenge(wallet, challenge, domainTagOf(server));

  describe('challenge', () => {
    it('on connect the server sends auth_challenge: a fresh 32-byte nonce as 64 hex and the time in Unix seconds', async () => {
      const beforeS = Math.floor(Date.now() / 1000);
      const a = await MakerSocket.open(server);
      const b = await MakerSocket.open(server);
      const [ca, cb] = [await a.next(), await b.next()];
      const afterS = Math.ceil(Date.now() / 1000);
      for (const challenge of [ca, cb]) {
        assert.equal(challenge.type, 'auth_challenge');
        assert.deepEqual(Object.keys(challenge).sort(), ['nonce', 'timestamp', 'type']);
        assert.match((challenge as AuthChallengeMessage).nonce, /^[0-9a-f]{64}$/);
        const { timestamp } = challenge as AuthChallengeMessage;
        assert.ok(Number.isInteger(timestamp) && timestamp >= beforeS - 1 && timestamp <= afterS + 1, `timestamp ${timestamp}`);
      }
      assert.notEqual((ca as AuthChallengeMessage).nonce, (cb as AuthChallengeMessage).nonce);
      await Promise.all([a.close(), b.close()]);
    });
  });

  describe('success', () => {
    it('an EIP-55 address with a v 27/28 signature gets auth_result success with a session token valid for 1 hour', async () => {
      const startedMs = Date.now();
      const socket = await MakerSocket.open(server, { autoPong: true });
      const challenge = await socket.next('auth_challenge');
      const signature = await sign(challenge);
      assert.ok(['1b', '1c'].includes(signature.slice(-2)));
      socket.send({ type: 'auth_response', address: maker.checksumAddress, signature });
      const result = await socket.next('auth_result');
      assert.equal(result.type, 'auth_result');
      assert.ok(result.success);
      assert.deepEqual(Object.keys(result).sort(), ['expires_at_ms', 'session_token', 'success', 'type']);
      assert.match(result.session_token, TOKEN_RE);
      assert.ok(result.expires_at_ms >= startedMs + HOUR_MS && result.expires_at_ms <= Date.now() + HOUR_MS);
      const session = await client(server.baseUrl, result.session_token).get('/v1/mm/session');
      assert.deepEqual(session, { ...session, status: 200, body: { address: maker.address, expires_at_ms: result.expires_at_ms } });
      assert.equal(socket.isOpen, true);
      await socket.close();
      // Neither the token nor the signature is ever logged (contract section 10).
      await server.waitForLog((l) => l['msg'] === 'maker authenticated' && l['address'] === maker.address);
      const logged = JSON.stringify(server.logs);
      assert.equal(logged.includes(result.session_token), false);
      assert.equal(logged.includes(signature.slice(2, 66)), false);
    });

    it('a lowercase address with a v 0/1 signature authenticates', async () => {
      const mm = await connectMaker(server, maker, { lowercaseAddress: true, useRecoveryIdV: true });
      assert.equal((await client(server.baseUrl, mm.sessionToken).get('/v1/mm/session')).status, 200);
      await mm.close();
    });

    it('both prefixes are optional: an address and a signature without 0x authenticate', async () => {
      const { socket, result } = await respond(async (c) => ({
        type: 'auth_response',
        address: maker.address.slice(2),
        signature: (await sign(c)).slice(2),
      }));
      assert.equal(result.success, true);
      await socket.close();
    });

    it('one maker may hold several authenticated connections, each with its own session', async () => {
      const [a, b] = await Promise.all([connectMaker(server, maker), connectMaker(server, maker)]);
      assert.notEqual(a.sessionToken, b.sessionToken);
      for (const mm of [a, b]) assert.equal((await client(server.baseUrl, mm.sessionToken).get('/v1/mm/session')).status, 200);
      const list = await client(server.baseUrl, server.adminToken).get('/v1/admin/market-makers');
      assert.equal(list.body.makers.find((m: { address: string }) => m.address === maker.address).connections, 2);
      await Promise.all([a.close(), b.close()]);
    });
  });

  describe('refusals: auth_result success false with the reason, then close 1008 with the same reason', () => {
    it('INVALID_SIGNATURE: signed by another key', async () => {
      await assertRefused('INVALID_SIGNATURE', async (c) => ({
        type: 'auth_response',
        address: maker.checksumAddress,
        signature: await sign(c, Wallet.createRandom()),
      }));
    });

    it('INVALID_SIGNATURE: the nonce hex text was signed instead of its 32 bytes', async () => {
      await assertRefused('INVALID_SIGNATURE', async (c) => {
        const tag = Buffer.from(domainTagOf(server), 'ascii');
        const ts = Buffer.alloc(8);
        ts.writeBigUInt64LE(BigInt(c.timestamp));
        const wrong = Buffer.concat([tag, Buffer.from(c.nonce, 'ascii'), ts]);
        return { type: 'auth_response', address: maker.checksumAddress, signature: await maker.wallet.signMessage(wrong) };
      });
    });

    it('INVALID_SIGNATURE: the timestamp was signed big-endian, or another domain tag was used', async () => {
      await assertRefused('INVALID_SIGNATURE', async (c) => {
        const bytes = challengeBytes(c, domainTagOf(server));
        bytes.subarray(67).reverse();
        return { type: 'auth_response', address: maker.checksumAddress, signature: await maker.wallet.signMessage(bytes) };
      });
      await assertRefused('INVALID_SIGNATURE', async (c) => ({
        type: 'auth_response',
        address: maker.checksumAddress,
        signature: await maker.wallet.signMessage(challengeBytes(c, 'parlayd:mm:ws-auth:v1:example.test1')),
      }));
    });

    it("INVALID_SIGNATURE: the signature of another connection's challenge (replay)", async () => {
      const other = await MakerSocket.open(server);
      const otherSignature = await sign(await other.next('auth_challenge'));
      await assertRefused('INVALID_SIGNATURE', () => ({
        type: 'auth_response',
        address: maker.checksumAddress,
        signature: otherSignature,
      }));
      await other.close();
    });

    it('INVALID_SIGNATURE: v outside 0, 1, 27, 28, and the high-s twin of a valid signature', async () => {
      await assertRefused('INVALID_SIGNATURE', async (c) => ({
        type: 'auth_response',
        address: maker.checksumAddress,
        signature: (await sign(c)).slice(0, -2) + '1d',
      }));
      await assertRefused('INVALID_SIGNATURE', async (c) => {
        const sig = Signature.from(await sign(c));
        const highS = (SECP256K1_N - BigInt(sig.s)).toString(16).padStart(64, '0');
        const flippedV = sig.v === 27 ? '1c' : '1b';
        return { type: 'auth_response', address: maker.checksumAddress, signature: sig.r + highS + flippedV };
      });
    });

    it('UNKNOWN_MAKER: a valid signature by an address that is not registered', async () => {
      const stranger = Wallet.createRandom();
      await assertRefused('UNKNOWN_MAKER', async (c) => ({
        type: 'auth_response',
        address: stranger.address,
        signature: await sign(c, stranger),
      }));
    });

    it('MALFORMED: a mixed-case address with a bad EIP-55 checksum, even with a valid signature', async () => {
      const wallet = new Wallet(VECTOR_KEY);
      await registerMaker(server, wallet);
      await assertRefused('MALFORMED', async (c) => ({
        type: 'auth_response',
        address: breakChecksum(wallet.address),
        signature: await sign(c, wallet),
      }));
    });

    it('MALFORMED: a signature that is not 130 hex, a missing field, an unknown field', async () => {
      const cases: Array<(c: AuthChallengeMessage) => Promise<unknown>> = [
        async (c) => ({ type: 'auth_response', address: maker.checksumAddress, signature: (await sign(c)).slice(0, -2) }),
        async (c) => ({
          type: 'auth_response',
          address: maker.checksumAddress,
          signature: '0x' + Buffer.from(getBytes(await sign(c))).toString('base64'),
        }),
        async () => ({ type: 'auth_response', address: maker.checksumAddress }),
        async (c) => ({ type: 'auth_response', address: maker.checksumAddress, signature: await sign(c), session: 'x' }),
      ];
      for (const build of cases) await assertRefused('MALFORMED', build);
    });
  });

  describe('out of turn', () => {
    it('anything but auth_response before auth gets error NOT_AUTHENTICATED and the socket closes', async () => {
      const frames: Array<(s: MakerSocket) => void> = [
        (s) => s.send({ type: 'quote', request_id: '3f1c2a9e-8b7d-4c6a-9e2f-1a2b3c4d5e6f', quote_id: 'q', odds: 2, max_wager_micros: '1' }),
        (s) => s.send({ type: 'pong', ts: 1 }),
        (s) => s.sendRaw('not json'),
        (s) => s.sendRaw(Buffer.from('{"type":"auth_response"}'), { binary: true }),
      ];
      for (const sendFrame of frames) {
        const socket = await MakerSocket.open(server);
        await socket.next('auth_challenge');
        sendFrame(socket);
        const error = await socket.next('error');
        assert.deepEqual(error, { type: 'error', code: 'NOT_AUTHENTICATED', message: error.message });
        assert.deepEqual(await socket.waitClosed(), { code: 1008, reason: 'NOT_AUTHENTICATED' });
        assert.equal(
          socket.received.some((m) => m.type === 'auth_result'),
          false,
        );
      }
    });

    it('the challenge is used once: a second auth_response is answered with an error and the first decides', async () => {
      const socket = await MakerSocket.open(server);
      const challenge = await socket.next('auth_challenge');
      const response = { type: 'auth_response', address: maker.checksumAddress, signature: await sign(challenge) };
      socket.send(response);
      socket.send(response);
      // AUTH_IN_PROGRESS when it lands while the first is verified, ALREADY_AUTHENTICATED after; never a
      // second verification (gateway.test.ts holds the verification to pin AUTH_IN_PROGRESS down).
      const error = await socket.next('error');
      assert.ok(['AUTH_IN_PROGRESS', 'ALREADY_AUTHENTICATED'].includes(error.code), error.code);
      const result = await socket.next('auth_result');
      assert.equal(result.success, true);
      assert.equal(socket.received.filter((m) => m.type === 'auth_result').length, 1);
      assert.equal(socket.isOpen, true);
      await socket.close();
    });

    it('after success another auth_response gets error ALREADY_AUTHENTICATED and the socket stays open', async () => {
      const mm = await connectMaker(server, maker);
      mm.send({ type: 'auth_response', address: maker.checksumAddress, signature: '0x' + '11'.repeat(65) });
      assert.equal((await mm.next('error')).code, 'ALREADY_AUTHENTICATED');
      assert.equal(mm.socket.isOpen, true);
      assert.equal((await client(server.baseUrl, mm.sessionToken).get('/v1/mm/session')).status, 200);
      await mm.close();
    });

    it('a frame over 16 KiB closes the socket', async () => {
      const socket = await MakerSocket.open(server);
      await socket.next('auth_challenge');
      socket.sendRaw(JSON.stringify({ type: 'auth_response', address: 'x'.repeat(17 * 1024), signature: '' }));
      const closed = await socket.waitClosed();
      assert.notEqual(closed.code, 1000);
    });

    it('a plain HTTP GET of the socket path is 404 NOT_FOUND (the socket route does not swallow HTTP)', async () => {
      const res = await client(server.baseUrl).get('/v1/mm/ws');
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'NOT_FOUND');
    });
  });
});
