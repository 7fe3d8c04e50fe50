// The webhooks pages of the dashboard (issue 26) in Debian's headless Chromium, driven by
// playwright-core. Run by tests/integration/test_farm_hooks.py, which starts a scheduler
// with a [webhook chat], sends it forge deliveries and passes, in the environment: KILN_URL,
// KILN_TOKEN (scope admin), KILN_READ_TOKEN (scope read), KILN_BAD_DELIVERY (a delivery
// answered 400), KILN_JOB (a job whose events went out), KILN_OUT (screenshots),
// KILN_PROFILE, KILN_CHROMIUM. Prints one JSON line of what it saw.
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const BASE = env('KILN_URL');
const OUT = env('KILN_OUT');
const JOB = env('KILN_JOB');
const expect = (cond, msg) => { if (!cond) throw new Error(msg); };

const ctx = await chromium.launchPersistentContext(env('KILN_PROFILE'), {
  executablePath: env('KILN_CHROMIUM'),
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const problems = [];
const report = {};
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // 401 before the token is given, 403 for the read token, 404 for no such webhook:
    // answers the pages expect
    if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) {
      problems.push(`console: ${m.text()}`);
    }
  });
  page.setDefaultTimeout(20000);
  const openBox = async () => {
    if (!await page.locator('#token-box').evaluate((e) => e.open)) await page.click('#token-state');
  };
  const useToken = async (tok) => {
    await openBox();
    await page.fill('#token-input', tok);
    await page.press('#token-input', 'Enter');
  };
  await page.goto(`${BASE}/#/webhooks`);
  await useToken(env('KILN_TOKEN'));

  // the list: the webhook with its counts, the forge deliveries with their answers
  const row = page.locator('tr[data-webhook="chat"]');
  await row.waitFor();
  report.webhook = (await row.innerText()).replace(/\s+/g, ' ');
  const bad = page.locator(`tr[data-delivery="${env('KILN_BAD_DELIVERY')}"]`);
  await bad.waitFor();
  report.bad_delivery = (await bad.innerText()).replace(/\s+/g, ' ');
  report.job_links = await page.locator(`#hook-deliveries a[href="#/jobs/${JOB}"]`).count();
  await page.screenshot({ path: path.join(OUT, 'webhooks.png'), fullPage: true });

  // one webhook's log: each event with its tries and answers
  await row.locator('a').click();
  const ev = page.locator(`tr[data-event="job.state:${JOB}:queued:0"]`);
  await ev.waitFor();
  report.event = (await ev.innerText()).replace(/\s+/g, ' ');
  report.tries_500 = await page.locator('#webhook-deliveries li[data-status="500"]').count();
  report.tries_204 = await page.locator('#webhook-deliveries li[data-status="204"]').count();
  report.events = await page.locator('#webhook-deliveries tr[data-event]').count();
  await page.screenshot({ path: path.join(OUT, 'webhook.png'), fullPage: true });

  // a read-only token is told what it needs
  await openBox();
  await page.click('#token-forget');
  await useToken(env('KILN_READ_TOKEN'));
  await page.goto(`${BASE}/#/webhooks`);
  await page.locator('#webhooks-admin').waitFor();
  report.read_only = (await page.locator('#webhooks-admin').innerText()).replace(/\s+/g, ' ');
  expect(!problems.length, problems.join('\n'));
} finally {
  await ctx.close();
}
console.log(JSON.stringify(report));
