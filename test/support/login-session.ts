/**
 * A browser as far as a login needs one: cookies kept per host name (as browsers do, whatever the port) and sent back, redirects followed (303 and 302 turn
 * into GET), the last page's URL known. No script runs. For the OpenID login the tests script with fetch.
 */
export interface Page {
  url: string;
  response: Response;
}

export class LoginSession {
  private readonly jars = new Map<string, Map<string, string>>();

  /** The cookies this browser holds for the URL's host name (name → value). */
  cookies(url: string): Map<string, string> {
    const host = new URL(url).hostname;
    if (!this.jars.has(host)) this.jars.set(host, new Map());
    return this.jars.get(host)!;
  }

  /** One request, cookies sent and kept, no redirect followed. */
  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const jar = this.cookies(url);
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator);
      const expired = attributes.some((attribute) => /^max-age=(0|-\d+)$/i.test(attribute));
      if (expired) jar.delete(name);
      else jar.set(name, pair.slice(separator + 1));
    }
    return response;
  }

  /** Requests and follows redirects until a page answers, or a redirect leads to where `stopAt` says. */
  async follow(url: string, init: RequestInit = {}, stopAt: (url: string) => boolean = () => false): Promise<Page> {
    let current = url;
    let request = init;
    for (let hops = 0; hops < 20; hops++) {
      const response = await this.request(current, request);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return { url: current, response };
      await response.arrayBuffer();
      current = new URL(location, current).href;
      if (stopAt(current)) return { url: current, response };
      if (response.status === 303 || response.status === 302) request = {};
    }
    throw new Error(`more than 20 redirects from ${url}`);
  }
}

/** The login form's target on a page, as the browser would post it. */
export function formAction(page: Page, html: string): string {
  const action = /<form[^>]*\saction="([^"]*)"/.exec(html)?.[1];
  if (action === undefined) throw new Error(`no form on ${page.url} (${page.response.status}): ${html.slice(0, 300)}`);
  return new URL(action.replace(/&amp;/g, '&'), page.url).href;
}

/**
 * From `start`, follows to the provider's login form, posts the credentials and follows on: the page it ends on
 * (or the redirect `stopAt` recognises). A refused login ends on the form again, with 401.
 */
export async function signInThrough(
  browser: LoginSession,
  start: string,
  credentials: { username: string; password: string },
  stopAt?: (url: string) => boolean,
): Promise<Page> {
  const form = await browser.follow(start);
  const action = formAction(form, await form.response.text());
  return browser.follow(
    action,
    { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(credentials).toString() },
    stopAt,
  );
}
