import http from 'node:http';

export interface LoopbackResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { error?: string; code?: string; access?: string; refresh?: string } & Record<string, unknown>;
}

/**
 * A request whose TCP connection starts from `clientAddress` (any of 127.0.0.0/8 on Linux), so that the app sees a
 * different client address per caller without any proxy header: what the app trusts of those headers cannot matter.
 */
export function requestFrom(
  clientAddress: string,
  url: string,
  { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<LoopbackResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        localAddress: clientAddress,
        agent: false,
        headers: { ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text ? JSON.parse(text) : {} }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** Distinct loopback client addresses, 127.0.0.2 onwards (127.0.0.1 is left to requests without a chosen source). */
export function loopbackClients() {
  let next = 0;
  return () => {
    const n = next++;
    return `127.0.${Math.floor(n / 250)}.${(n % 250) + 2}`;
  };
}
