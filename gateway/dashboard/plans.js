// Plans view: the plans agents staged (plan.list) and what each would do to the store (plan.diff):
// adds, changes and removes, the epic's graph before and after, what moved since it was staged;
// up to five side by side. The page only shows plans: agents begin, apply, commit and discard them
// (ct plan …); no plan operation may run from here.
import { state, h, $, fill, query, showError, taskLink, fmtTime, ago, empty, AuthRequired } from './core.js';
import { syncOptions } from './board.js';

const MAX = 5; // plan.diff compares at most this many
const soft = (p) => p.catch((e) => { if (!(e instanceof AuthRequired)) showError(e); return null; });

export const plansView = {
  rows: [],
  more: false,
  selected: null, // plan ids compared, in the order they were picked; null: the view chooses
  full: false,
  built: false,
  seq: 0,         // the latest refresh: an older one that answers late draws nothing

  build() {
    if (this.built) return;
    this.built = true;
    const form = $('[data-testid=plan-filters]');
    form.addEventListener('submit', (e) => e.preventDefault());
    form.addEventListener('change', (e) => {
      const name = e.target.name;
      if (name === 'full') { this.full = e.target.checked; this.diffs(); return; }
      this.selected = null;
      if (name === 'status') this.refresh();
      else this.draw();
    });
  },

  show() {
    this.build();
    const want = (location.hash.split('/')[1] || '').toUpperCase().split(',').filter((id) => /^PL\d+$/.test(id));
    if (want.length) this.selected = want.slice(0, MAX);
    return this.refresh();
  },

  async refresh() {
    const status = $('[data-testid=plan-status]').value;
    const seq = ++this.seq;
    const env = await soft(query('plan.list', { status, limit: 200 }));
    if (seq !== this.seq) return;
    this.rows = Array.isArray(env?.data) ? env.data : [];
    this.more = !!env?._meta?.page?.hasMore;
    await this.draw();
  },

  /** The list as filtered, a selection that still exists in it, then the diffs. */
  async draw() {
    const picker = $('[data-testid=plan-epic]');
    const epicIds = Array.from(new Set(this.rows.map((r) => r.epicId).filter(Boolean)));
    syncOptions(picker, 'Any epic', epicIds.map((id) => [id, `${id} ${state.epics.find((e) => e.id === id)?.title || ''}`.trim()]));
    const shown = picker.value ? this.rows.filter((r) => r.epicId === picker.value) : this.rows;
    const ids = new Set(shown.map((r) => r.id));
    const had = this.selected;
    this.selected = (had || []).filter((id) => ids.has(id));
    // Nothing picked (or what was picked left the list): an epic's plans all at once, else the newest.
    if (!had || (had.length && !this.selected.length)) this.selected = shown.slice(0, picker.value ? MAX : 1).map((r) => r.id);
    const status = $('[data-testid=plan-status]').value;
    $('[data-testid=plans-summary]').textContent =
      `${shown.length}${this.more ? '+' : ''} ${status === 'all' ? '' : `${status} `}plan${shown.length === 1 ? '' : 's'}${picker.value ? ` of ${picker.value}` : ''}`;
    this.list(shown);
    await this.diffs();
  },

  list(rows) {
    const now = Date.now();
    const full = this.selected.length >= MAX;
    fill($('[data-testid=plan-list]'), rows.length
      ? h('table', { class: 'grid' },
        h('caption', { class: 'sr-only', text: 'Plans, newest first' }),
        h('thead', {}, h('tr', {}, ['Compare', 'Plan', 'Epic', 'Status', 'Ops', 'Agent', 'Changed'].map((c, i) => h('th', { scope: 'col', class: i === 4 ? 'num' : '', text: c })))),
        h('tbody', {}, rows.map((r) => {
          const on = this.selected.includes(r.id);
          return h('tr', { 'data-testid': 'plan-row', 'data-id': r.id, class: on ? 'picked' : '' },
            h('td', {}, h('input', {
              type: 'checkbox', checked: on, disabled: !on && full, 'aria-label': `Compare ${r.id}`, 'data-testid': 'plan-pick',
              onchange: (e) => this.pick(r.id, e.target.checked),
            })),
            h('td', {}, h('button', { type: 'button', class: 'link', 'data-testid': 'plan-open', onclick: () => { this.selected = [r.id]; this.draw(); } },
              h('span', { class: 'mono', text: r.id }), ` ${r.label}`)),
            h('td', {}, r.epicId ? taskLink(r.epicId) : '—'),
            h('td', {}, planBadge(r.status)),
            h('td', { class: 'num', text: r.ops }),
            h('td', { text: r.agent || '—' }),
            h('td', { title: r.updatedAt, text: ago(r.updatedAt, now) || fmtTime(r.updatedAt) }));
        })),
        this.more ? h('p', { class: 'muted small', text: 'The 200 newest are shown: ct plan list pages through the rest.' }) : null)
      : empty($('[data-testid=plan-status]').value === 'open'
        ? 'No open plans. Agents stage one with ct plan begin and plan.apply; it shows here until committed or discarded.'
        : 'No plans.'));
  },

  pick(id, on) {
    this.selected = on ? this.selected.concat(id).slice(0, MAX) : this.selected.filter((x) => x !== id);
    this.draw();
  },

  async diffs() {
    const box = $('[data-testid=plan-diffs]');
    const ids = (this.selected || []).slice();
    if (!ids.length) { fill(box, empty('Pick a plan to see what it would do.')); return; }
    const env = await soft(query('plan.diff', { plans: ids, detail: this.full ? 'full' : 'compact' }));
    if (JSON.stringify(ids) !== JSON.stringify(this.selected)) return;
    const data = Array.isArray(env?.data) ? env.data : [];
    box.classList.toggle('by-side', data.length > 1);
    fill(box, data.length ? data.map((d) => planCard(d, this.full)) : empty('No diff.'));
  },
};

function planBadge(status) {
  return h('span', { class: `badge ${status === 'committed' ? 'ok' : status === 'discarded' ? 'st-cancelled' : 'st-active'}`, text: status });
}

/** A task id: the task's link, or a task the plan would create ("$N", its title on hover). */
function ref(id, names) {
  if (/^T\d+$/.test(id)) return taskLink(id);
  return h('span', { class: 'mono planned', 'data-testid': 'plan-new-id', title: names.get(id) || 'a task this plan would create', text: id });
}

const show = (v) => (v === null || v === undefined || v === '' ? '—' : Array.isArray(v) ? (v.length ? v.join(', ') : '[]') : typeof v === 'object' ? JSON.stringify(v) : String(v));

function planCard(d, full) {
  const names = new Map((d.added || []).map((a) => [a.id, a.title]));
  const ids = (list) => (list?.length ? h('ol', { class: 'path' }, list.map((id) => h('li', {}, ref(id, names)))) : '—');
  const b = d.before || {};
  const a = d.after || {};
  const rows = [
    ['Tasks', b.tasks, a.tasks], ['Open', b.open, a.open], ['Waves', b.waves, a.waves],
    ['Critical path', b.critical, a.critical, true], ['Parallelism', b.parallelism, a.parallelism], ['Next', b.next, a.next, true],
  ];
  const moved = d.moved || [];
  return h('section', { class: 'panel plan-card', 'data-testid': 'plan-diff', 'data-id': d.id, 'aria-label': `Plan ${d.id}` },
    h('h3', {}, h('span', { class: 'mono', text: d.id }), ` ${d.label} `, planBadge(d.status),
      d.epicId ? h('span', { class: 'muted small' }, ' for ', taskLink(d.epicId)) : null),
    h('p', { class: 'plan-counts', 'data-testid': 'plan-counts' }, d.adds === undefined ? '' : [
      h('strong', { 'data-testid': 'plan-adds', text: `+${d.adds}` }), ' added · ',
      h('strong', { 'data-testid': 'plan-changes', text: `~${d.changes}` }), ' changed · ',
      h('strong', { 'data-testid': 'plan-removes', text: `−${d.removes}` }), ' removed · '], `${d.ops} op${d.ops === 1 ? '' : 's'}`),
    d.outcome ? h('p', { class: 'muted', 'data-testid': 'plan-outcome' }, d.status === 'committed' ? 'Committed' : 'Discarded',
      d.outcome.ids?.length ? [': made ', d.outcome.ids.map((id, i) => [i ? ', ' : '', ref(id, names)])] : '',
      d.outcome.reason ? ` (${d.outcome.reason})` : '') : null,
    moved.length ? h('div', { class: 'plan-warn', role: 'note', 'data-testid': 'plan-moved' },
      h('strong', { text: 'Moved since it was staged: ' }),
      moved.map((m, i) => [i ? ', ' : '', ref(m.id, names), m.was === null ? ' was added' : m.now === null ? ' is gone' : ' changed']),
      h('div', { class: 'small', text: `It will not commit as is: ct plan rebase ${d.id} takes the moves in where they do not conflict with it.` })) : null,
    d.error ? h('p', { class: 'form-error', 'data-testid': 'plan-error', text: `Op ${d.error.op} would fail: ${d.error.code}: ${d.error.message}` }) : null,
    d.before ? h('table', { class: 'grid ba', 'data-testid': 'plan-before-after' },
      h('thead', {}, h('tr', {}, h('td', {}), h('th', { scope: 'col', text: 'Before' }), h('th', { scope: 'col', text: 'After' }))),
      h('tbody', {}, rows.map(([name, x, y, list]) => h('tr', { class: JSON.stringify(x) === JSON.stringify(y) ? '' : 'changed' },
        h('th', { scope: 'row', text: name }),
        h('td', {}, list ? (Array.isArray(x) ? ids(x) : x ? ref(x, names) : '—') : show(x)),
        h('td', {}, list ? (Array.isArray(y) ? ids(y) : y ? ref(y, names) : '—') : show(y)))))) : null,
    full && d.added ? fullDetail(d, names) : null);
}

function fullDetail(d, names) {
  const waves = (w) => (w?.length ? h('ol', { class: 'waves' }, w.map((list, i) => h('li', { class: 'wave' },
    h('span', { class: 'wave-n', text: `Wave ${i + 1} ` }), list.map((id, k) => [k ? ', ' : '', ref(id, names)])))) : empty('No waves.'));
  return h('div', { class: 'plan-full', 'data-testid': 'plan-full-detail' },
    h('h4', { text: `Added (${d.added.length})` }),
    d.added.length ? h('ul', { class: 'plain', 'data-testid': 'plan-added' }, d.added.map((t) => h('li', {},
      h('span', { class: 'mono planned', text: t.id }), ` ${t.title}`,
      h('span', { class: 'muted small' }, t.parent ? [' · under ', ref(t.parent, names)] : '',
        t.depends?.length ? [' · after ', t.depends.map((id, i) => [i ? ', ' : '', ref(id, names)])] : '',
        t.priority ? ` · ${t.priority}` : '')))) : empty('Nothing.'),
    h('h4', { text: `Changed (${d.changed?.length ?? 0})` }),
    d.changed?.length ? h('ul', { class: 'changes', 'data-testid': 'plan-changed' }, d.changed.map((c) => h('li', {},
      ref(c.id, names), ' ', h('span', { class: 'field', text: c.field }), ': ',
      h('span', { class: 'before', text: show(c.from) }), ' → ', h('span', { class: 'after', text: show(c.to) })))) : empty('Nothing.'),
    h('h4', { text: `Removed (${d.removed?.length ?? 0})` }),
    d.removed?.length ? h('p', { 'data-testid': 'plan-removed' }, d.removed.map((id, i) => [i ? ', ' : '', ref(id, names)])) : empty('Nothing.'),
    h('div', { class: 'plan-waves' },
      h('div', {}, h('h4', { text: 'Waves before' }), waves(d.before?.waveIds)),
      h('div', {}, h('h4', { text: 'Waves after' }), waves(d.after?.waveIds))));
}
