// Main thread. The identity provider's key set, read from the JWKS file (PARLAYD_JWKS_FILE) and read again
// when the file changes, so that a provider's key rotation needs no restart. At start a missing or broken
// file stops the service (ConfigError); later, a broken or missing file keeps the last good key set, so a
// half-written file or a bad deploy never locks every user out, and says so once in a warning.
import { readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { Logger } from 'pino';
import { ConfigError } from '../config/config.js';

export type KeySet = ReturnType<typeof createLocalJWKSet>;

/**
 * Longest a change to the file goes unseen. Bounds the cost: at most one stat per second whatever the login
 * rate, and a read only when the stat says the file changed.
 */
export const JWKS_CHECK_INTERVAL_MS = 1_000;

export class JwksFile {
  #keySet: KeySet;
  /** The file version `#keySet` or the last warning is about: a version is read (and warned about) once. */
  #version: string;
  #checkedAtMs: number;
  /** The check under way, shared by the logins that arrive meanwhile: one stat at a time. */
  #checking: Promise<void> | null = null;

  constructor(
    readonly path: string,
    private readonly log: Logger,
    nowMs: number,
  ) {
    try {
      this.#version = versionOf(statSync(path));
      this.#keySet = parseKeySet(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new ConfigError(`PARLAYD_JWKS_FILE=${JSON.stringify(path)} is not a readable JWKS file: ${reasonOf(err)}`);
    }
    this.#checkedAtMs = nowMs;
  }

  /** The key set to verify with: the file's current one, or the last good one if the file is broken now. */
  async current(nowMs: number): Promise<KeySet> {
    if (nowMs - this.#checkedAtMs >= JWKS_CHECK_INTERVAL_MS) {
      this.#checkedAtMs = nowMs;
      this.#checking ??= this.#check().finally(() => (this.#checking = null));
    }
    // A login waits for a check under way: after a rotation, the first token signed with the new key
    // must not be refused because its own check started the reload instead of waiting for it.
    if (this.#checking !== null) await this.#checking;
    return this.#keySet;
  }

  async #check(): Promise<void> {
    let version: string;
    try {
      version = versionOf(await stat(this.path));
    } catch (err) {
      return this.#keepLastGood('missing', err);
    }
    if (version === this.#version) return;
    try {
      const keySet = parseKeySet(await readFile(this.path, 'utf8'));
      this.#keySet = keySet;
      this.#version = version;
      this.log.info({ jwksFile: this.path }, 'JWKS file changed: key set reloaded');
    } catch (err) {
      this.#keepLastGood(version, err);
    }
  }

  #keepLastGood(version: string, err: unknown): void {
    if (version === this.#version) return; // already warned about this version of the file
    this.#version = version;
    this.log.warn({ jwksFile: this.path, reason: reasonOf(err) }, 'JWKS file unreadable: keeping the last good key set');
  }
}

/** Changes when the file is rewritten in place (mtime, size) or replaced by a rename (inode). */
function versionOf(stats: { mtimeMs: number; size: number; ino: number }): string {
  return `${stats.ino}:${stats.mtimeMs}:${stats.size}`;
}

function parseKeySet(text: string): KeySet {
  // createLocalJWKSet refuses what is not {keys: [...]}; a key it cannot import fails at verify (401).
  return createLocalJWKSet(JSON.parse(text) as JSONWebKeySet);
}

/**
 * Why the file could not be used, without its content: JSON.parse quotes the text it choked on, and a file
 * put there by mistake (the provider's private keys, half-written) must not reach the log.
 */
function reasonOf(err: unknown): string {
  if (err instanceof SyntaxError) return 'not valid JSON';
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : (err as Error).name;
}
