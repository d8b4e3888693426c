// The board: one virtualised column per status. Each column pages through tasks.list (or
// tasks.find for a text filter) 100 rows at a time, keeps only the rows in view (plus a few) in
// the DOM at a fixed row height over a spacer as tall as the whole column, and loads a page when
// it scrolls into view. Cards use a roving tabindex: Tab enters a column, arrows move.
import {
  state, h, $, fill, query, totalOf, findRows, showError, openTask, priorityBadge,
  STATUSES, STATUS_LABEL, write, isWrite, announce,
} from './core.js';

export const ROW_H = 92;      // px per card row, fixed: the virtualisation depends on it
const PAGE = 100;             // rows per request (tasks.list limit ≤ 100 here)
const OVERSCAN = 5;           // rows rendered above and below the visible ones
const LIST_FIELDS = ['id', 'title', 'status', 'priority', 'type', 'parent', 'labels', 'blockedBy', 'waitingOn'];
const FIND_FIELDS = ['id', 'title', 'status', 'priority', 'type', 'parent', 'labels', 'blockedBy'];

export const filters = { epic: '', label: '', session: '', text: '', sort: 'updated' };
const seenLabels = new Set();

class Column {
  constructor(status) {
    this.status = status;
    this.pages = new Map();     // page number -> rows
    this.loading = new Map();   // page number -> promise
    this.total = null;          // null until the first page arrives
    this.gen = 0;               // bumped on reset/refresh: late replies of older generations are dropped
    this.rows = new Map();      // index -> row element in the DOM
    this.current = 0;           // index of the card that Tab reaches (roving tabindex)
    this.pendingFocus = -1;
    this.frame = 0;
    const hid = `col-h-${status}`;
    this.countEl = h('span', { class: 'count', 'data-testid': `count-${status}`, text: '…' });
    this.spacer = h('div', { class: 'spacer' });
    this.emptyEl = h('p', { class: 'col-empty muted', text: 'No tasks', hidden: true });
    this.viewport = h('div', {
      class: 'col-scroll', role: 'list', 'aria-labelledby': hid, 'data-testid': `scroll-${status}`,
    }, this.spacer, this.emptyEl);
    this.el = h('section', { class: `col col-${status}`, 'data-testid': `col-${status}`, 'aria-labelledby': hid },
      h('h2', { class: 'col-head', id: hid }, h('span', { class: 'col-dot', 'aria-hidden': 'true' }),
        h('span', { text: STATUS_LABEL[status] }), this.countEl),
      this.viewport);
    this.viewport.addEventListener('scroll', () => this.schedule(), { passive: true });
    this.viewport.addEventListener('keydown', (e) => this.onKey(e));
    this.viewport.addEventListener('focusin', (e) => {
      const card = e.target.closest?.('.card');
      if (card) this.current = Number(card.dataset.index);
    });
  }

  request(offset) {
    if (filters.text) {
      const f = { query: filters.text, status: [this.status], limit: PAGE, offset, fields: FIND_FIELDS };
      if (filters.epic) f.under = filters.epic;
      if (filters.label) f.label = [filters.label];
      if (filters.session) { f.sessionId = filters.session; f.inScope = true; }
      return ['tasks.find', f];
    }
    const p = { status: [this.status], limit: PAGE, offset, fields: LIST_FIELDS, sort: filters.sort };
    if (filters.sort === 'updated' || filters.sort === 'created') p.order = 'desc';
    if (filters.epic) p.under = filters.epic;
    if (filters.label) p.label = [filters.label];
    if (filters.session) { p.sessionId = filters.session; p.inScope = true; }
    return ['tasks.list', p];
  }

  async fetchPage(page) {
    const [op, params] = this.request(page * PAGE);
    const env = await query(op, params);
    const rows = op === 'tasks.find' ? findRows(env.data) : (Array.isArray(env.data) ? env.data : []);
    for (const r of rows) for (const l of r.labels || []) seenLabels.add(l);
    return { rows, total: totalOf(env, page * PAGE) };
  }

  ensure(page) {
    if (this.pages.has(page) || this.loading.has(page)) return;
    const gen = this.gen;
    const p = this.fetchPage(page).then((r) => {
      if (gen !== this.gen) return;
      this.pages.set(page, r.rows);
      this.total = r.total;
      this.render();
      board.updateSummary();
    }, (e) => { if (gen === this.gen) showError(e, 'Loading the board'); })
      .finally(() => { if (this.loading.get(page) === p) this.loading.delete(page); });
    this.loading.set(page, p);
  }

  /** Filters changed: start over from the top. */
  reset() {
    this.gen++;
    this.pages.clear();
    this.loading.clear();
    this.total = null;
    this.current = 0;
    this.viewport.scrollTop = 0;
    for (const el of this.rows.values()) el.remove();
    this.rows.clear();
    this.render();
  }

  /** Data changed: re-fetch the pages in view, swap them in at once (no flicker). */
  async refresh() {
    const gen = ++this.gen;
    this.loading.clear();
    const [first, last] = this.range();
    const pages = [];
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(first, last) / PAGE); p++) pages.push(p);
    try {
      const res = await Promise.all(pages.map((p) => this.fetchPage(p)));
      if (gen !== this.gen) return;
      this.pages = new Map(pages.map((p, i) => [p, res[i].rows]));
      this.total = res[res.length - 1].total;
      if (res[0].total > this.total) this.total = res[0].total;
      this.render();
    } catch (e) {
      if (gen === this.gen) showError(e, 'Refreshing the board');
    }
  }

  range() {
    const vh = Math.min(this.viewport.clientHeight || 600, 4000);
    const top = this.viewport.scrollTop;
    let first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    let last = Math.ceil((top + vh) / ROW_H) + OVERSCAN;
    if (this.total !== null) last = Math.min(last, this.total - 1);
    return [first, last];
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
  }

  row(i) { return this.pages.get(Math.floor(i / PAGE))?.[i % PAGE]; }

  render() {
    const total = this.total ?? 0;
    this.spacer.style.height = `${total * ROW_H}px`;
    this.countEl.textContent = this.total === null ? '…' : String(total);
    this.emptyEl.hidden = this.total !== 0;
    const [first, last] = this.range();
    if (this.total === null) { this.ensure(0); }
    else {
      for (let p = Math.floor(first / PAGE); p <= Math.floor(last / PAGE); p++) if (p * PAGE < total) this.ensure(p);
    }
    const active = document.activeElement;
    const focusedId = active && this.viewport.contains(active) ? active.dataset?.id : null;
    let lostFocus = false;
    for (const [i, el] of this.rows) {
      if (i < first || i > last || i >= total) {
        if (el.contains(active)) lostFocus = true;
        el.remove();
        this.rows.delete(i);
      }
    }
    if (this.current >= total) this.current = Math.max(0, total - 1);
    if (this.current < first || this.current > last) this.current = Math.min(Math.floor(this.viewport.scrollTop / ROW_H), Math.max(0, total - 1));
    for (let i = first; i <= last && i < total; i++) {
      const row = this.row(i);
      const holder = row ? state.holders.get(row.id) : null;
      const key = row ? `${JSON.stringify(row)}|${holder ? holder.id + holder.agent : ''}|${total}` : `loading|${total}`;
      const old = this.rows.get(i);
      if (old && old.dataset.key === key) continue;
      const fresh = row ? this.card(row, i, total, holder) : this.placeholder(i, total);
      fresh.dataset.key = key;
      if (old) {
        if (old.contains(active)) lostFocus = true;
        old.replaceWith(fresh);
      } else this.spacer.append(fresh);
      this.rows.set(i, fresh);
    }
    for (const [i, el] of this.rows) {
      const b = el.firstElementChild;
      if (b && b.classList.contains('card')) b.tabIndex = i === this.current ? 0 : -1;
    }
    if (this.pendingFocus >= 0 && this.rows.get(this.pendingFocus)?.firstElementChild?.classList.contains('card')) {
      const i = this.pendingFocus;
      this.pendingFocus = -1;
      this.focusCard(i);
    } else if (lostFocus) {
      const same = focusedId && this.viewport.querySelector(`.card[data-id="${CSS.escape(focusedId)}"]`);
      const b = same || this.rows.get(this.current)?.firstElementChild;
      if (b && b.classList.contains('card')) b.focus({ preventScroll: true });
    }
  }

  placeholder(i, total) {
    const el = h('div', { role: 'listitem', class: 'row', 'aria-setsize': total, 'aria-posinset': i + 1 },
      h('div', { class: 'card skeleton', 'aria-label': 'Loading' }));
    el.style.transform = `translateY(${i * ROW_H}px)`;
    return el;
  }

  card(t, i, total, holder) {
    const meta = [];
    if (t.blockedBy) meta.push(h('span', { class: 'blocked-by', title: `Blocked by: ${t.blockedBy}` }, h('span', { class: 'tag-blocked', text: 'Blocked:' }), ' ', t.blockedBy));
    if (t.waitingOn?.length) meta.push(h('span', { class: 'waiting', title: `Waits on ${t.waitingOn.join(', ')}` }, 'Waits on ', t.waitingOn.slice(0, 3).join(', '), t.waitingOn.length > 3 ? ` +${t.waitingOn.length - 3}` : ''));
    if (!t.blockedBy) {
      if (t.parent) meta.push(h('span', { class: 'parent mono', title: `Parent ${t.parent}` }, '↑', t.parent));
      for (const l of (t.labels || []).slice(0, 3)) meta.push(h('span', { class: 'label', text: `#${l}` }));
    }
    const btn = h('button', {
      type: 'button', class: `card edge-${t.priority || 'medium'}`, 'data-testid': 'card',
      dataset: { id: t.id, index: String(i), status: t.status || this.status }, tabindex: '-1',
    },
    h('span', { class: 'card-top' },
      h('span', { class: 'mono id', text: t.id }),
      t.type === 'epic' ? h('span', { class: 'badge type-epic', text: 'epic' }) : null,
      priorityBadge(t.priority),
      holder ? h('span', { class: 'holder', title: `Claimed by session ${holder.id}` }, h('span', { class: 'sr-only', text: 'claimed by ' }), '● ', holder.agent || holder.name || holder.id) : null),
    h('span', { class: 'card-title', 'data-testid': 'card-title', text: t.title }),
    meta.length ? h('span', { class: 'card-meta' }, meta) : null);
    const el = h('div', { role: 'listitem', class: 'row', 'aria-setsize': total, 'aria-posinset': i + 1 }, btn);
    el.style.transform = `translateY(${i * ROW_H}px)`;
    return el;
  }

  focusCard(i) {
    const total = this.total ?? 0;
    if (!total) return;
    i = Math.max(0, Math.min(total - 1, i));
    this.current = i;
    const vp = this.viewport;
    if (i * ROW_H < vp.scrollTop) vp.scrollTop = i * ROW_H;
    else if ((i + 1) * ROW_H > vp.scrollTop + vp.clientHeight) vp.scrollTop = (i + 1) * ROW_H - vp.clientHeight;
    const b = this.rows.get(i)?.firstElementChild;
    if (b && b.classList.contains('card')) { b.tabIndex = 0; b.focus({ preventScroll: true }); }
    else { this.pendingFocus = i; this.render(); }
  }

  onKey(e) {
    const card = e.target.closest?.('.card');
    if (!card || e.altKey || e.ctrlKey || e.metaKey) return;
    const i = Number(card.dataset.index);
    const perPage = Math.max(1, Math.floor(this.viewport.clientHeight / ROW_H) - 1);
    let to = null;
    switch (e.key) {
      case 'ArrowDown': to = i + 1; break;
      case 'ArrowUp': to = i - 1; break;
      case 'PageDown': to = i + perPage; break;
      case 'PageUp': to = i - perPage; break;
      case 'Home': to = 0; break;
      case 'End': to = (this.total ?? 1) - 1; break;
      case 'ArrowLeft': case 'ArrowRight': {
        const cols = board.columns;
        const k = cols.indexOf(this) + (e.key === 'ArrowLeft' ? -1 : 1);
        if (k >= 0 && k < cols.length) { e.preventDefault(); cols[k].enter(i - Math.floor(this.viewport.scrollTop / ROW_H)); }
        return;
      }
      default: return;
    }
    e.preventDefault();
    this.render();
    this.focusCard(to);
  }

  /** Focus the card at this position from the top of the visible area (from a neighbour column). */
  enter(offsetInView) {
    if (!this.total) return;
    const top = Math.floor(this.viewport.scrollTop / ROW_H);
    this.focusCard(top + Math.max(0, offsetInView));
  }
}

export const board = {
  columns: [],
  built: false,

  build() {
    if (this.built) return;
    this.built = true;
    const wrap = $('[data-testid=board]');
    this.columns = STATUSES.map((s) => new Column(s));
    fill(wrap, this.columns.map((c) => c.el));
    wrap.addEventListener('click', (e) => {
      const card = e.target.closest('.card[data-id]');
      if (card) openTask(card.dataset.id, card);
    });
    const form = $('[data-testid=filters]');
    let timer = 0;
    const apply = () => { clearTimeout(timer); this.readFilters(); };
    form.addEventListener('change', apply);
    form.addEventListener('input', (e) => {
      if (e.target.tagName !== 'INPUT') return;
      clearTimeout(timer);
      timer = setTimeout(() => this.readFilters(), 300);
    });
    form.addEventListener('submit', (e) => { e.preventDefault(); apply(); });
    form.querySelector('[data-action=clear-filters]').addEventListener('click', () => {
      form.reset();
      form.elements.sort.value = 'updated';
      this.readFilters();
    });
    const add = $('[data-testid=add-form]');
    add.addEventListener('submit', (e) => { e.preventDefault(); this.addTask(add); });
    window.addEventListener('resize', () => this.columns.forEach((c) => c.schedule()));
  },

  readFilters() {
    const f = $('[data-testid=filters]').elements;
    const next = {
      epic: f.epic.value,
      label: f.label.value.trim().replace(/^#/, '').toLowerCase(),
      session: f.session.value,
      text: f.text.value.trim(),
      sort: f.sort.value || 'updated',
    };
    const hint = $('[data-testid=filter-hint]');
    hint.hidden = !next.text;
    hint.textContent = next.text ? 'Best matches first.' : '';
    if (JSON.stringify(next) === JSON.stringify(filters)) return;
    Object.assign(filters, next);
    this.columns.forEach((c) => c.reset());
  },

  show() {
    this.build();
    if (!this.loaded) { this.loaded = true; this.columns.forEach((c) => c.reset()); }
    else this.columns.forEach((c) => c.schedule());
    this.fillSelects();
    $('[data-testid=add-form]').hidden = !isWrite();
  },

  async refresh() {
    this.fillSelects();
    await Promise.all(this.columns.map((c) => c.refresh()));
    this.updateSummary();
  },

  updateSummary() {
    const parts = this.columns.map((c) => `${c.total ?? '…'} ${c.status}`);
    const total = this.columns.reduce((n, c) => n + (c.total ?? 0), 0);
    const active = [];
    if (filters.text) active.push(`matching “${filters.text}”`);
    if (filters.epic) active.push(`under ${filters.epic}`);
    if (filters.label) active.push(`labelled ${filters.label}`);
    if (filters.session) active.push(`in the scope of ${filters.session}`);
    $('[data-testid=board-summary]').textContent = `${total} task${total === 1 ? '' : 's'}${active.length ? ' ' + active.join(', ') : ''}: ${parts.join(' · ')}`;
    const dl = $('#label-list');
    if (dl.children.length !== seenLabels.size) {
      fill(dl, Array.from(seenLabels).sort().slice(0, 200).map((l) => h('option', { value: l })));
    }
  },

  fillSelects() {
    const f = $('[data-testid=filters]').elements;
    syncOptions(f.epic, 'All tasks', state.epics.map((e) => [e.id, `${e.id} ${e.title}`]));
    const sess = state.sessions.filter((x) => x.status === 'active' || x.status === 'suspended');
    syncOptions(f.session, 'Any session', sess.map((x) => [x.id, `${x.agent || x.name || 'session'} · ${x.scope} (${x.id})`]));
    const add = $('[data-testid=add-form]').elements;
    syncOptions(add.parent, 'None (top level)', state.epics.map((e) => [e.id, `${e.id} ${e.title}`]));
  },

  async addTask(form) {
    const f = form.elements;
    const title = f.title.value.trim();
    if (title.length < 3) { f.title.focus(); announce('A title needs at least 3 characters'); return; }
    const params = { title, priority: f.priority.value };
    if (f.parent.value) params.parent = f.parent.value;
    const labels = f.labels.value.split(/[\s,]+/).map((l) => l.replace(/^#/, '')).filter(Boolean);
    if (labels.length) params.labels = labels;
    const btn = f[f.length - 1];
    btn.disabled = true;
    const env = await write('tasks.add', params);
    btn.disabled = false;
    if (env) {
      announce(`Added ${env.data?.id || 'the task'}: ${title}`);
      f.title.value = '';
      f.labels.value = '';
      f.title.focus();
      board.refresh();
    }
  },
};

/** Replaces a select's options (keeping the first, "any", one and the current choice). */
export function syncOptions(select, anyText, pairs) {
  const keep = select.value;
  const want = JSON.stringify([anyText, pairs]);
  if (select.dataset.sig === want) return;
  select.dataset.sig = want;
  fill(select, h('option', { value: '', text: anyText }), pairs.map(([v, t]) => h('option', { value: v, text: t })));
  if (keep && !pairs.some(([v]) => v === keep)) select.append(h('option', { value: keep, text: keep }));
  select.value = keep;
}
