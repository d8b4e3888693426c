// Shared pieces of the CLEO dashboard: DOM builders (text only, never HTML), the /api client,
// the page state, formatting and the little message area. No data string ever reaches innerHTML.

export const state = {
  info: null,            // /api/info: {write, auth, version, project}
  view: 'board',
  sessions: [],          // session.list rows (detail full), active first
  holders: new Map(),    // task id -> active session holding it (its focus)
  epics: [],             // [{id,title,status,priority}]
  detailId: null,
};

// ---------------------------------------------------------------------------------------------
// DOM

/** An element: h('div', {class:'x', text:'…', onclick: fn, dataset:{id:'T1'}}, child, 'text'…). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';
/** An SVG element, same calling convention as h. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(el, attrs, children) {
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.setAttribute('class', v);
      else if (k === 'text') el.textContent = String(v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

/** Replaces the children of el. */
export function fill(el, ...children) {
  el.replaceChildren();
  build(el, null, children);
  return el;
}

// ---------------------------------------------------------------------------------------------
// API

export class ApiError extends Error {
  constructor(error, envelope) {
    super(error?.message || error?.code || 'request failed');
    this.code = error?.code || 'E_UNKNOWN';
    this.fix = error?.fix || '';
    this.details = error?.details;
    this.envelope = envelope;
  }
}
export class AuthRequired extends Error {}

/** Advice as the server sends it to the page (a fix, a check's remedy): text, or its parts — text
 *  and calls {operation, params?} — each call shown as its operation and params. */
export function adviceText(advice) {
  if (!Array.isArray(advice)) return advice || '';
  return advice.map((part) => (typeof part === 'string' ? part
    : part.params === undefined ? part.operation : `${part.operation} ${JSON.stringify(part.params)}`)).join('');
}

let onAuthRequired = () => {};
export function setAuthHandler(fn) { onAuthRequired = fn; }

/** POST /api; resolves to the operation's envelope ({success, data, _meta} or {success:false, error}). */
export async function call(gateway, op, params = {}) {
  const dot = op.indexOf('.');
  const body = { gateway, domain: op.slice(0, dot), operation: op.slice(dot + 1), params };
  let res;
  try {
    res = await fetch('/api', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError({ code: 'E_NETWORK', message: 'The server cannot be reached', fix: 'Is `ct serve` still running?' });
  }
  if (res.status === 401) {
    onAuthRequired();
    throw new AuthRequired('token required');
  }
  let env = null;
  try { env = await res.json(); } catch { /* not JSON */ }
  if (!env || typeof env !== 'object') {
    throw new ApiError({ code: 'E_HTTP_' + res.status, message: `The server answered HTTP ${res.status}` });
  }
  if (env.success === undefined && env.error) {
    throw new ApiError({ code: 'E_HTTP_' + res.status, message: typeof env.error === 'string' ? env.error : env.error.message });
  }
  return env;
}

/** A read: the data of a successful reply, else throws ApiError. */
export async function query(op, params) {
  const env = await call('query', op, params);
  if (!env.success) throw new ApiError(env.error, env);
  return env;
}

/** A write: the envelope of a successful reply, else throws ApiError (E_MUTATION_DISABLED …). */
export async function mutate(op, params) {
  const env = await call('mutate', op, params);
  if (!env.success) throw new ApiError(env.error, env);
  return env;
}

/** The total row count of a paged reply (the page's total — tasks.find's lower bound `totalAtLeast` when it
 *  stopped counting — else what came back). */
export function totalOf(env, offset = 0) {
  const page = env?._meta?.page;
  if (page && typeof page.total === 'number') return page.total;
  if (page && typeof page.totalAtLeast === 'number') return page.totalAtLeast;
  const n = Array.isArray(env?.data) ? env.data.length : (env?.data?.rows?.length ?? 0);
  return offset + n;
}

/** tasks.find's {columns, rows, every} as objects. */
export function findRows(data) {
  if (!data || !Array.isArray(data.rows)) return Array.isArray(data) ? data : [];
  const cols = data.columns || [];
  return data.rows.map(r => {
    const o = Object.assign({}, data.every || {});
    cols.forEach((c, i) => { if (r[i] !== null && r[i] !== undefined) o[c] = r[i]; });
    return o;
  });
}

/** Runs fn over items with at most n in flight. */
export async function pool(items, n, fn) {
  const out = new Array(items.length);
  let i = 0;
  const workers = Array.from({ length: Math.min(n, items.length) }, async () => {
    while (i < items.length) { const k = i++; out[k] = await fn(items[k], k); }
  });
  await Promise.all(workers);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Formatting

export const STATUSES = ['pending', 'active', 'blocked', 'done'];
export const STATUS_LABEL = { pending: 'Pending', active: 'Active', blocked: 'Blocked', done: 'Done', cancelled: 'Cancelled' };

export function fmtTime(iso, seconds = false) {
  if (!iso) return '';
  const d = new Date(iso);
  if (isNaN(d)) return String(iso);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: seconds ? '2-digit' : undefined });
}

export function ago(iso, now = Date.now()) {
  if (!iso) return '';
  const t = Date.parse(iso);
  if (isNaN(t)) return '';
  let sec = Math.max(0, Math.round((now - t) / 1000));
  if (sec < 45) return 'just now';
  const m = Math.round(sec / 60);
  if (m < 60) return `${m} min ago`;
  const hrs = Math.round(m / 60);
  if (hrs < 48) return `${hrs} h ago`;
  return `${Math.round(hrs / 24)} d ago`;
}

export function duration(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (isNaN(t)) return '';
  const m = Math.max(0, Math.floor((now - t) / 60000));
  if (m < 1) return '< 1 min';
  if (m < 60) return `${m} min`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return `${hrs} h ${m % 60} min`;
  return `${Math.floor(hrs / 24)} d ${hrs % 24} h`;
}

export function statusBadge(status) {
  return h('span', { class: `badge st-${status || 'none'}`, text: STATUS_LABEL[status] || status || '?' });
}

export function priorityBadge(p, always = false) {
  if (!p || (p === 'medium' && !always)) return null;
  return h('span', { class: `badge pr-${p}`, title: `Priority: ${p}`, text: p });
}

/** A button that opens a task's detail. */
let openTaskFn = () => {};
export function setOpenTask(fn) { openTaskFn = fn; }
export function openTask(id, opener) { openTaskFn(id, opener); }
export function taskLink(id, title) {
  return h('button', {
    type: 'button', class: 'link task-link', dataset: { task: id }, 'data-testid': 'task-link',
    onclick: (e) => openTask(id, e.currentTarget),
  }, h('span', { class: 'mono', text: id }), title ? ` ${title}` : '');
}

// ---------------------------------------------------------------------------------------------
// Messages

/** Shows an error (message, and its fix when the server gave one) at the top of the page. */
export function showError(err, context) {
  if (err instanceof AuthRequired) return;
  const box = $('[data-testid=error]');
  const code = err?.code ? `${err.code}: ` : '';
  fill(box,
    h('div', { class: 'error-text' },
      h('strong', { text: context ? `${context} failed. ` : 'Error. ' }),
      h('span', { 'data-testid': 'error-message', text: code + (err?.message || String(err)) })),
    err?.fix ? h('div', { class: 'error-fix' }, 'Fix: ', h('code', { 'data-testid': 'error-fix', text: adviceText(err.fix) })) : null,
    h('button', { type: 'button', class: 'icon', 'aria-label': 'Dismiss the error', text: '✕', onclick: clearError }));
  box.hidden = false;
}
export function clearError() {
  const box = $('[data-testid=error]');
  box.hidden = true;
  box.replaceChildren();
}

let toastTimer = 0;
/** Says something politely (aria-live) and shows it briefly. */
export function announce(text) {
  const t = $('[data-testid=live-region]');
  t.textContent = text;
  t.classList.add('show');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove('show'), 3500);
}

/** Says something to screen readers only (live updates that need no toast). */
export function say(text) {
  const el = $('[data-testid=sr-live]');
  el.textContent = '';
  setTimeout(() => { el.textContent = text; }, 50);
}

/** Whether this viewer may change things: the server takes changes (--dashboard-write) and they
 *  signed in as a person (the server refuses the writes of the token's reader). */
export function isWrite() { return !!state.info?.write && !!state.info?.person; }

/** Writes are made with this helper: error shown with its fix, success announced. */
export async function write(op, params, doneText) {
  try {
    const env = await mutate(op, params);
    clearError();
    if (doneText) announce(doneText);
    return env;
  } catch (e) {
    showError(e, op);
    return null;
  }
}

/** A small empty-state paragraph. */
export function empty(text) { return h('p', { class: 'empty muted', text }); }
