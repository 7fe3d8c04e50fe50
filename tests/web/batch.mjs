// [batches] The batch page in Debian's headless Chromium (playwright-core): run by
// tests/integration/test_web.py with KILN_URL (anonymous reads on), KILN_BATCH (a batch of
// three levels nobody builds: every job queued), KILN_PROFILE, KILN_CHROMIUM, KILN_OUT
// (screenshots). Prints one JSON line of what it saw: the levels, their jobs and states.
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const BASE = env('KILN_URL');
const BATCH = env('KILN_BATCH');
const problems = [];
const ctx = await chromium.launchPersistentContext(env('KILN_PROFILE'), {
  executablePath: env('KILN_CHROMIUM'),
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.setDefaultTimeout(30000);
  // the list links to the batch
  await page.goto(`${BASE}/#/batches`);
  await page.locator(`tr[data-batch="${BATCH}"] a`).click();
  await page.locator('#batch-levels section[data-level="2"] li').first().waitFor();
  await page.screenshot({ path: path.join(env('KILN_OUT'), 'batch.png'), fullPage: true });
  const levels = await page.locator('#batch-levels section').evaluateAll((secs) => secs.map(
    (s) => [...s.querySelectorAll('li')].map((li) => ({
      job: li.dataset.job,
      name: li.querySelector('a').textContent,
      state: li.querySelector('.badge').textContent,
    }))));
  const state = await page.locator('#batch-info .badge').first().textContent();
  // a job's page links back to its batch
  const top = levels[2][0].job;
  await page.locator(`#batch-levels li[data-job="${top}"] a`).click();
  const back = await page.locator('#job-batch').getAttribute('href');
  const waits = await page.locator('#job-batch').evaluate((a) => a.parentElement.textContent);
  console.log(JSON.stringify({ levels, state, back, waits, problems }));
} finally {
  await ctx.close();
}
