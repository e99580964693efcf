// The bounds of used login nonces (auth/wallet-login.ts: the service's MAX_USED_LOGIN_NONCES and each caller's
// share, auth/nonce-spenders.ts) count only nonces that were kept. On a full disk a login's commit fails (503
// OVERLOADED, the nonce not kept); those failures must not hold places of the bounds, or after enough of
// them every login is refused until a restart. A real store on a small tmpfs that the fixture fills; needs
// root and mount, skipped elsewhere, saying so.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { runKilledFixture } from '../helpers/killed-fixture.js';
import { mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/logins-on-full-disk.js', import.meta.url));
const PER_CALLER = 3;

describe('used login nonces on a full disk', () => {
  const mountPoint = mountTmpfs(8, 'parlayd-nonce-full-');
  after(() => {
    if (mountPoint !== null) unmountTmpfs(mountPoint);
  });

  it(
    'logins whose commit failed hold no place: once the disk has room, the caller has its places as before',
    { skip: mountPoint === null ? 'needs root and a tmpfs mount' : false },
    async () => {
      const phases = await runKilledFixture<Record<string, string[]>>(FIXTURE, [mountPoint!, String(PER_CALLER)]);
      assert.deepEqual(phases, {
        before: ['INVALID_SIGNATURE'], // kept: one of the caller's places
        full: Array(2 * PER_CALLER).fill('OVERLOADED'), // the commit failed: nothing kept
        freed: ['INVALID_SIGNATURE', 'INVALID_SIGNATURE', 'RATE_LIMITED'], // its two other places, then its bound
      });
    },
  );
});
