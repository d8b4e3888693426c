// Epics, Sessions, Memory, Activity, Charts and Health views. Each has show() (entering the view) and
// refresh() (the store changed while it is on screen).
import {
  state, h, $, fill, query, call, showError, statusBadge, priorityBadge, taskLink, fmtTime, ago,
  duration, pool, empty, isWrite, write, AuthRequired, say, adviceText,
} from './core.js';
import { throughputChart, cycleChart, renderBurndown } from './charts.js';
import { syncOptions } from './board.js';

const soft = (p) => p.catch((e) => { if (!(e instanceof AuthRequired)) showError(e); return null; });

// ---------------------------------------------------------------------------------------------
// Epics: list with progress; the chosen one's tree, waves, critical path and burn-down.

export const epicsView = {
  minInterval: 2000, // live refreshes at most this often (each draws the burn-down from every task)
  selected: null,
  progress: new Map(),

  show() {
    const want = (location.hash.split('/')[1] || '').toUpperCase();
    if (want) this.selected = want;
    return this.refresh();
  },

  async refresh() {
    const epics = state.epics;
    const counts = await pool(epics, 4, (e) => query('orchestrate.status', { epicId: e.id }).then((r) => r.data, () => null));
    epics.forEach((e, i) => this.progress.set(e.id, counts[i]));
    this.renderList();
    if (!this.selected && epics.length) this.selected = epics[0].id;
    if (this.selected) await this.renderEpic(this.selected);
    else fill($('[data-testid=epic-detail]'), empty('No epics yet. An epic is a task of type epic (ct add "…" --type epic).'));
  },

  renderList() {
    const ul = $('[data-testid=epic-list]');
    if (!state.epics.length) { fill(ul, h('li', {}, empty('No epics.'))); return; }
    fill(ul, state.epics.map((e) => {
      const c = this.progress.get(e.id);
      const total = c ? Math.max(0, (c.tasks || 0) - (c.counts?.cancelled || 0)) : 0;
      const doneN = c?.counts?.done || 0;
      const pct = total ? Math.round((100 * doneN) / total) : 0;
      const bar = h('span', { class: 'bar' }, h('span', { class: 'bar-fill' }));
      bar.firstChild.style.width = `${pct}%`;
      return h('li', {}, h('a', {
        href: `#epics/${e.id}`, class: 'epic-item', 'data-testid': 'epic-item', dataset: { id: e.id },
        'aria-current': e.id === this.selected ? 'true' : null,
      },
      h('span', { class: 'epic-name' }, h('span', { class: 'mono', text: e.id }), ' ', e.title),
      h('span', { class: 'epic-progress', 'data-testid': 'epic-progress' }, bar,
        h('span', { class: 'muted small', text: c ? `${doneN}/${total} done (${pct} %)` : '…' }))));
    }));
  },

  async renderEpic(id) {
    const box = $('[data-testid=epic-detail]');
    const epic = state.epics.find((e) => e.id === id) || { id, title: '' };
    const [tree, waves, plan] = await Promise.all([
      soft(query('tasks.tree', { id, depth: 3 })),
      soft(query('orchestrate.waves', { epicId: id, limit: 1000 })),
      soft(query('orchestrate.analyze', { epicId: id })),
    ]);
    if (this.selected !== id) return;
    const c = this.progress.get(id);
    const burn = h('div', { class: 'burndown', 'data-testid': 'epic-burndown' }, h('p', { class: 'muted', text: 'Drawing the burn-down…' }));
    const a = plan?.data;
    fill(box,
      h('div', { class: 'epic-head' },
        h('h2', {}, h('span', { class: 'mono', text: epic.id }), ' ', epic.title || ''),
        c ? h('p', { class: 'muted' }, Object.entries(c.counts || {}).map(([k, v]) => h('span', { class: 'count-chip' }, statusBadge(k), ` ${v}`))) : null),
      h('div', { class: 'epic-grid' },
        h('section', { class: 'panel scroll', 'aria-labelledby': 'ep-tree' }, h('h3', { id: 'ep-tree', text: 'Tree' }),
          tree?.data?.length ? treeList(tree.data) : empty('Nothing under it.')),
        h('section', { class: 'panel scroll', 'aria-labelledby': 'ep-plan' }, h('h3', { id: 'ep-plan', text: 'Plan' }),
          a ? planBlock(a) : empty('No plan.'),
          h('h4', { text: 'Dependency waves' }), wavesBlock(waves?.data || []))),
      burn);
    renderBurndown(burn, epic, 'epic-burndown');
  },
};

const TREE_MAX = 300; // nodes drawn; a bigger tree says how many it left out

function treeList(nodes, budget = { left: TREE_MAX }) {
  const items = [];
  for (const n of nodes) {
    if (budget.left <= 0) { items.push(h('li', { class: 'muted', text: `… ${nodes.length - items.length} more (see the board, filtered by this epic)` })); break; }
    budget.left--;
    items.push(h('li', {},
      h('span', { class: 'tree-node' }, statusBadge(n.status), ' ', taskLink(n.id, n.title), ' ', priorityBadge(n.priority),
        n.waitingOn?.length ? h('span', { class: 'waiting small', text: ` waits on ${n.waitingOn.join(', ')}` }) : null),
      n.children?.length ? treeList(n.children, budget) : null));
  }
  return h('ul', { class: 'tree', 'data-testid': 'epic-tree' }, items);
}

function planBlock(a) {
  const cp = a.criticalPath?.ids || [];
  return h('div', { class: 'plan', 'data-testid': 'epic-plan' },
    h('p', {}, h('strong', { text: 'Critical path' }), ` (${a.criticalPath?.length ?? cp.length} steps): `),
    cp.length ? h('ol', { class: 'path', 'data-testid': 'critical-path' }, cp.map((id) => h('li', {}, taskLink(id)))) : h('p', { class: 'muted', text: 'none' }),
    h('p', {}, h('strong', { text: 'Parallelism: ' }), String(a.parallelism ?? '—'), ' unfinished tasks can run side by side at most.'),
    a.bottlenecks?.length ? h('div', {}, h('strong', { text: 'Bottlenecks' }),
      h('ul', { class: 'plain' }, a.bottlenecks.map((b) => h('li', {}, taskLink(b.id, b.title), h('span', { class: 'muted', text: ` holds up ${b.unblocks}` }))))) : null,
    a.cycles?.length ? h('p', { class: 'form-error', text: `Dependency cycles: ${a.cycles.map((c) => c.join(' → ')).join('; ')}` }) : null);
}

function wavesBlock(rows) {
  if (!rows.length) return empty('No waves.');
  const byWave = new Map();
  for (const r of rows) { if (!byWave.has(r.wave)) byWave.set(r.wave, []); byWave.get(r.wave).push(r); }
  return h('ol', { class: 'waves', 'data-testid': 'epic-waves' }, Array.from(byWave.entries()).sort((x, y) => x[0] - y[0]).map(([w, list]) => h('li', { class: 'wave' },
    h('span', { class: 'wave-n', text: `Wave ${w}` }),
    h('ul', { class: 'plain' }, list.slice(0, 40).map((r) => h('li', {}, statusBadge(r.status), ' ', taskLink(r.id, r.title), r.ready ? h('span', { class: 'badge ready', text: 'ready' }) : null)),
      list.length > 40 ? h('li', { class: 'muted', text: `… ${list.length - 40} more in this wave` }) : null))));
}

// ---------------------------------------------------------------------------------------------
// Sessions: claims (who holds what) and every session, active first.

export const sessionsView = {
  titles: new Map(),
  show() { return this.refresh(); },

  async refresh() {
    const focus = Array.from(new Set(state.sessions.map((x) => x.focus).filter(Boolean))).slice(0, 60);
    await pool(focus, 4, (id) => query('tasks.show', { id, detail: 'compact' }).then((r) => this.titles.set(id, r.data), () => null));
    this.render();
  },

  render() {
    const now = Date.now();
    const sess = state.sessions;
    const act = sess.filter((x) => x.status === 'active').length;
    $('[data-testid=sessions-summary]').textContent = `${sess.length}${state.sessionsMore ? '+' : ''} sessions, ${act} active`;
    const claims = sess.filter((x) => x.focus && (x.status === 'active' || x.status === 'suspended'));
    fill($('[data-testid=claims]'), claims.length
      ? h('ul', { class: 'claim-list' }, claims.map((x) => {
        const t = this.titles.get(x.focus);
        return h('li', { class: 'claim-card', 'data-testid': 'claim-row' },
          h('div', { class: 'who' }, h('strong', { text: x.agent || x.name || 'unnamed agent' }), ' holds'),
          h('div', {}, taskLink(x.focus, t?.title || '')),
          h('div', { class: 'muted small' }, `${x.status} · idle ${duration(x.updatedAt, now)} · `, h('span', { class: 'mono', text: x.id })),
          where(x) ? h('div', { class: 'muted small mono', 'data-testid': 'claim-where', text: where(x) }) : null,
          isWrite() ? releaseButton(x) : null);
      }))
      : empty('No session holds a task right now.'));
    fill($('[data-testid=sessions]'), sess.length
      ? h('table', { class: 'grid' },
        h('thead', {}, h('tr', {}, ['Session', 'Agent', 'Where', 'Status', 'Scope', 'Focus', 'Last active', 'Started'].map((c) => h('th', { scope: 'col', text: c })))),
        h('tbody', {}, sess.map((x) => h('tr', { 'data-testid': 'session-row', class: x.status === 'active' ? '' : 'dim' },
          h('td', {}, x.name ? h('div', { text: x.name }) : null, h('div', { class: 'mono small', text: x.id }), x.current ? h('span', { class: 'badge', text: 'current' }) : null),
          h('td', { text: x.agent || '—' }),
          h('td', { class: 'mono small', 'data-testid': 'session-where', text: where(x) || '—' }),
          h('td', {}, h('span', { class: `badge ses-${x.status}`, text: x.status })),
          h('td', { class: 'mono small', text: x.scope }),
          h('td', {}, x.focus ? taskLink(x.focus, this.titles.get(x.focus)?.title || '') : '—'),
          h('td', { title: x.updatedAt }, x.status === 'active' ? `idle ${duration(x.updatedAt, now)}` : ago(x.updatedAt, now)),
          h('td', { title: x.createdAt, text: fmtTime(x.createdAt) })))))
      : empty('No sessions yet.'));
  },
};

// Where a session runs (issue 53): its git worktree other than the main one, and its branch.
function where(x) {
  return [x.worktree, x.branch].filter(Boolean).join(' @ ');
}

function releaseButton(x) {
  const b = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'claim-release', text: 'Release' });
  b.addEventListener('click', async () => {
    b.disabled = true;
    await write('tasks.stop', { sessionId: x.id }, `Released ${x.focus}`);
    b.disabled = false;
  });
  return b;
}

// ---------------------------------------------------------------------------------------------
// Memory: what agents decided and learned. Proposed entries (a kind people govern) and stale ones
// (their files or tasks changed) first, then every entry by kind with its scope and use. In write
// mode a person verifies or retracts an entry here (memory.verify, memory.retract).

const KIND_ORDER = ['convention', 'decision', 'risk', 'pattern', 'learning', 'observation'];

export const memoryView = {
  stats: null,
  rows: [],
  more: false,
  retracting: null,  // {id, reason, focused}: a retract form open, kept across live refreshes
  show() { return this.refresh(); },

  async refresh() {
    const [stats, rows] = await Promise.all([
      soft(query('memory.stats', {})),
      soft(query('memory.list', { detail: 'full', limit: 200 })),
    ]);
    this.stats = stats?.data || null;
    this.rows = Array.isArray(rows?.data) ? rows.data : [];
    this.more = !!rows?._meta?.page?.hasMore;
    this.render();
  },

  render() {
    const s = this.stats;
    $('[data-testid=memory-summary]').textContent = s
      ? `${s.total} entries · ${s.byStatus.active} active · ${s.byStatus.proposed} proposed · ${s.stale} stale · ${s.neverApplied} never applied`
      : '';
    const proposed = this.rows.filter((x) => x.status === 'proposed');
    fill($('[data-testid=memory-proposed]'), proposed.length
      ? h('ul', { class: 'claim-list' }, proposed.map((x) => memoryCard(x, true)))
      : empty('Nothing waits for review.'));
    const stale = this.rows.filter((x) => x.stale && x.status === 'active');
    fill($('[data-testid=memory-stale]'), stale.length
      ? h('ul', { class: 'claim-list' }, stale.map((x) => memoryCard(x, false)))
      : empty('No entry is stale.'));
    const rank = (x) => (x.status === 'proposed' ? 0 : x.stale ? 1 : x.status === 'active' ? 2 : 3);
    const sorted = this.rows.slice().sort((a, b) => rank(a) - rank(b)
      || KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || String(b.updatedAt).localeCompare(String(a.updatedAt)));
    const now = Date.now();
    fill($('[data-testid=memory-entries]'), sorted.length
      ? h('table', { class: 'grid' },
        h('thead', {}, h('tr', {}, ['Entry', 'Kind', 'Scope', 'Status', 'Applied', 'Changed'].map((c) => h('th', { scope: 'col', text: c })))),
        h('tbody', {}, sorted.map((x) => h('tr', { 'data-testid': 'memory-row', 'data-id': x.id, class: rank(x) === 3 ? 'dim' : '' },
          h('td', {}, h('div', { text: x.title }), h('div', { class: 'mono small muted', text: x.id })),
          h('td', { text: x.kind }),
          h('td', { class: 'small' }, scopeText(x)),
          h('td', {}, h('span', { class: `badge mem-${x.stale && x.status === 'active' ? 'stale' : x.status}`, text: x.stale && x.status === 'active' ? 'stale' : x.status })),
          h('td', { title: x.usage?.lastAt || '' }, `${x.usage?.applied ?? 0}` + (x.usage?.lastAt ? ` · ${ago(x.usage.lastAt, now)}` : '')),
          h('td', { title: x.updatedAt, text: fmtTime(x.updatedAt) })))),
        this.more ? h('p', { class: 'muted small', text: 'The 200 newest are shown: ct memory list pages through the rest.' }) : null)
      : empty('No memory yet: agents record entries with memory.observe.'));
  },
};

function scopeText(x) {
  const parts = [];
  if (x.files?.length) parts.push(x.files.join(', '));
  if (x.labels?.length) parts.push(x.labels.map((l) => `#${l}`).join(' '));
  if (x.tasks?.length) parts.push(x.tasks.join(', '));
  if (x.epic) parts.push(`epic ${x.epic}`);
  return parts.length ? parts.join(' · ') : '—';
}

function memoryCard(x, review) {
  const why = x.stale ? `${x.stale.file || x.stale.task} ${x.stale.what} ${fmtTime(x.stale.since)}` : '';
  return h('li', { class: `claim-card mem-card`, 'data-testid': review ? 'memory-proposed-row' : 'memory-stale-row', 'data-id': x.id },
    h('div', {}, h('strong', { text: x.title })),
    x.body ? h('div', { class: 'small', text: x.body.length > 240 ? `${x.body.slice(0, 240)}…` : x.body }) : null,
    h('div', { class: 'muted small' }, `${x.kind} · `, h('span', { class: 'mono', text: x.id }),
      x.source?.agent ? ` · by ${x.source.agent}` : '', why ? ` · ${why}` : ''),
    isWrite() ? memoryActions(x) : null);
}

function memoryActions(x) {
  const box = h('div', { class: 'inline' });
  const verify = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'memory-verify', text: x.status === 'proposed' ? 'Verify' : 'Still holds' });
  const retract = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'memory-retract', text: 'Retract…' });
  verify.addEventListener('click', async () => {
    verify.disabled = true;
    await write('memory.verify', { id: x.id }, `Verified ${x.id}`);
    await memoryView.refresh();
  });
  // The form a retract opens; a live refresh (another process changed the store) draws it again
  // with what was typed, so nobody loses a reason half written.
  const openForm = () => {
    const state = memoryView.retracting;
    const reason = h('input', { type: 'text', 'aria-label': `Why ${x.id} no longer holds`, 'data-testid': 'memory-retract-reason', placeholder: 'why it no longer holds' });
    reason.value = state.reason;
    reason.addEventListener('input', () => { state.reason = reason.value; });
    reason.addEventListener('focus', () => { state.focused = true; });
    reason.addEventListener('blur', () => { state.focused = false; });
    const confirm = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'memory-retract-confirm', text: 'Retract' });
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      const done = await write('memory.retract', { id: x.id, reason: reason.value }, `Retracted ${x.id}`);
      if (done) {
        memoryView.retracting = null;
        await memoryView.refresh();
      } else confirm.disabled = false;
    });
    fill(box, reason, confirm);
    if (state.focused) reason.focus();
  };
  retract.addEventListener('click', () => {
    memoryView.retracting = { id: x.id, reason: '', focused: true };
    openForm();
  });
  if (memoryView.retracting?.id === x.id) openForm();
  else fill(box, verify, retract);
  return box;
}

// ---------------------------------------------------------------------------------------------
// Activity: the audit trail (system.log), live, with filters (intent among them); validate.audit's
// verdict; the sealed epochs; the calls agents proposed, which a person approves or rejects here in
// write mode (system.proposal.approve, system.proposal.reject).

const OPS = ['tasks.add', 'tasks.update', 'tasks.complete', 'tasks.reopen', 'tasks.start', 'tasks.stop', 'tasks.delete',
  'tasks.import', 'tasks.relate', 'tasks.undo', 'session.start', 'session.end', 'session.suspend', 'session.resume'];

export const activityView = {
  rows: [],
  filters: {},
  nextOffset: null,
  built: false,
  lastSeq: 0,

  build() {
    if (this.built) return;
    this.built = true;
    fill($('#op-list'), OPS.map((o) => h('option', { value: o })));
    const form = $('[data-testid=activity-filters]');
    form.addEventListener('submit', (e) => { e.preventDefault(); this.readFilters(); });
    form.addEventListener('change', () => this.readFilters());
    form.querySelector('[data-action=clear-activity]').addEventListener('click', () => { form.reset(); this.readFilters(); });
    $('[data-testid=activity-more]').addEventListener('click', () => this.more());
  },

  readFilters() {
    const f = $('[data-testid=activity-filters]').elements;
    const next = {};
    for (const k of ['operation', 'id', 'session', 'since', 'agent', 'category']) {
      let v = f[k].value.trim();
      if (k === 'id') v = v.toUpperCase();
      if (v) next[k] = v;
    }
    if (JSON.stringify(next) === JSON.stringify(this.filters)) return;
    this.filters = next;
    this.rows = [];
    this.lastSeq = 0;
    this.load(true);
  },

  show() {
    this.build();
    return Promise.all([this.load(!this.rows.length), this.audit(), this.proposals(), this.epochs()]);
  },

  refresh() { return Promise.all([this.load(false), this.audit(), this.proposals(), this.epochs()]); },

  rejecting: null,  // {id, note, focused}: a reject form open, kept across live refreshes

  async proposals() {
    const env = await soft(query('system.proposal.list', { status: 'pending', detail: 'full' }));
    const rows = Array.isArray(env?.data) ? env.data : [];
    fill($('[data-testid=proposals]'), rows.length
      ? h('ul', { class: 'claim-list' }, rows.map((x) => h('li', { 'data-testid': 'proposal-row', 'data-id': x.id },
        h('div', {}, h('strong', { class: 'mono', text: x.id }), ' ', h('span', { class: 'mono', text: x.operation }),
          x.params?.id ? h('span', { class: 'mono', text: ` ${x.params.id}` }) : null,
          h('span', { class: 'muted small', text: ` · ${x.rule}${x.agent ? ` · by ${x.agent}` : ''}${x.reason ? ` · “${x.reason}”` : ''}` })),
        x.preview?.changes?.length
          ? h('div', { class: 'small muted', text: x.preview.changes.map((c) => `${c.id ? `${c.id}.` : ''}${c.field}: ${JSON.stringify(c.before ?? null)} → ${JSON.stringify(c.after ?? null)}`).join('; ') })
          : null,
        isWrite() ? this.decide(x) : null)))
      : empty('Nothing waits for a person.'));
  },

  decide(x) {
    const box = h('div', { class: 'inline' });
    const approve = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'proposal-approve', text: 'Approve' });
    const reject = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'proposal-reject', text: 'Reject…' });
    approve.addEventListener('click', async () => {
      approve.disabled = true;
      await write('system.proposal.approve', { id: x.id }, `Approved ${x.id}`);
      await this.refresh();
    });
    const openForm = () => {
      const form = this.rejecting;
      const note = h('input', { type: 'text', 'aria-label': `Why ${x.id} is rejected`, 'data-testid': 'proposal-reject-note', placeholder: 'why not' });
      note.value = form.note;
      note.addEventListener('input', () => { form.note = note.value; });
      note.addEventListener('focus', () => { form.focused = true; });
      note.addEventListener('blur', () => { form.focused = false; });
      const confirm = h('button', { type: 'button', class: 'small-btn', 'data-testid': 'proposal-reject-confirm', text: 'Reject' });
      confirm.addEventListener('click', async () => {
        confirm.disabled = true;
        const done = await write('system.proposal.reject', { id: x.id, note: note.value }, `Rejected ${x.id}`);
        if (done) {
          this.rejecting = null;
          await this.refresh();
        } else confirm.disabled = false;
      });
      fill(box, note, confirm);
      if (form.focused) note.focus();
    };
    reject.addEventListener('click', () => { this.rejecting = { id: x.id, note: '', focused: true }; openForm(); });
    if (this.rejecting?.id === x.id) openForm();
    else fill(box, approve, reject);
    return box;
  },

  async epochs() {
    const env = await soft(query('system.log', { operation: 'system.epoch.seal', detail: 'full', limit: 20 }));
    const rows = (Array.isArray(env?.data) ? env.data : []).filter((r) => !r.outcome && r.params?.name);
    const el = $('[data-testid=epochs]');
    fill(el, rows.length
      ? ['Sealed epochs: ', ...rows.map((r, i) => h('span', { 'data-testid': 'epoch', title: r.params.summary || '' },
        `${i ? ', ' : ''}${r.params.name} (#${r.seq}, ${fmtTime(r.at)})`))]
      : []);
  },

  /** First page; rows newer than what is shown are added on top and marked new. */
  async load(fresh) {
    let env;
    try {
      env = await query('system.log', { ...this.filters, limit: 50 });
    } catch (e) {
      if (e instanceof AuthRequired) return;
      fill($('[data-testid=activity]'), h('p', { class: 'form-error', 'data-testid': 'activity-error', text: `${e.code}: ${e.message}` }, e.fix ? h('span', { text: ` Fix: ${adviceText(e.fix)}` }) : null));
      return;
    }
    const data = Array.isArray(env.data) ? env.data : [];
    const prev = this.lastSeq;
    if (fresh || !this.rows.length) {
      this.rows = data;
      this.nextOffset = env._meta?.page?.hasMore ? env._meta.page.nextOffset : null;
    } else {
      const newer = data.filter((r) => r.seq > prev);
      if (newer.length === data.length) {
        // A whole page is new: what lay between is not loaded; start over from this page.
        this.rows = data;
        this.nextOffset = env._meta?.page?.hasMore ? env._meta.page.nextOffset : null;
      } else {
        this.rows = newer.concat(this.rows);
        if (this.nextOffset !== null) this.nextOffset += newer.length;
      }
      if (newer.length) say(`${newer.length} new audit ${newer.length === 1 ? 'row' : 'rows'}: ${newer.map((r) => r.operation).join(', ')}`);
    }
    this.lastSeq = this.rows.length ? Math.max(...this.rows.map((r) => r.seq)) : 0;
    this.render(fresh ? Infinity : prev);
  },

  async more() {
    if (this.nextOffset === null) return;
    const env = await soft(query('system.log', { ...this.filters, limit: 100, offset: this.nextOffset }));
    if (!env) return;
    const data = Array.isArray(env.data) ? env.data : [];
    const have = new Set(this.rows.map((r) => r.seq));
    this.rows = this.rows.concat(data.filter((r) => !have.has(r.seq)));
    this.nextOffset = env._meta?.page?.hasMore ? env._meta.page.nextOffset : null;
    this.render(Infinity);
  },

  render(newerThan) {
    const box = $('[data-testid=activity]');
    $('[data-testid=activity-more]').hidden = this.nextOffset === null;
    if (!this.rows.length) { fill(box, empty(Object.keys(this.filters).length ? 'No audit rows match.' : 'No changes recorded yet.')); return; }
    fill(box, h('table', { class: 'grid activity' },
      h('caption', { class: 'sr-only', text: 'Audit trail, newest first' }),
      h('thead', {}, h('tr', {}, ['#', 'When', 'Operation', 'Task', 'Agent', 'Session', 'Changed'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', {}, this.rows.map((r) => h('tr', { 'data-testid': 'activity-row', class: r.seq > newerThan ? 'new' : '', dataset: { seq: String(r.seq) } },
        h('td', { class: 'mono', text: r.seq }),
        h('td', { class: 'nowrap' }, h('time', { datetime: r.at, title: r.at, text: fmtTime(r.at, true) })),
        h('td', {}, h('span', { class: 'mono', text: r.operation }), r.outcome && r.outcome !== 'ok' ? h('span', { class: 'badge st-blocked', text: r.outcome }) : null,
          r.intent?.category ? h('span', { class: 'badge', 'data-testid': 'activity-intent', title: r.intent.reasoning || '', text: r.intent.category }) : null),
        h('td', {}, rowTask(r)),
        h('td', { 'data-testid': 'activity-agent', text: r.agent || '—' }),
        h('td', { class: 'mono small', text: r.session || '' }),
        h('td', { class: 'small' }, (r.changed || []).join(', '), r.reason ? h('div', { class: 'reason' }, h('q', { text: r.reason })) : null))))));
  },

  async audit() {
    const el = $('[data-testid=audit-status]');
    let env;
    try { env = await call('query', 'validate.audit', {}); } catch (e) { return; }
    const d = env.success ? env.data : env.error?.details;
    if (env.success && d?.valid) {
      el.className = 'badge ok';
      el.textContent = `✓ Audit hash chain intact (${d.rows} rows)`;
      el.dataset.valid = 'true';
    } else {
      el.className = 'badge bad';
      const at = d?.firstBroken?.seq;
      el.textContent = `✗ Audit hash chain broken${at ? ` at row #${at}` : ''}: ${env.error?.message || 'see ct validate audit'}`;
      el.dataset.valid = 'false';
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Charts: throughput and cycle time (system.stats), the burn-down of an epic.

export const chartsView = {
  minInterval: 2000,
  epic: '',
  show() { return this.refresh(); },
  async refresh() {
    const box = $('[data-testid=charts]');
    let picker = box.querySelector('select[name=burn-epic]');
    if (!picker) {
      picker = h('select', { name: 'burn-epic', 'data-testid': 'burn-epic' });
      picker.addEventListener('change', () => { this.epic = picker.value; this.refresh(); });
      fill(box,
        h('div', { class: 'chart-row' }, h('div', { class: 'slot-a' }), h('div', { class: 'slot-b' })),
        h('div', { class: 'burn-pick' }, h('label', {}, 'Burn-down of ', picker)),
        h('div', { class: 'slot-c' }));
    }
    syncOptions(picker, 'Choose an epic', state.epics.map((e) => [e.id, `${e.id} ${e.title}`]));
    if (!this.epic && state.epics.length) this.epic = state.epics[0].id;
    picker.value = this.epic;
    const env = await soft(query('system.stats', { period: 'day', count: 30 }));
    const periods = env?.data?.periods || [];
    fill(box.querySelector('.slot-a'), throughputChart(periods));
    fill(box.querySelector('.slot-b'), cycleChart(periods));
    const slot = box.querySelector('.slot-c');
    const epic = state.epics.find((e) => e.id === this.epic);
    if (epic) await renderBurndown(slot, epic, 'chart-burndown');
    else fill(slot, empty('No epic to draw a burn-down for.'));
  },
};

// ---------------------------------------------------------------------------------------------
// Health: system.health, system.metrics, system.capabilities.

export const healthView = {
  minInterval: 2000,
  show() { return this.refresh(); },
  async refresh() {
    const [health, metrics, caps, ver] = await Promise.all([
      call('query', 'system.health', {}).catch(() => null),
      call('query', 'system.metrics', {}).catch(() => null),
      call('query', 'system.capabilities', { detail: 'full' }).catch(() => null),
      call('query', 'system.version', {}).catch(() => null),
    ]);
    const hd = health?.success ? health.data : health?.error?.details;
    const checks = hd?.checks || [];
    const m = metrics?.success ? metrics.data : null;
    const ops = m?.operations || [];
    const cl = caps?.success && Array.isArray(caps.data) ? caps.data : [];
    const unavailable = cl.filter((c) => !c.available);
    const v = ver?.data;
    fill($('[data-testid=health]'),
      h('section', { class: 'panel', 'aria-labelledby': 'hh-store' },
        h('h2', { id: 'hh-store' }, 'Store ', hd ? h('span', { class: `badge hs-${hd.status}`, 'data-testid': 'health-status', text: hd.status }) : null),
        v ? h('p', { class: 'muted', text: `ct ${v.version}, schema ${v.schemaVersion}` }) : null,
        health && !health.success && !hd ? h('p', { class: 'form-error', text: `${health.error?.code}: ${health.error?.message}` }) : null,
        checks.length ? h('table', { class: 'grid', 'data-testid': 'health-checks' },
          h('thead', {}, h('tr', {}, ['Check', 'Status', 'Detail'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, checks.map((c) => h('tr', {},
            h('th', { scope: 'row', text: c.name }),
            h('td', {}, h('span', { class: `badge hs-${c.status}`, text: c.status })),
            h('td', {}, c.detail || '', c.fix ? h('div', { class: 'small' }, 'Fix: ', h('code', { text: adviceText(c.fix) })) : null))))) : null),
      h('section', { class: 'panel', 'aria-labelledby': 'hh-metrics' },
        h('h2', { id: 'hh-metrics', text: 'Latency per operation (since the server started)' }),
        m ? h('p', { class: 'muted', text: `${m.calls} calls, ${m.errors} errors` }) : null,
        ops.length ? h('table', { class: 'grid', 'data-testid': 'health-metrics' },
          h('thead', {}, h('tr', {}, ['Operation', 'Calls', 'Errors', 'p50 ms', 'p95 ms'].map((c, i) => h('th', { scope: 'col', class: i ? 'num' : '', text: c })))),
          h('tbody', {}, ops.map((o) => h('tr', {},
            h('td', { class: 'mono', text: o.op }), h('td', { class: 'num', text: o.calls }), h('td', { class: 'num', text: o.errors }),
            h('td', { class: 'num', text: fix1(o.p50Ms) }), h('td', { class: 'num', text: fix1(o.p95Ms) })))))
          : empty('No calls measured yet.')),
      h('section', { class: 'panel', 'aria-labelledby': 'hh-caps' },
        h('h2', { id: 'hh-caps', text: 'Capabilities' }),
        h('p', { 'data-testid': 'health-caps' }, `${cl.length} operations, ${cl.length - unavailable.length} available here`,
          unavailable.length ? `, ${unavailable.length} not:` : '.'),
        unavailable.length ? h('table', { class: 'grid' },
          h('thead', {}, h('tr', {}, ['Operation', 'Why not', 'Fix'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, unavailable.map((c) => h('tr', {},
            h('td', { class: 'mono', text: c.operation }), h('td', { text: c.reason || '' }), h('td', {}, c.fix ? h('code', { text: adviceText(c.fix) }) : ''))))) : null,
        h('details', {}, h('summary', { text: 'Every operation' }),
          h('table', { class: 'grid small' },
            h('thead', {}, h('tr', {}, ['Operation', 'Tool', 'Engine', 'Available'].map((c) => h('th', { scope: 'col', text: c })))),
            h('tbody', {}, cl.map((c) => h('tr', {},
              h('td', { class: 'mono', text: c.operation }), h('td', { text: c.gateway }), h('td', { text: c.engine }), h('td', { text: c.available ? 'yes' : 'no' }))))))));
  },
};

/** The task an audit row is about: its id, else the first task named in `changed` (tasks.add). */
function rowTask(r) {
  const id = r.id || (r.changed || []).map((c) => /^(T\d+)\./.exec(c)?.[1]).find(Boolean) || '';
  return /^T\d+$/.test(id) ? taskLink(id) : id;
}

const fix1 = (v) => (typeof v === 'number' ? (v < 10 ? v.toFixed(2) : v.toFixed(1)) : '');
