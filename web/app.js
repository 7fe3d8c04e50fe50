/* kiln dashboard: plain JavaScript over the REST API (docs/api.md), no library, no build
 * step. Pages are hash routes (#/jobs, #/jobs/12, #/queue, #/workers, #/batches,
 * #/batches/3, #/repos, #/trends, #/webhooks, #/webhooks/NAME);
 * every page polls what it shows and stops when the user leaves it. The Content-Security-
 * Policy allows only scripts and styles from the scheduler: nothing inline. */
'use strict';

(() => {
  const TOKEN_KEY = 'kiln.token';
  const STATES = ['queued', 'leased', 'building', 'succeeded', 'failed', 'cancelled',
    'dep_failed'];
  const FINAL = new Set(['succeeded', 'failed', 'cancelled', 'dep_failed']);
  const main = document.getElementById('main');

  /* ---------------------------------------------------------------------------------- */
  /* DOM helpers */

  function h(tag, attrs, ...kids) {
    const svg = tag.startsWith('svg:');
    const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
      : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.setAttribute('class', v);
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    add(el, kids);
    return el;
  }

  function add(el, kids) {
    for (const k of kids) {
      if (k === null || k === undefined || k === false) continue;
      if (Array.isArray(k)) add(el, k);
      else el.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
  }

  function replace(el, ...kids) {
    el.textContent = '';
    add(el, kids);
  }

  function sleep(ms, signal) {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      if (signal) signal.addEventListener('abort', () => { clearTimeout(t); resolve(); });
    });
  }

  /* ---------------------------------------------------------------------------------- */
  /* Formatting */

  function fmtTime(ms) {
    if (!ms) return '—';
    const d = new Date(ms);
    return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  }

  function fmtAgo(ms) {
    if (!ms) return '—';
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.round(s / 60)} min ago`;
    if (s < 86400) return `${Math.round(s / 3600)} h ago`;
    return `${Math.round(s / 86400)} d ago`;
  }

  function timeEl(ms, ago) {
    if (!ms) return '—';
    return h('time', { datetime: new Date(ms).toISOString(), title: fmtTime(ms) },
      ago ? fmtAgo(ms) : fmtTime(ms));
  }

  function fmtDur(ms) {
    if (ms === null || ms === undefined || ms < 0) return '—';
    if (ms < 1000) return `${ms} ms`;
    const s = Math.round(ms / 1000);
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  }

  function fmtSize(n) {
    if (n === null || n === undefined) return '—';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    let v = n;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return i ? `${v.toFixed(1)} ${u[i]}` : `${v} B`;
  }

  function badge(word, kind) {
    const w = word || 'none';
    return h('span', { class: `badge ${kind || 'state'}-${w}` }, w.replace('_', ' '));
  }

  function jobLink(id, text) {
    return h('a', { href: `#/jobs/${id}` }, text || `#${id}`);
  }

  function sha(s) {
    return s ? h('code', { class: 'sha' }, s) : '—';
  }

  /* ---------------------------------------------------------------------------------- */
  /* The API */

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  }

  async function api(path, opts) {
    const o = Object.assign({ method: 'GET' }, opts || {});
    const headers = new Headers(o.headers || {});
    const tok = token();
    if (tok) headers.set('Authorization', `Bearer ${tok}`);
    if (o.json !== undefined) {
      headers.set('Content-Type', 'application/json');
      o.body = JSON.stringify(o.json);
    }
    const r = await fetch(path, {
      method: o.method, headers, body: o.body, signal: o.signal,
      cache: 'no-store', credentials: 'omit',
    });
    if (!r.ok) {
      let code = 'http';
      let msg = `${r.status} ${r.statusText}`;
      try {
        const e = await r.json();
        if (e && e.error) { code = e.error.code; msg = e.error.message; }
      } catch (_) { /* not JSON */ }
      throw new ApiError(r.status, code, msg);
    }
    return r;
  }

  async function getJSON(path, signal) {
    return (await api(path, { signal })).json();
  }

  /* An error worth showing, with what to do about a missing token. */
  function errorBox(e) {
    if (e && e.status === 401) {
      return h('div', { class: 'notice error', role: 'alert' },
        h('strong', {}, 'A token is needed to read this scheduler. '),
        'Paste one under the token button above (anonymous reads are off: ',
        h('code', {}, '[auth] anonymous_read'), ').');
    }
    if (e && e.status === 403) {
      return h('div', { class: 'notice error', role: 'alert' },
        `This token may not do that: ${e.message}`);
    }
    return h('div', { class: 'notice error', role: 'alert' },
      `Error: ${e && e.message ? e.message : String(e)}`);
  }

  /* ---------------------------------------------------------------------------------- */
  /* Pages: each gets a context that stops its polls when the user navigates away */

  class Page {
    constructor() {
      this.ctl = new AbortController();
      this.signal = this.ctl.signal;
    }

    get gone() { return this.signal.aborted; }

    stop() { this.ctl.abort(); }

    /* Run fn now and every ms until the page goes; errors show in errEl. */
    every(ms, fn, errEl) {
      const loop = async () => {
        while (!this.gone) {
          try {
            await fn();
            if (errEl) errEl.textContent = '';
          } catch (e) {
            if (this.gone) return;
            if (errEl) replace(errEl, errorBox(e));
          }
          await sleep(typeof ms === 'function' ? ms() : ms, this.signal);
        }
      };
      loop();
    }
  }

  let current = null;

  function setTitle(t) {
    document.title = `${t} · kiln`;
  }

  function heading(text, ...extra) {
    const h1 = h('h1', { tabindex: '-1', id: 'page-title' }, text, ...extra);
    return h1;
  }

  function parseHash() {
    const raw = location.hash.replace(/^#/, '') || '/jobs';
    const q = raw.indexOf('?');
    const path = (q < 0 ? raw : raw.slice(0, q)).split('/').filter(Boolean)
      .map(decodeURIComponent);
    const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    return { path, params };
  }

  function navigate(focus) {
    if (current) current.stop();
    const { path, params } = parseHash();
    const page = new Page();
    current = page;
    main.textContent = '';
    const section = path[0] || 'jobs';
    for (const a of document.querySelectorAll('[data-nav]')) {
      if (a.dataset.nav === section) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    if (section === 'jobs' && path.length === 1) jobsPage(page, params);
    else if (section === 'jobs' && path.length === 2) jobPage(page, path[1], params);
    else if (section === 'queue') queuePage(page);
    else if (section === 'workers') workersPage(page);
    else if (section === 'batches' && path.length === 1) batchesPage(page);
    else if (section === 'batches' && path.length === 2) batchPage(page, path[1]);
    else if (section === 'repos' && path.length === 1) reposPage(page);
    else if (section === 'repos' && path.length === 2) repoPage(page, path[1]);
    else if (section === 'trends') trendsPage(page);
    else if (section === 'webhooks' && path.length === 1) webhooksPage(page);
    else if (section === 'webhooks' && path.length === 2) webhookPage(page, path[1]);
    else notFound();
    if (focus) {
      const t = document.getElementById('page-title');
      if (t) t.focus({ preventScroll: false });
    }
  }

  function notFound() {
    setTitle('Not found');
    main.append(heading('Not found'),
      h('p', {}, 'No such page. ', h('a', { href: '#/jobs' }, 'Back to the jobs')));
  }

  /* ---------------------------------------------------------------------------------- */
  /* Jobs list */

  function hashFor(base, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
    const s = q.toString();
    return s ? `${base}?${s}` : base;
  }

  function jobsPage(page, params) {
    const state = STATES.includes(params.get('state')) ? params.get('state') : '';
    const name = (params.get('name') || '').slice(0, 255);
    const cursor = /^\d+$/.test(params.get('cursor') || '') ? params.get('cursor') : '';
    setTitle(state ? `Jobs: ${state}` : 'Jobs');

    const filters = h('ul', { class: 'filters' },
      ['', ...STATES].map((s) => h('li', {}, h('a', {
        href: hashFor('#/jobs', { state: s, name }),
        'aria-current': s === state ? 'page' : null,
      }, s || 'all'))));
    const input = h('input', {
      type: 'search', id: 'job-search', name: 'name', value: name,
      placeholder: 'e.g. hello', autocomplete: 'off',
    });
    const form = h('form', { role: 'search', class: 'search' },
      h('label', { for: 'job-search' }, 'Package name'), input,
      h('button', { type: 'submit' }, 'Search'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      location.hash = hashFor('#/jobs', { state, name: input.value.trim() });
    });
    const tbody = h('tbody', { id: 'jobs-body' });
    const table = h('table', { class: 'jobs cards' },
      h('caption', { class: 'sr-only' }, 'Jobs, newest first'),
      h('thead', {}, h('tr', {}, ['Job', 'Package', 'Project', 'State', 'Reproducible', 'Worker',
        'Submitted', 'Duration'].map((c) => h('th', { scope: 'col' }, c)))),
      tbody);
    const err = h('div', { class: 'errors' });
    const more = h('p', { class: 'pager' });
    const updated = h('p', { class: 'muted small', id: 'jobs-updated' });
    main.append(heading('Jobs'), h('nav', { 'aria-label': 'Job state' }, filters), form, err,
      h('div', { class: 'table-wrap' }, table), more, updated);

    const rows = new Map();
    page.every(2000, async () => {
      const q = new URLSearchParams({ limit: '50' });
      if (state) q.set('state', state);
      if (name) q.set('name', name);
      if (cursor) q.set('cursor', cursor);
      const doc = await getJSON(`/api/v1/jobs?${q}`, page.signal);
      if (page.gone) return;
      renderRows(tbody, rows, doc.jobs, jobRow, (j) => j.id);
      if (!doc.jobs.length) {
        replace(tbody, h('tr', {}, h('td', { colspan: '7', class: 'empty' },
          name || state ? 'No job matches.' : 'No jobs yet.')));
        rows.clear();
      }
      replace(more, cursor ? h('a', { href: hashFor('#/jobs', { state, name }) }, '← Newest')
        : null, ' ', doc.next_cursor ? h('a', {
        href: hashFor('#/jobs', { state, name, cursor: String(doc.next_cursor) }),
      }, 'Older →') : null);
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    }, err);
  }

  /* Keep rows whose data did not change (so focus and selection stay), replace the rest. */
  function renderRows(tbody, rows, items, make, key) {
    const seen = new Set();
    const order = [];
    for (const it of items) {
      const k = key(it);
      const sig = JSON.stringify(it);
      seen.add(k);
      let r = rows.get(k);
      if (!r || r.sig !== sig) {
        const tr = make(it);
        if (r) r.tr.replaceWith(tr);
        r = { tr, sig };
        rows.set(k, r);
      }
      order.push(r.tr);
    }
    for (const [k, r] of rows) if (!seen.has(k)) { r.tr.remove(); rows.delete(k); }
    for (const ch of [...tbody.children]) if (!order.includes(ch)) ch.remove();
    const same = order.length === tbody.children.length
      && order.every((tr, i) => tbody.children[i] === tr);
    if (!same) tbody.append(...order);
  }

  function td(label, ...kids) {
    return h('td', { 'data-label': label }, ...kids);
  }

  function jobRow(j) {
    const end = j.finished || (FINAL.has(j.state) ? j.updated : null);
    const dur = j.started ? (end || Date.now()) - j.started : null;
    return h('tr', { 'data-job': j.id, 'data-state': j.state },
      td('Job', jobLink(j.id)),
      td('Package', j.spec_name, j.rerun_of ? h('span', { class: 'muted' },
        ` (rerun ${j.rerun_n} of `, jobLink(j.rerun_of), ')') : null),
      td('Project', j.project || '—'),
      td('State', badge(j.state)),
      td('Reproducible', j.reproducibility ? badge(j.reproducibility, 'verdict') : '—'),
      td('Worker', j.worker || '—'),
      td('Submitted', timeEl(j.created, true)),
      td('Duration', fmtDur(dur)));
  }

  /* ---------------------------------------------------------------------------------- */
  /* One job */

  function jobPage(page, idText, params) {
    if (!/^\d+$/.test(idText)) { notFound(); return; }
    const id = Number(idText);
    const wantAttempt = /^\d+$/.test(params.get('attempt') || '')
      ? Number(params.get('attempt')) : 0;
    setTitle(`Job ${id}`);

    const title = heading(`Job ${id}`);
    const stateEl = h('span', { id: 'job-state' });
    const actions = h('div', { class: 'actions', id: 'job-actions' });
    const status = h('p', { role: 'status', class: 'status', id: 'action-status' });
    const err = h('div', { class: 'errors' });
    const summary = h('dl', { class: 'summary', id: 'job-summary' });
    const placement = h('section', { id: 'placement', hidden: true });
    const attempts = h('section', { id: 'attempts' });
    const logTitle = h('h2', { id: 'log-title' }, 'Log');
    const logState = h('span', { class: 'muted', id: 'log-state' });
    const pre = h('pre', { class: 'log', id: 'log', tabindex: '0', 'aria-label': 'Build log' });
    const autoscroll = h('input', { type: 'checkbox', id: 'log-scroll', checked: true });
    const logSec = h('section', { id: 'log-section' }, logTitle,
      h('p', { class: 'row' }, logState, h('label', { class: 'inline' }, autoscroll,
        ' follow the end')), pre);
    const artifacts = h('section', { id: 'artifacts' });
    const repro = h('section', { id: 'reproducibility' });
    const manifest = h('details', { id: 'manifest' });

    main.append(h('p', { class: 'crumbs' }, h('a', { href: '#/jobs' }, '← Jobs')),
      title, h('div', { class: 'job-head' }, stateEl, actions), status, err, summary,
      placement, logSec, attempts, artifacts, repro, manifest);

    let followed = 0;
    let logPage = null;
    const last = {};
    const changed = (k, v) => {
      const s = JSON.stringify(v);
      if (last[k] === s) return false;
      last[k] = s;
      return true;
    };

    const startLog = (n) => {
      if (logPage) logPage.abort();
      logPage = new AbortController();
      page.signal.addEventListener('abort', () => logPage.abort());
      followed = n;
      pre.textContent = '';
      logTitle.textContent = `Log (attempt ${n})`;
      followLog(id, n, pre, logState, autoscroll, logPage.signal);
    };

    const refresh = async () => {
      const j = await getJSON(`/api/v1/jobs/${id}`, page.signal);
      if (page.gone) return;
      setTitle(`Job ${id} · ${j.spec_name} · ${j.state}`);
      if (changed('head', [j.spec_name, j.state, j.cancel_requested])) {
        replace(title, `Job ${id} `, h('span', { class: 'muted' }, j.spec_name));
        replace(stateEl, badge(j.state), j.cancel_requested && !FINAL.has(j.state)
          ? h('span', { class: 'muted' }, ' cancel requested') : null);
      }
      if (changed('actions', [j.state, token() !== ''])) renderActions(j);
      if (changed('summary', summaryOf(j))) renderSummary(j);
      if (changed('attempts', j.attempt_list)) renderAttempts(j);
      if (changed('artifacts', [j.artifacts, j.sign_key])) renderArtifacts(j);
      if (changed('manifest', j.manifest)) {
        replace(manifest, h('summary', {}, 'Manifest'),
          h('p', { class: 'muted small' }, 'Content key (sha256 of the manifest): ',
            sha(j.content_key)),
          h('pre', { class: 'json', tabindex: '0' }, JSON.stringify(j.manifest, null, 2)));
      }
      const n = wantAttempt || j.attempts;
      if (n && n !== followed) startLog(n);
      if (!n) logState.textContent = 'No attempt yet: the log starts when a worker leases the job.';
      if (j.state === 'queued') {
        placement.hidden = false;
        await renderPlacement(placement, id, page.signal);
      } else {
        placement.hidden = true;
      }
      if (j.reruns || j.reproducibility) {
        if (!FINAL.has(j.state) || j.reproducibility === 'pending' || !last.reproDone) {
          await renderRepro(j);
        }
      } else if (changed('repro', null)) {
        replace(repro);
      }
    };

    const summaryOf = (j) => [j.state, j.project, j.priority, j.arch, j.tags, j.worker, j.attempts,
      j.max_attempts, j.created, j.started, j.finished, j.failure_class, j.message,
      j.sign_key, j.reruns, j.reproducibility, j.rerun_of, j.lease_expires, j.timeout,
      JSON.stringify(j.batch || null)];

    const renderSummary = (j) => {
      const row = (k, ...v) => [h('dt', {}, k), h('dd', {}, ...v)];
      replace(summary,
        row('State', badge(j.state)),
        row('Package spec', j.spec_name),
        row('Project', j.project || '—'),
        row('Priority', String(j.priority)),
        row('Arch', j.arch || 'any'),
        row('Tags', j.tags && j.tags.length ? j.tags.join(', ') : '—'),
        row('Worker', j.worker || '—'),
        row('Attempts', `${j.attempts} of ${j.max_attempts}`),
        row('Submitted', timeEl(j.created)),
        row('Started', timeEl(j.started)),
        row('Finished', timeEl(j.finished)),
        row('Timeout', fmtDur(j.timeout * 1000)),
        j.failure_class ? row('Failure', `${j.failure_class}: ${j.message || ''}`) : null,
        row('Signing key', j.sign_key ? [j.sign_key, ' (', h('a', {
          href: `/api/v1/keys/${encodeURIComponent(j.sign_key)}`,
        }, 'public key'), ')'] : 'none'),
        row('Reruns asked', String(j.reruns)),
        row('Reproducibility', j.reproducibility ? badge(j.reproducibility, 'verdict') : '—'),
        j.rerun_of ? row('Rerun of', jobLink(j.rerun_of), ` (rerun ${j.rerun_n})`) : null,
        j.batch ? row('Batch', h('a', { href: `#/batches/${j.batch.id}`, id: 'job-batch' },
          `#${j.batch.id}`), ` level ${j.batch.level}`,
        j.batch.waiting_for ? [', waits for ', jobLink(j.batch.waiting_for)]
          : j.batch.pending ? `, waits for ${j.batch.pending} more` : '') : null);
    };

    const renderActions = (j) => {
      const tok = token() !== '';
      const btns = [];
      if (tok && !FINAL.has(j.state)) {
        btns.push(h('button', { type: 'button', id: 'cancel-job', class: 'danger',
          onclick: () => act('cancel') }, 'Cancel job'));
      }
      if (tok && (j.state === 'failed' || j.state === 'cancelled') && !j.rerun_of) {
        btns.push(h('button', { type: 'button', id: 'retry-job',
          onclick: () => act('retry') }, 'Retry job'));
      }
      if (!tok && j.state !== 'succeeded') {
        btns.push(h('span', { class: 'muted small' }, 'Paste a token to cancel or retry.'));
      }
      replace(actions, btns);
    };

    const act = async (what) => {
      for (const b of actions.querySelectorAll('button')) b.disabled = true;
      status.textContent = what === 'cancel' ? 'Cancelling…' : 'Retrying…';
      try {
        await api(`/api/v1/jobs/${id}/${what}`, { method: 'POST', json: {}, signal: page.signal });
        status.textContent = what === 'cancel'
          ? 'Cancel requested: a running build stops at its worker\'s next heartbeat.'
          : 'Job queued again.';
        delete last.actions;
        await refresh();
      } catch (e) {
        if (page.gone) return;
        replace(status, errorBox(e));
        for (const b of actions.querySelectorAll('button')) b.disabled = false;
      }
    };

    const renderAttempts = (j) => {
      const list = j.attempt_list || [];
      replace(attempts, h('h2', {}, 'Attempts'), list.length ? h('div', { class: 'table-wrap' },
        h('table', { class: 'cards' }, h('thead', {}, h('tr', {},
          ['#', 'Worker', 'State', 'Started', 'Ended', 'Failure', 'Log']
            .map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, list.map((a) => h('tr', {},
          td('#', String(a.n)), td('Worker', a.worker), td('State', badge(a.state)),
          td('Started', timeEl(a.started)), td('Ended', timeEl(a.ended)),
          td('Failure', a.failure_class ? `${a.failure_class}: ${a.message || ''}` : '—'),
          td('Log', h('a', { href: `#/jobs/${id}?attempt=${a.n}` }, `attempt ${a.n}`),
            ' · ', h('a', { href: a.log }, 'raw')))))))
        : h('p', { class: 'muted' }, 'No attempt yet.'));
    };

    const renderArtifacts = (j) => {
      const list = j.artifacts || [];
      replace(artifacts, h('h2', {}, 'Artifacts'), list.length ? [
        h('p', { class: 'muted small' }, j.sign_key
          ? ['Packages are signed by the scheduler with key ', h('code', {}, j.sign_key),
            '; check them with ', h('code', {}, 'rpmkeys --checksig'), ' after importing ',
            h('a', { href: `/api/v1/keys/${encodeURIComponent(j.sign_key)}` }, 'its public key'),
            '.']
          : 'This job names no signing key: packages are served as the worker built them.'),
        h('div', { class: 'table-wrap' }, h('table', { class: 'cards artifacts' },
          h('thead', {}, h('tr', {}, ['Name', 'Kind', 'Arch', 'Size', 'sha256', 'Signature',
            'Provenance'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, list.map((a) => artifactRow(a, j)))))]
        : h('p', { class: 'muted' }, j.state === 'succeeded' ? 'No artifacts.'
          : 'Artifacts appear when the build succeeds.'));
    };

    const renderRepro = async (j) => {
      let doc;
      try {
        doc = await getJSON(`/api/v1/jobs/${id}/reproducibility`, page.signal);
      } catch (e) {
        if (e.status === 404) {
          if (changed('repro', 'none')) {
            replace(repro, h('h2', {}, 'Reproducibility'), h('p', { class: 'muted' },
              `${j.reruns} rerun(s) asked: they are made when the job succeeds.`));
          }
          return;
        }
        throw e;
      }
      if (page.gone) return;
      last.reproDone = doc.verdict !== 'pending'
        && doc.reruns.every((r) => FINAL.has(r.state));
      if (!changed('repro', doc)) return;
      const report = h('details', { id: 'repro-report' },
        h('summary', {}, 'Diff report (text)'),
        h('pre', { class: 'log', tabindex: '0', id: 'repro-text' }, 'Loading…'));
      report.addEventListener('toggle', async () => {
        if (!report.open) return;
        const out = report.querySelector('pre');
        try {
          const r = await api(`/api/v1/jobs/${id}/reproducibility?format=text`,
            { signal: page.signal });
          out.textContent = await r.text();
        } catch (e) {
          if (!page.gone) replace(out, errorBox(e));
        }
      });
      replace(repro, h('h2', {}, 'Reproducibility'),
        h('p', {}, 'Verdict: ', h('span', { id: 'repro-verdict' }, badge(doc.verdict, 'verdict')),
          ` over ${doc.reruns.length} rerun(s) on other workers or with variations.`),
        doc.reruns.map((r) => h('div', { class: 'rerun' },
          h('h3', {}, `Rerun ${r.n}: `, jobLink(r.job, `job #${r.job}`), ' ',
            badge(r.verdict, 'verdict')),
          h('p', { class: 'muted small' }, `${r.state} on ${r.worker || '(not leased yet)'}`,
            `, original built on ${r.original_worker || '—'}; varies: `,
            (r.variations || []).join(', ') || '—'),
          r.artifacts.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
            h('thead', {}, h('tr', {}, ['Package', 'Verdict', 'Original sha256',
              'Rerun sha256', 'Differences'].map((c) => h('th', { scope: 'col' }, c)))),
            h('tbody', {}, r.artifacts.map((a) => h('tr', {},
              td('Package', a.name), td('Verdict', badge(a.verdict, 'verdict')),
              td('Original sha256', sha(a.original_sha256)),
              td('Rerun sha256', sha(a.rerun_sha256)),
              td('Differences', a.diff && a.diff.files && a.diff.files.length
                ? a.diff.files.join(', ') : a.diff ? 'metadata' : '—'))))))
            : null)),
        report);
    };

    page.every(2000, refresh, err);
  }

  function artifactRow(a, j) {
    const link = h('a', { href: a.url, download: a.name, class: 'download' }, a.name);
    link.addEventListener('click', (ev) => {
      if (!token()) return; /* anonymous reads: a plain link works */
      ev.preventDefault();
      downloadWithToken(a.url, a.name);
    });
    const isPkg = /\.rpm$/.test(a.name);
    const prov = isPkg ? provenanceDetails(a) : '—';
    return h('tr', {},
      td('Name', link),
      td('Kind', a.kind),
      td('Arch', a.arch || '—'),
      td('Size', fmtSize(a.size)),
      td('sha256', sha(a.sha256)),
      td('Signature', a.signed ? [badge('signed', 'sig'), ` by ${j.sign_key || 'the farm key'}`,
        h('div', { class: 'muted small' }, 'unsigned: ', sha(a.unsigned_sha256))]
        : badge('unsigned', 'sig')),
      td('Provenance', prov));
  }

  async function downloadWithToken(url, name) {
    try {
      const r = await api(url);
      const blob = await r.blob();
      const u = URL.createObjectURL(blob);
      const a = h('a', { href: u, download: name, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(u), 10000);
    } catch (e) {
      alert(`Download failed: ${e.message}`); // eslint-disable-line no-alert
    }
  }

  function provenanceDetails(a) {
    const out = h('div', { class: 'prov' }, 'Loading…');
    const d = h('details', { class: 'provenance' }, h('summary', {}, 'Provenance'), out);
    d.addEventListener('toggle', async () => {
      if (!d.open) return;
      const parts = [];
      for (const kind of ['build', 'rerun']) {
        try {
          const env = await getJSON(`/api/v1/artifacts/${a.sha256}/provenance?attestation=${kind}`);
          parts.push(envelopeView(kind, env));
        } catch (e) {
          if (e.status === 404) {
            parts.push(h('p', { class: 'muted small' }, kind === 'build'
              ? 'No build provenance (the job has no signing key, or it is a rerun).'
              : 'No rerun attestation (made once every rerun reproduced the job).'));
          } else {
            parts.push(errorBox(e));
          }
        }
      }
      replace(out, parts);
    });
    return d;
  }

  function envelopeView(kind, env) {
    let statement = null;
    try {
      const bin = atob(env.payload);
      const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
      statement = JSON.parse(new TextDecoder().decode(bytes));
    } catch (_) { /* shown raw */ }
    const sigs = (env.signatures || []).map((s) => s.keyid).join(', ');
    return h('div', { class: 'envelope' },
      h('h4', {}, kind === 'build' ? 'Build provenance (SLSA v1)' : 'Rerun attestation'),
      h('p', { class: 'small' }, 'DSSE envelope signed by key ', h('code', {}, sigs || '—'),
        statement ? [' · predicate ', h('code', {}, statement.predicateType)] : null),
      h('pre', { class: 'json', tabindex: '0' },
        JSON.stringify(statement || env, null, 2)));
  }

  /* Follow an attempt's log through the log endpoint's long poll (?offset=&follow=1). */
  async function followLog(id, n, pre, stateEl, autoscroll, signal) {
    const dec = new TextDecoder();
    let off = 0;
    stateEl.textContent = 'Following…';
    while (!signal.aborted) {
      let r;
      try {
        r = await api(`/api/v1/jobs/${id}/attempts/${n}/log?offset=${off}&follow=1`, { signal });
      } catch (e) {
        if (signal.aborted) return;
        stateEl.textContent = e.status === 404 ? 'Waiting for the log…' : `Log: ${e.message}`;
        await sleep(e.status === 404 ? 1000 : 3000, signal);
        continue;
      }
      let buf;
      try {
        buf = new Uint8Array(await r.arrayBuffer());
      } catch (e) {
        if (signal.aborted) return;
        await sleep(1000, signal);
        continue;
      }
      if (signal.aborted) return;
      off += buf.length;
      if (buf.length) {
        pre.append(document.createTextNode(dec.decode(buf, { stream: true })));
        if (autoscroll.checked) pre.scrollTop = pre.scrollHeight;
      }
      const size = r.headers.get('X-Kiln-Log-Size');
      if (r.headers.get('X-Kiln-Log-Complete') === '1') {
        pre.append(document.createTextNode(dec.decode()));
        stateEl.textContent = `Complete (${fmtSize(Number(size || off))}).`;
        pre.dataset.complete = '1';
        return;
      }
      stateEl.textContent = `Following… ${fmtSize(off)}`;
    }
  }

  async function renderPlacement(el, id, signal) {
    const p = await getJSON(`/api/v1/jobs/${id}/placement`, signal);
    replace(el, h('h2', {}, 'Why is it pending?'), placementView(p));
  }

  function placementView(p) {
    return [
      h('p', { class: 'placement-summary' }, p.summary),
      h('p', { class: 'muted small' }, `${p.queued_ahead} queued job(s) ahead of it.`),
      p.workers && p.workers.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
        h('thead', {}, h('tr', {}, ['Worker', 'Matches', 'Reason', 'Busy']
          .map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, p.workers.map((w) => h('tr', {},
          td('Worker', w.worker), td('Matches', w.matches ? 'yes' : 'no'),
          td('Reason', w.reason), td('Busy', `${w.busy} of ${w.slots}`))))))
        : h('p', { class: 'muted' }, 'No worker has registered.'),
    ];
  }

  /* ---------------------------------------------------------------------------------- */
  /* Queue */

  function queuePage(page) {
    setTitle('Queue');
    const err = h('div', { class: 'errors' });
    const queued = h('div', { id: 'queue-list' });
    const running = h('div', { id: 'running-list' });
    main.append(heading('Queue'), h('p', { class: 'muted' },
      'Queued jobs by priority, then age; workers are shared between projects (the one '
        + 'granted longest ago first), so another project\'s job may go first. ',
      '“Why pending?” asks the scheduler how each worker matches the job.'), err,
    h('h2', {}, 'Queued'), queued, h('h2', {}, 'Running'), running);
    const open = new Map();
    const rows = new Map();
    let body = null;
    page.every(3000, async () => {
      const [q, l, b] = await Promise.all(['queued', 'leased', 'building'].map((s) =>
        getJSON(`/api/v1/jobs?state=${s}&limit=500`, page.signal)));
      if (page.gone) return;
      const list = q.jobs.sort((x, y) => y.priority - x.priority || x.id - y.id);
      if (!list.length) {
        replace(queued, h('p', { class: 'muted', id: 'queue-empty' }, 'Nothing is queued.'));
        body = null;
        rows.clear();
      } else {
        if (!body) {
          body = h('tbody', {});
          replace(queued, h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
            h('thead', {}, h('tr', {}, ['#', 'Job', 'Package', 'Project', 'Priority', 'Needs',
              'Waiting', 'Placement'].map((c) => h('th', { scope: 'col' }, c)))), body)));
        }
        renderRows(body, rows, list.map((j, i) => Object.assign({ pos: i + 1 }, j)),
          (j) => queueRow(j, open, page), (j) => j.id);
        for (const [id, box] of open) {
          if (!rows.has(id)) { open.delete(id); continue; }
          renderPlacement(box, id, page.signal).catch(() => {});
        }
      }
      const act = l.jobs.concat(b.jobs).sort((x, y) => x.id - y.id);
      replace(running, act.length ? h('ul', { class: 'plain' }, act.map((j) => h('li', {},
        jobLink(j.id), ` ${j.spec_name} `, badge(j.state), ` on ${j.worker || '—'} since `,
        timeEl(j.started, true))))
        : h('p', { class: 'muted' }, 'Nothing is running.'));
    }, err);
  }

  function queueRow(j, open, page) {
    const box = h('div', { class: 'placement', id: `placement-${j.id}`, hidden: !open.has(j.id) });
    if (open.has(j.id)) open.set(j.id, box);
    const btn = h('button', {
      type: 'button', class: 'why', 'aria-expanded': open.has(j.id) ? 'true' : 'false',
      'aria-controls': `placement-${j.id}`,
    }, 'Why pending?');
    btn.addEventListener('click', async () => {
      const show = btn.getAttribute('aria-expanded') !== 'true';
      btn.setAttribute('aria-expanded', show ? 'true' : 'false');
      box.hidden = !show;
      if (show) {
        open.set(j.id, box);
        box.textContent = 'Asking the scheduler…';
        try { await renderPlacement(box, j.id, page.signal); } catch (e) { replace(box, errorBox(e)); }
      } else {
        open.delete(j.id);
      }
    });
    const needs = [j.arch ? `arch ${j.arch}` : 'any arch',
      j.tags && j.tags.length ? `tags ${j.tags.join(', ')}` : null].filter(Boolean).join('; ');
    return h('tr', { 'data-job': j.id },
      td('#', String(j.pos)), td('Job', jobLink(j.id)), td('Package', j.spec_name),
      td('Project', j.project || '—'), td('Priority', String(j.priority)), td('Needs', needs),
      td('Waiting', timeEl(j.created, true)), td('Placement', btn, box));
  }

  /* ---------------------------------------------------------------------------------- */
  /* Workers */

  function workersPage(page) {
    setTitle('Workers');
    const err = h('div', { class: 'errors' });
    const list = h('div', { id: 'workers-list' });
    main.append(heading('Workers'), err, list);
    page.every(3000, async () => {
      const [w, l, b] = await Promise.all([getJSON('/api/v1/workers', page.signal),
        getJSON('/api/v1/jobs?state=leased&limit=500', page.signal),
        getJSON('/api/v1/jobs?state=building&limit=500', page.signal)]);
      if (page.gone) return;
      const leases = new Map();
      for (const j of l.jobs.concat(b.jobs)) {
        if (!leases.has(j.worker)) leases.set(j.worker, []);
        leases.get(j.worker).push(j);
      }
      const ws = w.workers || [];
      if (!ws.length) {
        replace(list, h('p', { class: 'muted' }, 'No worker has registered yet. Start one with ',
          h('code', {}, 'kiln worker --scheduler URL --token TOKEN'), '.'));
        return;
      }
      replace(list, h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
        h('thead', {}, h('tr', {}, ['Name', 'State', 'Arches', 'Tags', 'Load', 'Current lease',
          'Last heartbeat', 'Free disk', 'Kernel', 'Version']
          .map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, ws.map((x) => h('tr', { 'data-worker': x.name },
          td('Name', x.name), td('State', badge(x.state, 'worker')),
          td('Arches', (x.arches || []).join(', ') || '—'),
          td('Tags', (x.tags || []).join(', ') || '—'),
          td('Load', h('meter', { min: '0', max: String(x.slots || 1), value: String(x.busy),
            'aria-label': `${x.busy} of ${x.slots} slots busy` }), ` ${x.busy}/${x.slots}`),
          td('Current lease', (leases.get(x.name) || []).length
            ? (leases.get(x.name)).map((j) => [jobLink(j.id), ` ${j.spec_name} `]) : '—'),
          td('Last heartbeat', timeEl(x.last_seen, true)),
          td('Free disk', fmtSize(x.free_disk)), td('Kernel', x.kernel || '—'),
          td('Version', x.version || '—')))))));
    }, err);
  }

  /* ---------------------------------------------------------------------------------- */
  /* Repositories (publishing, issue 11) */

  function repoFields(r) {
    const arches = r.arches || r.arch || [];
    return {
      name: r.name,
      arches: Array.isArray(arches) ? arches : [arches],
      count: r.package_count ?? r.packages ?? r.count,
      published: r.last_publish_ms ?? r.last_publish ?? r.published,
      revision: r.revision,
      url: r.url,
      repoFile: r.repo_file,
      project: r.project,
    };
  }

  function noRepos() {
    return h('div', { class: 'notice', id: 'no-repos' },
      h('strong', {}, 'No repositories endpoint on this scheduler. '),
      h('code', {}, 'GET /api/v1/repos'),
      ' answered 404: this scheduler does not publish repositories.');
  }

  function reposPage(page) {
    setTitle('Repositories');
    const err = h('div', { class: 'errors' });
    const list = h('div', { id: 'repos-list' });
    main.append(heading('Repositories'), err, list);
    page.every(10000, async () => {
      let doc;
      try {
        doc = await getJSON('/api/v1/repos', page.signal);
      } catch (e) {
        if (e.status === 404 || e.status === 405) { replace(list, noRepos()); return; }
        throw e;
      }
      if (page.gone) return;
      const repos = (Array.isArray(doc) ? doc : doc.repos || doc.repositories || []).map(repoFields);
      replace(list, repos.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
        h('thead', {}, h('tr', {}, ['Name', 'Arches', 'Packages', 'Last publish', 'Revision',
          'Served at', 'Project'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, repos.map((r) => h('tr', { 'data-repo': r.name },
          td('Name', h('a', { href: `#/repos/${encodeURIComponent(r.name)}` }, r.name)),
          td('Arches', r.arches.join(', ') || '—'),
          td('Packages', r.count ?? '—'),
          td('Last publish', typeof r.published === 'number' ? timeEl(r.published)
            : r.published || 'never'),
          td('Revision', r.revision ?? '—'),
          td('Served at', r.url ? h('a', { href: r.url }, r.url) : '—'),
          td('Project', r.project || '—'))))))
        : h('p', { class: 'muted' }, 'No repository is configured ([repositories] in the config).'));
    }, err);
  }

  function repoPage(page, name) {
    setTitle(`Repository ${name}`);
    const err = h('div', { class: 'errors' });
    const info = h('div', { id: 'repo-info' });
    const filter = h('input', { type: 'search', id: 'pkg-filter', autocomplete: 'off' });
    const list = h('div', { id: 'repo-packages' });
    main.append(h('p', { class: 'crumbs' }, h('a', { href: '#/repos' }, '← Repositories')),
      heading(`Repository ${name}`), err, info,
      h('p', { class: 'search' }, h('label', { for: 'pkg-filter' }, 'Filter packages'), filter),
      list);
    let pkgs = [];
    const draw = () => {
      const f = filter.value.trim().toLowerCase();
      const shown = pkgs.filter((p) => !f || String(p.nevra || p.name || '').toLowerCase().includes(f));
      replace(list, shown.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
        h('thead', {}, h('tr', {}, ['Package', 'Arch', 'Size', 'sha256', 'Job']
          .map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, shown.map((p) => h('tr', {},
          td('Package', p.nevra || p.name), td('Arch', p.arch || '—'), td('Size', fmtSize(p.size)),
          td('sha256', sha(p.sha256)),
          td('Job', p.job_id || p.job ? jobLink(p.job_id || p.job) : '—'))))))
        : h('p', { class: 'muted' }, pkgs.length ? 'No package matches.' : 'No packages yet.'));
    };
    filter.addEventListener('input', draw);
    page.every(10000, async () => {
      let doc;
      try {
        doc = await getJSON(`/api/v1/repos/${encodeURIComponent(name)}`, page.signal);
      } catch (e) {
        if (e.status === 404) {
          replace(info, e.code === 'not_found' && /repo/i.test(e.message)
            ? h('p', {}, e.message) : noRepos());
          pkgs = [];
          draw();
          return;
        }
        throw e;
      }
      if (page.gone) return;
      const r = repoFields(doc);
      replace(info, h('dl', { class: 'summary' },
        h('dt', {}, 'Project'), h('dd', {}, r.project || '—'),
        h('dt', {}, 'Arches'), h('dd', {}, r.arches.join(', ') || '—'),
        h('dt', {}, 'Revision'), h('dd', {}, String(r.revision ?? '—')),
        h('dt', {}, 'Last publish'), h('dd', {}, typeof r.published === 'number'
          ? timeEl(r.published) : r.published || 'never'),
        r.url ? [h('dt', {}, 'Served at'), h('dd', {}, h('a', { href: r.url }, r.url))] : null,
        r.repoFile ? [h('dt', {}, 'dnf .repo file'),
          h('dd', {}, h('a', { href: r.repoFile }, r.repoFile))] : null));
      pkgs = Array.isArray(doc.packages) ? doc.packages : [];
      draw();
    }, err);
  }

  /* ---------------------------------------------------------------------------------- */
  /* Webhooks (issue 26): forge deliveries in, outgoing webhooks and their delivery logs;
   * the admin scope's */

  function adminOnly(e) {
    if (e.status !== 403 && e.status !== 401) throw e;
    return h('div', { class: 'notice', id: 'webhooks-admin' },
      h('strong', {}, 'The delivery logs need a token with the admin scope. '),
      'Paste one under the token button above.');
  }

  /* What a forge delivery was answered: its jobs, why nothing was built, or the error. */
  function hookAnswer(a) {
    if (a && Array.isArray(a.jobs)) {
      return a.jobs.length ? a.jobs.map((id, i) => [i ? ', ' : '', jobLink(id)]) : 'no job';
    }
    if (a && a.ignored) return `ignored: ${a.ignored}`;
    if (a && a.error) return `error: ${a.error.message}`;
    return '—';
  }

  function webhooksPage(page) {
    setTitle('Webhooks');
    const err = h('div', { class: 'errors' });
    const out = h('div', { id: 'webhooks-list' });
    const inc = h('div', { id: 'hook-deliveries' });
    main.append(heading('Webhooks'), err, h('h2', {}, 'Outgoing'), out,
      h('h2', {}, 'Forge deliveries received'), inc);
    page.every(5000, async () => {
      let w, d;
      try {
        [w, d] = await Promise.all([getJSON('/api/v1/webhooks', page.signal),
          getJSON('/api/v1/hooks/deliveries?limit=50', page.signal)]);
      } catch (e) {
        replace(out, adminOnly(e));
        inc.textContent = '';
        return;
      }
      if (page.gone) return;
      replace(out, w.webhooks.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
        h('thead', {}, h('tr', {}, ['Name', 'URL', 'Events', 'Pending', 'Delivered', 'Failed']
          .map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, w.webhooks.map((x) => h('tr', { 'data-webhook': x.name },
          td('Name', h('a', { href: `#/webhooks/${encodeURIComponent(x.name)}` }, x.name)),
          td('URL', h('code', {}, x.url)), td('Events', x.events.join(', ')),
          td('Pending', String(x.pending)), td('Delivered', String(x.delivered)),
          td('Failed', String(x.failed)))))))
        : h('p', { class: 'muted' }, 'No outgoing webhook is configured ([webhook NAME]).'));
      replace(inc, d.deliveries.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
        h('thead', {}, h('tr', {}, ['Received', 'Forge', 'Delivery', 'Event', 'Project', 'Status',
          'Answer'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, d.deliveries.map((x) => h('tr', { 'data-delivery': x.delivery },
          td('Received', timeEl(x.received_ms, true)), td('Forge', x.forge),
          td('Delivery', h('code', {}, x.delivery)), td('Event', x.event || '—'),
          td('Project', x.project || '—'), td('Status', String(x.status)),
          td('Answer', hookAnswer(x.answer)))))))
        : h('p', { class: 'muted' }, 'No forge delivery has come in yet.'));
    }, err);
  }

  function webhookPage(page, name) {
    setTitle(`Webhook ${name}`);
    const err = h('div', { class: 'errors' });
    const list = h('div', { id: 'webhook-deliveries' });
    main.append(h('p', { class: 'crumbs' }, h('a', { href: '#/webhooks' }, '← Webhooks')),
      heading(`Webhook ${name}`), err, list);
    page.every(3000, async () => {
      let d;
      try {
        d = await getJSON(`/api/v1/webhooks/${encodeURIComponent(name)}/deliveries?limit=100`,
          page.signal);
      } catch (e) {
        if (e.status === 404) { replace(list, h('p', {}, e.message)); return; }
        replace(list, adminOnly(e));
        return;
      }
      if (page.gone) return;
      const what = (ev) => (ev.event === 'publish' ? `${ev.repository} revision ${ev.revision}`
        : ev.job ? [jobLink(ev.job.id), ` ${ev.job.state}`] : '—');
      replace(list, d.deliveries.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
        h('thead', {}, h('tr', {}, ['Event', 'About', 'State', 'Tries', 'Queued', 'Attempts']
          .map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, d.deliveries.map((x) => h('tr', { 'data-event': x.event.id },
          td('Event', h('code', {}, x.event.id)), td('About', what(x.event)),
          td('State', badge(x.state, 'delivery')), td('Tries', String(x.attempts)),
          td('Queued', timeEl(x.created_ms, true)),
          td('Attempts', x.attempt_list.length ? h('ol', { class: 'attempts' },
            x.attempt_list.map((a) => h('li', { 'data-status': String(a.status) },
              timeEl(a.at_ms), ` ${a.status || 'no answer'} `,
              a.answer ? h('span', { class: 'muted' }, a.answer.slice(0, 120)) : null)))
            : 'not tried yet'))))))
        : h('p', { class: 'muted' }, 'No event has been queued for this webhook yet.'));
    }, err);
  }

  /* ---------------------------------------------------------------------------------- */
  /* Batches (docs/batches.md): the graph's levels and each job's state */

  function batchesPage(page) {
    setTitle('Batches');
    const err = h('div', { class: 'errors' });
    const list = h('div', { id: 'batches-list' });
    main.append(heading('Batches'), err, list);
    page.every(5000, async () => {
      const doc = await getJSON('/api/v1/batches?limit=100', page.signal);
      if (page.gone) return;
      const bs = doc.batches || [];
      replace(list, bs.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'cards' },
        h('thead', {}, h('tr', {}, ['Batch', 'State', 'Root', 'Jobs', 'Published', 'Submitted']
          .map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, bs.map((b) => h('tr', { 'data-batch': b.id },
          td('Batch', h('a', { href: `#/batches/${b.id}` }, `#${b.id}`)),
          td('State', badge(b.state)), td('Root', b.root), td('Jobs', b.jobs),
          td('Published', b.publish_state || '—'), td('Submitted', timeEl(b.created, true)))))))
        : h('p', { class: 'muted' }, 'No batch yet (kiln submit --batch).'));
    }, err);
  }

  function batchPage(page, id) {
    setTitle(`Batch ${id}`);
    const err = h('div', { class: 'errors' });
    const info = h('div', { id: 'batch-info' });
    const levels = h('div', { id: 'batch-levels', class: 'levels' });
    main.append(h('p', { class: 'crumbs' }, h('a', { href: '#/batches' }, '← Batches')),
      heading(`Batch ${id}`), err, info, h('h2', {}, 'Levels'), levels);
    page.every(2000, async () => {
      const b = await getJSON(`/api/v1/batches/${encodeURIComponent(id)}`, page.signal);
      if (page.gone) return;
      const byId = new Map(b.jobs.map((j) => [j.id, j]));
      const counts = Object.entries(b.counts || {}).filter(([, n]) => n)
        .map(([st, n]) => `${n} ${st.replace('_', ' ')}`).join(', ');
      replace(info, h('dl', { class: 'summary' },
        h('dt', {}, 'State'), h('dd', {}, badge(b.state)),
        h('dt', {}, 'Root'), h('dd', {}, b.root),
        h('dt', {}, 'Jobs'), h('dd', {}, counts || '—'),
        b.bootstrap ? [h('dt', {}, 'Bootstrap'), h('dd', {}, b.bootstrap)] : null,
        h('dt', {}, 'Repository'), h('dd', {}, h('a', { href: b.repo_url }, b.repo_url)),
        h('dt', {}, 'Publish'), h('dd', {}, b.repository
          ? `${b.repository}: ${b.publish.state || 'when every job succeeded'}` +
            (b.publish.message ? ` (${b.publish.message})` : '') : 'kept in the batch repository'),
        h('dt', {}, 'Submitted'), h('dd', {}, timeEl(b.created))));
      replace(levels, b.levels.map((ids, l) => h('section', { class: 'level', 'data-level': l },
        h('h3', {}, `Level ${l}`),
        h('ul', {}, ids.map((jid) => {
          const j = byId.get(jid) || { id: jid, name: `#${jid}`, depends_on: [] };
          const after = j.depends_on.map((d) => (byId.get(d) || { name: `#${d}` }).name);
          return h('li', { 'data-job': jid },
            jobLink(jid, j.name), ' ', badge(j.state),
            after.length ? h('span', { class: 'muted' }, ` after ${after.join(', ')}`) : null,
            j.message ? h('div', { class: 'muted' }, j.message) : null);
        })))));
    }, err);
  }

  /* ---------------------------------------------------------------------------------- */
  /* Trends: queue depth and reproducible share over time, as inline SVG */

  function trendsPage(page) {
    setTitle('Trends');
    const err = h('div', { class: 'errors' });
    const depth = h('figure', { class: 'chart', id: 'chart-queue' });
    const share = h('figure', { class: 'chart', id: 'chart-repro' });
    const note = h('p', { class: 'muted small' });
    main.append(heading('Trends'), err, depth, share, note);
    let interval = 10000;
    page.every(() => interval, async () => {
      const doc = await getJSON('/api/v1/stats/history', page.signal);
      if (page.gone) return;
      interval = Math.max(2000, Math.min(doc.interval_ms || 10000, 30000));
      const s = doc.samples || [];
      const t = s.map((x) => x.t);
      replace(depth, h('figcaption', {}, 'Queue depth (queued and running jobs)'),
        lineChart(t, [
          { name: 'queued', cls: 'c1', v: s.map((x) => x.queued) },
          { name: 'running', cls: 'c2', v: s.map((x) => x.running) },
        ], { label: 'jobs' }));
      const pct = s.map((x) => {
        const v = x.verdicts || {};
        const done = (v.reproducible || 0) + (v.differs || 0) + (v.rerun_failed || 0)
          + (v.unknown || 0);
        return done ? (100 * (v.reproducible || 0)) / done : null;
      });
      replace(share, h('figcaption', {}, 'Reproducible share (of jobs with a final verdict)'),
        lineChart(t, [{ name: 'reproducible %', cls: 'c3', v: pct }], { label: '%', max: 100 }));
      note.textContent = `${s.length} sample(s), one every ${fmtDur(doc.interval_ms)}; `
        + `the scheduler keeps the last ${doc.max_samples} in memory.`;
    }, err);
  }

  function lineChart(t, series, opt) {
    const W = 640;
    const H = 200;
    const L = 40;
    const B = 24;
    const R = 8;
    const T = 8;
    const vals = series.flatMap((s) => s.v).filter((v) => v !== null);
    if (t.length < 1 || !vals.length) {
      return h('p', { class: 'muted chart-empty' }, 'No samples yet.');
    }
    const max = opt.max || Math.max(1, ...vals);
    const t0 = t[0];
    const t1 = Math.max(t[t.length - 1], t0 + 1);
    const x = (v) => L + ((v - t0) / (t1 - t0)) * (W - L - R);
    const y = (v) => T + (1 - v / max) * (H - T - B);
    const svg = h('svg:svg', {
      viewBox: `0 0 ${W} ${H}`, role: 'img', class: 'chart-svg',
      'aria-label': `${series.map((s) => `${s.name}: latest ${fmtNum(lastOf(s.v))}`).join('; ')}`,
    });
    for (const f of [0, 0.5, 1]) {
      const yy = y(max * f);
      svg.append(h('svg:line', { x1: L, x2: W - R, y1: yy, y2: yy, class: 'grid' }),
        h('svg:text', { x: L - 4, y: yy + 4, class: 'axis', 'text-anchor': 'end' },
          fmtNum(max * f)));
    }
    svg.append(h('svg:text', { x: L, y: H - 6, class: 'axis' }, new Date(t0).toLocaleTimeString()),
      h('svg:text', { x: W - R, y: H - 6, class: 'axis', 'text-anchor': 'end' },
        new Date(t1).toLocaleTimeString()));
    for (const s of series) {
      let d = '';
      let pen = false;
      s.v.forEach((v, i) => {
        if (v === null) { pen = false; return; }
        d += `${pen ? 'L' : 'M'}${x(t[i]).toFixed(1)},${y(v).toFixed(1)} `;
        pen = true;
      });
      if (t.length === 1 && lastOf(s.v) !== null) {
        svg.append(h('svg:circle', { cx: x(t[0]), cy: y(lastOf(s.v)), r: 3, class: `dot ${s.cls}` }));
      }
      if (d) svg.append(h('svg:path', { d, class: `series ${s.cls}` }));
    }
    const legend = h('ul', { class: 'legend' }, series.map((s) => h('li', {},
      h('span', { class: `swatch ${s.cls}`, 'aria-hidden': 'true' }),
      `${s.name}: ${fmtNum(lastOf(s.v))} ${opt.label === '%' ? '%' : ''}`)));
    return [svg, legend];
  }

  function lastOf(v) {
    for (let i = v.length - 1; i >= 0; i--) if (v[i] !== null) return v[i];
    return null;
  }

  function fmtNum(v) {
    if (v === null || v === undefined) return '—';
    return Number.isInteger(v) ? String(v) : v.toFixed(1);
  }

  /* ---------------------------------------------------------------------------------- */
  /* Token and start-up */

  function showToken() {
    const tok = token();
    document.getElementById('token-state').textContent = tok ? 'Token set' : 'Read-only';
    document.getElementById('token-forget').disabled = !tok;
  }

  function init() {
    const form = document.getElementById('token-form');
    const input = document.getElementById('token-input');
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const v = input.value.trim();
      if (v) sessionStorage.setItem(TOKEN_KEY, v);
      input.value = '';
      document.getElementById('token-box').open = false;
      showToken();
      navigate(false);
    });
    document.getElementById('token-forget').addEventListener('click', () => {
      sessionStorage.removeItem(TOKEN_KEY);
      showToken();
      navigate(false);
    });
    document.getElementById('skip').addEventListener('click', () => {
      const t = document.getElementById('page-title') || main;
      t.focus();
    });
    window.addEventListener('hashchange', () => navigate(true));
    fetch('/api/v1/health', { cache: 'no-store' }).then((r) => r.json()).then((d) => {
      document.getElementById('version').textContent = `kiln ${d.version} · store ${d.store}`;
    }).catch(() => {});
    showToken();
    if (!location.hash) history.replaceState(null, '', '#/jobs');
    navigate(false);
  }

  init();
})();
