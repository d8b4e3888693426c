// End-to-end tests of the web dashboard of `ct serve` in a real browser: Debian's Chromium,
// headless, driven by playwright-core. Every check seeds its own temporary project with the `ct`
// CLI, starts `ct-serve serve --project DIR --port 0` (ct-serve lies next to ct), drives the page
// and saves a screenshot of what it saw in the artifacts directory.
//
//   node dashboard.test.mjs --ct /path/to/ct [--artifacts DIR] [--only NAME[,NAME…]] [--keep]
//
// One line per check ("ok   …" or "FAIL …"), then "N passed, M failed". Exit status: 0 when every
// check passed, 1 otherwise, 77 when /usr/bin/chromium is missing (skipped), 2 on bad arguments.
// CLEO_DASHBOARD_DIR, when set, is handed to the servers (serve the page from that directory
// instead of the copy embedded at build time).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const CHECK_MS = 25_000;    // one check
const LIVE_MS = 3_000;      // a change made elsewhere must show within this
const ROW_H = 92;           // the board's row height (gateway/dashboard/board.js)

// ---------------------------------------------------------------------------------------------
// Arguments

const usage = 'usage: node dashboard.test.mjs --ct /path/to/ct [--artifacts DIR] [--only NAME,…] [--keep]';
let ct = null;
let artifacts = path.join(here, 'artifacts');
let only = null;
let keep = false;
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--ct') ct = argv[++i];
    else if (a.startsWith('--ct=')) ct = a.slice(5);
    else if (a === '--artifacts') artifacts = argv[++i];
    else if (a.startsWith('--artifacts=')) artifacts = a.slice(12);
    else if (a === '--only') only = new Set(argv[++i].split(','));
    else if (a === '--keep') keep = true;
    else if (a === '-h' || a === '--help') { console.log(usage); process.exit(0); }
    else { console.error(`dashboard.test: unknown argument '${a}'\n${usage}`); process.exit(2); }
  }
  if (!ct) { console.error(`dashboard.test: --ct is required\n${usage}`); process.exit(2); }
  ct = path.resolve(ct);
  artifacts = path.resolve(artifacts);
}
const ctServe = path.join(path.dirname(ct), 'ct-serve');
for (const [what, file] of [['ct', ct], ['ct-serve', ctServe]]) {
  if (!fs.existsSync(file)) { console.error(`dashboard.test: ${what} not found at ${file}`); process.exit(2); }
}
if (!fs.existsSync(CHROMIUM)) {
  console.log(`SKIP dashboard browser tests: ${CHROMIUM} is missing (apt-get install chromium)`);
  process.exit(77);
}
const { chromium } = await import('playwright-core');
fs.mkdirSync(artifacts, { recursive: true });

// ---------------------------------------------------------------------------------------------
// Temporary directories, children, the environment they get

const tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-dashboard-'));
const home = path.join(tempRoot, 'home');
fs.mkdirSync(home);
// A person key listed in the home (tests/support/person_key_fixture.h): ct run here speaks as a
// person's script, and the page signs in as a person with it where the server takes changes.
const PERSON_KEY = 'ctpk_7e577e577e577e577e577e577e577e577e577e577e577e577e577e577e577e57';
fs.mkdirSync(path.join(home, '.config', 'cleo'), { recursive: true });
fs.writeFileSync(path.join(home, '.config', 'cleo', 'person-keys.json'),
  JSON.stringify({ keys: [{ name: 'tests', sha256: crypto.createHash('sha256').update(PERSON_KEY).digest('hex'), createdAt: '2026-01-01T00:00:00Z' }] }),
  { mode: 0o600 });
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CLEO_') && k !== 'CT_PERSON_KEY'));
childEnv.HOME = home;
childEnv.CT_PERSON_KEY = PERSON_KEY;
childEnv.NO_COLOR = '1';
const serverEnv = { ...childEnv };
if (process.env.CLEO_DASHBOARD_DIR) serverEnv.CLEO_DASHBOARD_DIR = process.env.CLEO_DASHBOARD_DIR;

const children = new Set();
function cleanup() {
  for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } }
  if (!keep) fs.rmSync(tempRoot, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { cleanup(); process.exit(130); });

let dirCount = 0;
function projectDir(label, plain = false) {
  const dir = path.join(tempRoot, plain ? label : `${++dirCount}-${label}`);
  fs.mkdirSync(dir);
  ctRun(dir, 'init');
  return dir;
}

/** Runs ct in dir; the parsed --json envelope (throws when it did not succeed). */
function ctRun(dir, ...args) {
  const r = spawnSync(ct, ['--project', dir, '--json', ...args], { env: childEnv, encoding: 'utf8', timeout: 20_000, maxBuffer: 64 << 20 });
  let env = null;
  try { env = JSON.parse(r.stdout); } catch { /* below */ }
  if (!env || !env.success) {
    throw new Error(`ct ${args.join(' ')} failed (exit ${r.status}): ${(r.stdout || r.stderr || '').slice(0, 400)}`);
  }
  return env;
}

function importTasks(dir, records) {
  const file = path.join(dir, `import-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify(records));
  const env = ctRun(dir, 'import', `@${file}`);
  fs.rmSync(file);
  return env.data.idMap;
}

/** Starts ct-serve on a free port; resolves to {url, port, stop()}. */
function startServer(dir, flags = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(ctServe, ['serve', '--project', dir, '--port', '0', ...flags], { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(proc);
    let stderr = '';
    proc.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`ct-serve did not start in 10 s: ${stderr}`)); }, 10_000);
    proc.on('exit', (code) => { children.delete(proc); clearTimeout(timer); reject(new Error(`ct-serve exited (${code}): ${stderr}`)); });
    const rl = readline.createInterface({ input: proc.stdout });
    rl.on('line', (line) => {
      const m = /CLEO MCP server: http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(line);
      if (!m) return;
      clearTimeout(timer);
      const port = Number(m[1]);
      resolve({
        port,
        url: `http://127.0.0.1:${port}/`,
        stop: () => new Promise((res) => {
          if (proc.exitCode !== null || proc.signalCode) { res(); return; }
          const kill = setTimeout(() => proc.kill('SIGKILL'), 5000);
          proc.once('exit', () => { clearTimeout(kill); children.delete(proc); res(); });
          proc.kill('SIGTERM');
        }),
      });
    });
  });
}

/** One cleo_mutate call as an agent makes it: over the server's /mcp, in an MCP session of its own
 *  (the client's name is the agent's). */
async function agentMutate(server, domain, operation, params, client = 'memory-agent') {
  let session = null;
  const post = async (message) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (session) Object.assign(headers, { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' });
    const res = await fetch(`${server.url}mcp`, { method: 'POST', headers, body: JSON.stringify(message) });
    session = session || res.headers.get('mcp-session-id');
    const text = await res.text();
    return text ? JSON.parse(text.startsWith('event:') || text.startsWith('data:') ? /^data: (.*)$/m.exec(text)[1] : text) : null;
  };
  await post({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: client, version: '1' } } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const reply = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call',
    params: { name: 'cleo_mutate', arguments: { domain, operation, params } } });
  const envelope = reply?.result?.structuredContent;
  if (!envelope?.success) throw new Error(`${domain}.${operation} over /mcp failed: ${JSON.stringify(reply).slice(0, 400)}`);
  return envelope;
}

// ---------------------------------------------------------------------------------------------
// Seed data

/** A small realistic project: an epic with children in every state, two agents at work. */
function seedProject(dir) {
  const ids = importTasks(dir, [
    { id: 'E1', title: 'Launch the live dashboard', type: 'epic', priority: 'high', description: 'A web page over ct serve' },
    { id: 'A', parent: 'E1', title: 'Design the board layout', labels: ['ui'], status: 'done', notes: [{ at: '2026-01-05T10:00:00Z', text: 'Mock-ups approved by the team' }] },
    { id: 'B', parent: 'E1', title: 'Stream changes over SSE', labels: ['api'], priority: 'high', depends: ['A'] },
    { id: 'C', parent: 'E1', title: 'Wait for the security review', labels: ['api'], status: 'blocked', blockedBy: 'security review by the platform team' },
    { id: 'D', parent: 'E1', title: 'Write the user guide', labels: ['docs'], priority: 'low', depends: ['B'] },
    { id: 'F', parent: 'E1', title: 'Keyboard navigation', labels: ['ui', 'a11y'] },
    { id: 'G', parent: 'E1', title: 'Virtualise the columns', labels: ['ui', 'perf'], priority: 'critical' },
    { id: 'H', title: 'Fix the flaky CI job', labels: ['ci'], priority: 'high' },
    { id: 'I', title: 'Upgrade SQLite', labels: ['deps'], status: 'done' },
  ]);
  const alice = ctRun(dir, 'session', 'start', '--scope', `epic:${ids.E1}`, '--agent', 'alice', '--name', 'dashboard work', '--focus', ids.B).data.id;
  ctRun(dir, '--session', alice, 'update', ids.B, '--notes', 'EventSource wired to /events', '--reason', 'progress report');
  const bob = ctRun(dir, 'session', 'start', '--scope', 'global', '--agent', 'bob', '--focus', ids.H).data.id;
  return { ids, alice, bob };
}

/** The ids of every task per board column, from the CLI. */
function expectedColumns(dir) {
  const out = { pending: [], active: [], blocked: [], done: [] };
  for (const t of ctRun(dir, 'list', '--limit', '500', '--fields', 'id,status').data) if (out[t.status]) out[t.status].push(t.id);
  for (const k of Object.keys(out)) out[k].sort();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Browser

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});

/** A fresh browser context and page; console errors and page errors are collected. */
async function openPage(server, { allow = [], person = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', reducedMotion: 'reduce' });
  // Signed in as a person (the person key): the server's token only reads.
  if (person) {
    const res = await context.request.post(`${server.url}api/login`, { data: { token: PERSON_KEY } });
    if (!res.ok()) throw new Error(`person login: ${res.status()}`);
  }
  const page = await context.newPage();
  page.setDefaultTimeout(8000);
  const errors = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const text = m.text();
    if (allow.some((re) => re.test(text))) return;
    errors.push(`console: ${text}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => {
    // A stream the page had open while the context closes is not an error of the page.
    if (!/\/events$/.test(r.url())) errors.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  const close = async () => { await context.close().catch(() => {}); };
  return { page, context, errors, close, goto: (p = '') => page.goto(server.url + p) };
}

/** The mode badge once /api/info has answered (the page fills it in then). */
async function modeOf(page) {
  await page.waitForFunction(() => (document.querySelector('[data-testid=mode]')?.textContent || '') !== '');
  return page.textContent('[data-testid=mode]');
}

const shot = (page, name, opts = {}) => page.screenshot({ path: path.join(artifacts, `${name}.png`), ...opts });

/** The ids of the cards in one column's DOM. */
const columnIds = (page, status) => page.$$eval(`[data-testid=col-${status}] [data-testid=card]`, (els) => els.map((e) => e.dataset.id).sort());

async function waitColumns(page, expected, timeout = 5000) {
  await page.waitForFunction((exp) => {
    for (const [st, ids] of Object.entries(exp)) {
      const got = Array.from(document.querySelectorAll(`[data-testid=col-${st}] [data-testid=card]`)).map((e) => e.dataset.id).sort();
      if (JSON.stringify(got) !== JSON.stringify(ids)) return false;
    }
    return true;
  }, expected, { timeout }).catch(async () => {
    const got = {};
    for (const st of Object.keys(expected)) got[st] = await columnIds(page, st);
    assert.deepEqual(got, expected, 'board columns');
  });
}

const cardSel = (id) => `[data-testid=card][data-id="${id}"]`;
const noErrors = (errors) => assert.deepEqual(errors, [], 'console errors');

// ---------------------------------------------------------------------------------------------
// Checks

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

check('load', async () => {
  const dir = projectDir('load');
  seedProject(dir);
  const want = expectedColumns(dir);
  const server = await startServer(dir);
  const p = await openPage(server);
  try {
    await p.goto();
    await waitColumns(p.page, want);
    for (const st of Object.keys(want)) {
      assert.equal(await p.page.textContent(`[data-testid=count-${st}]`), String(want[st].length), `${st} count`);
    }
    await p.page.waitForSelector('[data-testid=live][data-state=live]');
    // Priority, blockers and what a task waits on are on the cards.
    const blocked = await p.page.textContent(`[data-testid=col-blocked] [data-testid=card]`);
    assert.match(blocked, /security review by the platform team/);
    assert.match(await p.page.textContent(`[data-testid=col-pending] [data-testid=card]:has-text("user guide")`), /Waits on T\d+/);
    assert.match(await p.page.textContent(`[data-testid=col-pending] [data-testid=card]:has-text("Virtualise")`), /critical/);
    assert.match(await p.page.textContent(`[data-testid=col-active] [data-testid=card]:has-text("SSE")`), /alice/);
    assert.equal(await modeOf(p.page), 'Read-only');
    await shot(p.page, 'load');
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('filter', async () => {
  const dir = projectDir('filter');
  const { ids, alice } = seedProject(dir);
  const server = await startServer(dir);
  const p = await openPage(server);
  try {
    await p.goto();
    await p.page.waitForSelector(cardSel(ids.H));
    await p.page.fill('[data-testid=filter-label]', 'ui');
    await waitColumns(p.page, { pending: [ids.F, ids.G].sort(), active: [], blocked: [], done: [ids.A] });
    await shot(p.page, 'filter-label');
    await p.page.fill('[data-testid=filter-label]', '');
    await p.page.fill('[data-testid=filter-text]', 'security');
    await waitColumns(p.page, { pending: [], active: [], blocked: [ids.C], done: [] });
    await shot(p.page, 'filter-text');
    // Text and label together: the search keeps the label filter.
    await p.page.fill('[data-testid=filter-text]', 'the');
    await p.page.fill('[data-testid=filter-label]', 'ui');
    await waitColumns(p.page, { pending: [ids.G], active: [], blocked: [], done: [ids.A] });
    await shot(p.page, 'filter-text-label');
    await p.page.fill('[data-testid=filter-label]', '');
    await p.page.fill('[data-testid=filter-text]', '');
    await p.page.selectOption('[data-testid=filter-epic]', ids.E1);
    await waitColumns(p.page, { pending: [ids.D, ids.F, ids.G].sort(), active: [ids.B], blocked: [ids.C], done: [ids.A] });
    await shot(p.page, 'filter-epic');
    // Session: the tasks in the scope of bob's session (global) vs alice's (the epic).
    await p.page.selectOption('[data-testid=filter-epic]', '');
    await p.page.selectOption('[data-testid=filter-session]', alice);
    await waitColumns(p.page, { pending: [ids.E1, ids.D, ids.F, ids.G].sort(), active: [ids.B], blocked: [ids.C], done: [ids.A] });
    await shot(p.page, 'filter-session');
    // A text search keeps the session's scope: H matches "the" too, but lies outside alice's epic.
    await p.page.fill('[data-testid=filter-text]', 'the');
    await waitColumns(p.page, { pending: [ids.E1, ids.D, ids.G].sort(), active: [], blocked: [ids.C], done: [ids.A] });
    assert.match(await p.page.textContent('[data-testid=board-summary]'), /matching “the”, in the scope of/);
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('detail', async () => {
  const dir = projectDir('detail');
  const { ids, alice } = seedProject(dir);
  const server = await startServer(dir);
  const p = await openPage(server);
  try {
    await p.goto();
    await p.page.click(cardSel(ids.B));
    const panel = p.page.locator('[data-testid=detail]');
    await panel.waitFor({ state: 'visible' });
    await p.page.waitForSelector('[data-testid=history-row]');
    assert.match(await p.page.textContent('[data-testid=detail-title]'), /Stream changes over SSE/);
    assert.match(await p.page.textContent('[data-testid=detail-notes]'), /EventSource wired to \/events/);
    const rows = await p.page.$$eval('[data-testid=history-row]', (els) => els.map((e) => e.textContent));
    assert.ok(rows.length >= 3, `history rows: ${rows.length}`);
    assert.ok(rows.some((r) => r.includes('alice') && r.includes('tasks.update') && r.includes('progress report')), 'history names alice, the update and its reason');
    assert.ok(rows.some((r) => r.includes(alice)), 'history names the session');
    const deps = await p.page.textContent('[data-testid=detail-deps]');
    assert.match(deps, new RegExp(`${ids.A}[\\s\\S]*Needed by[\\s\\S]*${ids.D}`), 'dependencies both ways');
    assert.equal(await p.page.locator('[data-testid=complete-btn]').count(), 0, 'no write controls in read-only mode');
    await shot(p.page, 'detail');
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('live', async () => {
  const dir = projectDir('live');
  seedProject(dir);
  const server = await startServer(dir);
  const p = await openPage(server);
  try {
    await p.goto();
    await p.page.waitForSelector('[data-testid=live][data-state=live]');
    await p.page.evaluate(() => { window.__notReloaded = true; });
    const id = ctRun(dir, 'add', 'Live task').data.id;
    await p.page.waitForSelector(`[data-testid=col-pending] ${cardSel(id)}`, { timeout: LIVE_MS });
    await shot(p.page, 'live-added');
    ctRun(dir, 'complete', id);
    await p.page.waitForSelector(`[data-testid=col-done] ${cardSel(id)}`, { timeout: LIVE_MS });
    await p.page.waitForSelector(`[data-testid=col-pending] ${cardSel(id)}`, { state: 'detached', timeout: LIVE_MS });
    assert.equal(await p.page.evaluate(() => window.__notReloaded), true, 'the page was not reloaded');
    // The activity view follows too.
    await p.page.click('[data-testid=nav-activity]');
    await p.page.waitForSelector('[data-testid=activity-row]');
    await p.page.waitForSelector('[data-testid=audit-status][data-valid=true]');
    ctRun(dir, 'update', id, '--notes', 'after the fact');
    await p.page.waitForFunction((tid) => Array.from(document.querySelectorAll('[data-testid=activity-row]'))
      .some((r) => r.textContent.includes('tasks.update') && r.textContent.includes(tid)), id, { timeout: LIVE_MS });
    await shot(p.page, 'live-activity');
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('write', async () => {
  const dir = projectDir('write');
  const { ids, alice, bob } = seedProject(dir);
  let server = await startServer(dir, ['--dashboard-write']);
  let p = await openPage(server, { person: true });
  try {
    await p.goto();
    assert.equal(await modeOf(p.page), 'Write mode');
    await p.page.fill('[data-testid=add-title]', 'Added from the browser');
    await p.page.selectOption('[data-testid=add-priority]', 'high');
    await p.page.click('[data-testid=add-submit]');
    const card = p.page.locator('[data-testid=col-pending] [data-testid=card]', { hasText: 'Added from the browser' });
    await card.waitFor({ timeout: LIVE_MS });
    const newId = await card.getAttribute('data-id');
    await shot(p.page, 'write-added');
    await p.page.click(cardSel(ids.F));
    await p.page.click('[data-testid=complete-btn]');
    await p.page.waitForSelector(`[data-testid=col-done] ${cardSel(ids.F)}`, { timeout: LIVE_MS });
    await p.page.waitForSelector('[data-testid=reopen-btn]', { timeout: LIVE_MS });
    await shot(p.page, 'write-completed');
    // …and reopen it.
    await p.page.click('[data-testid=reopen-btn]');
    await p.page.waitForSelector(`[data-testid=col-pending] ${cardSel(ids.F)}`, { timeout: LIVE_MS });
    await p.page.waitForSelector('[data-testid=complete-btn]', { timeout: LIVE_MS });
    // Edit: a new priority and a note.
    await p.page.click(cardSel(ids.D));
    await p.page.waitForFunction((id) => document.querySelector('[data-testid=detail-title]')?.textContent.startsWith(id), ids.D);
    await p.page.click('[data-testid=edit-details] summary');
    await p.page.selectOption('[data-testid=edit-priority]', 'critical');
    await p.page.fill('[data-testid=edit-notes]', 'Raised from the dashboard');
    await p.page.click('[data-testid=edit-submit]');
    await p.page.waitForFunction(() => document.querySelector('[data-testid=detail-notes]')?.textContent.includes('Raised from the dashboard'), null, { timeout: LIVE_MS });
    // Reassign alice's claim on B to bob (bob's claim on H is released by it).
    await p.page.click(cardSel(ids.B));
    await p.page.waitForSelector('[data-testid=detail-holder]');
    assert.match(await p.page.textContent('[data-testid=detail-holder]'), /alice/);
    // …with when its lease ends (session.leaseSeconds after alice's last call).
    await p.page.waitForSelector('[data-testid=detail-lease]');
    assert.match(await p.page.textContent('[data-testid=detail-lease]'), /lease ends/);
    await p.page.selectOption('[data-testid=assign-session]', bob);
    await p.page.click('[data-testid=assign-btn]');
    await p.page.waitForFunction(() => /bob/.test(document.querySelector('[data-testid=detail-holder]')?.textContent || ''), null, { timeout: LIVE_MS });
    await p.page.waitForFunction((id) => /bob/.test(document.querySelector(`[data-testid=card][data-id="${id}"]`)?.textContent || ''), ids.B, { timeout: LIVE_MS });
    await shot(p.page, 'write-reassigned');
    // Release it.
    await p.page.click('[data-testid=release-btn]');
    await p.page.waitForSelector(`[data-testid=col-pending] ${cardSel(ids.B)}`, { timeout: LIVE_MS });
    // An operation the dashboard may not run: the page shows the server's message and fix.
    await p.page.evaluate(async (id) => { const core = await import('/core.js'); await core.write('tasks.delete', { id }); }, ids.H);
    await p.page.waitForSelector('[data-testid=error]:not([hidden])');
    assert.match(await p.page.textContent('[data-testid=error-message]'), /E_MUTATION_DISABLED/);
    assert.ok((await p.page.textContent('[data-testid=error-fix]')).trim().length > 0, 'the fix is shown');
    await shot(p.page, 'write-refused');
    noErrors(p.errors);
    const sessions = Object.fromEntries(ctRun(dir, 'session', 'list', '--detail', 'full').data.map((x) => [x.id, x]));
    assert.equal(sessions[alice].focus, undefined, 'alice holds nothing');
    assert.equal(sessions[bob].focus, undefined, 'bob released B');
    const d = ctRun(dir, 'show', ids.D).data;
    assert.equal(d.priority, 'critical');
    const log = ctRun(dir, 'log', '--limit', '20').data;
    for (const [op, sess] of [['tasks.update', undefined], ['tasks.reopen', undefined], ['tasks.start', bob], ['tasks.stop', bob], ['tasks.stop', alice]]) {
      const row = log.find((r) => r.operation === op && (sess === undefined || r.session === sess));
      assert.equal(row?.agent, 'human@dashboard', `${op}${sess ? ' in ' + sess : ''}: ${JSON.stringify(row)}`);
    }
    // A tasks.add row names the task it created.
    const add = log.find((r) => r.operation === 'tasks.add' && r.id === newId);
    const done = log.find((r) => r.operation === 'tasks.complete' && r.id === ids.F);
    assert.equal(add?.agent, 'human@dashboard', `tasks.add row: ${JSON.stringify(add)}`);
    assert.equal(done?.agent, 'human@dashboard', `tasks.complete row: ${JSON.stringify(done)}`);
    assert.equal(ctRun(dir, 'show', newId).data.priority, 'high');
  } finally { await p.close(); await server.stop(); }

  // Read-only (the default): no write controls, and the server refuses writes anyway.
  server = await startServer(dir);
  p = await openPage(server);
  try {
    await p.goto();
    await p.page.waitForSelector(cardSel(ids.H));
    assert.equal(await modeOf(p.page), 'Read-only');
    assert.equal(await p.page.locator('[data-testid=add-form]').isVisible(), false, 'add form hidden');
    await p.page.click(cardSel(ids.H));
    await p.page.waitForSelector('[data-testid=history-row]');
    for (const sel of ['complete-btn', 'reopen-btn', 'edit-form', 'release-btn', 'assign-btn']) {
      assert.equal(await p.page.locator(`[data-testid=${sel}]`).count(), 0, `${sel} absent`);
    }
    const reply = await p.page.evaluate(async () => (await fetch('/api', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ gateway: 'mutate', domain: 'tasks', operation: 'add', params: { title: 'Sneaky write' } }),
    })).json());
    assert.equal(reply.success, false);
    assert.equal(reply.error?.code, 'E_MUTATION_DISABLED');
    await shot(p.page, 'write-readonly');
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('token', async () => {
  const dir = projectDir('token');
  const { ids } = seedProject(dir);
  const server = await startServer(dir, ['--token', 's3cret']);
  // The browser reports each 401 answer (the login probe, the wrong token) as a console error.
  const p = await openPage(server, { allow: [/status of 401/] });
  try {
    const bare = await fetch(`${server.url}api/info`);
    assert.equal(bare.status, 401, '/api/info without the cookie');
    assert.ok((await bare.json()).error, '401 body has error');
    for (const [method, url, body] of [['POST', 'api', JSON.stringify({ gateway: 'query', domain: 'tasks', operation: 'list', params: {} })], ['GET', 'events']]) {
      const r = await fetch(server.url + url, { method, body, headers: body ? { 'Content-Type': 'application/json' } : {} });
      assert.equal(r.status, 401, `${method} /${url} without the cookie`);
      await r.body?.cancel();
    }
    await p.goto();
    await p.page.waitForSelector('[data-testid=login-token]');
    assert.equal(await p.page.locator('[data-testid=board]').isVisible(), false, 'no board before the token');
    await p.page.fill('[data-testid=login-token]', 'wrong');
    await p.page.click('[data-testid=login-submit]');
    await p.page.waitForSelector('[data-testid=login-error]');
    assert.match(await p.page.textContent('[data-testid=login-error]'), /refused/);
    await shot(p.page, 'token-refused');
    await p.page.fill('[data-testid=login-token]', 's3cret');
    await p.page.press('[data-testid=login-token]', 'Enter');
    await p.page.waitForSelector(cardSel(ids.H));
    await p.page.waitForSelector('[data-testid=live][data-state=live]');
    assert.equal(await p.page.locator('[data-testid=login]').isVisible(), false);
    // The cookie is HttpOnly: the page's script cannot read it.
    assert.equal(await p.page.evaluate(() => document.cookie), '');
    // Live updates work with the cookie too.
    const id = ctRun(dir, 'add', 'Seen through the token').data.id;
    await p.page.waitForSelector(cardSel(id), { timeout: LIVE_MS });
    await shot(p.page, 'token-board');
    // Sign out: the cookie is gone, the page asks for the token again.
    await p.page.click('[data-testid=logout]');
    await p.page.waitForSelector('[data-testid=login-token]');
    assert.equal(await p.page.evaluate(async () => (await fetch('/api/info')).status), 401, 'signed out');
    assert.equal((await p.context.cookies()).length, 0, 'no cookie left');
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('scale', async () => {
  const dir = projectDir('scale');
  const N = 10_000;
  const records = [];
  for (let i = 0; i < N; i++) records.push({ id: `X${i}`, title: `Bulk task ${String(i).padStart(5, '0')}`, labels: [i % 2 ? 'odd' : 'even'] });
  importTasks(dir, records);
  const server = await startServer(dir);
  const p = await openPage(server);
  try {
    const t0 = Date.now();
    await p.goto();
    await p.page.waitForSelector('[data-testid=col-pending] [data-testid=card]');
    await p.page.waitForFunction((n) => document.querySelector('[data-testid=count-pending]')?.textContent === String(n), N);
    const loadMs = Date.now() - t0;
    assert.ok(loadMs < 5000, `board loaded in ${loadMs} ms`);
    const inDom = () => p.page.locator('[data-testid=col-pending] [data-testid=card]').count();
    const first = await inDom();
    assert.ok(first > 0 && first < 100, `${first} cards in the DOM for ${N} tasks`);
    await shot(p.page, 'scale');
    // Scroll far down: the rows there are fetched (a page of 100 at that offset) and rendered.
    const target = 7_345;
    await p.page.$eval('[data-testid=scroll-pending]', (el, y) => { el.scrollTop = y; }, target * ROW_H);
    await p.page.waitForFunction((t) => Array.from(document.querySelectorAll('[data-testid=col-pending] [data-testid=card]'))
      .some((c) => Math.abs(Number(c.parentElement.getAttribute('aria-posinset')) - t) < 10), target, { timeout: 5000 });
    const after = await inDom();
    assert.ok(after < 100, `${after} cards in the DOM after scrolling`);
    // Scrolling to the end reaches the last task.
    await p.page.$eval('[data-testid=scroll-pending]', (el) => { el.scrollTop = el.scrollHeight; });
    await p.page.waitForFunction((n) => Array.from(document.querySelectorAll('[data-testid=col-pending] [data-testid=card]'))
      .some((c) => c.parentElement.getAttribute('aria-posinset') === String(n)), N, { timeout: 5000 });
    const ids = await p.page.$$eval('[data-testid=col-pending] [data-testid=card]', (els) => els.map((e) => e.dataset.id));
    assert.equal(new Set(ids).size, ids.length, 'no card twice');
    await shot(p.page, 'scale-scrolled');
    noErrors(p.errors);
    return `${N} tasks: board loaded in ${loadMs} ms, ${first} cards in the DOM, ${after} after scrolling`;
  } finally { await p.close(); await server.stop(); }
});

check('keyboard', async () => {
  const dir = projectDir('keyboard');
  const { ids } = seedProject(dir);
  const server = await startServer(dir);
  const p = await openPage(server);
  try {
    await p.goto();
    await p.page.waitForSelector(cardSel(ids.H));
    let focused = null;
    for (let i = 0; i < 40 && !focused; i++) {
      await p.page.keyboard.press('Tab');
      focused = await p.page.evaluate(() => (document.activeElement?.matches('[data-testid=card]') ? document.activeElement.dataset.id : null));
    }
    assert.ok(focused, 'Tab reaches a card');
    // The focus ring is visible.
    const outline = await p.page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none', 'focused card has an outline');
    // Arrow down moves within the column.
    await p.page.keyboard.press('ArrowDown');
    const next = await p.page.evaluate(() => document.activeElement?.dataset?.id);
    assert.ok(next && next !== focused, `ArrowDown moved from ${focused} to ${next}`);
    await p.page.keyboard.press('Enter');
    await p.page.locator('[data-testid=detail]').waitFor({ state: 'visible' });
    await p.page.waitForFunction((id) => document.querySelector('[data-testid=detail-title]')?.textContent.startsWith(id), next);
    await shot(p.page, 'keyboard-detail');
    await p.page.keyboard.press('Escape');
    await p.page.locator('[data-testid=detail]').waitFor({ state: 'hidden' });
    assert.equal(await p.page.evaluate(() => document.activeElement?.dataset?.id), next, 'focus back on the card');
    // Space opens it as well.
    await p.page.keyboard.press('Space');
    await p.page.locator('[data-testid=detail]').waitFor({ state: 'visible' });
    await p.page.keyboard.press('Escape');
    await p.page.locator('[data-testid=detail]').waitFor({ state: 'hidden' });
    // ArrowRight goes to the next column, ArrowLeft back.
    const colOf = () => p.page.evaluate(() => document.activeElement?.closest('[data-testid^=col-]')?.dataset.testid);
    const startCol = await colOf();
    await p.page.keyboard.press('ArrowRight');
    const rightCol = await colOf();
    assert.ok(rightCol && rightCol !== startCol, `ArrowRight: ${startCol} -> ${rightCol}`);
    await p.page.keyboard.press('ArrowLeft');
    assert.equal(await colOf(), startCol, 'ArrowLeft comes back');
    await shot(p.page, 'keyboard-closed');
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

/** In the page: text below WCAG AA contrast, unnamed controls, missing landmarks, duplicate ids. */
function a11yProblems(page) {
  return page.evaluate(() => {
    const problems = [];
    const parse = (c) => {
      let m = /^rgba?\(([^)]+)\)$/.exec(c);
      if (m) {
        const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
        return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
      }
      m = /^color\(srgb ([^)]+)\)$/.exec(c);
      if (m) {
        const p = m[1].split(/[\s/]+/).filter(Boolean).map(Number);
        return { r: p[0] * 255, g: p[1] * 255, b: p[2] * 255, a: p.length > 3 ? p[3] : 1 };
      }
      return null;
    };
    const over = (top, under) => ({
      r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1,
    });
    const background = (el) => {
      const layers = [];
      for (let e = el; e; e = e.parentElement) {
        const cs = getComputedStyle(e);
        if (cs.backgroundImage !== 'none') return null; // a gradient: not judged here
        const c = parse(cs.backgroundColor);
        if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
      }
      let bg = { r: 255, g: 255, b: 255, a: 1 };
      for (const c of layers.reverse()) bg = over(c, bg);
      return bg;
    };
    const lum = (c) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
    };
    const ratio = (a, b) => { const x = lum(a); const y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
    const visible = (el) => el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) && el.getBoundingClientRect().width > 1;
    for (const el of document.body.querySelectorAll('*')) {
      if (!Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
      if (!visible(el) || el.closest('[disabled], option, datalist, .sr-only')) continue;
      const cs = getComputedStyle(el);
      const fg = parse(el instanceof SVGElement ? cs.fill : cs.color);
      const bg = background(el);
      if (!fg || !bg) continue;
      const size = parseFloat(cs.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
      const r = ratio(fg.a < 1 ? over(fg, bg) : fg, bg);
      if (r < (large ? 3 : 4.5)) problems.push(`contrast ${r.toFixed(2)} for "${el.textContent.trim().slice(0, 30)}" (${el.tagName.toLowerCase()}.${el.getAttribute('class') || ''})`);
    }
    for (const el of document.querySelectorAll('button, a[href], input, select, textarea, [role=button]')) {
      if (!visible(el)) continue;
      const labelled = el.getAttribute('aria-labelledby')?.split(/\s+/).map((id) => document.getElementById(id)?.textContent.trim()).join('');
      const name = el.getAttribute('aria-label') || labelled || (el.labels && Array.from(el.labels).map((l) => l.textContent.trim()).join('')) || (['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName) ? '' : el.textContent.trim()) || el.title;
      if (!name) problems.push(`no accessible name: ${el.outerHTML.slice(0, 80)}`);
    }
    const ids = new Map();
    for (const el of document.querySelectorAll('[id]')) ids.set(el.id, (ids.get(el.id) || 0) + 1);
    for (const [id, n] of ids) if (n > 1) problems.push(`id "${id}" used ${n} times`);
    if (document.querySelectorAll('main').length !== 1) problems.push('not exactly one <main>');
    if (!document.querySelector('header[role=banner], body > header')) problems.push('no banner');
    if (!document.querySelector('nav[aria-label]')) problems.push('no labelled navigation');
    if (!document.documentElement.lang) problems.push('no lang on <html>');
    return problems;
  });
}

check('a11y', async () => {
  const dir = projectDir('a11y');
  const { ids } = seedProject(dir);
  const server = await startServer(dir, ['--dashboard-write']);
  const p = await openPage(server, { person: true });
  try {
    await p.goto();
    await p.page.waitForSelector(cardSel(ids.H));
    await p.page.waitForSelector('[data-testid=live][data-state=live]');
    const found = [];
    const audit = async (where) => { for (const x of await a11yProblems(p.page)) found.push(`${where}: ${x}`); };
    await audit('board');
    await p.page.click(cardSel(ids.B));
    await p.page.waitForSelector('[data-testid=history-row]');
    await p.page.click('[data-testid=edit-details] summary');
    await audit('detail');
    await p.page.keyboard.press('Escape');
    ctRun(dir, 'memory', 'observe', '--kind', 'risk', '--title', 'The SSE stream drops on proxies that buffer');
    const plan = ctRun(dir, 'plan', 'begin', 'split the docs', '--epic-id', ids.E1).data.plan;
    ctRun(dir, 'plan', 'apply', plan, '--ops', JSON.stringify([{ operation: 'add', params: { title: 'API reference', parent: ids.E1, depends: [ids.B] } }]));
    for (const [view, ready] of [['epics', '[data-testid=epic-burndown] svg'], ['plans', '[data-testid=plan-before-after]'], ['sessions', '[data-testid=claim-row]'],
      ['memory', '[data-testid=memory-row]'], ['activity', '[data-testid=audit-status][data-valid]'], ['charts', '[data-testid=chart-burndown] svg'], ['health', '[data-testid=health-metrics]']]) {
      await p.page.click(`[data-testid=nav-${view}]`);
      await p.page.waitForSelector(`#view-${view} ${ready}`);
      await audit(view);
    }
    // The dark colour scheme too.
    await p.page.emulateMedia({ colorScheme: 'dark' });
    for (const view of ['activity', 'plans', 'health', 'board']) {
      await p.page.click(`[data-testid=nav-${view}]`);
      await audit(`${view} (dark)`);
    }
    await p.page.click(cardSel(ids.C));
    await p.page.waitForSelector('[data-testid=history-row]');
    await audit('detail (dark)');
    await shot(p.page, 'a11y-dark');
    if (found.length) throw new Error(`${found.length} accessibility problems:\n     | ${found.join('\n     | ')}`);
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('views', async () => {
  // Epics, Sessions, Activity, Charts and Health render from real data, without errors.
  const dir = projectDir('views');
  const { ids, alice } = seedProject(dir);
  const server = await startServer(dir);
  const p = await openPage(server);
  try {
    await p.goto('#epics');
    await p.page.waitForSelector('[data-testid=epic-tree]');
    assert.match(await p.page.textContent('[data-testid=epic-progress]'), /1\/6 done/);
    await p.page.waitForSelector('[data-testid=epic-waves]');
    await p.page.waitForSelector('[data-testid=epic-burndown] svg');
    await shot(p.page, 'view-epics');
    await p.page.click('[data-testid=nav-sessions]');
    await p.page.waitForSelector('[data-testid=claim-row]');
    const claims = await p.page.textContent('[data-testid=claims]');
    assert.ok(claims.includes('alice') && claims.includes(ids.B) && claims.includes(alice), 'alice holds B');
    assert.match(claims, /bob[\s\S]*holds/);
    await shot(p.page, 'view-sessions');
    await p.page.click('[data-testid=nav-activity]');
    await p.page.waitForSelector('[data-testid=audit-status][data-valid=true]');
    await p.page.fill('[data-testid=act-operation]', 'session.start');
    await p.page.press('[data-testid=act-operation]', 'Enter');
    await p.page.waitForFunction(() => {
      const rows = Array.from(document.querySelectorAll('[data-testid=activity-row]'));
      return rows.length === 2 && rows.every((r) => r.textContent.includes('session.start'));
    });
    await shot(p.page, 'view-activity');
    await p.page.click('[data-testid=nav-charts]');
    await p.page.waitForSelector('[data-testid=chart-throughput] rect');
    await p.page.waitForSelector('#view-charts [data-testid=chart-burndown] polyline');
    await shot(p.page, 'view-charts');
    await p.page.click('[data-testid=nav-health]');
    await p.page.waitForSelector('[data-testid=health-checks]');
    await p.page.waitForSelector('[data-testid=health-metrics]');
    await shot(p.page, 'view-health');
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('memory', async () => {
  // An agent's convention waits for review; a person verifies it on the page; a stale learning shows
  // which file changed; retracting needs a reason.
  const dir = projectDir('memory');
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'store.cpp'), 'int store;\n');
  const server = await startServer(dir, ['--dashboard-write']);
  const p = await openPage(server, { person: true });
  try {
    const proposed = await agentMutate(server, 'memory', 'observe',
      { kind: 'convention', title: 'Errors are values with stable codes', files: ['src/'] });
    assert.equal(proposed.data.status, 'proposed');
    ctRun(dir, 'memory', 'observe', '--kind', 'learning', '--title', 'The store keeps one write transaction', '--files', 'src/store.cpp');
    fs.writeFileSync(path.join(dir, 'src', 'store.cpp'), 'int store; // changed\n');
    await p.goto('#memory');
    await p.page.waitForSelector('[data-testid=memory-proposed-row]');
    await p.page.waitForSelector('[data-testid=memory-stale-row]');
    assert.match(await p.page.textContent('[data-testid=memory-stale]'), /src\/store\.cpp changed/);
    assert.match(await p.page.textContent('[data-testid=memory-summary]'), /2 entries · 1 active · 1 proposed · 1 stale/);
    await shot(p.page, 'view-memory');
    await p.page.click('[data-testid=memory-proposed-row] [data-testid=memory-verify]');
    await p.page.waitForFunction(() => !document.querySelector('[data-testid=memory-proposed-row]'));
    const shown = ctRun(dir, 'memory', 'show', proposed.data.id).data;
    assert.equal(shown.status, 'active');
    assert.match(shown.verifiedBy, /^person:/);  // the signed-in person's principal
    await p.page.click('[data-testid=memory-stale-row] [data-testid=memory-retract]');
    await p.page.click('[data-testid=memory-retract-confirm]');  // no reason: refused with the fix shown
    await p.page.waitForSelector('[data-testid=error]:not([hidden])');
    await p.page.fill('[data-testid=memory-retract-reason]', 'the store moved to its own process');
    await p.page.click('[data-testid=memory-retract-confirm]');
    await p.page.waitForFunction(() => !document.querySelector('[data-testid=memory-stale-row]'));
    assert.equal(ctRun(dir, 'memory', 'list', '--status', 'retracted').data.length, 1);
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('trust', async () => {
  // An agent's deletion waits for a person under approval.required; the activity filters by intent
  // and lists the sealed epochs; a person approves one proposal and rejects another on the page.
  const dir = projectDir('trust');
  const server = await startServer(dir, ['--dashboard-write']);
  const p = await openPage(server, { person: true });
  try {
    ctRun(dir, 'config', 'set', 'approval.required', '["tasks.delete"]');
    const first = ctRun(dir, 'add', 'Retire the old importer').data.id;
    const second = ctRun(dir, 'add', 'Keep the CSV export').data.id;
    const proposed = await agentMutate(server, 'tasks', 'delete', { id: first, reason: 'replaced by tasks.import' });
    assert.equal(proposed._meta.code, 'E_PROPOSED');
    await agentMutate(server, 'tasks', 'delete', { id: second });
    await agentMutate(server, 'tasks', 'update', { id: second, priority: 'high', intent: { category: 'fix', reasoning: 'customers rely on it' } });
    ctRun(dir, 'system', 'epoch.seal', 'sprint-1', '--summary', 'before the review');
    await p.goto('#activity');
    await p.page.waitForSelector('[data-testid=proposal-row]');
    assert.equal(await p.page.locator('[data-testid=proposal-row]').count(), 2);
    await p.page.waitForSelector('[data-testid=epoch]');
    assert.match(await p.page.textContent('[data-testid=epochs]'), /sprint-1/);
    await p.page.selectOption('[data-testid=act-category]', 'fix');
    await p.page.waitForFunction(() => document.querySelectorAll('[data-testid=activity-row]').length === 1);
    assert.equal(await p.page.textContent('[data-testid=activity-intent]'), 'fix');
    await shot(p.page, 'view-activity-trust');
    await p.page.click(`[data-testid=proposal-row][data-id=${proposed.data.id}] [data-testid=proposal-approve]`);
    await p.page.waitForFunction(() => document.querySelectorAll('[data-testid=proposal-row]').length === 1);
    assert.equal(ctRun(dir, 'show', first).data.status, 'cancelled');
    await p.page.click('[data-testid=proposal-row] [data-testid=proposal-reject]');
    await p.page.fill('[data-testid=proposal-reject-note]', 'the export stays');
    await p.page.click('[data-testid=proposal-reject-confirm]');
    await p.page.waitForFunction(() => !document.querySelector('[data-testid=proposal-row]'));
    assert.notEqual(ctRun(dir, 'show', second).data.status, 'cancelled');
    assert.equal(ctRun(dir, 'proposals', '--status', 'rejected').data.length, 1);
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('thread', async () => {
  // A task's thread on its detail panel (issue 53): an agent's message is shown as text, never as
  // markup; a signed-in person posts to it through the form (stored as the person's, the count goes
  // up, the box empties) and keeps a half-written message across a live refresh; an empty body is
  // not sent, one the server refuses shows the server's error; whoever is not signed in as a person
  // sees the thread without the form.
  const dir = projectDir('thread');
  const id = ctRun(dir, 'add', 'Review the parser').data.id;
  const server = await startServer(dir, ['--dashboard-write']);
  try {
    await threadAsPerson(dir, id, server);
    await threadWithoutPerson(dir, id, server);
  } finally { await server.stop(); }
  assert.equal(ctRun(dir, 'show', id, '--detail', 'full').data.thread.count, 3, 'nothing more was sent');
});

async function threadAsPerson(dir, id, server) {
  const p = await openPage(server, { person: true });
  const sent = [];  // the session.send calls the page made, in order
  p.page.on('request', (r) => {
    const body = r.url() === `${server.url}api` ? r.postDataJSON() : null;
    if (body?.domain === 'session' && body.operation === 'send') sent.push(body.params.body);
  });
  const heading = () => p.page.textContent('[data-testid=thread-heading]');
  const bodies = () => p.page.$$eval('[data-testid=message-body]', (els) => els.map((e) => e.textContent));
  const threadOf = () => ctRun(dir, 'show', id, '--detail', 'full').data.thread;
  try {
    const markup = '<img src=x onerror="window.__owned=1"><b>ship it</b> & see T999';
    await agentMutate(server, 'session', 'send', { to: id, body: markup }, 'reviewer');
    await p.goto();
    await p.page.click(cardSel(id));
    await p.page.waitForSelector('[data-testid=message]');
    assert.equal(await heading(), 'Thread (1)');
    assert.deepEqual(await bodies(), [markup], 'the body as text');
    assert.equal(await p.page.locator('[data-testid=detail-thread] :is(img, b)').count(), 0, 'no element made of the body');
    assert.equal(await p.page.evaluate(() => window.__owned), undefined);
    assert.equal(await p.page.textContent('[data-testid=message-from]'), 'reviewer');
    await shot(p.page, 'thread');

    // A person posts; an agent answers while the panel is open (live).
    const posted = 'Use the new tokenizer <script>alert(1)</script>';
    await p.page.fill('[data-testid=thread-body]', `  ${posted}\n`);
    await p.page.click('[data-testid=thread-send]');
    await p.page.waitForFunction(() => document.querySelector('[data-testid=thread-heading]')?.textContent === 'Thread (2)', null, { timeout: LIVE_MS });
    const shown = await p.page.$$eval('[data-testid=message]', (els) => els.map((e) => [
      e.querySelector('[data-testid=message-from]').textContent, e.querySelector('[data-testid=message-body]').textContent]));
    assert.match(shown.find(([, body]) => body === posted)?.[0] ?? '', /^person:/, 'the posted body is in the thread, from the person');
    assert.equal(await p.page.inputValue('[data-testid=thread-body]'), '', 'the box is emptied');
    assert.equal(await p.page.locator('[data-testid=error]:not([hidden])').count(), 0, 'no error');
    await agentMutate(server, 'session', 'send', { to: id, body: 'On it' }, 'reviewer');
    await p.page.waitForFunction(() => document.querySelector('[data-testid=thread-heading]')?.textContent === 'Thread (3)', null, { timeout: LIVE_MS });
    const thread = threadOf();
    assert.equal(thread.count, 3);
    const mine = thread.last.find((m) => m.body === posted);
    assert.match(mine?.from ?? '', /^person:/, `the sender is the person: ${JSON.stringify(thread.last)}`);
    assert.equal(thread.last.find((m) => m.body === markup)?.from, 'reviewer');
    const rows = ctRun(dir, 'log', '--limit', '20').data.filter((r) => r.operation === 'session.send');
    assert.deepEqual(rows.map((r) => r.agent).sort(), ['human@dashboard', 'reviewer', 'reviewer'], 'who sent, in the audit log');

    // A half-written message survives a change made elsewhere (the panel is rebuilt live).
    await p.page.fill('[data-testid=thread-body]', 'half-written: the tokenizer');
    ctRun(dir, 'update', id, '--notes', 'touched from a terminal');
    await p.page.waitForFunction(() => document.querySelector('[data-testid=detail-notes]')?.textContent.includes('touched from a terminal'), null, { timeout: LIVE_MS });
    assert.equal(await p.page.inputValue('[data-testid=thread-body]'), 'half-written: the tokenizer', 'the draft is kept');

    // Nothing to send: a blank body is not sent (the browser's required check, then the page's trim).
    await p.page.fill('[data-testid=thread-body]', '');
    await p.page.click('[data-testid=thread-send]');
    await p.page.fill('[data-testid=thread-body]', ' \n\t ');
    await p.page.click('[data-testid=thread-send]');
    // A body the server refuses (a control character): its error is shown, the text stays.
    const refused = 'ring the bell \u0007 now';
    await p.page.fill('[data-testid=thread-body]', refused);
    await p.page.click('[data-testid=thread-send]');
    await p.page.waitForFunction(() => /control/.test(document.querySelector('[data-testid=error]:not([hidden]) [data-testid=error-message]')?.textContent));
    assert.match(await p.page.textContent('[data-testid=error-message]'), /^E_VALIDATION: .*U\+0007/);
    assert.equal(await p.page.inputValue('[data-testid=thread-body]'), refused, 'the refused text is kept');
    assert.deepEqual(sent, [posted, refused], 'only the posted and the refused body were sent');
    assert.equal(await heading(), 'Thread (3)');
    assert.equal(threadOf().count, 3);
    await shot(p.page, 'thread-refused');

    // A body as long as session.send takes is not cut by the page (messages.maxChars may be raised
    // to 20,000): the project's limit, 2,000 by default, is the server's to tell, and the text stays.
    const long = 'long '.repeat(500);
    await p.page.fill('[data-testid=thread-body]', '');
    await p.page.focus('[data-testid=thread-body]');
    await p.page.keyboard.insertText(long);
    assert.equal(await p.page.inputValue('[data-testid=thread-body]'), long, 'typed whole, not cut at 2,000 characters');
    await p.page.click('[data-testid=thread-send]');
    await p.page.waitForFunction(() => /maxChars/.test(document.querySelector('[data-testid=error]:not([hidden]) [data-testid=error-message]')?.textContent));
    assert.equal(await p.page.inputValue('[data-testid=thread-body]'), long, 'the refused text is kept');
    assert.equal(threadOf().count, 3);
    noErrors(p.errors);
  } finally { await p.close(); }
}

async function threadWithoutPerson(dir, id, server) {
  // Not signed in as a person (the server's writes are a person's), or a read-only server: the
  // thread, no form; and the server refuses a send from the page anyway.
  for (const [label, flags, mode] of [['reader', null, 'Read-only until you sign in as a person'], ['read-only', [], 'Read-only']]) {
    const other = flags ? await startServer(dir, flags) : null;
    const q = await openPage(other || server);
    try {
      await q.goto();
      assert.equal(await modeOf(q.page), mode, label);
      await q.page.click(cardSel(id));
      await q.page.waitForSelector('[data-testid=message]');
      assert.equal(await q.page.textContent('[data-testid=thread-heading]'), 'Thread (3)', label);
      await q.page.waitForSelector('[data-testid=history-row]');
      for (const sel of ['thread-form', 'complete-btn', 'edit-form']) {
        assert.equal(await q.page.locator(`[data-testid=${sel}]`).count(), 0, `${label}: no ${sel}`);
      }
      assert.equal(await q.page.locator('[data-testid=add-form]').isVisible(), false, `${label}: add form hidden`);
      const reply = await q.page.evaluate(async (to) => (await fetch('/api', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ gateway: 'mutate', domain: 'session', operation: 'send', params: { to, body: 'sneaky' } }),
      })).json(), id);
      assert.equal(reply.error?.code, 'E_MUTATION_DISABLED', label);
      await shot(q.page, `thread-${label}`);
      noErrors(q.errors);
    } finally { await q.close(); if (other) await other.stop(); }
  }
}

check('plans', async () => {
  // Two decompositions of one epic staged as plans (nothing in the store yet): the Plans view shows
  // what each would add and change, the graph before and after, the tasks it would create as $N,
  // both side by side, the conflict when a task moves after staging (live), and the status filter.
  // It runs no plan operation: there is nothing to click that would. A read-only server (the
  // default) shows the diff: plan.diff replays the plans and takes everything back.
  const dir = projectDir('plans');
  const epic = ctRun(dir, 'add', 'Payments', '--type', 'epic').data.id;
  const wire = ctRun(dir, 'add', 'Wire the checkout', '--parent', epic).data.id;
  const layers = ctRun(dir, 'plan', 'begin', 'by layer', '--epic-id', epic).data.plan;
  ctRun(dir, 'plan', 'apply', layers, '--ops', JSON.stringify([
    { operation: 'add', params: { title: 'Payment schema', parent: epic } },
    { operation: 'add', params: { title: 'Payment service', parent: epic, depends: ['$1'] } },
    { operation: 'update', params: { id: wire, priority: 'high' } },
  ]));
  const slices = ctRun(dir, 'plan', 'begin', 'by slice', '--epic-id', epic).data.plan;
  ctRun(dir, 'plan', 'apply', slices, '--ops', JSON.stringify([{ operation: 'add', params: { title: 'Card payments end to end', parent: epic } }]));
  const server = await startServer(dir, []);
  const p = await openPage(server);
  const card = (id) => `[data-testid=plan-diff][data-id=${id}]`;
  const cells = (id) => p.page.$$eval(`${card(id)} [data-testid=plan-before-after] tbody tr`,
    (trs) => Object.fromEntries(trs.map((tr) => [tr.cells[0].textContent, [tr.cells[1].textContent, tr.cells[2].textContent]])));
  try {
    await p.goto('#plans');
    await p.page.waitForSelector('[data-testid=plan-row]');
    assert.deepEqual(await p.page.$$eval('[data-testid=plan-row]', (rows) => rows.map((r) => r.dataset.id)), [slices, layers], 'newest first');
    assert.match(await p.page.textContent('[data-testid=plans-summary]'), /^2 open plans/);
    await p.page.waitForSelector(card(slices));  // the newest is shown at first
    await p.page.click(`[data-testid=plan-row][data-id=${layers}] [data-testid=plan-open]`);
    await p.page.waitForSelector(card(layers));
    assert.equal(await p.page.locator('[data-testid=plan-diff]').count(), 1);
    assert.equal(await p.page.textContent(`${card(layers)} [data-testid=plan-adds]`), '+2');
    assert.equal(await p.page.textContent(`${card(layers)} [data-testid=plan-changes]`), '~1');
    assert.equal(await p.page.textContent(`${card(layers)} [data-testid=plan-removes]`), '−0');
    const ba = await cells(layers);
    assert.deepEqual(ba.Tasks, ['1', '3']);
    assert.deepEqual(ba.Waves, ['1', '2']);
    assert.deepEqual(ba['Critical path'], [wire, '$1$2']);
    assert.deepEqual(ba.Parallelism, ['1', '2']);
    assert.deepEqual(ba.Next, [wire, wire]);  // its priority goes up
    assert.ok(await p.page.locator(`${card(layers)} [data-testid=plan-new-id]`, { hasText: '$1' }).count() >= 1, '$1 is named');
    // Full detail: the tasks it would create, by their $N names, and the field it would change.
    await p.page.check('[data-testid=plan-full]');
    await p.page.waitForSelector(`${card(layers)} [data-testid=plan-added]`);
    const added = await p.page.textContent(`${card(layers)} [data-testid=plan-added]`);
    assert.match(added, /\$1 Payment schema/);
    assert.match(added, /\$2 Payment service · under T\d+ · after \$1/);
    assert.match(await p.page.textContent(`${card(layers)} [data-testid=plan-changed]`), new RegExp(`${wire} priority: medium → high`));
    // Side by side.
    await p.page.check(`[data-testid=plan-row][data-id=${slices}] [data-testid=plan-pick]`);
    await p.page.waitForFunction(() => document.querySelectorAll('[data-testid=plan-diff]').length === 2);
    assert.equal(await p.page.textContent(`${card(slices)} [data-testid=plan-adds]`), '+1');
    assert.deepEqual((await cells(slices)).Parallelism, ['1', '2']);
    await shot(p.page, 'view-plans');
    assert.equal(await p.page.locator('#view-plans button:not([data-testid=plan-open]):not(.task-link)').count(), 0, 'no plan operation to run');
    // A task a plan rests on moves: the page says so without a reload.
    ctRun(dir, 'update', wire, '--notes', 'the checkout moved to its own service');
    await p.page.waitForSelector(`${card(layers)} [data-testid=plan-moved]`, { timeout: LIVE_MS });
    assert.match(await p.page.textContent(`${card(layers)} [data-testid=plan-moved]`), new RegExp(`${wire} changed`));
    await shot(p.page, 'view-plans-moved');
    // One plan's epic shows all its open plans; a discarded plan leaves the open list.
    await p.page.selectOption('[data-testid=plan-epic]', epic);
    await p.page.waitForFunction(() => document.querySelectorAll('[data-testid=plan-diff]').length === 2);
    ctRun(dir, 'plan', 'discard', slices, '--why', 'layers first');
    await p.page.waitForFunction(() => document.querySelectorAll('[data-testid=plan-row]').length === 1, null, { timeout: LIVE_MS });
    await p.page.selectOption('[data-testid=plan-status]', 'discarded');
    await p.page.waitForSelector(`[data-testid=plan-row][data-id=${slices}]`);
    await p.page.waitForSelector(`${card(slices)} [data-testid=plan-outcome]`);
    assert.match(await p.page.textContent(`${card(slices)} [data-testid=plan-outcome]`), /Discarded \(layers first\)/);
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

check('screenshot', async () => {
  // artifacts/dashboard.png: the board of a realistic project, for the README.
  const dir = projectDir('acme-webapp', true);
  const ids = importTasks(dir, [
    { id: 'E1', title: 'Live web dashboard', type: 'epic', priority: 'high' },
    { id: 'E2', title: 'Faster full-text search', type: 'epic' },
    { id: 'a1', parent: 'E1', title: 'Board with virtualised columns', labels: ['ui', 'perf'], priority: 'high', status: 'done' },
    { id: 'a2', parent: 'E1', title: 'Server-sent events for every change', labels: ['api'], priority: 'high', status: 'done' },
    { id: 'a3', parent: 'E1', title: 'Token login with an HttpOnly cookie', labels: ['security'], priority: 'critical' },
    { id: 'a4', parent: 'E1', title: 'Burn-down chart per epic', labels: ['ui', 'charts'], depends: ['a2'] },
    { id: 'a5', parent: 'E1', title: 'Keyboard navigation and focus rings', labels: ['a11y'] },
    { id: 'a6', parent: 'E1', title: 'Browser end-to-end tests', labels: ['tests'], depends: ['a3', 'a5'] },
    { id: 'a7', parent: 'E1', title: 'Screenshot for the README', labels: ['docs'], priority: 'low', depends: ['a6'] },
    { id: 'a8', parent: 'E1', title: 'Security review of the write mode', status: 'blocked', blockedBy: 'waiting for the platform team', labels: ['security'] },
    { id: 'b1', parent: 'E2', title: 'Profile tasks.find on 10k tasks', labels: ['perf'], priority: 'high' },
    { id: 'b2', parent: 'E2', title: 'Prefix index for titles and notes', labels: ['perf', 'db'], depends: ['b1'] },
    { id: 'b3', parent: 'E2', title: 'Benchmark in CI', labels: ['ci'], depends: ['b2'], priority: 'low' },
    { id: 'b4', parent: 'E2', title: 'Rank exact id matches first', labels: ['search'], status: 'done' },
    { id: 'c1', title: 'Upgrade the bundled SQLite', labels: ['deps'], status: 'done' },
    { id: 'c2', title: 'Flaky multiproc test on slow disks', labels: ['ci', 'bug'], priority: 'high', status: 'blocked', blockedBy: 'needs a reproducer' },
    { id: 'c3', title: 'Document the audit hash chain', labels: ['docs'], priority: 'low' },
  ]);
  ctRun(dir, 'session', 'start', '--scope', `epic:${ids.E1}`, '--agent', 'claude', '--name', 'dashboard', '--focus', ids.a3);
  ctRun(dir, 'session', 'start', '--scope', `epic:${ids.E1}`, '--agent', 'codex', '--focus', ids.a5);
  ctRun(dir, 'session', 'start', '--scope', `epic:${ids.E2}`, '--agent', 'gemini', '--focus', ids.b1);
  const server = await startServer(dir, ['--dashboard-write']);
  const p = await openPage(server, { person: true });
  try {
    await p.goto();
    await p.page.waitForSelector(`[data-testid=col-active] ${cardSel(ids.b1)}`);
    await p.page.waitForSelector('[data-testid=live][data-state=live]');
    await p.page.locator('[data-testid=filter-text]').hover(); // no stray hover on a card
    await shot(p.page, 'dashboard');
    noErrors(p.errors);
  } finally { await p.close(); await server.stop(); }
});

// ---------------------------------------------------------------------------------------------
// Run

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s: ${what}`)), ms);
  })]).finally(() => clearTimeout(timer));
}

let passed = 0;
let failed = 0;
const started = Date.now();
let n = 0;
for (const c of checks) {
  if (only && !only.has(c.name)) continue;
  n++;
  const t0 = Date.now();
  try {
    const note = await withTimeout(c.fn(), CHECK_MS, c.name);
    passed++;
    console.log(`ok   ${n} ${c.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)${typeof note === 'string' ? `: ${note}` : ''}`);
  } catch (e) {
    failed++;
    const msg = e instanceof assert.AssertionError ? `${e.message.split('\n')[0]}${e.actual !== undefined && typeof e.actual !== 'boolean' ? ` (got ${JSON.stringify(e.actual)?.slice(0, 300)})` : ''}` : e?.message ?? String(e);
    console.log(`FAIL ${n} ${c.name}: ${msg}`);
  }
}
await browser.close();
console.log(`screenshots in ${artifacts} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
