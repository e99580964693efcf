// Maker SDK, in the maker's process. What a MakerClient is made with.
import type { LastLookMessage } from '../contract/mm.js';
import type { ReconnectOptions } from './reconnect.js';
import type { MakerSigner } from './signer.js';
import type { SocketConstructor } from './socket.js';

/** The default domain tag: a local development service's (a deployed service has its own: pass domainTag). */
export const DEFAULT_DOMAIN_TAG = 'parlayd:mm:ws-auth:v1:localhost.dev';

export interface MakerClientOptions {
  /** Base URL of the service (`ws://host:port`, `http://host:port`) or the full socket URL ending in /v1/mm/ws. */
  url: string;
  /** The maker's key (`0x` + 64 hex). Give this or `signer`. */
  privateKey?: string | Uint8Array;
  /** Any personal-sign signer, e.g. an ethers Wallet. */
  signer?: MakerSigner;
  /** The service's 35-byte domain tag (default parlayd:mm:ws-auth:v1:localhost.dev). */
  domainTag?: string;
  /** Called for each last_look; resolve true to confirm the fill. Without it every last look is confirmed. */
  onLastLook?: (message: LastLookMessage) => boolean | Promise<boolean>;
  /** false: never reconnect. */
  reconnect?: ReconnectOptions | false;
  /** Keep reconnecting after INVALID_SIGNATURE / UNKNOWN_MAKER / MALFORMED (default false: they stop the client). */
  retryOnAuthFailure?: boolean;
  /**
   * Silence from the server for this long means a dead link: the socket is dropped and reopened at once
   * (default 50 000; the server sends a heartbeat every 15 s).
   */
  serverSilenceMs?: number;
  /** false: never ask a new socket to replay what the lost one missed (default: resume, section 3.5). */
  resume?: boolean;
  /** WebSocket implementation (default: global WebSocket, else the `ws` package). */
  WebSocket?: SocketConstructor;
}
