// Wallet login with Sign-In with Ethereum (contract section 3), signed by ethers as the independent signer:
// the user is created once, and domain, URI, chain, address, nonce, expiry and signer are each checked. A
// tampered message is signed by the same wallet, so only the server's field check can refuse it.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Signature, Wallet } from 'ethers';
import type { Static } from '@sinclair/typebox';
import type { WalletChallengeResponse } from '../../src/contract/auth.js';
import { validationFailed } from '../helpers/errors.js';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { breakChecksum, loginWallet } from '../helpers/users.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/; // 256 bits, base64url without padding
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const DAY_MS = 86_400_000;

const unauthenticated = (message: string) => ({ status: 401, body: { code: 'UNAUTHENTICATED', message } });

type Challenge = Static<typeof WalletChallengeResponse>;

describe('wallet login (SIWE)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  before(async () => {
    server = await startServer();
    api = client(server.baseUrl);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  async function challenge(address: string): Promise<Challenge> {
    const res = await api.post('/v1/auth/wallet/challenge', { address });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Challenge;
  }

  async function signIn(message: string, signature: string) {
    const res = await api.post('/v1/auth/wallet', { message, signature });
    return { status: res.status, body: res.body };
  }

  /** Replaces the line starting with `prefix` (or the header line, for the domain) in a SIWE message. */
  function tamper(message: string, prefix: string, replacement: string): string {
    const lines = message.split('\n');
    const index = lines.findIndex((line) => line.startsWith(prefix));
    assert.ok(index >= 0, `no line starting with ${prefix}`);
    lines[index] = replacement;
    return lines.join('\n');
  }

  describe('challenge', () => {
    it('a challenge is an EIP-4361 message for the checksummed address with a 5-minute single-use nonce', async () => {
      const wallet = Wallet.createRandom();
      const beforeMs = Date.now();
      const res = await api.post('/v1/auth/wallet/challenge', { address: wallet.address.toLowerCase() });
      const afterMs = Date.now();
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ['expires_at_ms', 'message', 'nonce']);
      const { message, nonce, expires_at_ms: expiresAtMs } = res.body as Challenge;
      assert.match(nonce, /^[A-Za-z0-9]{8,}$/);
      assert.ok(expiresAtMs >= beforeMs + 300_000 && expiresAtMs <= afterMs + 300_000, `expires_at_ms ${expiresAtMs}`);
      const lines = message.split('\n');
      assert.deepEqual(lines.slice(0, 9), [
        'localhost wants you to sign in with your Ethereum account:',
        wallet.address, // EIP-55 form, as EIP-4361 requires
        '',
        'Sign in to parlayd.',
        '',
        'URI: http://localhost',
        'Version: 1',
        'Chain ID: 1',
        `Nonce: ${nonce}`,
      ]);
      assert.match(lines[9] ?? '', /^Issued At: \d{4}-\d{2}-\d{2}T/);
      assert.equal(lines[10], `Expiration Time: ${new Date(expiresAtMs).toISOString()}`);
      assert.equal(lines.length, 11);
    });

    it('a challenge accepts the address with or without 0x, lowercase, uppercase or checksummed', async () => {
      const wallet = Wallet.createRandom();
      const body = wallet.address.slice(2);
      for (const address of [wallet.address, body.toLowerCase(), '0x' + body.toUpperCase(), body]) {
        const res = await api.post('/v1/auth/wallet/challenge', { address });
        assert.equal(res.status, 200, `${address}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.message.split('\n')[1], wallet.address);
      }
    });

    it('a mixed-case address with a bad EIP-55 checksum is 400 VALIDATION_FAILED', async () => {
      const res = await api.post('/v1/auth/wallet/challenge', { address: breakChecksum(Wallet.createRandom().address) });
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 400,
          body: {
            code: 'VALIDATION_FAILED',
            message: 'request failed validation',
            details: [{ path: '/address', message: 'not an address, or bad EIP-55 checksum' }],
          },
        },
      );
    });

    it('an address that is not 40 hex digits is 400 VALIDATION_FAILED', async () => {
      const res = await api.post('/v1/auth/wallet/challenge', { address: '0x1234' });
      assert.deepEqual(
        { status: res.status, body: res.body },
        {
          status: 400,
          body: {
            code: 'VALIDATION_FAILED',
            message: 'request failed validation',
            details: [{ path: '/address', message: "Expected string to match '^(0x)?[0-9a-fA-F]{40}$'" }],
          },
        },
      );
    });
  });

  describe('login', () => {
    it('the first login of a wallet creates its user and a second login returns the same user_id', async () => {
      const wallet = Wallet.createRandom();
      const first = await challenge(wallet.address);
      const beforeMs = Date.now();
      const login = await signIn(first.message, await wallet.signMessage(first.message));
      assert.equal(login.status, 200, JSON.stringify(login.body));
      assert.deepEqual(Object.keys(login.body).sort(), ['expires_at_ms', 'session_token', 'user_id', 'wallet']);
      assert.match(login.body.session_token, TOKEN_RE);
      assert.match(login.body.user_id, UUID_RE);
      assert.equal(login.body.wallet, wallet.address.toLowerCase());
      assert.ok(login.body.expires_at_ms >= beforeMs + DAY_MS && login.body.expires_at_ms <= Date.now() + DAY_MS);

      const again = await loginWallet(server, wallet);
      assert.equal(again.userId, login.body.user_id);
      assert.notEqual(again.token, login.body.session_token);
      // Both sessions are live.
      for (const token of [login.body.session_token, again.token]) {
        const balance = await client(server.baseUrl, token).get('/v1/user/balance');
        assert.deepEqual(
          { status: balance.status, body: balance.body },
          { status: 200, body: { available_micros: '0', reserved_micros: '0', at_risk_micros: '0', pending_withdrawal_micros: '0' } },
        );
      }
    });

    it('concurrent first logins of one wallet create exactly one user', async () => {
      const wallet = Wallet.createRandom();
      const users = await Promise.all(Array.from({ length: 6 }, () => loginWallet(server, wallet)));
      assert.equal(new Set(users.map((u) => u.userId)).size, 1);
      assert.equal(new Set(users.map((u) => u.token)).size, users.length);
    });

    it('a signature by another wallet is 401 UNAUTHENTICATED', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const res = await signIn(message, await Wallet.createRandom().signMessage(message));
      assert.deepEqual(res, unauthenticated('signature is not from the message address'));
    });

    it('a replayed SIWE nonce is 401 UNAUTHENTICATED', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const signature = await wallet.signMessage(message);
      assert.equal((await signIn(message, signature)).status, 200);
      assert.deepEqual(await signIn(message, signature), unauthenticated('unknown or already used nonce'));
    });

    it('a nonce is consumed by a failed attempt: the right signature afterwards is 401', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      assert.equal((await signIn(message, await Wallet.createRandom().signMessage(message))).status, 401);
      assert.deepEqual(await signIn(message, await wallet.signMessage(message)), unauthenticated('unknown or already used nonce'));
    });

    it('concurrent logins with one nonce: exactly one succeeds', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const signature = await wallet.signMessage(message);
      const results = await Promise.all(Array.from({ length: 5 }, () => signIn(message, signature)));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 401, 401, 401, 401]);
    });

    it('a message for another domain is 401 although its wallet signed it, and its nonce is spent', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const forged = tamper(message, 'localhost wants you', 'evil.example wants you to sign in with your Ethereum account:');
      assert.deepEqual(await signIn(forged, await wallet.signMessage(forged)), unauthenticated('message domain is not this service'));
      assert.deepEqual(await signIn(message, await wallet.signMessage(message)), unauthenticated('unknown or already used nonce'));
    });

    it('a message for another URI is 401', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const forged = tamper(message, 'URI: ', 'URI: https://evil.example');
      assert.deepEqual(await signIn(forged, await wallet.signMessage(forged)), unauthenticated('message URI is not this service'));
    });

    it('a message for another chain is 401', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const forged = tamper(message, 'Chain ID: ', 'Chain ID: 137');
      assert.deepEqual(await signIn(forged, await wallet.signMessage(forged)), unauthenticated('message chain id is not this service'));
    });

    it('a message whose Expiration Time has passed is 401', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const forged = tamper(message, 'Expiration Time: ', `Expiration Time: ${new Date(Date.now() - 1000).toISOString()}`);
      assert.deepEqual(await signIn(forged, await wallet.signMessage(forged)), unauthenticated('message expired'));
    });

    it('a message for an address other than the challenged one is 401, even signed by that address', async () => {
      const challenged = Wallet.createRandom();
      const other = Wallet.createRandom();
      const { message } = await challenge(challenged.address);
      const forged = tamper(message, challenged.address, other.address);
      assert.deepEqual(
        await signIn(forged, await other.signMessage(forged)),
        unauthenticated('message address is not the challenged address'),
      );
    });

    it('a message not in the layout the service issued is 400 VALIDATION_FAILED', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      for (const altered of [message + '\n', message.replaceAll('\n', '\r\n'), 'hello']) {
        assert.deepEqual(await signIn(altered, await wallet.signMessage(altered)), {
          status: 400,
          body: {
            code: 'VALIDATION_FAILED',
            message: 'request failed validation',
            details: [{ path: '/message', message: 'not a Sign-In with Ethereum message as this service issues them' }],
          },
        });
      }
    });

    it('a signature that is not 0x + 130 hex digits is 400 INVALID_SIGNATURE, and its nonce is spent', async () => {
      // Contract sections 2 and 3: a signature not in its encoding is INVALID_SIGNATURE; a nonce is consumed
      // by its first use, good or bad.
      const wallet = Wallet.createRandom();
      const sig = Signature.from(await wallet.signMessage((await challenge(wallet.address)).message));
      const sig65 = Buffer.from(sig.serialized.slice(2), 'hex');
      const malformed = {
        'without 0x': sig.serialized.slice(2),
        empty: '',
        '64 bytes (compact)': sig.compactSerialized,
        '66 bytes': sig.serialized + '00',
        'base64 of the 65 bytes': sig65.toString('base64'),
        'a non-hex digit': sig.serialized.slice(0, -1) + 'g',
        'surrounding space': ` ${sig.serialized}`,
        'JSON of the signature object': JSON.stringify(sig),
        '512 characters': '0x' + 'ab'.repeat(255),
      };
      for (const [name, signature] of Object.entries(malformed)) {
        const { message } = await challenge(wallet.address);
        assert.deepEqual(
          await signIn(message, signature),
          {
            status: 400,
            body: { code: 'INVALID_SIGNATURE', message: 'signature is not 0x + 130 hex digits (65 bytes)' },
          },
          name,
        );
        assert.deepEqual(await signIn(message, await wallet.signMessage(message)), unauthenticated('unknown or already used nonce'), name);
      }
    });

    it('a signature over 512 characters is 400 VALIDATION_FAILED (no signature in any encoding) and spends nothing', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      assert.deepEqual(
        await signIn(message, '0x' + 'ab'.repeat(256)),
        validationFailed('/signature', 'Expected string length less or equal to 512'),
      );
      assert.equal((await signIn(message, await wallet.signMessage(message))).status, 200);
    });

    it('an unrecoverable signature is 400 INVALID_SIGNATURE', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const res = await signIn(message, '0x' + '00'.repeat(64) + '1b');
      assert.deepEqual(res, {
        status: 400,
        body: { code: 'INVALID_SIGNATURE', message: 'signature is malformed, unrecoverable or high-s' },
      });
    });

    it('the high-s twin of a valid signature is 400 INVALID_SIGNATURE', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const sig = Signature.from(await wallet.signMessage(message));
      // (r, n - s) with the other parity recovers the same key: a malleable copy that EIP-2 refuses.
      const highS = (SECP256K1_N - BigInt(sig.s)).toString(16).padStart(64, '0');
      const flippedV = sig.v === 27 ? '1c' : '1b';
      const res = await signIn(message, `${sig.r}${highS}${flippedV}`);
      assert.deepEqual(res, {
        status: 400,
        body: { code: 'INVALID_SIGNATURE', message: 'signature is malformed, unrecoverable or high-s' },
      });
    });

    it('a v of 0/1 instead of 27/28 is accepted', async () => {
      const wallet = Wallet.createRandom();
      const { message } = await challenge(wallet.address);
      const sig = Signature.from(await wallet.signMessage(message));
      const res = await signIn(message, `${sig.r}${sig.s.slice(2)}${sig.v === 27 ? '00' : '01'}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.wallet, wallet.address.toLowerCase());
    });
  });

  describe('sessions', () => {
    it('logout revokes the session: the same token is then 401 and other sessions live on', async () => {
      const wallet = Wallet.createRandom();
      const first = await loginWallet(server, wallet);
      const second = await loginWallet(server, wallet);
      const me = client(server.baseUrl, first.token);
      // Used once first, so the session is held in memory as well as in LMDB (auth/sessions.ts).
      assert.equal((await me.get('/v1/user/balance')).status, 200);
      const logout = await me.post('/v1/auth/logout');
      assert.deepEqual({ status: logout.status, body: logout.body }, { status: 200, body: { revoked: true } });
      const revoked = unauthenticated('missing, unknown, expired or revoked bearer token');
      const after = await me.get('/v1/user/balance');
      assert.deepEqual({ status: after.status, body: after.body }, revoked);
      const again = await me.post('/v1/auth/logout');
      assert.deepEqual({ status: again.status, body: again.body }, revoked);
      assert.equal((await client(server.baseUrl, second.token).get('/v1/user/balance')).status, 200);
    });

    it('the Bearer scheme name is case-insensitive', async () => {
      const user = await loginWallet(server);
      const res = await api.get('/v1/user/balance', { headers: { authorization: `bearer ${user.token}` } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    });
  });
});

describe('wallet login expiry', { concurrency: true }, () => {
  // Short enough to wait out, long enough that a login on a loaded machine finishes inside the nonce TTL.
  const nonceTtlMs = 2500;
  const sessionTtlMs = 4000;
  let server: TestServer;

  before(async () => {
    server = await startServer({
      env: { PARLAYD_LOGIN_NONCE_TTL_MS: String(nonceTtlMs), PARLAYD_SESSION_TTL_MS: String(sessionTtlMs) },
    });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  /** Waits until the server's clock (the same machine's) is past `atMs`. */
  async function waitUntilPast(atMs: number): Promise<void> {
    while (Date.now() <= atMs) await sleep(atMs - Date.now() + 5);
  }

  it('a login after the nonce expired is 401 UNAUTHENTICATED', async () => {
    const wallet = Wallet.createRandom();
    const api = client(server.baseUrl);
    const challenge = await api.post('/v1/auth/wallet/challenge', { address: wallet.address });
    assert.equal(challenge.status, 200);
    assert.ok(challenge.body.expires_at_ms <= Date.now() + nonceTtlMs);
    const signature = await wallet.signMessage(challenge.body.message);
    await waitUntilPast(challenge.body.expires_at_ms);
    const res = await api.post('/v1/auth/wallet', { message: challenge.body.message, signature });
    assert.deepEqual({ status: res.status, body: res.body }, unauthenticated('login nonce expired'));
  });

  it('a session past its expires_at_ms is 401 UNAUTHENTICATED', async () => {
    const wallet = Wallet.createRandom();
    const api = client(server.baseUrl);
    const challenge = await api.post('/v1/auth/wallet/challenge', { address: wallet.address });
    const login = await api.post('/v1/auth/wallet', {
      message: challenge.body.message,
      signature: await wallet.signMessage(challenge.body.message),
    });
    assert.equal(login.status, 200);
    assert.ok(login.body.expires_at_ms <= Date.now() + sessionTtlMs);
    await waitUntilPast(login.body.expires_at_ms);
    const res = await client(server.baseUrl, login.body.session_token).get('/v1/user/balance');
    assert.deepEqual({ status: res.status, body: res.body }, unauthenticated('missing, unknown, expired or revoked bearer token'));
  });
});
