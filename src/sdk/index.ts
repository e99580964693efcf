// The parlayd maker SDK (package export "parlayd/sdk"): a typed client of the market-maker socket, its
// signer helpers, and the socket's message types, which come from the same typebox schemas the server
// validates with (contract/mm.ts). Protocol: docs/maker-protocol.md.
export { MakerClient } from './maker-client.js';
export { MakerClientError } from './errors.js';
export { DEFAULT_DOMAIN_TAG, type MakerClientOptions } from './options.js';
export { backoffDelayMs, type ReconnectOptions } from './reconnect.js';
export { toSocketUrl, type SocketConstructor, type SocketLike } from './socket.js';
export type { MakerClientEvents } from './events.js';
export type { QuoteOptions } from './quoting.js';
export { MakerHttpError, type ProtectionLimitsBody, type ProtectionView, type StandingQuote, type StatsView } from './maker-http.js';
export type {
  ProtectionResetOkMessage,
  ProtectionTrippedMessage,
  QuoteCancelledMessage,
  QuotesCancelledMessage,
  ResumeFailedMessage,
  ResumedMessage,
} from '../contract/mm-stream.js';
export { privateKeySigner, makerChallengeBytes, type MakerSigner } from './signer.js';
export { isQuoteOdds, ODDS_MAX } from '../contract/mm.js';
export type {
  AuthChallengeMessage,
  AuthExpiredMessage,
  AuthFailureReason,
  AuthResponseMessage,
  AuthResultMessage,
  DeclineMessage,
  ErrorMessage,
  HeartbeatMessage,
  LastLookMessage,
  LastLookResponseMessage,
  MakerToServerMessage,
  PongMessage,
  QuoteAckMessage,
  QuoteCancelMessage,
  QuoteMessage,
  QuoteRejectMessage,
  RfqMessage,
  RfqResultMessage,
  ServerToMakerMessage,
} from '../contract/mm.js';
export { CLOSE as CLOSE_CODES, MAKER_ERRORS, MAKER_WS_PATH } from '../contract/maker-protocol.js';
