// The appliance's HTTP API as the page uses it (docs/server-api.md): the token, JSON requests, and the
// `{"error": {"code", "message"}}` bodies turned into one error type the page can show.

const TOKEN_KEY = 'hark.token';
const EXPIRES_KEY = 'hark.tokenExpires';

/** The Watson API version the page speaks (any YYYY-MM-DD the server accepts). */
export const MESSAGE_VERSION = '2021-06-14';

/** An API failure: the HTTP status (0 when the appliance could not be reached), the error code and a readable message. */
export class APIError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.name = 'APIError';
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }

  /** The message with what the user can do about it, for display. */
  get advice() {
    if (this.status === 429 && this.retryAfter) return `${this.message} (try again in ${this.retryAfter} s)`;
    return this.message;
  }
}

/** The stored token, or null when there is none or it has expired by this device's clock. */
export function storedToken() {
  const token = localStorage.getItem(TOKEN_KEY);
  const expires = Date.parse(localStorage.getItem(EXPIRES_KEY) ?? '');
  if (!token) return null;
  if (Number.isFinite(expires) && expires <= Date.now()) {
    forgetToken();
    return null;
  }
  return token;
}

export function keepToken(token, expires) {
  localStorage.setItem(TOKEN_KEY, token);
  if (expires) localStorage.setItem(EXPIRES_KEY, expires);
  else localStorage.removeItem(EXPIRES_KEY);
}

export function forgetToken() {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(EXPIRES_KEY);
}

/** `ws://` or `wss://` URL of `path` on this page's server, with the token as `access_token` (sockets cannot send headers). */
export function socketURL(path, token, query = {}) {
  const url = new URL(path, location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, String(value));
  url.searchParams.set('access_token', token);
  return url.href;
}

/**
 * A `blob:` URL for an `<img src>` or `<a href>` of a same-origin resource that needs the token: fetched with the
 * token in the Authorization header, never in the URL (where history, logs and Referer would keep it). Resolves
 * to null for another origin, which never sees the token; rejects with `APIError` when the fetch fails.
 */
export async function authorizedBlobURL(path, token) {
  const url = new URL(path, location.href);
  if (url.origin !== location.origin) return null;
  let response;
  try {
    response = await fetch(url.pathname + url.search, { headers: { Authorization: `Bearer ${token}` } });
  } catch (error) {
    throw new APIError(0, 'unreachable', `The appliance cannot be reached (${error.message}).`);
  }
  if (!response.ok) throw new APIError(response.status, `http_${response.status}`, `GET ${url.pathname} failed: HTTP ${response.status}`);
  return URL.createObjectURL(await response.blob());
}

/**
 * Calls the API and returns the decoded JSON body. Throws `APIError` for an error status (with the server's
 * code and message when it sent them) and for a network failure (status 0). `onUnauthorized` runs on 401
 * before the error is thrown, so any call can send the user back to the login screen.
 */
export async function request(path, { method = 'GET', body, token, onUnauthorized } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch (error) {
    throw new APIError(0, 'unreachable', `The appliance cannot be reached (${error.message}).`);
  }
  const text = await response.text();
  let value = null;
  if (text) {
    try {
      value = JSON.parse(text);
    } catch {
      if (response.ok) throw new APIError(response.status, 'bad_response', `The appliance sent something that is not JSON for ${method} ${path}.`);
    }
  }
  if (!response.ok) {
    const error = value && typeof value === 'object' ? value.error : null;
    const failure = new APIError(
      response.status,
      error?.code ?? `http_${response.status}`,
      error?.message ?? `${method} ${path} failed: HTTP ${response.status} ${response.statusText}`.trim(),
      response.headers.get('Retry-After'),
    );
    if (response.status === 401 && onUnauthorized) onUnauthorized(failure);
    throw failure;
  }
  return value;
}
