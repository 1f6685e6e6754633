import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { projectRoot } from '../../src/config';
import { STAFF, startTestApp, type TestApp } from '../support/test-app';
import { chromiumAvailable, type HeadlessBrowser, launchChromium } from '../support/browser';

// Swagger UI under its content security policy, in a real browser: it must still render every group of operations,
// with no violation reported. A screenshot goes to test-results/ for people to look at.

const runs = chromiumAvailable();
const describeInBrowser = runs ? describe : describe.skip;

describeInBrowser('Swagger UI (headless Chromium)', () => {
  let app: TestApp;
  let browser: HeadlessBrowser;

  beforeAll(async () => {
    app = await startTestApp();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  test('renders every tag of the document with no content security policy violation and stores nothing', async () => {
    const page = await browser.context.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (error) => violations.push(error.message));
    await page.goto(`${app.baseUrl}/api/swagger/`);
    await page.locator('.opblock-tag-section').first().waitFor();
    const tags = await page.locator('.opblock-tag').allInnerTexts();
    for (const tag of ['api/v2.1', 'authentication', 'platform', 'admin', 'operations', 'Webhooks v2.1']) {
      expect(tags.some((text) => text.startsWith(tag))).toBe(true);
    }
    await page.locator('.scheme-container button.authorize').click();
    const bearer = page.locator('.modal-ux .auth-container').first();
    await bearer.locator('input').fill('a-token-typed-into-swagger');
    await bearer.locator('button.authorize').click();
    await bearer.getByText('Authorized').waitFor();
    expect(await page.evaluate('JSON.stringify(localStorage)')).not.toContain('a-token-typed-into-swagger');
    await page.locator('.modal-ux button.close-modal').click();
    await page.evaluate('scrollTo(0, 0)');
    await mkdir(path.join(projectRoot, 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(projectRoot, 'test-results', 'swagger-ui.png') });
    expect(violations).toEqual([]);
  });

  test('"Try it out" sends a state-changing request from the page, and it is accepted as same-origin', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${app.baseUrl}/api/swagger/`);
    const create = page.locator('.opblock-post', { has: page.locator('[data-path="/authentication/create"]') });
    await create.locator('.opblock-summary').click();
    await create.locator('.try-out__btn').click();
    await create.locator('textarea.body-param__text').fill(JSON.stringify(STAFF));
    await create.locator('.execute').click();
    const status = create.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor();
    expect(await status.innerText()).toBe('200');
  });
});
