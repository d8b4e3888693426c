// CLEO dashboard: entry point. Loads /api/info (or asks for the token), routes between the views
// (#board, #epics, #plans, #sessions, #memory, #activity, #charts, #health), keeps one EventSource on /events and
// re-fetches only what is on screen when the store changes (debounced; never on a timer).
import {
  state, $, $$, query, setAuthHandler, setOpenTask, showError, clearError, announce,
} from './core.js';
import { board } from './board.js';
import { detail } from './detail.js';
import { epicsView, sessionsView, memoryView, activityView, healthView, chartsView } from './views.js';
import { plansView } from './plans.js';

const views = {
  board,
  epics: epicsView,
  plans: plansView,
  sessions: sessionsView,
  memory: memoryView,
  activity: activityView,
  charts: chartsView,
  health: healthView,
};

// ---------------------------------------------------------------------------------------------
// Start, and the token form

async function boot() {
  let res;
  try {
    res = await fetch('/api/info', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  } catch {
    showError({ code: 'E_NETWORK', message: 'The server cannot be reached', fix: 'Start it with `ct serve`, then reload.' });
    return;
  }
  if (res.status === 401) { showLogin(); return; }
  let info = null;
  try { info = await res.json(); } catch { /* handled below */ }
  if (!res.ok || !info) {
    showError({ code: `E_HTTP_${res.status}`, message: 'GET /api/info failed' });
    return;
  }
  state.info = info;
  $('[data-testid=login]').hidden = true;
  $('[data-testid=nav]').hidden = false;
  $('[data-testid=project]').textContent = info.project || '';
  $('[data-testid=version]').textContent = info.version ? `v${info.version}` : '';
  const mode = $('[data-testid=mode]');
  mode.hidden = false;
  // Changes are a person's: the server's token only reads (a person signs in with the code ct serve
  // printed, or a person key).
  const canWrite = !!info.write && !!info.person;
  mode.textContent = canWrite ? 'Write mode' : info.write ? 'Read-only until you sign in as a person' : 'Read-only';
  mode.className = `badge mode ${canWrite ? 'mode-write' : 'mode-ro'}`;
  mode.title = canWrite ? 'Changes made here are recorded as human@dashboard, with your person'
    : info.write ? 'Sign in as a person to change tasks, approve or verify'
      : 'Started without --dashboard-write: nothing can be changed here';
  document.body.classList.toggle('can-write', canWrite);
  $('[data-testid=person-login]').hidden = !info.write || !!info.person;
  $('[data-testid=logout]').hidden = !info.auth && !info.person;
  await loadShared();
  route();
  connectEvents();
}

function showLogin() {
  if (es) { es.close(); es = null; }
  $('[data-testid=logout]').hidden = true;
  $('[data-testid=person-login]').hidden = true;
  state.info = null;
  $$('.view').forEach((v) => { v.hidden = true; });
  $('[data-testid=nav]').hidden = true;
  detail.close(false);
  const sec = $('[data-testid=login]');
  const first = sec.hidden;
  sec.hidden = false;
  setLive('off', 'Signed out');
  if (first) $('[data-testid=login-token]').focus();
}

$('[data-testid=login-form]').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = $('[data-testid=login-token]');
  const err = $('[data-testid=login-error]');
  const btn = $('[data-testid=login-submit]');
  err.hidden = true;
  if (!input.value) { err.textContent = 'Enter the token, code or key.'; err.hidden = false; input.focus(); return; }
  btn.disabled = true;
  let res = null;
  try {
    res = await fetch('/api/login', {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: input.value }),
    });
  } catch { /* below */ }
  btn.disabled = false;
  if (res && res.ok) {
    input.value = '';
    await boot();
    announce('Signed in');
    return;
  }
  err.textContent = res && res.status === 401 ? 'That was refused (a one-use code works once).' : 'The server cannot be reached.';
  err.hidden = false;
  input.select();
  input.focus();
});

setAuthHandler(showLogin);

$('[data-testid=person-login]').addEventListener('click', () => showLogin());

$('[data-testid=logout]').addEventListener('click', async () => {
  await fetch('/api/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => null);
  $('[data-testid=logout]').hidden = true;
  showLogin();
  announce('Signed out');
});

// ---------------------------------------------------------------------------------------------
// Data every view uses: sessions (who holds which task) and the epics

export async function loadShared() {
  const [sess, epics] = await Promise.allSettled([
    query('session.list', { detail: 'full', limit: 200 }),
    query('tasks.list', { type: 'epic', limit: 100, fields: ['id', 'title', 'status', 'priority'], sort: 'position' }),
  ]);
  if (sess.status === 'fulfilled') {
    const order = { active: 0, suspended: 1, ended: 2, closed: 3 };
    state.sessions = (sess.value.data || []).slice().sort((a, b) =>
      (order[a.status] ?? 9) - (order[b.status] ?? 9) || String(b.updatedAt).localeCompare(String(a.updatedAt)));
    state.sessionsMore = !!sess.value._meta?.page?.hasMore;
    state.holders = new Map();
    for (const x of state.sessions) {
      if (x.focus && (x.status === 'active' || x.status === 'suspended') && !state.holders.has(x.focus)) state.holders.set(x.focus, x);
    }
  } else showError(sess.reason, 'Loading the sessions');
  if (epics.status === 'fulfilled') state.epics = Array.isArray(epics.value.data) ? epics.value.data : [];
  else showError(epics.reason, 'Loading the epics');
}

// ---------------------------------------------------------------------------------------------
// Views

function route() {
  if (!state.info) return;
  const name = (location.hash || '#board').slice(1).split('/')[0];
  const view = views[name] ? name : 'board';
  state.view = view;
  for (const [k] of Object.entries(views)) $(`#view-${k}`).hidden = k !== view;
  for (const a of $$('[data-view]')) {
    if (a.dataset.view === view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${view[0].toUpperCase()}${view.slice(1)} · CLEO dashboard`;
  views[view].lastRefresh = Date.now();
  Promise.resolve().then(() => views[view].show()).catch((e) => showError(e, `Loading ${view}`));
}
window.addEventListener('hashchange', () => { clearError(); route(); });

// ---------------------------------------------------------------------------------------------
// Live updates

let es = null;
let refreshTimer = 0;
let refreshing = false;
let again = false;
let retryTimer = 0;

function setLive(st, text) {
  const el = $('[data-testid=live]');
  el.dataset.state = st;
  el.querySelector('.live-text').textContent = text;
  el.title = st === 'live' ? 'Live: the page follows every change to the store' : text;
}

function connectEvents() {
  if (es) return;
  clearTimeout(retryTimer);
  setLive('connecting', 'Connecting…');
  es = new EventSource('/events');
  es.addEventListener('hello', () => {
    setLive('live', 'Live');
    // The feed greets a listener only after reading the change signal, so data read from now on
    // misses nothing; what the page loaded before (at start, or before a reconnection) may have.
    scheduleRefresh();
  });
  es.addEventListener('change', () => scheduleRefresh());
  es.addEventListener('open', () => setLive('live', 'Live'));
  es.addEventListener('error', () => {
    if (!es) return;
    if (es.readyState === EventSource.CLOSED) {
      // The browser gave up (an HTTP error, e.g. 401): check the session, then try again.
      es.close();
      es = null;
      setLive('off', 'Disconnected');
      retryTimer = setTimeout(async () => {
        const r = await fetch('/api/info', { credentials: 'same-origin' }).catch(() => null);
        if (r && r.status === 401) showLogin();
        else if (state.info) connectEvents();
      }, 3000);
    } else {
      setLive('reconnecting', 'Reconnecting…');
    }
  });
}

/** A change happened: re-fetch what is on screen (the server already coalesces; this debounces bursts). */
export function scheduleRefresh(delay = 120) {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refreshNow, delay);
}

let trailingTimer = 0;

async function refreshNow() {
  if (!state.info) return;
  if (refreshing) { again = true; return; }
  refreshing = true;
  try {
    await loadShared();
    // A view with minInterval (the expensive ones) is refreshed at most that often, and once
    // more after the last change.
    const view = views[state.view];
    const wait = (view.minInterval || 0) - (Date.now() - (view.lastRefresh || 0));
    const jobs = [];
    if (wait <= 0) {
      view.lastRefresh = Date.now();
      jobs.push(view.refresh());
    } else {
      clearTimeout(trailingTimer);
      trailingTimer = setTimeout(() => { if (views[state.view] === view) scheduleRefresh(0); }, wait);
    }
    if (state.detailId) jobs.push(detail.refresh());
    await Promise.all(jobs);
  } catch (e) {
    showError(e, 'Refreshing');
  } finally {
    refreshing = false;
    if (again) { again = false; scheduleRefresh(50); }
  }
}

// ---------------------------------------------------------------------------------------------
// Task detail and keys

setOpenTask((id, opener) => detail.open(id, opener));
detail.onChanged = () => scheduleRefresh(0);

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && state.detailId && !e.defaultPrevented) {
    e.preventDefault();
    detail.close(true);
  }
});
$('[data-action=close-detail]').addEventListener('click', () => detail.close(true));

boot();
