// Structured JSON logs (pino). Rule (contract section 10): no token, key or signature is ever logged, so no
// log call passes request headers or bodies; the redact list is a second line of defence.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'parlayd' },
    redact: {
      paths: ['token', 'session_token', 'authorization', 'adminToken', 'id_token', 'signature', '*.token', '*.session_token'],
      censor: '[redacted]',
    },
  });
}
