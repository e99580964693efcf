// Reason phrases for the status line uWebSockets.js writes verbatim.
const TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const LINES = new Map<number, string>(Object.entries(TEXT).map(([code, text]) => [Number(code), `${code} ${text}`]));

export function statusLine(status: number): string {
  return LINES.get(status) ?? String(status);
}
