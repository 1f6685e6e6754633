import { createServer, type Server } from 'node:http';
import { basicAuth, STAFF, startTestApp, type TestApp } from '../support/test-app';
import { describeInBrowser, type HeadlessBrowser, launchChromium } from '../support/browser';

/*
 * Cross-site request forgery in a real browser (issue 20, low 4). The browser holds the staff account's Basic
 * credentials for this service and sends them with its requests to it (as browsers do after a password prompt, for
 * the addresses below the one prompted; here the context's extra headers stand for that). A page on another origin
 * submits a `text/plain` form to a state-changing admin operation. Before, the form's request ran as the staff
 * member (here a resend of an unknown event: a 404 from inside the operation); now it is refused as cross-origin
 * before any credentials are looked at. (That no 401 offers Basic any more, so that no browser prompts for it, is
 * test/http/cross-origin.test.ts.)
 */

describeInBrowser('a form on another origin (headless Chromium)', () => {
  let app: TestApp;
  let browser: HeadlessBrowser;
  let attacker: Server;
  let attackerUrl: string;
  let formTarget = '';

  beforeAll(async () => {
    app = await startTestApp();
    browser = await launchChromium({ extraHTTPHeaders: { Authorization: basicAuth(STAFF.username, STAFF.password) } });
    // The attacker's page: another origin (localhost, another port) whose form posts to the service at once.
    attacker = createServer((_request, response) => {
      response.setHeader('Content-Type', 'text/html; charset=utf-8');
      response.end(
        `<!doctype html><form method="post" enctype="text/plain" action="${formTarget}"><input name="x" value="1"></form>` +
          '<script>document.forms[0].submit()</script>',
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, 'localhost', resolve));
    attackerUrl = `http://localhost:${(attacker.address() as { port: number }).port}/`;
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await app?.close();
  });

  test('a forged form is refused before the credentials the browser sends along are read', async () => {
    const page = await browser.context.newPage();
    expect((await page.goto(`${app.baseUrl}/admin/api/info`))?.status()).toBe(200);

    formTarget = `${app.baseUrl}/admin/api/webhook-events/999/resend`;
    const answer = page.waitForResponse((response) => response.url() === formTarget);
    await page.goto(attackerUrl);
    const response = await answer;
    expect([response.status(), ((await response.json()) as { code: string }).code]).toEqual([403, 'cross_origin_request']);
  });
});
