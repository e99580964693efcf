// Mints an id_token from the development identity provider (see dev-idp-keys.ts) for POST /v1/auth/session:
//   npm run dev:token -- --wallet 0x... [--sub dev-user] [--ttl-s 3600] [--dir .dev-idp] [--alg ES256|EdDSA]
//                        [--issuer URL] [--audience NAME]
// Issuer and audience default to PARLAYD_JWT_ISSUER / PARLAYD_JWT_AUDIENCE when set (the values the service
// checks), else to the dev-idp defaults. Prints only the token on stdout.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAddress } from '../src/crypto/address.js';
import { DEFAULT_DEV_AUDIENCE, DEFAULT_DEV_ISSUER, mintIdToken, readDevIdpPrivateKeys } from '../src/auth/dev-idp.js';

const USAGE =
  'usage: mint-id-token --wallet 0x... [--sub ID] [--ttl-s 3600] [--dir .dev-idp] [--alg ES256|EdDSA] [--issuer URL] [--audience NAME]';

function fail(message: string): never {
  process.stderr.write(`mint-id-token: ${message}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        wallet: { type: 'string' },
        sub: { type: 'string' },
        'ttl-s': { type: 'string', default: '3600' },
        dir: { type: 'string', default: '.dev-idp' },
        alg: { type: 'string' },
        issuer: { type: 'string', default: process.env['PARLAYD_JWT_ISSUER'] || DEFAULT_DEV_ISSUER },
        audience: { type: 'string', default: process.env['PARLAYD_JWT_AUDIENCE'] || DEFAULT_DEV_AUDIENCE },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.wallet === undefined) fail('--wallet is required');
  const wallet = parseAddress(values.wallet);
  if (wallet === null) fail(`--wallet ${JSON.stringify(values.wallet)} is not an address (or fails its EIP-55 checksum)`);
  const ttlS = Number(values['ttl-s']);
  if (!/^-?[0-9]{1,9}$/.test(values['ttl-s']) || !Number.isSafeInteger(ttlS)) fail('--ttl-s must be an integer number of seconds');
  let keys;
  try {
    keys = readDevIdpPrivateKeys(resolve(values.dir));
  } catch (err) {
    fail(`cannot read keys from ${values.dir} (run npm run dev:keys first): ${(err as Error).message}`);
  }
  const key = values.alg === undefined ? keys[0] : keys.find((k) => k.alg === values.alg);
  if (key === undefined) fail(`no ${values.alg ?? ''} key in ${values.dir}`);
  const token = await mintIdToken({
    privateJwk: key.privateJwk,
    kid: key.kid,
    alg: key.alg,
    issuer: values.issuer,
    audience: values.audience,
    sub: values.sub ?? `dev:${wallet}`,
    wallet,
    expiresInS: ttlS,
  });
  process.stdout.write(token + '\n');
}

void main();
