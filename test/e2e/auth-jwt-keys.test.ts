// Identity-provider login (issue 21): the iat claim is required and bounded (PARLAYD_JWT_MAX_AGE_MS into
// the past, 60 s of clock skew into the future), a typ header other than JWT is refused, and the JWKS file
// is read again when it changes, on a running server: a rotated key logs in, a removed one no longer does,
// and a broken file keeps the last good keys with one warning.
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { SignJWT, importJWK, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { generateDevIdpKey, writeDevIdpKeys, type DevIdpKey } from '../../src/auth/dev-idp.js';
import { JWKS_CHECK_INTERVAL_MS } from '../../src/auth/jwks-file.js';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';

const ISSUER = 'https://idp.test.example';
const AUDIENCE = 'parlayd-e2e';
const DEFAULT_MAX_AGE_S = 600; // PARLAYD_JWT_MAX_AGE_MS default, 600000 ms

const rejected = (message: string) => ({ status: 401, body: { code: 'UNAUTHENTICATED', message } });

/** An id_token signed by `key`, issued `iatOffsetS` from now (null: no iat), with typ `typ` (null: none). */
async function idToken(key: DevIdpKey, options: { iatOffsetS?: number | null; typ?: string | null } = {}) {
  const nowS = Math.floor(Date.now() / 1000);
  const wallet = Wallet.createRandom().address;
  const claims: JWTPayload = { iss: ISSUER, aud: AUDIENCE, sub: `user-${wallet}`, wallet, exp: nowS + 3600 };
  const iatOffsetS = options.iatOffsetS === undefined ? 0 : options.iatOffsetS;
  if (iatOffsetS !== null) claims.iat = nowS + iatOffsetS;
  const typ = options.typ === undefined ? 'JWT' : options.typ;
  const header: JWTHeaderParameters = typ === null ? { alg: key.alg, kid: key.kid } : { alg: key.alg, kid: key.kid, typ };
  return new SignJWT(claims).setProtectedHeader(header).sign(await importJWK(key.privateJwk, key.alg));
}

/** Writes a JWKS of `keys` the way deploy tools do: a new file renamed over the old one. */
function publishKeys(jwksFile: string, keys: DevIdpKey[]): void {
  writeFileSync(`${jwksFile}.next`, JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  renameSync(`${jwksFile}.next`, jwksFile);
}

describe('identity-provider login: iat, typ and a JWKS file that changes', () => {
  let idpDir: string;
  let jwksFile: string;
  let first: DevIdpKey;
  let server: TestServer;

  before(async () => {
    idpDir = mkdtempSync(join(tmpdir(), 'parlayd-idp-keys-'));
    const written = await writeDevIdpKeys(idpDir, ['ES256']);
    jwksFile = written.jwksFile;
    [first] = written.keys as [DevIdpKey];
    // The default PARLAYD_JWT_MAX_AGE_MS: the test below checks the default itself.
    server = await startServer({ env: { PARLAYD_JWKS_FILE: jwksFile, PARLAYD_JWT_ISSUER: ISSUER, PARLAYD_JWT_AUDIENCE: AUDIENCE } });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
    rmSync(idpDir, { recursive: true, force: true });
  });

  async function sessionLogin(token: string) {
    const res = await client(server.baseUrl).post('/v1/auth/session', { id_token: token });
    return { status: res.status, body: res.body };
  }

  /** Logs in with `key` until it is accepted, for at most a few check intervals; returns the last answer. */
  async function loginOnceAccepted(key: DevIdpKey) {
    const deadlineMs = Date.now() + 5 * JWKS_CHECK_INTERVAL_MS;
    for (;;) {
      const res = await sessionLogin(await idToken(key));
      if (res.status === 200 || Date.now() > deadlineMs) return res;
      await sleep(100);
    }
  }

  it('an id_token without iat is 401 UNAUTHENTICATED', async () => {
    assert.deepEqual(
      await sessionLogin(await idToken(first, { iatOffsetS: null })),
      rejected('id_token rejected: ERR_JWT_CLAIM_VALIDATION_FAILED'),
    );
  });

  it('an id_token older than PARLAYD_JWT_MAX_AGE_MS (default 600000) is 401; one just within it logs in', async () => {
    assert.deepEqual(
      await sessionLogin(await idToken(first, { iatOffsetS: -DEFAULT_MAX_AGE_S - 5 })),
      rejected('id_token is older than the maximum age'),
    );
    assert.equal((await sessionLogin(await idToken(first, { iatOffsetS: -DEFAULT_MAX_AGE_S + 10 }))).status, 200);
  });

  it('an id_token issued more than 60 s ahead of the server clock is 401; 30 s ahead (clock skew) logs in', async () => {
    assert.deepEqual(await sessionLogin(await idToken(first, { iatOffsetS: 120 })), rejected('id_token iat is in the future'));
    assert.equal((await sessionLogin(await idToken(first, { iatOffsetS: 30 }))).status, 200);
  });

  it('a typ header other than JWT is 401; JWT in any case, or no typ, logs in', async () => {
    for (const typ of ['at+jwt', 'JOSE', 'logout+jwt']) {
      assert.deepEqual(await sessionLogin(await idToken(first, { typ })), rejected('id_token typ header is not JWT'), typ);
    }
    for (const typ of ['JWT', 'jwt', 'Jwt', null]) {
      assert.equal((await sessionLogin(await idToken(first, { typ }))).status, 200, String(typ));
    }
  });

  it('a rotated JWKS file is read on the running server: the new key logs in, the removed one is refused', async () => {
    const second = await generateDevIdpKey('EdDSA');
    assert.deepEqual(await sessionLogin(await idToken(second)), rejected('id_token rejected: ERR_JWKS_NO_MATCHING_KEY'));
    publishKeys(jwksFile, [second]);
    const res = await loginOnceAccepted(second);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(await sessionLogin(await idToken(first)), rejected('id_token rejected: ERR_JWKS_NO_MATCHING_KEY'));
    await server.waitForLog((entry) => entry['msg'] === 'JWKS file changed: key set reloaded', 1_000);
    first = second; // the key the next tests log in with
  });

  it('a broken or missing JWKS file keeps the last good keys and warns once; a good file again is read', async () => {
    const warnings = () => server.logs.filter((entry) => entry['msg'] === 'JWKS file unreadable: keeping the last good key set');
    const warningsBefore = warnings().length;
    writeFileSync(jwksFile, '{"keys": [ half-written'); // in place, as an editor or a careless deploy would
    // Logins go on with the last good keys while the server notices, and after it has.
    const deadlineMs = Date.now() + 5 * JWKS_CHECK_INTERVAL_MS;
    while (warnings().length === warningsBefore && Date.now() < deadlineMs) {
      assert.equal((await sessionLogin(await idToken(first))).status, 200);
      await sleep(100);
    }
    assert.equal(warnings().length, warningsBefore + 1, 'warned once the broken file was seen');
    const warning = warnings().at(-1)!;
    assert.equal(warning['level'], 40); // pino's warn
    assert.equal(warning['jwksFile'], jwksFile);
    assert.equal(warning['reason'], 'not valid JSON'); // never the file's text
    // Over more than two check intervals the same broken file is not warned about again.
    for (const stopMs = Date.now() + 2.5 * JWKS_CHECK_INTERVAL_MS; Date.now() < stopMs; await sleep(200)) {
      assert.equal((await sessionLogin(await idToken(first))).status, 200);
    }
    assert.equal(warnings().length, warningsBefore + 1, 'one warning for one broken file');

    unlinkSync(jwksFile);
    await sleep(JWKS_CHECK_INTERVAL_MS + 100);
    assert.equal((await sessionLogin(await idToken(first))).status, 200, 'a missing file keeps the last good keys too');

    const third = await generateDevIdpKey('ES256');
    publishKeys(jwksFile, [third]);
    const res = await loginOnceAccepted(third);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });
});
