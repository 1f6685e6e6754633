// Requests to this service: JSON in and out, never cached, never with cookies.

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {unknown} [body] the answer as parsed; the service's errors are `{"error": "…"}`
   */
  constructor(status, body) {
    const problem = typeof body === 'object' && body !== null ? body : {};
    super('error' in problem && typeof problem.error === 'string' ? problem.error : `HTTP ${status}`);
    this.status = status;
  }
}

/**
 * The answer's JSON (undefined when empty or not JSON), or an ApiError for a status other than 2xx.
 * @template T what the caller reads the answer as: the service's documented answer, trusted, not checked here
 * @param {'GET' | 'POST' | 'PUT'} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {string} [auth] the Authorization header
 * @returns {Promise<T>}
 */
export async function send(method, path, body, auth) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  if (auth) headers.Authorization = auth;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
    credentials: 'omit',
  });
  const text = await response.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}
