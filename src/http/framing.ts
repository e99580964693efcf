// Main thread. Refuses a request whose body length can be read two ways (RFC 9112 section 6.3), the ground
// of request smuggling: a proxy in front of us that takes one Content-Length and we (uWS takes the first)
// another would disagree on where the body ends, and the rest of the body would run as a request of its own
// that the proxy never saw. The server answers such a request 400 and closes the connection, so nothing
// after it on the socket is ever parsed.
//
// Contract code: VALIDATION_FAILED, not INVALID_JSON. The body may well be JSON; what fails is the request's
// framing, a header rule, and the detail names the header (`/headers/<name>`) as a schema failure names a
// field. uWS itself already drops a connection that sends Content-Length with Transfer-Encoding before we
// see the request; the check here holds whatever uWS version parses the bytes.
import type { HttpRequest } from 'uWebSockets.js';
import { errors, type ApiError } from '../lib/errors.js';

/** The only transfer coding we decode (uWS does chunked); any other would reach JSON.parse undecoded. */
const CHUNKED = 'chunked';

/** The framing fault of `req`, or null. Must be called inside uWS's request callback (req dies after it). */
export function framingError(req: Pick<HttpRequest, 'getHeader' | 'forEach'>): ApiError | null {
  // Most requests (every GET) carry neither header: two native lookups, and no JS callback per header.
  if (req.getHeader('content-length') === '' && req.getHeader('transfer-encoding') === '') return null;
  let contentLengthCount = 0;
  let transferEncodingCount = 0;
  let transferEncoding = '';
  // getHeader returns only the first of a repeated header; forEach visits every one (names in lower case).
  req.forEach((name, value) => {
    if (name === 'content-length') contentLengthCount++;
    else if (name === 'transfer-encoding') {
      transferEncodingCount++;
      transferEncoding = value;
    }
  });
  if (contentLengthCount > 1) return refuse('content-length', 'Content-Length is repeated');
  if (transferEncodingCount > 1) return refuse('transfer-encoding', 'Transfer-Encoding is repeated');
  if (transferEncodingCount === 1 && contentLengthCount === 1) {
    return refuse('transfer-encoding', 'Content-Length and Transfer-Encoding together');
  }
  if (transferEncodingCount === 1 && transferEncoding.trim().toLowerCase() !== CHUNKED) {
    return refuse('transfer-encoding', 'the only transfer coding accepted is chunked');
  }
  return null;
}

function refuse(header: string, message: string): ApiError {
  return errors.badFraming(header, message);
}
