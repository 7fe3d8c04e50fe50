// The dashboard end to end in Debian's headless Chromium, driven by playwright-core (no
// downloaded browser). Run by tests/integration/test_web.py, which starts the scheduler and
// a worker and passes, in the environment: KILN_URL, KILN_TOKEN (scope submit), KILN_GROWING (a
// spec whose build log grows a line at a time: submitted here, with one rerun), KILN_STUCK (a job no worker can
// take), KILN_SLEEPER (a long build to cancel), KILN_OUT (screenshots), KILN_REPO (a repository of the scheduler's
// configuration the build is published into), KILN_PROFILE (a
// fresh Chromium profile directory), KILN_CHROMIUM. Prints one JSON line of what it saw.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const BASE = env('KILN_URL');
const TOKEN = env('KILN_TOKEN');
const GROWING = env('KILN_GROWING');
const STUCK = env('KILN_STUCK');
const SLEEPER = env('KILN_SLEEPER');
const OUT = env('KILN_OUT');
const REPO = env('KILN_REPO');

const t0 = Date.now();
const step = (what) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${what}`);
const fail = (msg) => { throw new Error(msg); };
const expect = (cond, msg) => { if (!cond) fail(msg); };

const ctx = await chromium.launchPersistentContext(env('KILN_PROFILE'), {
  executablePath: env('KILN_CHROMIUM'),
  headless: true,
  acceptDownloads: true,
  viewport: { width: 1280, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const problems = [];
const watch = (page, name) => {
  page.on('pageerror', (e) => problems.push(`${name}: page error: ${e.message}`));
  page.on('console', (m) => {
    // a CSP violation or a script error shows here; failed fetches of 404 answers the
    // pages expect (no repositories endpoint, no provenance yet) are not errors of ours
    if (m.type() === 'error' && !/status of 404/.test(m.text())) {
      problems.push(`${name}: console: ${m.text()}`);
    }
  });
};

const report = {};
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  watch(page, 'desktop');
  page.setDefaultTimeout(30000);
  await page.goto(`${BASE}/`);
  expect(await page.locator('#token-state').textContent() === 'Read-only', 'token state');

  // ---- the job page: the log grows while the build runs, then the state is succeeded
  step('submit, job page, live log');
  const sub = await fetch(`${BASE}/api/v1/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      spec: GROWING, spec_name: 'web-growing.spec', reruns: 1, source_date_epoch: 1700000000,
      repository: REPO,
    }),
  });
  expect(sub.status === 201, `submit: ${sub.status}`);
  const JOB = String((await sub.json()).id);
  report.job = JOB;
  await page.goto(`${BASE}/#/jobs/${JOB}`);
  await page.waitForFunction(() => document.title.startsWith('Job '));
  const lengths = [];
  const deadline = Date.now() + 60000;
  for (;;) {
    const n = await page.evaluate(() => document.getElementById('log').textContent.length);
    if (!lengths.length || lengths[lengths.length - 1] !== n) lengths.push(n);
    const state = await page.locator('#job-state .badge').textContent().catch(() => '');
    if (state === 'succeeded' && await page.evaluate(
      () => document.getElementById('log').dataset.complete === '1')) break;
    expect(Date.now() < deadline, `job ${JOB} never succeeded in the page (${state})`);
    await page.waitForTimeout(150);
  }
  report.log_lengths = lengths;
  const log = await page.locator('#log').textContent();
  for (let i = 1; i <= 10; i++) expect(log.includes(`web-log-line-${i}`), `log line ${i}`);
  // lines came in while the page watched: some of them before the build was over
  expect(lengths.filter((n) => n > 0).length >= 3, `log did not grow live: ${lengths}`);
  expect((await page.title()).includes('succeeded'), `title: ${await page.title()}`);

  // ---- the jobs list, read-only (anonymous reads are on)
  step('jobs list');
  await page.goto(`${BASE}/`);
  await page.waitForFunction(() => location.hash === '#/jobs');
  await page.waitForSelector(`#jobs-body tr[data-job="${JOB}"]`);
  expect(await page.title() === 'Jobs · kiln', `title: ${await page.title()}`);
  // search by package name
  await page.fill('#job-search', 'growing');
  await page.press('#job-search', 'Enter');
  await page.waitForFunction(() => location.hash === '#/jobs?name=growing');
  // the build (and its rerun, same spec) stay; the other jobs go
  await page.waitForFunction(([job, stuck, sleeper]) => {
    const rows = [...document.querySelectorAll('#jobs-body tr[data-job]')];
    return rows.some((r) => r.dataset.job === job)
      && !rows.some((r) => r.dataset.job === stuck || r.dataset.job === sleeper)
      && rows.every((r) => r.textContent.includes('web-growing.spec'));
  }, [JOB, STUCK, SLEEPER]);
  // a state filter is a link (that keeps the search: clear it first)
  await page.fill('#job-search', '');
  await page.press('#job-search', 'Enter');
  await page.waitForFunction(() => location.hash === '#/jobs');
  await page.click('nav[aria-label="Job state"] >> text=queued');
  await page.waitForFunction(() => location.hash.startsWith('#/jobs?state=queued'));
  await page.waitForSelector(`#jobs-body tr[data-job="${STUCK}"]`);
  expect(await page.title() === 'Jobs: queued · kiln', `title: ${await page.title()}`);
  await page.click('nav[aria-label="Job state"] >> text=succeeded');
  await page.waitForSelector(`#jobs-body tr[data-job="${JOB}"]`);
  await page.screenshot({ path: path.join(OUT, 'jobs.png'), fullPage: true });

  // ---- artifacts: sha256 shown, download gives those bytes, signature and provenance
  step('artifacts');
  await page.click(`#jobs-body a[href="#/jobs/${JOB}"]`);
  await page.waitForSelector('#artifacts table');
  const api = async (p) => (await fetch(BASE + p, {
    headers: { Authorization: `Bearer ${TOKEN}` },
  })).json();
  const job = await api(`/api/v1/jobs/${JOB}`);
  const rpm = job.artifacts.find((a) => a.name.endsWith('.noarch.rpm'));
  expect(rpm && rpm.signed, 'a signed noarch package');
  const row = page.locator('#artifacts tr', { hasText: rpm.name });
  expect((await row.locator('.sha').first().textContent()) === rpm.sha256, 'sha256 shown');
  expect((await row.textContent()).includes('signed'), 'signature shown');
  const [download] = await Promise.all([page.waitForEvent('download'),
    row.locator('a.download').click()]);
  const bytes = await readFile(await download.path());
  const got = createHash('sha256').update(bytes).digest('hex');
  expect(got === rpm.sha256, `downloaded ${got}, listed ${rpm.sha256}`);
  report.downloaded = { name: rpm.name, sha256: got };
  await row.locator('details.provenance summary').click();
  await row.locator('.envelope').first().waitFor();
  const prov = await row.locator('details.provenance').textContent();
  expect(prov.includes('https://slsa.dev/provenance/v1'), `provenance: ${prov.slice(0, 300)}`);
  expect(prov.includes(rpm.sha256), 'provenance names the package digest');

  // ---- the reproducibility verdict and its report
  step('reproducibility');
  await page.waitForFunction(() => {
    const v = document.querySelector('#repro-verdict');
    return v && v.textContent === 'reproducible';
  }, null, { timeout: 60000 });
  await page.click('#repro-report summary');
  await page.waitForFunction(() => {
    const t = document.getElementById('repro-text').textContent;
    return t !== 'Loading…' && t.length > 20;
  });
  const text = await page.locator('#repro-text').textContent();
  expect(/reproducible/.test(text) && text.includes(rpm.name.replace(/\.rpm$/, '')),
    `report: ${text.slice(0, 300)}`);
  expect(await page.locator('#manifest summary').count() === 1, 'manifest section');
  await page.click('#manifest summary');
  expect((await page.locator('#manifest pre').textContent()).includes('"spec"'), 'manifest');
  await page.screenshot({ path: path.join(OUT, 'job.png'), fullPage: true });

  // ---- the queue: why the stuck job is pending
  step('queue');
  await page.click('nav[aria-label="Main"] >> text=Queue');
  await page.waitForFunction(() => document.title === 'Queue · kiln');
  const qrow = page.locator(`#queue-list tr[data-job="${STUCK}"]`);
  await qrow.locator('button.why').click();
  await qrow.locator('.placement-summary').waitFor();
  const why = await qrow.locator('.placement').textContent();
  expect(/s390x/.test(why) && why.includes('w1'), `placement: ${why}`);
  expect(await qrow.locator('button.why').getAttribute('aria-expanded') === 'true', 'expanded');
  await page.screenshot({ path: path.join(OUT, 'queue.png'), fullPage: true });

  // ---- workers: capabilities, load and current lease (the sleeper)
  step('workers');
  await page.click('nav[aria-label="Main"] >> text=Workers');
  await page.waitForSelector('tr[data-worker="w1"]');
  await page.waitForFunction((id) => {
    const r = document.querySelector('tr[data-worker="w1"]');
    return r && r.querySelector(`a[href="#/jobs/${id}"]`);
  }, SLEEPER);
  const wrow = await page.locator('tr[data-worker="w1"]').textContent();
  expect(wrow.includes('noarch') && wrow.includes('online'), `worker row: ${wrow}`);
  await page.screenshot({ path: path.join(OUT, 'workers.png'), fullPage: true });

  // ---- repositories: real data, or a clear state when the endpoint is absent
  step('repositories');
  await page.click('nav[aria-label="Main"] >> text=Repositories');
  await page.waitForFunction(() => document.querySelector('#no-repos')
    || document.querySelector('#repos-list table, #repos-list p'));
  const repos = await fetch(`${BASE}/api/v1/repos`);
  if (repos.status === 404) {
    // a scheduler without publishing (issue 11) says so
    expect(await page.locator('#no-repos').count() === 1, 'no-repositories state');
  } else {
    // the build named repository REPO: once reproducible it is published there
    expect(await page.locator('#no-repos').count() === 0, 'repositories listed');
    const rrow = page.locator(`tr[data-repo="${REPO}"]`);
    for (let i = 0; ; i++) {
      await rrow.waitFor();
      const count = Number((await rrow.locator('td').nth(2).textContent()).trim());
      if (count >= 2) break; // the binary and the source package
      expect(i < 40, `repository ${REPO} never showed the published packages`);
      await page.waitForTimeout(500);
      await page.reload();
    }
    await rrow.locator(`a[href="#/repos/${REPO}"]`).click();
    await page.waitForFunction((r) => document.title === `Repository ${r} · kiln`, REPO);
    await page.waitForSelector('#repo-packages table');
    const prow = page.locator('#repo-packages tr', { hasText: 'web-growing-1-1.noarch' });
    expect((await prow.locator('.sha').textContent()) === rpm.sha256,
      'the published package is the signed one');
    expect(await prow.locator(`a[href="#/jobs/${JOB}"]`).count() === 1, 'its job is linked');
    await page.screenshot({ path: path.join(OUT, 'repo.png'), fullPage: true });
  }
  report.repos_status = repos.status;

  // ---- trends: the chart has lines
  step('trends');
  await page.click('nav[aria-label="Main"] >> text=Trends');
  await page.waitForSelector('#chart-queue svg path.series');
  await page.waitForSelector('#chart-repro svg');
  await page.screenshot({ path: path.join(OUT, 'trends.png'), fullPage: true });

  // ---- keyboard: Tab reaches the skip button first, then the nav; Enter follows a link
  step('keyboard');
  await page.goto(`${BASE}/?fresh#/jobs`); // a new document: focus starts at the top
  await page.waitForSelector('#jobs-body tr');
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement.id) === 'skip', 'skip link first');
  let found = false;
  for (let i = 0; i < 10 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => document.activeElement.textContent === 'Workers');
  }
  expect(found, 'Tab reaches the Workers link');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  expect(outline !== 'none', `focus is visible (outline ${outline})`);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.title === 'Workers · kiln');
  expect(await page.evaluate(() => document.activeElement.id) === 'page-title',
    'focus moves to the new page title');

  // ---- cancel the long build from the UI: no button without a token, one with it
  step('cancel with a token');
  await page.goto(`${BASE}/#/jobs/${SLEEPER}`);
  await page.waitForFunction(() => document.querySelector('#job-state .badge'));
  await page.waitForFunction(() => /sleeper-started/.test(document.getElementById('log').textContent));
  expect(await page.locator('#cancel-job').count() === 0, 'no cancel button without a token');
  await page.click('#token-state');
  await page.fill('#token-input', TOKEN);
  await page.press('#token-input', 'Enter');
  expect(await page.locator('#token-state').textContent() === 'Token set', 'token kept');
  expect(await page.evaluate(() => sessionStorage.getItem('kiln.token')) === TOKEN,
    'token in sessionStorage');
  await page.click('#cancel-job');
  await page.waitForFunction(() => {
    const b = document.querySelector('#job-state .badge');
    return b && b.textContent === 'cancelled';
  }, null, { timeout: 30000 });
  expect(await page.locator('#retry-job').count() === 1, 'retry offered after cancel');
  await page.screenshot({ path: path.join(OUT, 'cancelled.png'), fullPage: true });

  // ---- 360 px wide: nothing wider than the screen
  step('360 px');
  const small = await ctx.newPage();
  watch(small, '360px');
  await small.setViewportSize({ width: 360, height: 740 });
  for (const [hash, shot, ready] of [[`#/jobs/${JOB}`, 'job-360.png', '#artifacts table'],
    ['#/jobs', 'jobs-360.png', '#jobs-body tr[data-job]']]) {
    await small.goto(`${BASE}/${hash}`);
    await small.waitForSelector(ready);
    const width = await small.evaluate(() => document.documentElement.scrollWidth);
    expect(width <= 360, `${hash}: the page is ${width}px wide at 360px`);
    await small.screenshot({ path: path.join(OUT, shot), fullPage: true });
  }
  expect(problems.length === 0, `browser problems:\n${problems.join('\n')}`);
  step('done');
  console.log(JSON.stringify(report));
} catch (e) {
  console.error(`browser problems so far:\n${problems.join('\n')}`);
  throw e;
} finally {
  await ctx.close();
}
