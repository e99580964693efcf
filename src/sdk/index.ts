// The parlayd maker SDK (package export "parlayd/sdk"): a typed client of the market-maker socket, its
// signer helpers, and the socket's message types, which come from the same typebox schemas the server
// validates with (schemas/mm.ts). Protocol: docs/maker-protocol.md.
export {
  MakerClient,
  MakerClientError,
  DEFAULT_DOMAIN_TAG,
  backoffDelayMs,
  toSocketUrl,
  type MakerClientEvents,
  type MakerClientOptions,
  type QuoteOptions,
  type ReconnectOptions,
  type SocketConstructor,
  type SocketLike,
} from './maker-client.js';
export { MakerHttpError, type ProtectionLimitsBody, type ProtectionView, type StandingQuote, type StatsView } from './maker-http.js';
export type {
  ProtectionResetOkMessage,
  ProtectionTrippedMessage,
  QuoteCancelledMessage,
  QuotesCancelledMessage,
  ResumeFailedMessage,
  ResumedMessage,
} from '../schemas/mm-stream.js';
export { privateKeySigner, makerChallengeBytes, type MakerSigner } from './signer.js';
export { isQuoteOdds, ODDS_MAX } from '../schemas/mm.js';
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
} from '../schemas/mm.js';
export { CLOSE as CLOSE_CODES, MAKER_ERRORS, MAKER_WS_PATH } from '../mm/protocol.js';
