/**
 * The demo tools' way into a running service, as a staff user. It prefers a Bearer token from
 * `/authentication/create` (one password check per run) and falls back to HTTP Basic, which costs the service a
 * slow password hash on every call, when the service answers that route with a 404.
 */

export interface Credentials {
  username: string;
  password: string;
}

export interface ServiceResponse {
  status: number;
  /** Parsed JSON, or the text when the answer is not JSON. */
  body: any;
}

export interface ServiceClient {
  baseUrl: string;
  scheme: 'bearer' | 'basic';
  request(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<ServiceResponse>;
}

/** The service cannot be reached at all (not started, wrong port). */
export class ServiceUnreachableError extends Error {}

/** The service refused the credentials, or the account is not staff. */
export class CredentialsRefusedError extends Error {}

async function send(baseUrl: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<ServiceResponse> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new ServiceUnreachableError(`cannot reach ${baseUrl}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const text = await response.text();
  try {
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  } catch {
    return { status: response.status, body: text };
  }
}

async function issueToken(baseUrl: string, credentials: Credentials): Promise<string | undefined> {
  const answer = await send(baseUrl, 'POST', '/authentication/create', credentials, {});
  if (answer.status === 404) return undefined;
  if (answer.status === 200 && typeof answer.body?.access === 'string') return answer.body.access;
  if (answer.status === 401 || answer.status === 400) {
    throw new CredentialsRefusedError(`${baseUrl} refused the username or password of "${credentials.username}"`);
  }
  throw new Error(`${baseUrl}/authentication/create answered ${answer.status}`);
}

export async function connectToService(baseUrl: string, credentials: Credentials): Promise<ServiceClient> {
  const origin = baseUrl.replace(/\/+$/, '');
  let token = await issueToken(origin, credentials);
  const basic = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  const authorization = () => (token === undefined ? basic : `Bearer ${token}`);

  const client: ServiceClient = {
    baseUrl: origin,
    scheme: token === undefined ? 'basic' : 'bearer',
    async request(method, path, body) {
      const answer = await send(origin, method, path, body, { Authorization: authorization() });
      // Access tokens live five minutes; a longer run gets a new one.
      if (answer.status !== 401 || token === undefined) return answer;
      token = await issueToken(origin, credentials);
      return send(origin, method, path, body, { Authorization: authorization() });
    },
  };

  // A staff-only page, so that wrong credentials are told before any traffic is sent.
  const check = await client.request('GET', '/admin/api/webhook-endpoint');
  if (check.status === 401) throw new CredentialsRefusedError(`${origin} refused the username or password of "${credentials.username}"`);
  if (check.status === 403) throw new CredentialsRefusedError(`"${credentials.username}" is not a staff user`);
  if (check.status !== 200) throw new Error(`${origin}/admin/api/webhook-endpoint answered ${check.status}`);
  return client;
}
