// The test helpers' own checks (test/helpers/README.md): helper modules live in test/helpers/, and the one
// polling helper and the one error assertion fail when they must (a helper that cannot fail would make every
// test that uses it unable to fail).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { assertApiError } from '../helpers/errors.js';
import { runKilledFixture } from '../helpers/killed-fixture.js';
import { repoRoot } from '../helpers/paths.js';
import { waitFor, WaitTimeoutError } from '../helpers/wait.js';

/** Scripts a test runs by path as their own process or thread: not helpers, so they may sit beside their test. */
const SPAWNED_FIXTURES = [
  'test/auth/fixtures/logins-on-full-disk.ts',
  'test/boot/fixtures/failed-start.ts',
  'test/crypto/fixtures/close-during-start.ts',
  'test/wal/fixtures/append-until-killed.ts',
  'test/engine/fixtures/owner-until-killed.ts',
  'test/engine/fixtures/owner-worker.ts',
  'test/ops/fixtures/announce-and-wait.ts',
  'test/store/fixtures/write-until-killed.ts',
  'test/store/fixtures/write-behind-full-disk.ts',
  'test/style/fixtures/server-left-running.ts',
];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('every .ts under test/ is a test file, a helper in test/helpers/, or a fixture spawned by path', () => {
  const misplaced = tsFiles(join(repoRoot, 'test'))
    .map((path) => relative(repoRoot, path))
    .filter((path) => !path.endsWith('.test.ts') && !path.startsWith('test/helpers/') && !SPAWNED_FIXTURES.includes(path));
  assert.deepEqual(misplaced, []);
});

test('waitFor resolves with the first value that is not false, and waits through failed assertions', async () => {
  let calls = 0;
  assert.equal(await waitFor(() => ++calls >= 3 && calls, { intervalMs: 1, what: 'three calls' }), 3);
  calls = 0;
  await waitFor(() => assert.ok(++calls >= 2, 'not yet'), { intervalMs: 1, what: 'two calls' });
  assert.equal(calls, 2);
});

test('waitFor fails after its timeout, naming what it waited for and the last failed assertion', async () => {
  await assert.rejects(
    waitFor(() => false, { timeoutMs: 30, intervalMs: 5, what: 'nothing' }),
    (err: unknown) => {
      assert.ok(err instanceof WaitTimeoutError);
      assert.match(err.message, /^timed out after \d+ ms \(\d+ probes\) waiting for nothing; the last probe returned false$/);
      return true;
    },
  );
  await assert.rejects(
    waitFor(() => assert.equal(1, 2), { timeoutMs: 30, intervalMs: 5, what: 'one to be two' }),
    (err: unknown) => {
      assert.ok(err instanceof WaitTimeoutError);
      assert.match(err.message, /waiting for one to be two; the last probe failed: /);
      assert.ok(err.cause instanceof assert.AssertionError);
      return true;
    },
  );
});

test('waitFor fails at once on an error that is not a failed assertion', async () => {
  const startMs = Date.now();
  await assert.rejects(
    waitFor(
      () => {
        throw new RangeError('broken');
      },
      { timeoutMs: 5_000, what: 'never' },
    ),
    RangeError,
  );
  assert.ok(Date.now() - startMs < 1_000);
});

test('assertApiError checks the status, the code, the ErrorBody shape and, when given, the details', () => {
  const body = { code: 'VALIDATION_FAILED', message: 'request failed validation', details: [{ path: '/limit', message: 'too big' }] };
  assert.deepEqual(assertApiError({ status: 400, body }, 400, 'VALIDATION_FAILED', body.details), body);
  assert.throws(() => assertApiError({ status: 409, body }, 400, 'VALIDATION_FAILED'), assert.AssertionError);
  assert.throws(() => assertApiError({ status: 400, body }, 400, 'NOT_FOUND'), assert.AssertionError);
  assert.throws(
    () => assertApiError({ status: 400, body: { code: 'VALIDATION_FAILED' } }, 400, 'VALIDATION_FAILED'),
    assert.AssertionError,
  );
  assert.throws(() => assertApiError({ status: 400, body: 'text' }, 400, 'VALIDATION_FAILED'), assert.AssertionError);
  assert.throws(
    () => assertApiError({ status: 400, body }, 400, 'VALIDATION_FAILED', [{ path: '/cursor', message: 'too big' }]),
    assert.AssertionError,
  );
});

test('runKilledFixture returns the report of a fixture that killed itself, and fails for one that ended otherwise', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-killed-fixture-'));
  try {
    const killed = join(dir, 'killed.mjs');
    writeFileSync(killed, `process.stdout.write('{"ok":1}\\n', () => process.kill(process.pid, 'SIGKILL'));\n`);
    assert.deepEqual(await runKilledFixture(killed, []), { ok: 1 });
    const exited = join(dir, 'exited.mjs');
    writeFileSync(exited, `console.log('{"ok":1}');\n`);
    await assert.rejects(runKilledFixture(exited, []), /the fixture ended otherwise \(exit 0\)/);
    const thrown = join(dir, 'thrown.mjs');
    writeFileSync(thrown, `throw new Error('broken fixture');\n`);
    await assert.rejects(runKilledFixture(thrown, []), /the fixture ended otherwise .*broken fixture/s);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a test file whose failed test left its server running still ends, and takes its server with it', async () => {
  const fixture = join(repoRoot, 'dist/test/style/fixtures/server-left-running.js');
  const startMs = Date.now();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--test', fixture],
      { timeout: 60_000, killSignal: 'SIGKILL', env: withoutTestContext() },
      (error, stdout) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, output: stdout }),
    );
  });
  assert.equal(code, 1, `it must end by itself, failed (${Date.now() - startMs} ms): ${output}`);
  const pid = Number(/server pid=(\d+)/.exec(output)?.[1]);
  assert.ok(pid > 0, output);
  await waitFor(() => !isAlive(pid), { timeoutMs: 5_000, what: `the left server (pid ${pid}) gone` });
});

/** This process's environment without node:test's marker, which would make the child report to us, not run. */
function withoutTestContext(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env['NODE_TEST_CONTEXT'];
  return env;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("npm test's reporter ends with the failed tests, their files and errors, after TAP's totals", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-failures-reporter-'));
  try {
    const failing = join(dir, 'failing.test.mjs');
    writeFileSync(
      failing,
      [
        `import { describe, test } from 'node:test';`,
        `describe('a suite', () => {`,
        `  test('a test that passes', () => {});`,
        `  test('a test that fails', () => { throw new Error('the planted failure'); });`,
        `});`,
      ].join('\n'),
    );
    const exiting = join(dir, 'exiting.test.mjs');
    writeFileSync(exiting, `process.exit(3);\n`);
    const passing = join(dir, 'passing.test.mjs');
    writeFileSync(passing, `import { test } from 'node:test';\ntest('fine', () => {});\n`);
    const reporter = join(repoRoot, 'dist/test/helpers/failures-reporter.js');
    const run = (files: string[]): Promise<{ code: number | null; output: string }> =>
      new Promise((resolve) => {
        const args = ['--test', `--test-reporter=${reporter}`, '--test-reporter-destination=stdout', ...files];
        execFile(process.execPath, args, { timeout: 60_000, env: withoutTestContext() }, (error, stdout) =>
          resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, output: stdout }),
        );
      });

    const failed = await run([failing, exiting, passing]);
    assert.equal(failed.code, 1, failed.output);
    const summary = failed.output.slice(failed.output.lastIndexOf('# fail '));
    assert.match(summary, /^# fail 2$/m, failed.output);
    assert.match(summary, /^# 2 failed:$/m);
    assert.match(summary, new RegExp(`^#   ${failing} › a test that fails\\n#       Error: the planted failure$`, 'm'));
    assert.match(summary, new RegExp(`^#   ${exiting} › ${exiting}\\n#       .*\\(exit code 3, signal null\\)$`, 'm'));
    assert.doesNotMatch(summary, /a suite|fine|a test that passes/, 'a suite failed by its test, or a passing test, is not listed');

    const passed = await run([passing]);
    assert.equal(passed.code, 0, passed.output);
    assert.match(passed.output, /^# pass 1$/m);
    assert.doesNotMatch(passed.output, /failed:/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
