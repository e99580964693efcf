// A small HTTP client for tests over fetch (undici), returning status, parsed JSON and headers.
export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  const parsed = contentType.startsWith('application/json') && text !== '' ? JSON.parse(text) : text;
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** Bound to one server and (optionally) one token. */
export function client(baseUrl: string, token?: string) {
  const withToken = (options: RequestOptions = {}) =>
    token === undefined || options.token !== undefined ? options : { ...options, token };
  return {
    get: <T = any>(path: string, options?: RequestOptions) => request<T>(baseUrl, 'GET', path, withToken(options)),
    post: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      request<T>(baseUrl, 'POST', path, withToken({ ...options, ...(body === undefined ? {} : { body }) })),
    patch: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      request<T>(baseUrl, 'PATCH', path, withToken({ ...options, ...(body === undefined ? {} : { body }) })),
    put: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
      request<T>(baseUrl, 'PUT', path, withToken({ ...options, ...(body === undefined ? {} : { body }) })),
    delete: <T = any>(path: string, options?: RequestOptions) => request<T>(baseUrl, 'DELETE', path, withToken(options)),
  };
}

/** A client with the admin token of `server` (a TestServer or an in-process one). */
export function admin(server: { baseUrl: string; adminToken: string }) {
  return client(server.baseUrl, server.adminToken);
}
