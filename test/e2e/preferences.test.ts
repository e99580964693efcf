// User preferences (contract section 9): defaults, PATCH of any subset answering the whole object, and
// validation that refuses an empty PATCH, bad values and unknown fields without changing anything.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { validationFailed } from '../helpers/errors.js';
import { client } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { loginWallet } from '../helpers/users.js';

const DEFAULTS = { notifications_enabled: true, quote_tolerance: 'normal', anonymous_mode_enabled: false };

describe('preferences', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  async function newUserApi() {
    return client(server.baseUrl, (await loginWallet(server)).token);
  }

  async function preferencesOf(api: ReturnType<typeof client>) {
    const res = await api.get('/v1/user/preferences');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  it('a new user has the default preferences', async () => {
    assert.deepEqual(await preferencesOf(await newUserApi()), DEFAULTS);
  });

  it('PATCH of one field answers the whole object and keeps the others', async () => {
    const api = await newUserApi();
    const res = await api.patch('/v1/user/preferences', { quote_tolerance: 'lenient' });
    const expected = { ...DEFAULTS, quote_tolerance: 'lenient' };
    assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: expected });
    assert.deepEqual(await preferencesOf(api), expected);
  });

  it('successive PATCHes of different subsets accumulate', async () => {
    const api = await newUserApi();
    await api.patch('/v1/user/preferences', { notifications_enabled: false, anonymous_mode_enabled: true });
    const res = await api.patch('/v1/user/preferences', { quote_tolerance: 'strict' });
    const expected = { notifications_enabled: false, quote_tolerance: 'strict', anonymous_mode_enabled: true };
    assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: expected });
    assert.deepEqual(await preferencesOf(api), expected);
  });

  it('every quote_tolerance value is accepted, and the PATCH of all three fields replaces them', async () => {
    const api = await newUserApi();
    for (const quoteTolerance of ['strict', 'normal', 'lenient']) {
      const all = {
        notifications_enabled: quoteTolerance !== 'normal',
        quote_tolerance: quoteTolerance,
        anonymous_mode_enabled: quoteTolerance === 'strict',
      };
      const res = await api.patch('/v1/user/preferences', all);
      assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: all });
    }
  });

  it('concurrent PATCHes of different fields both survive', async () => {
    const api = await newUserApi();
    await Promise.all([
      api.patch('/v1/user/preferences', { notifications_enabled: false }),
      api.patch('/v1/user/preferences', { quote_tolerance: 'strict' }),
      api.patch('/v1/user/preferences', { anonymous_mode_enabled: true }),
    ]);
    assert.deepEqual(await preferencesOf(api), { notifications_enabled: false, quote_tolerance: 'strict', anonymous_mode_enabled: true });
  });

  it("one user's preferences do not touch another's", async () => {
    const first = await newUserApi();
    const second = await newUserApi();
    await first.patch('/v1/user/preferences', { anonymous_mode_enabled: true });
    assert.deepEqual(await preferencesOf(second), DEFAULTS);
  });

  it('an empty PATCH (the empty subset) answers the whole object and changes nothing', async () => {
    const api = await newUserApi();
    await api.patch('/v1/user/preferences', { quote_tolerance: 'strict' });
    const res = await api.patch('/v1/user/preferences', {});
    const expected = { ...DEFAULTS, quote_tolerance: 'strict' };
    assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: expected });
    assert.deepEqual(await preferencesOf(api), expected);
  });

  it('a quote_tolerance outside strict, normal, lenient is 400 VALIDATION_FAILED and changes nothing', async () => {
    const api = await newUserApi();
    for (const value of ['aggressive', 'STRICT', '', 50]) {
      const res = await api.patch('/v1/user/preferences', { notifications_enabled: false, quote_tolerance: value });
      assert.deepEqual({ status: res.status, body: res.body }, validationFailed('/quote_tolerance', 'Expected union value'), String(value));
    }
    assert.deepEqual(await preferencesOf(api), DEFAULTS);
  });

  it('a boolean field given a non-boolean is 400 VALIDATION_FAILED', async () => {
    const api = await newUserApi();
    for (const value of ['true', 1, null]) {
      const res = await api.patch('/v1/user/preferences', { anonymous_mode_enabled: value });
      assert.deepEqual(
        { status: res.status, body: res.body },
        validationFailed('/anonymous_mode_enabled', 'Expected boolean'),
        String(value),
      );
    }
  });

  it('an unknown field is 400 VALIDATION_FAILED and changes nothing, even beside a valid one', async () => {
    const api = await newUserApi();
    const res = await api.patch('/v1/user/preferences', { quote_tolerance: 'strict', theme: 'dark' });
    assert.deepEqual({ status: res.status, body: res.body }, validationFailed('/theme', 'Unexpected property'));
    assert.deepEqual(await preferencesOf(api), DEFAULTS);
  });

  it('a PATCH without a JSON content type is 415', async () => {
    const api = await newUserApi();
    const res = await api.patch('/v1/user/preferences', undefined, {
      rawBody: JSON.stringify({ quote_tolerance: 'strict' }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.deepEqual(
      { status: res.status, body: res.body },
      { status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'request body must be application/json' } },
    );
  });

  it('preferences need a user session: none is 401, the admin token is 403', async () => {
    const anonymous = client(server.baseUrl);
    const noToken = await anonymous.get('/v1/user/preferences');
    assert.deepEqual(
      { status: noToken.status, body: noToken.body },
      { status: 401, body: { code: 'UNAUTHENTICATED', message: 'missing, unknown, expired or revoked bearer token' } },
    );
    const asAdmin = await client(server.baseUrl, server.adminToken).patch('/v1/user/preferences', { quote_tolerance: 'strict' });
    assert.deepEqual(
      { status: asAdmin.status, body: asAdmin.body },
      { status: 403, body: { code: 'FORBIDDEN', message: 'admin tokens may not use this route' } },
    );
  });
});
