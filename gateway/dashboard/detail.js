// The task detail panel: fields, notes, its message thread, dependencies (tasks.deps), relations (tasks.relates) and
// history (tasks.history); in write mode also edit, complete / reopen and claim management.
import {
  state, h, $, fill, query, clearError, statusBadge, priorityBadge, taskLink, fmtTime, ago,
  duration, isWrite, write, AuthRequired,
} from './core.js';

const panel = () => $('[data-testid=detail]');
let opener = null;
let loadGen = 0;
const threadDrafts = new Map();  // task id -> the message a person is writing to its thread

export const detail = {
  onChanged: () => {},

  async open(id, from) {
    const wasOpen = !!state.detailId;
    state.detailId = id;
    if (!wasOpen || from) opener = from || document.activeElement;
    const p = panel();
    p.hidden = false;
    document.body.classList.add('detail-open');
    $('[data-testid=detail-title]').textContent = id;
    fill($('[data-testid=detail-body]'), h('p', { class: 'muted', text: 'Loading…' }));
    p.focus();
    await this.refresh();
  },

  close(restoreFocus) {
    if (!state.detailId) return;
    const id = state.detailId;
    state.detailId = null;
    loadGen++;
    panel().hidden = true;
    document.body.classList.remove('detail-open');
    if (!restoreFocus) return;
    let target = opener && opener.isConnected ? opener : null;
    if (!target) target = document.querySelector(`.card[data-id="${CSS.escape(id)}"]`);
    (target || $('#main')).focus();
  },

  async refresh() {
    const id = state.detailId;
    if (!id) return;
    const gen = ++loadGen;
    const [show, deps, rel, hist] = await Promise.allSettled([
      query('tasks.show', { id, detail: 'full' }),
      query('tasks.deps', { id }),
      query('tasks.relates', { id }),
      query('tasks.history', { id, limit: 50 }),
    ]);
    if (gen !== loadGen || state.detailId !== id) return;
    if (show.status === 'rejected') {
      if (show.reason instanceof AuthRequired) return;
      fill($('[data-testid=detail-body]'), h('p', { class: 'form-error', text: `${show.reason.code || ''} ${show.reason.message}` }));
      return;
    }
    render(show.value.data, deps.status === 'fulfilled' ? deps.value.data : null,
      rel.status === 'fulfilled' ? rel.value.data : null, hist.status === 'fulfilled' ? hist.value.data : []);
  },
};

function render(t, deps, rel, history) {
  const body = $('[data-testid=detail-body]');
  // Keep what the user is typing in the edit form across live refreshes.
  // … and the focus, on whatever control had it (the nodes are rebuilt).
  const active = document.activeElement;
  const focusSel = active && body.contains(active) ? focusSelector(active) : null;
  const draft = saveForm(body.querySelector('form.edit'));
  const editOpen = !!body.querySelector('details.edit-wrap[open]');
  $('[data-testid=detail-title]').textContent = `${t.id} · ${t.title}`;
  const holder = state.holders.get(t.id);
  const rows = [];
  const field = (label, value) => { if (value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && !value.length)) rows.push(h('dt', { text: label }), h('dd', {}, value)); };
  field('Status', h('span', {}, statusBadge(t.status), t.status === 'blocked' && t.blockedBy ? ` ${t.blockedBy}` : ''));
  field('Priority', priorityBadge(t.priority, true));
  field('Type', t.type);
  field('Parent', t.parent ? taskLink(t.parent) : null);
  // tasks.show's claim says until when the holder's lease runs (a lapsed one is free to take).
  const claim = t.claim;
  const lease = claim?.leaseEnds ? h('span', { 'data-testid': 'detail-lease' }, claim.lapsed ? ', lease ended ' : ', lease ends ', timeEl(claim.leaseEnds)) : '';
  field('Claimed by', holder || claim ? h('span', { 'data-testid': 'detail-holder' },
    `${holder?.agent || claim?.agent || holder?.name || 'a session'} (`, h('span', { class: 'mono', text: holder?.id || claim.session }), ')',
    holder ? `, idle ${duration(holder.updatedAt)}` : '', lease,
    claim?.worktree || claim?.branch ? h('span', { class: 'mono small', 'data-testid': 'detail-where', text: ` in ${[claim.worktree, claim.branch].filter(Boolean).join(' @ ')}` }) : '') : null);
  field('Labels', (t.labels || []).map((l) => h('span', { class: 'label', text: `#${l}` })));
  field('Phase', t.phase);
  field('Size', t.size);
  field('Created', timeEl(t.createdAt));
  field('Updated', timeEl(t.updatedAt));
  field('Completed', timeEl(t.completedAt));
  field('Cancelled', t.cancelledAt ? h('span', {}, timeEl(t.cancelledAt), t.cancellationReason ? ` — ${t.cancellationReason}` : '') : null);
  field('Archived', t.archived ? 'yes' : null);
  field('Version', String(t.version ?? ''));
  field('Research', (t.research || []).join(', '));
  // issues.sync: the tracker item it is kept in step with, its sync state and any conflict (both values).
  field('Tracker', (t.sync || []).map((link) => h('span', { 'data-testid': 'detail-sync' },
    /^https?:\/\//.test(link.url || '') ? h('a', { href: link.url, rel: 'noopener noreferrer', target: '_blank', text: link.key }) : h('span', { class: 'mono', text: link.key }),
    ` (${link.state})`,
    link.conflict ? h('ul', { class: 'plain small' }, Object.entries(link.conflict).map(([name, c]) =>
      h('li', { 'data-testid': 'sync-conflict', text: `${name}: here ${JSON.stringify(c.here)}, there ${JSON.stringify(c.there)}` }))) : '')));

  const sections = [
    h('h3', { class: 'sr-only', text: 'Fields' }),
    h('dl', { class: 'fields', 'data-testid': 'detail-fields' }, rows),
  ];
  if (t.description) sections.push(h('h3', { text: 'Description' }), h('p', { class: 'prewrap', 'data-testid': 'detail-description', text: t.description }));
  if (t.acceptance?.length) sections.push(h('h3', { text: 'Acceptance' }), h('ul', { class: 'plain' }, t.acceptance.map((a) => h('li', { text: a }))));
  if (t.files?.length) sections.push(h('h3', { text: 'Files' }), h('ul', { class: 'plain mono' }, t.files.map((f) => h('li', { text: f }))));

  if (isWrite()) sections.push(actions(t, holder));

  sections.push(h('h3', { text: `Notes (${(t.notes || []).length})` }));
  sections.push(t.notes?.length
    ? h('ol', { class: 'notes', 'data-testid': 'detail-notes' }, t.notes.map((n) => h('li', { 'data-testid': 'note' },
      h('div', { class: 'note-at muted' }, timeEl(n.at)), h('div', { class: 'prewrap', text: n.text }))))
    : h('p', { class: 'muted', 'data-testid': 'detail-notes', text: 'No notes.' }));

  // Its thread (session.send to the task): the newest messages; a signed-in person posts to it.
  const thread = t.thread || { count: 0, last: [] };
  sections.push(h('h3', { 'data-testid': 'thread-heading', text: `Thread (${thread.count})` }));
  sections.push((thread.last || []).length
    ? h('ol', { class: 'notes', 'data-testid': 'detail-thread' }, thread.last.map((m) => h('li', { 'data-testid': 'message' },
      h('div', { class: 'note-at muted' }, timeEl(m.at), ' ', h('span', { 'data-testid': 'message-from', text: m.from })),
      h('div', { class: 'prewrap', 'data-testid': 'message-body', text: m.body }))))
    : h('p', { class: 'muted', 'data-testid': 'detail-thread', text: 'No messages.' }));
  if (isWrite()) {
    // What the person is writing outlives the live rebuilds of the panel (and a look at another task).
    // As long as session.send's body may be (messages.maxChars at its most): the project's own
    // limit, if lower, is the server's to tell, not the page's to cut silently.
    const text = h('textarea', { name: 'body', rows: 2, maxlength: 20000, required: true, 'data-testid': 'thread-body' });
    text.value = threadDrafts.get(t.id) || '';
    text.addEventListener('input', () => { if (text.value) threadDrafts.set(t.id, text.value); else threadDrafts.delete(t.id); });
    const send = h('button', { type: 'submit', class: 'primary', 'data-testid': 'thread-send', text: 'Send' });
    const post = h('form', { class: 'edit', 'data-testid': 'thread-form', 'aria-label': `Message whoever works on ${t.id}` },
      h('label', {}, 'Message whoever works on it, now or next', text), send);
    post.addEventListener('submit', async (e) => {
      e.preventDefault();
      const body = text.value.trim();
      if (!body) return;
      send.disabled = true;
      const env = await write('session.send', { to: t.id, body }, `Sent to ${t.id}'s thread`);
      send.disabled = false;
      if (env) { threadDrafts.delete(t.id); text.value = ''; detail.onChanged(); }
    });
    sections.push(post);
  }

  sections.push(h('h3', { text: 'Dependencies' }));
  const up = deps?.upstream || [];
  const down = deps?.downstream || [];
  sections.push(h('div', { class: 'deps', 'data-testid': 'detail-deps' },
    h('div', {}, h('h4', { text: `Needs (${up.length})` }), depList(up, 'Depends on nothing.')),
    h('div', {}, h('h4', { text: `Needed by (${down.length})` }), depList(down, 'Nothing depends on it.'))));

  const relates = rel?.relates || t.relates || [];
  sections.push(h('h3', { text: `Relations (${relates.length})` }));
  sections.push(relates.length
    ? h('ul', { class: 'plain', 'data-testid': 'detail-relates' }, relates.map((r) => h('li', {},
      h('span', { class: 'badge', text: r.type || 'relates-to' }), ' ', taskLink(r.id), r.reason ? h('span', { class: 'muted', text: ` — ${r.reason}` }) : null)))
    : h('p', { class: 'muted', 'data-testid': 'detail-relates', text: 'No relations.' }));

  sections.push(h('h3', { text: 'History' }));
  sections.push(historyTable(history || []));

  fill(body, sections);
  if (draft) restoreForm(body.querySelector('form.edit'), draft);
  if (editOpen) body.querySelector('details.edit-wrap')?.setAttribute('open', '');
  if (focusSel) (body.querySelector(focusSel) || panel()).focus();
}

function focusSelector(el) {
  if (el.name) return `[name="${CSS.escape(el.name)}"]`;
  if (el.dataset.task) return `[data-task="${CSS.escape(el.dataset.task)}"]`;
  if (el.dataset.testid) return `[data-testid="${CSS.escape(el.dataset.testid)}"]`;
  if (el.tagName === 'SUMMARY') return 'details.edit-wrap > summary';
  return null;
}

function timeEl(iso) {
  if (!iso) return null;
  return h('time', { datetime: iso, title: iso }, `${fmtTime(iso)} (${ago(iso)})`);
}

function depList(list, none) {
  if (!list.length) return h('p', { class: 'muted', text: none });
  return h('ul', { class: 'plain' }, list.map((d) => h('li', {},
    statusBadge(d.status), ' ', taskLink(d.id, d.title), d.distance > 1 ? h('span', { class: 'muted', text: ` (indirect, ${d.distance} steps)` }) : null)));
}

function show(v) {
  if (v === undefined) return '∅';
  if (v === null) return 'null';
  if (typeof v === 'string') return v.length > 140 ? `${v.slice(0, 140)}…` : v;
  const text = JSON.stringify(v);
  return text.length > 140 ? `${text.slice(0, 140)}…` : text;
}

/** One change of a history row, readable: notes as the text added, lists as their items. */
function change(c) {
  if (c.field === 'created') return 'created';
  if (c.field === 'notes' && Array.isArray(c.after)) {
    const before = Array.isArray(c.before) ? c.before.length : 0;
    const added = c.after.slice(before).map((n) => (typeof n === 'string' ? n : n?.text)).filter(Boolean);
    return ['added ', h('q', { class: 'after', text: show(added.join(' / ')) })];
  }
  const list = (v) => (Array.isArray(v) && v.every((x) => typeof x !== 'object') ? (v.length ? v.join(', ') : '(none)') : v);
  return [h('span', { class: 'before', text: show(list(c.before)) }), ' → ', h('span', { class: 'after', text: show(list(c.after)) })];
}

function historyTable(rows) {
  if (!rows.length) return h('p', { class: 'muted', 'data-testid': 'history', text: 'No recorded changes.' });
  return h('table', { class: 'grid history', 'data-testid': 'history' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'When' }), h('th', { scope: 'col', text: 'Who' }), h('th', { scope: 'col', text: 'What' }))),
    h('tbody', {}, rows.map((r) => h('tr', { 'data-testid': 'history-row' },
      h('td', { class: 'nowrap' }, timeEl(r.at), h('div', { class: 'muted mono', text: `#${r.seq}` })),
      h('td', {}, h('div', { text: r.agent || 'unknown agent' }), r.session ? h('div', { class: 'muted mono small', text: r.session }) : null),
      h('td', {},
        h('div', {}, h('span', { class: 'mono', text: r.operation }), r.outcome && r.outcome !== 'ok' ? h('span', { class: 'badge st-blocked', text: r.outcome }) : null),
        h('ul', { class: 'changes' }, (r.changes || []).map((c) => h('li', {},
          h('span', { class: 'field', text: c.field }), ': ',
          change(c)))),
        r.reason ? h('div', { class: 'reason' }, 'Why: ', h('q', { text: r.reason })) : null)))));
}

// ---------------------------------------------------------------------------------------------
// Write mode

function actions(t, holder) {
  const box = h('div', { class: 'actions', 'data-testid': 'detail-actions' });
  const done = t.status === 'done' || t.status === 'cancelled';
  const act = async (btn, op, params, text) => {
    btn.disabled = true;
    const env = await write(op, params, text);
    btn.disabled = false;
    if (env) detail.onChanged();
    return env;
  };
  const quick = h('div', { class: 'row-actions' });
  if (t.status === 'done') {
    const b = h('button', { type: 'button', class: 'primary', 'data-testid': 'reopen-btn', text: 'Reopen' });
    b.addEventListener('click', () => act(b, 'tasks.reopen', { id: t.id }, `Reopened ${t.id}`));
    quick.append(b);
  } else if (!done) {
    const b = h('button', { type: 'button', class: 'primary', 'data-testid': 'complete-btn', text: 'Complete' });
    b.addEventListener('click', () => act(b, 'tasks.complete', { id: t.id, ifVersion: t.version }, `Completed ${t.id}`));
    quick.append(b);
  }
  box.append(h('h3', { text: 'Actions' }), quick);

  // Claim: release it, hand it to another session, or give an unclaimed task to one.
  if (!done) {
    const others = state.sessions.filter((x) => x.status === 'active' && (!holder || x.id !== holder.id));
    const claim = h('div', { class: 'claim', 'data-testid': 'claim' });
    if (holder) {
      const rel = h('button', { type: 'button', 'data-testid': 'release-btn', text: 'Release claim' });
      rel.addEventListener('click', () => act(rel, 'tasks.stop', { sessionId: holder.id }, `Released ${t.id} from ${holder.agent || holder.id}`));
      claim.append(h('p', {}, `Claimed by ${holder.agent || holder.name || 'a session'} (`, h('span', { class: 'mono', text: holder.id }), ').'), rel);
    }
    if (others.length) {
      const sel = h('select', { name: 'target', 'data-testid': 'assign-session', 'aria-label': holder ? 'Reassign to session' : 'Assign to session' },
        others.map((x) => h('option', { value: x.id, text: `${x.agent || x.name || 'session'} (${x.id})${x.focus ? ` — releases ${x.focus}` : ''}` })));
      const go = h('button', { type: 'button', 'data-testid': 'assign-btn', text: holder ? 'Reassign' : 'Assign' });
      go.addEventListener('click', async () => {
        const target = sel.value;
        go.disabled = true;
        if (holder) {
          const stopped = await write('tasks.stop', { sessionId: holder.id });
          if (!stopped) { go.disabled = false; return; }
        }
        const who = state.sessions.find((x) => x.id === target);
        await act(go, 'tasks.start', { id: t.id, sessionId: target }, `${t.id} is now claimed by ${who?.agent || who?.name || target}`);
      });
      claim.append(h('div', { class: 'inline' }, h('label', {}, holder ? 'Reassign to ' : 'Assign to ', sel), go));
    }
    if (claim.childElementCount) box.append(h('h4', { text: 'Claim' }), claim);
  }

  // Edit: title, priority, status (pending/blocked, with what it waits for), a note.
  if (!done) {
    const form = h('form', { class: 'edit', 'data-testid': 'edit-form', 'aria-label': `Edit ${t.id}` },
      h('label', {}, 'Title', h('input', { name: 'title', type: 'text', required: true, minlength: 3, maxlength: 200, value: t.title, 'data-testid': 'edit-title' })),
      h('div', { class: 'inline' },
        h('label', {}, 'Priority', select('priority', ['critical', 'high', 'medium', 'low'], t.priority || 'medium')),
        t.status !== 'active' ? h('label', {}, 'Status', select('status', ['pending', 'blocked'], t.status)) : null),
      h('label', {}, 'Blocked by (what it waits for)', h('input', { name: 'blockedBy', type: 'text', maxlength: 300, value: t.blockedBy || '', 'data-testid': 'edit-blocked-by' })),
      h('label', {}, 'Add a note', h('textarea', { name: 'notes', rows: 2, maxlength: 5000, 'data-testid': 'edit-notes' })),
      h('button', { type: 'submit', class: 'primary', 'data-testid': 'edit-submit', text: 'Save changes' }));
    form.addEventListener('input', () => { form.dataset.dirty = '1'; });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const f = form.elements;
      const p = { id: t.id, ifVersion: t.version };
      if (f.title.value.trim() !== t.title) p.title = f.title.value.trim();
      if (f.priority.value !== (t.priority || 'medium')) p.priority = f.priority.value;
      const wantBlocked = f.status ? f.status.value === 'blocked' : false;
      if (f.status && f.status.value !== t.status) p.status = f.status.value;
      if (wantBlocked && f.blockedBy.value.trim() && f.blockedBy.value.trim() !== (t.blockedBy || '')) p.blockedBy = f.blockedBy.value.trim();
      if (f.notes.value.trim()) p.notes = f.notes.value.trim();
      if (Object.keys(p).length === 2) { clearError(); return; }
      delete form.dataset.dirty;
      const env = await act(f[f.length - 1], 'tasks.update', p, `Saved ${t.id}`);
      if (env) f.notes.value = '';
      else form.dataset.dirty = '1';
    });
    box.append(h('details', { class: 'edit-wrap', 'data-testid': 'edit-details' }, h('summary', { text: 'Edit title, priority, status or add a note' }), form));
  }
  return box;
}

function select(name, values, current) {
  return h('select', { name, 'data-testid': `edit-${name}` }, values.map((v) => h('option', { value: v, text: v, selected: v === current })));
}

function saveForm(form) {
  if (!form || !form.dataset.dirty) return null;
  const out = {};
  for (const el of form.elements) if (el.name) out[el.name] = el.value;
  return out;
}
function restoreForm(form, data) {
  if (!form || !data) return;
  form.dataset.dirty = '1';
  for (const el of form.elements) if (el.name && el.name in data) el.value = data[el.name];
}
