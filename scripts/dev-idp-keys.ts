// Creates a development identity-provider key pair (contract section 3) for local runs and tests:
//   npm run dev:keys [-- --dir .dev-idp --alg ES256,EdDSA --issuer http://localhost/dev-idp --audience parlayd]
// Writes <dir>/jwks.json (public keys, for the service) and <dir>/private-key.json (for mint-id-token).
// stdout carries only the `export PARLAYD_...` lines, so `eval "$(node dist/scripts/dev-idp-keys.js)"` works;
// everything meant for a person goes to stderr.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_DEV_AUDIENCE, DEFAULT_DEV_ISSUER, isDevIdpAlg, writeDevIdpKeys, type DevIdpAlg } from '../src/auth/dev-idp.js';

const USAGE = 'usage: dev-idp-keys [--dir .dev-idp] [--alg ES256,EdDSA] [--issuer URL] [--audience NAME]';

function fail(message: string): never {
  process.stderr.write(`dev-idp-keys: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseAlgs(text: string): DevIdpAlg[] {
  return text.split(',').map((alg) => (isDevIdpAlg(alg) ? alg : fail(`--alg ${JSON.stringify(alg)} is not ES256 or EdDSA`)));
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        dir: { type: 'string', default: '.dev-idp' },
        alg: { type: 'string', default: 'ES256,EdDSA' },
        issuer: { type: 'string', default: DEFAULT_DEV_ISSUER },
        audience: { type: 'string', default: DEFAULT_DEV_AUDIENCE },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  const written = await writeDevIdpKeys(resolve(values.dir), parseAlgs(values.alg));
  for (const key of written.keys) process.stderr.write(`dev-idp-keys: ${key.alg} key ${key.kid}\n`);
  process.stderr.write(`dev-idp-keys: wrote ${written.jwksFile} (public) and ${written.privateKeyFile} (private, keep it local)\n`);
  process.stderr.write('dev-idp-keys: set these for parlayd, then mint a token with: npm run dev:token -- --wallet 0x...\n');
  process.stdout.write(
    [
      `export PARLAYD_JWKS_FILE=${JSON.stringify(written.jwksFile)}`,
      `export PARLAYD_JWT_ISSUER=${JSON.stringify(values.issuer)}`,
      `export PARLAYD_JWT_AUDIENCE=${JSON.stringify(values.audience)}`,
    ].join('\n') + '\n',
  );
}

void main();
