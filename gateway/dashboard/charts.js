// Charts as inline SVG, drawn from JSON: bars (created/completed per day), lines (cycle time,
// burn-down). Each chart is a figure with a title, a text summary for screen readers and a data
// table behind a <details>.
import { h, s, fill, query, empty } from './core.js';

const M = { top: 26, right: 14, bottom: 30, left: 40 };

/** A y scale with round steps (whole numbers for counts). */
function yScale(maxVal, integer) {
  const v = maxVal > 0 ? maxVal : 1;
  const raw = v / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((x) => x >= raw) || 10 * p;
  if (integer) step = Math.max(1, Math.ceil(step));
  const n = Math.max(1, Math.ceil(v / step - 1e-9));
  return { max: step * n, step, n };
}

const fmtNum = (v) => (Number.isInteger(v) || Math.abs(v) >= 100 ? String(Math.round(v)) : String(Number(v.toFixed(2))));

function axes(c, labels, sc, unit) {
  const { svg, W, H } = c;
  const iw = W - M.left - M.right;
  const ih = H - M.top - M.bottom;
  const g = s('g', { class: 'axes' });
  for (let k = 0; k <= sc.n; k++) {
    const t = sc.step * k;
    const y = M.top + ih - (t / sc.max) * ih;
    g.append(s('line', { x1: M.left, x2: M.left + iw, y1: y, y2: y, class: 'grid-line' }));
    g.append(s('text', { x: M.left - 6, y: y + 4, 'text-anchor': 'end', class: 'tick', text: fmtNum(t) }));
  }
  // Day labels: evenly spaced, the last always shown, none overlapping it.
  const step = Math.max(1, Math.ceil(labels.length / Math.max(2, Math.floor(iw / 56))));
  labels.forEach((l, i) => {
    const last = i === labels.length - 1;
    if (!last && (i % step || labels.length - 1 - i < step * 0.7)) return;
    const x = M.left + (iw * (i + 0.5)) / labels.length;
    g.append(s('text', { x, y: H - M.bottom + 16, 'text-anchor': 'middle', class: 'tick', text: l }));
  });
  if (unit) g.append(s('text', { x: M.left - 6, y: 12, 'text-anchor': 'end', class: 'tick unit', text: unit }));
  svg.append(g);
}

function figure(id, title, summary, svg, table, legend) {
  return h('figure', { class: 'chart', 'data-testid': id },
    h('figcaption', {}, h('span', { class: 'chart-title', id: `${id}-t`, text: title }), legend ? h('span', { class: 'legend' }, legend) : null),
    svg, h('p', { class: 'sr-only', id: `${id}-d`, text: summary }),
    table ? h('details', { class: 'chart-data' }, h('summary', { text: 'Data' }), table) : null);
}

function canvas(id, W, H) {
  return { W, H, svg: s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-t ${id}-d`, class: 'chart-svg', preserveAspectRatio: 'xMidYMid meet' }) };
}

function key(cls, text) {
  return h('span', { class: 'key' }, h('span', { class: `swatch ${cls}`, 'aria-hidden': 'true' }), text);
}

function dataTable(head, rows) {
  return h('table', { class: 'grid small' },
    h('thead', {}, h('tr', {}, head.map((x) => h('th', { scope: 'col', text: x })))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', { text: c ?? '' }))))));
}

const short = (day) => day.slice(5); // 2026-01-31 -> 01-31

/** Grouped bars: created and completed per period. */
export function throughputChart(periods) {
  const id = 'chart-throughput';
  const c = canvas(id, 520, 220);
  const { svg, W, H } = c;
  const sc = yScale(Math.max(1, ...periods.map((p) => Math.max(p.created || 0, p.completed || 0))), true);
  const max = sc.max;
  axes(c, periods.map((p) => short(p.period)), sc, 'tasks');
  const iw = W - M.left - M.right;
  const ih = H - M.top - M.bottom;
  const band = iw / Math.max(1, periods.length);
  const bw = Math.max(1, Math.min(14, band * 0.38));
  periods.forEach((p, i) => {
    const x0 = M.left + band * i + band / 2;
    for (const [k, cls, dx] of [['created', 'bar-created', -bw], ['completed', 'bar-completed', 0]]) {
      const v = p[k] || 0;
      if (!v) continue;
      const hh = (v / max) * ih;
      svg.append(s('rect', { x: x0 + dx, y: M.top + ih - hh, width: bw, height: hh, class: cls, rx: 1 },
        s('title', { text: `${p.period}: ${v} ${k}` })));
    }
  });
  const tc = periods.reduce((n, p) => n + (p.created || 0), 0);
  const td = periods.reduce((n, p) => n + (p.completed || 0), 0);
  return figure(id, 'Created and completed per day', `${tc} tasks created and ${td} completed over ${periods.length} days.`, svg,
    dataTable(['Day', 'Created', 'Completed'], periods.map((p) => [p.period, p.created || 0, p.completed || 0])),
    [key('bar-created', 'created'), key('bar-completed', 'completed')]);
}

/** Lines: p50 and p90 cycle time (hours) per period, points only where tasks were completed. */
export function cycleChart(periods) {
  const id = 'chart-cycle';
  const c = canvas(id, 520, 220);
  const vals = periods.flatMap((p) => [p.cycleP50H, p.cycleP90H]).filter((v) => typeof v === 'number');
  const sc = yScale(Math.max(1, ...vals), false);
  axes(c, periods.map((p) => short(p.period)), sc, 'hours');
  for (const [k, cls] of [['cycleP90H', 'line-p90'], ['cycleP50H', 'line-p50']]) line(c, periods.map((p) => p[k]), sc.max, cls, (i, v) => `${periods[i].period}: ${k === 'cycleP50H' ? 'median' : '90th percentile'} ${fmtNum(v)} h`);
  const withData = periods.filter((p) => typeof p.cycleP50H === 'number');
  const summary = withData.length
    ? `Median cycle time (created to completed) on ${withData.length} days with completions; latest ${fmtNum(withData[withData.length - 1].cycleP50H)} hours.`
    : 'No task was completed in this period.';
  return figure(id, 'Cycle time (created → completed)', summary, c.svg,
    dataTable(['Day', 'p50 h', 'p90 h'], withData.map((p) => [p.period, fmtNum(p.cycleP50H), typeof p.cycleP90H === 'number' ? fmtNum(p.cycleP90H) : ''])),
    [key('line-p50', 'median'), key('line-p90', '90th percentile')]);
}

function line(c, values, max, cls, tip) {
  const { svg, W, H } = c;
  const iw = W - M.left - M.right;
  const ih = H - M.top - M.bottom;
  const pts = [];
  values.forEach((v, i) => {
    if (typeof v !== 'number') return;
    pts.push([M.left + (iw * (i + 0.5)) / values.length, M.top + ih - (v / max) * ih, v, i]);
  });
  if (pts.length > 1) svg.append(s('polyline', { points: pts.map((p) => `${p[0].toFixed(1)},${p[1].toFixed(1)}`).join(' '), class: cls, fill: 'none' }));
  for (const [x, y, v, i] of pts) svg.append(s('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: 3, class: `${cls} dot` }, s('title', { text: tip(i, v) })));
}

// ---------------------------------------------------------------------------------------------
// Burn-down of an epic: remaining (not done, not cancelled) tasks at the end of each day.

/** Every descendant of epicId with the fields the burn-down needs (pages of 500). */
export async function epicTimeline(epicId) {
  const rows = [];
  for (let offset = 0; offset < 100000;) {
    const env = await query('tasks.list', {
      under: epicId, fields: ['id', 'status', 'createdAt', 'completedAt', 'cancelledAt'], limit: 500, offset, archived: 'include',
    });
    const data = Array.isArray(env.data) ? env.data : [];
    rows.push(...data);
    const page = env._meta?.page;
    if (!page?.hasMore || !data.length) break;
    offset = page.nextOffset ?? offset + data.length;
  }
  return rows;
}

const DAY = 86400000;
const dayOf = (iso) => (iso ? Math.floor(Date.parse(iso) / DAY) : null);

export function burndownSeries(rows, now = Date.now(), maxDays = 60) {
  const today = Math.floor(now / DAY);
  const created = rows.map((r) => dayOf(r.createdAt)).filter((d) => d !== null && !isNaN(d));
  if (!created.length) return [];
  const start = Math.max(Math.min(...created) - 1, today - maxDays + 1); // from the day before the first task
  const out = [];
  for (let d = start; d <= today; d++) {
    let remaining = 0;
    let total = 0;
    for (const r of rows) {
      const c = dayOf(r.createdAt);
      if (c === null || c > d) continue;
      total++;
      const f = Math.min(dayOf(r.completedAt) ?? Infinity, dayOf(r.cancelledAt) ?? Infinity);
      if (!(f <= d)) remaining++;
    }
    out.push({ day: new Date(d * DAY).toISOString().slice(0, 10), remaining, total });
  }
  return out;
}

export function burndownChart(epic, series, id = 'chart-burndown') {
  const c = canvas(id, 1000, 240);
  const svg = c.svg;
  if (!series.length) {
    return figure(id, `Burn-down of ${epic.id}`, 'No tasks under this epic yet.', empty('No tasks under this epic yet.'), null);
  }
  const sc = yScale(Math.max(1, ...series.map((p) => p.total)), true);
  axes(c, series.map((p) => short(p.day)), sc, 'tasks');
  // Scope (every task created by then) dashed, remaining solid.
  line(c, series.map((p) => p.total), sc.max, 'line-scope', (i, v) => `${series[i].day}: ${v} tasks in scope`);
  line(c, series.map((p) => p.remaining), sc.max, 'line-remaining', (i, v) => `${series[i].day}: ${v} remaining`);
  const last = series[series.length - 1];
  return figure(id, `Burn-down of ${epic.id} ${epic.title || ''}`.trim(),
    `${last.remaining} of ${last.total} tasks remain on ${last.day}; ${series.length} days shown.`, svg,
    dataTable(['Day', 'Remaining', 'In scope'], series.map((p) => [p.day, p.remaining, p.total])),
    [key('line-remaining', 'remaining'), key('line-scope', 'in scope')]);
}

/** Fills el with the burn-down of one epic. */
export async function renderBurndown(el, epic, id) {
  try {
    const rows = await epicTimeline(epic.id);
    fill(el, burndownChart(epic, burndownSeries(rows), id));
  } catch (e) {
    fill(el, h('p', { class: 'form-error', text: `Burn-down: ${e.code || ''} ${e.message}` }));
  }
}
