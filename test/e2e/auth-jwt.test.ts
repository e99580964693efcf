// Identity-provider login (contract section 3): id_tokens from the dev identity provider (src/auth/dev-idp.ts,
// the same code the scripts use) against a server whose PARLAYD_JWKS_FILE points at its jwks.json. Tokens
// the provider would never issue (other key, other audience, missing claims) are built with jose directly.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { SignJWT, importJWK, type JWTPayload } from 'jose';
import {
  DEFAULT_DEV_AUDIENCE,
  DEFAULT_DEV_ISSUER,
  generateDevIdpKey,
  mintIdToken,
  writeDevIdpKeys,
  type DevIdpKey,
  type WrittenDevIdp,
} from '../../src/auth/dev-idp.js';
import { client } from '../helpers/http.js';
import { repoRoot } from '../helpers/paths.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { breakChecksum, loginWallet } from '../helpers/users.js';

const ISSUER = 'https://idp.test.example';
const AUDIENCE = 'parlayd-e2e';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const run = promisify(execFile);

const rejected = (message: string) => ({ status: 401, body: { code: 'UNAUTHENTICATED', message } });

describe('identity-provider login (JWT)', () => {
  let idpDir: string;
  let idp: WrittenDevIdp;
  let es256: DevIdpKey;
  let eddsa: DevIdpKey;
  let server: TestServer;

  before(async () => {
    idpDir = mkdtempSync(join(tmpdir(), 'parlayd-idp-'));
    idp = await writeDevIdpKeys(idpDir, ['ES256', 'EdDSA']);
    [es256, eddsa] = idp.keys as [DevIdpKey, DevIdpKey];
    server = await startServer({
      env: { PARLAYD_JWKS_FILE: idp.jwksFile, PARLAYD_JWT_ISSUER: ISSUER, PARLAYD_JWT_AUDIENCE: AUDIENCE },
    });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
    rmSync(idpDir, { recursive: true, force: true });
  });

  const mint = (key: DevIdpKey, wallet: string, overrides: Partial<Parameters<typeof mintIdToken>[0]> = {}) =>
    mintIdToken({
      privateJwk: key.privateJwk,
      kid: key.kid,
      alg: key.alg,
      issuer: ISSUER,
      audience: AUDIENCE,
      sub: `user-${wallet}`,
      wallet,
      expiresInS: 600,
      ...overrides,
    });

  /** A token with exactly these claims, signed by `key`: for shapes the dev provider never mints. */
  async function signClaims(key: DevIdpKey, claims: JWTPayload): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(await importJWK(key.privateJwk, key.alg));
  }

  async function sessionLogin(idToken: string) {
    const res = await client(server.baseUrl).post('/v1/auth/session', { id_token: idToken });
    return { status: res.status, body: res.body };
  }

  it('a good ES256 id_token logs in and creates the user of its wallet claim', async () => {
    const wallet = Wallet.createRandom().address;
    const beforeMs = Date.now();
    const res = await sessionLogin(await mint(es256, wallet));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['expires_at_ms', 'session_token', 'user_id', 'wallet']);
    assert.match(res.body.user_id, UUID_RE);
    assert.equal(res.body.wallet, wallet.toLowerCase());
    assert.ok(res.body.expires_at_ms >= beforeMs + 86_400_000);
    const balance = await client(server.baseUrl, res.body.session_token).get('/v1/user/balance');
    assert.deepEqual(
      { status: balance.status, body: balance.body },
      { status: 200, body: { available_micros: '0', reserved_micros: '0', at_risk_micros: '0', pending_withdrawal_micros: '0' } },
    );
  });

  it('a good EdDSA id_token logs in, and a second login is the same user', async () => {
    const wallet = Wallet.createRandom().address;
    const first = await sessionLogin(await mint(eddsa, wallet));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const second = await sessionLogin(await mint(es256, wallet.toLowerCase()));
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.user_id, first.body.user_id);
    assert.notEqual(second.body.session_token, first.body.session_token);
  });

  it('id_token login and wallet login of one wallet are one user', async () => {
    const wallet = Wallet.createRandom();
    const viaJwt = await sessionLogin(await mint(es256, wallet.address));
    assert.equal(viaJwt.status, 200, JSON.stringify(viaJwt.body));
    const viaSiwe = await loginWallet(server, wallet);
    assert.equal(viaSiwe.userId, viaJwt.body.user_id);
  });

  it('an expired id_token is 401 UNAUTHENTICATED', async () => {
    const token = await mint(es256, Wallet.createRandom().address, { expiresInS: -60 });
    assert.deepEqual(await sessionLogin(token), rejected('id_token rejected: ERR_JWT_EXPIRED'));
  });

  it('an id_token for another audience is 401 UNAUTHENTICATED', async () => {
    const token = await mint(es256, Wallet.createRandom().address, { audience: 'someone-else' });
    assert.deepEqual(await sessionLogin(token), rejected('id_token rejected: ERR_JWT_CLAIM_VALIDATION_FAILED'));
  });

  it('an id_token from another issuer is 401 UNAUTHENTICATED', async () => {
    const token = await mint(eddsa, Wallet.createRandom().address, { issuer: 'https://evil.example' });
    assert.deepEqual(await sessionLogin(token), rejected('id_token rejected: ERR_JWT_CLAIM_VALIDATION_FAILED'));
  });

  it('an id_token signed by a key outside the JWKS under a known kid is 401 UNAUTHENTICATED', async () => {
    const impostor = await generateDevIdpKey('ES256', es256.kid);
    const token = await mint(impostor, Wallet.createRandom().address);
    assert.deepEqual(await sessionLogin(token), rejected('id_token rejected: ERR_JWS_SIGNATURE_VERIFICATION_FAILED'));
  });

  it('an id_token signed by a key with an unknown kid is 401 UNAUTHENTICATED', async () => {
    const stranger = await generateDevIdpKey('EdDSA');
    const token = await mint(stranger, Wallet.createRandom().address);
    assert.deepEqual(await sessionLogin(token), rejected('id_token rejected: ERR_JWKS_NO_MATCHING_KEY'));
  });

  it('an id_token without a wallet claim is 401 UNAUTHENTICATED', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const token = await signClaims(es256, { iss: ISSUER, aud: AUDIENCE, sub: 'no-wallet', iat: nowS, exp: nowS + 600 });
    assert.deepEqual(await sessionLogin(token), rejected('id_token rejected: ERR_JWT_CLAIM_VALIDATION_FAILED'));
  });

  it('an id_token without sub or exp is 401 UNAUTHENTICATED', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const wallet = Wallet.createRandom().address;
    const noSub = await signClaims(es256, { iss: ISSUER, aud: AUDIENCE, wallet, iat: nowS, exp: nowS + 600 });
    assert.deepEqual(await sessionLogin(noSub), rejected('id_token rejected: ERR_JWT_CLAIM_VALIDATION_FAILED'));
    const noExp = await signClaims(es256, { iss: ISSUER, aud: AUDIENCE, sub: 'no-exp', wallet, iat: nowS });
    assert.deepEqual(await sessionLogin(noExp), rejected('id_token rejected: ERR_JWT_CLAIM_VALIDATION_FAILED'));
  });

  it('an id_token whose wallet claim is not an address is 401 UNAUTHENTICATED', async () => {
    for (const wallet of ['not-an-address', '0x1234', breakChecksum(Wallet.createRandom().address)]) {
      assert.deepEqual(await sessionLogin(await mint(es256, wallet)), rejected('id_token wallet claim is not an address'), wallet);
    }
  });

  it('a token that is not a JWT, or is unsigned, is 401 UNAUTHENTICATED', async () => {
    assert.deepEqual(await sessionLogin('garbage'), rejected('id_token rejected: ERR_JWS_INVALID'));
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const nowS = Math.floor(Date.now() / 1000);
    const claims = { iss: ISSUER, aud: AUDIENCE, sub: 'x', exp: nowS + 600, wallet: Wallet.createRandom().address };
    const unsigned = `${b64({ alg: 'none' })}.${b64(claims)}.`;
    assert.deepEqual(await sessionLogin(unsigned), rejected('id_token rejected: ERR_JOSE_ALG_NOT_ALLOWED'));
  });

  it('an id_token field that is missing or empty is 400 VALIDATION_FAILED', async () => {
    const res = await client(server.baseUrl).post('/v1/auth/session', { id_token: '' });
    assert.deepEqual(
      { status: res.status, body: res.body },
      {
        status: 400,
        body: {
          code: 'VALIDATION_FAILED',
          message: 'request failed validation',
          details: [{ path: '/id_token', message: 'Expected string length greater or equal to 1' }],
        },
      },
    );
  });
});

describe('identity-provider login switched off', () => {
  it('with no JWKS configured, POST /v1/auth/session is 401 UNAUTHENTICATED', async () => {
    const server = await startServer();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'parlayd-idp-'));
      const [key] = (await writeDevIdpKeys(dir, ['ES256'])).keys as [DevIdpKey];
      rmSync(dir, { recursive: true, force: true });
      const token = await mintIdToken({
        privateJwk: key.privateJwk,
        kid: key.kid,
        alg: key.alg,
        issuer: ISSUER,
        audience: AUDIENCE,
        sub: 'x',
        wallet: Wallet.createRandom().address,
        expiresInS: 600,
      });
      const res = await client(server.baseUrl).post('/v1/auth/session', { id_token: token });
      assert.deepEqual({ status: res.status, body: res.body }, rejected('identity-provider login is not configured'));
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});

describe('dev identity-provider scripts', () => {
  const keysScript = resolve(repoRoot, 'dist/scripts/dev-idp-keys.js');
  const mintScript = resolve(repoRoot, 'dist/scripts/mint-id-token.js');
  const env = { PATH: process.env['PATH'] ?? '' };

  /** `export NAME="value"` lines, as dev-idp-keys prints them for eval. */
  function parseExports(stdout: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const line of stdout.trim().split('\n')) {
      const m = /^export (PARLAYD_[A-Z_]+)=(".*")$/.exec(line);
      assert.ok(m !== null, `not an export line: ${line}`);
      out[m[1]!] = JSON.parse(m[2]!) as string;
    }
    return out;
  }

  it('dev-idp-keys writes a key pair and prints the settings; mint-id-token mints tokens the server accepts', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'parlayd-idp-scripts-'));
    let server: TestServer | undefined;
    try {
      // Default directory (.dev-idp in the working directory) and default issuer and audience.
      const keys = await run(process.execPath, [keysScript], { cwd: workDir, env });
      const settings = parseExports(keys.stdout);
      assert.deepEqual(settings, {
        PARLAYD_JWKS_FILE: join(workDir, '.dev-idp', 'jwks.json'),
        PARLAYD_JWT_ISSUER: DEFAULT_DEV_ISSUER,
        PARLAYD_JWT_AUDIENCE: DEFAULT_DEV_AUDIENCE,
      });
      const running = await startServer({ env: settings });
      server = running;
      const api = client(running.baseUrl);
      const wallet = Wallet.createRandom().address;
      const userIds = new Set<string>();
      for (const alg of ['ES256', 'EdDSA']) {
        const minted = await run(process.execPath, [mintScript, '--wallet', wallet, '--alg', alg, '--sub', 'dev-user'], {
          cwd: workDir,
          env,
        });
        const token = minted.stdout.trim();
        assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
        const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { alg: string };
        assert.equal(header.alg, alg);
        const res = await api.post('/v1/auth/session', { id_token: token });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.wallet, wallet.toLowerCase());
        userIds.add(res.body.user_id);
      }
      assert.equal(userIds.size, 1);
      // A negative --ttl-s mints an expired token, which the server refuses.
      const expired = await run(process.execPath, [mintScript, '--wallet', wallet, '--ttl-s=-30'], { cwd: workDir, env });
      const res = await api.post('/v1/auth/session', { id_token: expired.stdout.trim() });
      assert.deepEqual({ status: res.status, body: res.body }, rejected('id_token rejected: ERR_JWT_EXPIRED'));
    } finally {
      if (server !== undefined) {
        await server.stop();
        removeDataDir(server);
      }
      rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('mint-id-token without a valid --wallet exits 2 with the reason on stderr', async () => {
    for (const args of [[], ['--wallet', '0x1234']]) {
      const failure = await run(process.execPath, [mintScript, ...args], { env }).then(
        () => assert.fail('mint-id-token should have failed'),
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      assert.equal(failure.code, 2);
      assert.equal(failure.stdout, '');
      assert.match(failure.stderr.split('\n')[0] ?? '', /^mint-id-token: .*wallet/);
    }
  });
});
