// The fake GitHub's contract (README.md): pagination, conditional requests, faults and rate limits,
// authentication, control endpoints — and that its own validator finds nothing in normal answers.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnScript, client, control, links } from './support.mjs';

let srv;
let gh;
before(async () => { srv = await spawnScript('server.mjs'); gh = client(srv.url); });
after(async () => { await srv.stop(); });
beforeEach(async () => { await control(srv.url, 'reset', { repos: [{ owner: 'acme', name: 'app' }] }); });

const noViolations = async () => assert.deepEqual(await control(srv.url, 'violations'), []);

test('prints one line {"port":N} and serves on it', () => {
  assert.match(srv.line, /^\{"port":\d+\}$/);
  assert.ok(srv.port > 0);
});

test('a client walking 250 issues by Link pages gets each once', async () => {
  const g = await control(srv.url, 'generate', { repo: 'acme/app', count: 250, seed: 7, pullRequests: 0.1 });
  assert.deepEqual([g.first, g.last], [1, 250]);
  const seen = new Map();
  let next = '/repos/acme/app/issues?state=all&per_page=100';
  let pages = 0;
  let lastRel;
  while (next) {
    const r = await gh.get(next);
    assert.equal(r.status, 200);
    pages++;
    for (const i of r.json) seen.set(i.number, (seen.get(i.number) || 0) + 1);
    const rel = links(r.headers.get('link'));
    if (pages === 1) lastRel = rel.last;
    next = rel.next;
  }
  assert.equal(pages, 3);
  assert.match(lastRel, /[?&]page=3\b/);
  assert.equal(seen.size, 250);
  assert.ok([...seen.values()].every((n) => n === 1));
  // Pull requests are in the list, marked as GitHub marks them.
  const all = (await control(srv.url, 'state')).issues;
  assert.ok(all.some((i) => i.pull_request) && all.some((i) => !i.pull_request));
  await noViolations();
});

test('filters: state, since, labels, sort and direction', async () => {
  await control(srv.url, 'reset', { issues: [
    { repo: 'acme/app', title: 'one', labels: ['bug', 'ui'] },
    { repo: 'acme/app', title: 'two', labels: ['bug'], state: 'closed' },
    { repo: 'acme/app', title: 'three' },
  ] });
  const nums = (r) => r.json.map((i) => i.number);
  assert.deepEqual(nums(await gh.get('/repos/acme/app/issues')), [3, 1]);
  assert.deepEqual(nums(await gh.get('/repos/acme/app/issues?state=closed')), [2]);
  assert.deepEqual(nums(await gh.get('/repos/acme/app/issues?state=all&labels=bug')), [2, 1]);
  assert.deepEqual(nums(await gh.get('/repos/acme/app/issues?state=all&labels=bug,ui')), [1]);
  assert.deepEqual(nums(await gh.get('/repos/acme/app/issues?state=all&direction=asc')), [1, 2, 3]);
  await control(srv.url, 'edit', { repo: 'acme/app', number: 1, as: 'alice', title: 'one, renamed' });
  const one = (await gh.get('/repos/acme/app/issues/1')).json;
  assert.deepEqual(nums(await gh.get(`/repos/acme/app/issues?state=all&since=${one.updated_at}`)), [1]);
  assert.deepEqual(nums(await gh.get('/repos/acme/app/issues?state=all&sort=updated')), [1, 3, 2]);
  await noViolations();
});

test('ETag: 304 on no change (free), 200 after an edit', async () => {
  await control(srv.url, 'generate', { repo: 'acme/app', count: 5, seed: 1 });
  const first = await gh.get('/repos/acme/app/issues?state=all');
  const etag = first.headers.get('etag');
  assert.match(etag, /^W\/"[0-9a-f]{64}"$/);
  const remaining = Number(first.headers.get('x-ratelimit-remaining'));
  const again = await gh.get('/repos/acme/app/issues?state=all', { 'if-none-match': etag });
  assert.equal(again.status, 304);
  assert.equal(again.text, '');
  assert.equal(Number(again.headers.get('x-ratelimit-remaining')), remaining);
  const single = await gh.get('/repos/acme/app/issues/2');
  assert.equal((await gh.get('/repos/acme/app/issues/2', { 'if-none-match': single.headers.get('etag') })).status, 304);
  await control(srv.url, 'edit', { repo: 'acme/app', number: 2, as: 'alice', body: 'changed by a person' });
  const after = await gh.get('/repos/acme/app/issues?state=all', { 'if-none-match': etag });
  assert.equal(after.status, 200);
  assert.notEqual(after.headers.get('etag'), etag);
  assert.equal(after.json.find((i) => i.number === 2).body, 'changed by a person');
  // A person's edit is not an API request: the log holds the client's requests only.
  const log = await control(srv.url, 'log');
  assert.deepEqual(log.map((l) => l.status), [200, 304, 200, 304, 200]);
  assert.ok(log.every((l) => typeof l.ms === 'number' && l.method === 'GET'));
  await noViolations();
});

test('every answer carries the rate-limit headers and a request id', async () => {
  const r = await gh.get('/repos/acme/app/issues');
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-used', 'x-ratelimit-reset', 'x-ratelimit-resource', 'x-github-request-id']) {
    assert.ok(r.headers.get(h), h);
  }
  const missing = await gh.get('/repos/acme/nothing/issues');
  assert.equal(missing.status, 404);
  assert.ok(missing.headers.get('x-github-request-id'));
  assert.deepEqual(Object.keys(missing.json).sort(), ['documentation_url', 'message', 'status']);
  assert.equal(missing.json.message, 'Not Found');
  await noViolations();
});

test('issues: create, read, patch, close with a comment, reopen', async () => {
  await control(srv.url, 'reset', { repos: [{ owner: 'acme', name: 'app' }], issues: [
    { repo: 'acme/app', title: 'has a milestone', milestone: 'v1' }] });
  const made = await gh.post('/repos/acme/app/issues', { title: 'From an agent', body: '- [ ] a', labels: ['agent'], milestone: 1 });
  assert.equal(made.status, 201);
  assert.equal(made.headers.get('location'), made.json.url);
  assert.equal(made.json.number, 2);
  assert.match(made.json.node_id, /^I_kwDO/);
  assert.equal(made.json.milestone.title, 'v1');
  assert.deepEqual(made.json.labels.map((l) => l.name), ['agent']);
  const patched = await gh.patch('/repos/acme/app/issues/2', { title: 'Renamed', labels: ['agent', 'done'] });
  assert.equal(patched.json.title, 'Renamed');
  assert.ok(patched.json.updated_at > made.json.updated_at);
  const comment = await gh.post('/repos/acme/app/issues/2/comments', { body: 'Done: tests pass.' });
  assert.equal(comment.status, 201);
  const closed = await gh.patch('/repos/acme/app/issues/2', { state: 'closed', state_reason: 'completed' });
  assert.deepEqual([closed.json.state, closed.json.state_reason, closed.json.comments, closed.json.closed_by.login],
    ['closed', 'completed', 1, 'octocat']);
  assert.ok(closed.json.closed_at);
  const reopened = await gh.patch('/repos/acme/app/issues/2', { state: 'open' });
  assert.deepEqual([reopened.json.state, reopened.json.state_reason, reopened.json.closed_at], ['open', 'reopened', null]);
  const comments = await gh.get('/repos/acme/app/issues/2/comments');
  assert.deepEqual(comments.json.map((c) => c.body), ['Done: tests pass.']);
  const since = await gh.get(`/repos/acme/app/issues/comments?since=${comment.json.created_at}`);
  assert.deepEqual(since.json.map((c) => c.id), [comment.json.id]);
  assert.equal((await gh.get('/repos/acme/app/issues/99')).status, 404);
  await noViolations();
});

test('labels, milestones, sub-issues, dependencies, /user and /rate_limit', async () => {
  await control(srv.url, 'reset', { issues: [
    { repo: 'acme/app', title: 'epic', milestone: 'M1', labels: ['epic'] },
    { repo: 'acme/app', title: 'child', parent: 1, blocked_by: [3] },
    { repo: 'acme/app', title: 'blocker', state: 'closed', comments: [{ user: 'bob', body: 'why' }] },
  ] });
  assert.deepEqual((await gh.get('/repos/acme/app/labels')).json.map((l) => l.name), ['epic']);
  assert.deepEqual((await gh.get('/repos/acme/app/milestones')).json.map((m) => [m.number, m.title, m.open_issues]), [[1, 'M1', 1]]);
  assert.deepEqual((await gh.get('/repos/acme/app/issues/1/sub_issues')).json.map((i) => i.number), [2]);
  assert.deepEqual((await gh.get('/repos/acme/app/issues/2/dependencies/blocked_by')).json.map((i) => i.number), [3]);
  assert.deepEqual((await gh.get('/repos/acme/app/issues/3/dependencies/blocking')).json.map((i) => i.number), [2]);
  assert.equal((await gh.get('/repos/acme/app/issues/2/parent')).json.number, 1);
  const epic = (await gh.get('/repos/acme/app/issues/1')).json;
  assert.deepEqual(epic.sub_issues_summary, { total: 1, completed: 0, percent_completed: 0 });
  const child = (await gh.get('/repos/acme/app/issues/2')).json;
  assert.equal(child.parent_issue_url, epic.url);
  assert.deepEqual(child.issue_dependencies_summary, { blocked_by: 0, blocking: 0, total_blocked_by: 1, total_blocking: 0 });
  assert.equal((await gh.get('/user')).json.login, 'octocat');
  const rl = await gh.get('/rate_limit');
  assert.equal(rl.json.resources.core.limit, 5000);
  assert.equal(rl.json.rate.remaining, Number(rl.headers.get('x-ratelimit-remaining')));
  await noViolations();
});

test('authentication: Bearer or token, mapped logins, 401 as GitHub answers', async () => {
  await control(srv.url, 'reset', { repos: [{ owner: 'acme', name: 'app' }], tokens: { 'tok-alice': 'alice' } });
  const none = await client(srv.url, null).get('/user');
  assert.equal(none.status, 401);
  assert.equal(none.json.message, 'Requires authentication');
  const bad = await client(srv.url, 'nope').get('/user');
  assert.equal(bad.status, 401);
  assert.equal(bad.json.message, 'Bad credentials');
  const alice = client(srv.url, 'tok-alice');
  assert.equal((await alice.get('/user')).json.login, 'alice');
  const asToken = await alice.call('GET', '/user', undefined, { authorization: 'token tok-alice' });
  assert.equal(asToken.json.login, 'alice');
  const made = await alice.post('/repos/acme/app/issues', { title: 'mine' });
  assert.equal(made.json.user.login, 'alice');
  await noViolations();
});

test('faults: a 5xx once, then success', async () => {
  await control(srv.url, 'faults', [{ method: 'GET', path: '^/repos/acme/app/issues$', status: 502, times: 1 },
    { path: '/comments$', status: 500, times: 2 }]);
  const fails = await gh.get('/repos/acme/app/issues');
  assert.equal(fails.status, 502);
  assert.ok(fails.headers.get('x-github-request-id'));
  assert.equal((await gh.get('/repos/acme/app/issues')).status, 200);
  await control(srv.url, 'generate', { repo: 'acme/app', count: 1, seed: 2 });
  assert.equal((await gh.get('/repos/acme/app/issues/1/comments')).status, 500);
  assert.equal((await gh.get('/repos/acme/app/issues/1/comments')).status, 500);
  assert.equal((await gh.get('/repos/acme/app/issues/1/comments')).status, 200);
  await control(srv.url, 'faults', [{ status: 503, times: 1 }]);
  const unavailable = await gh.get('/user');
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.json.message, 'Service Unavailable');
  await noViolations();
});

test('faults: a secondary rate limit answers 403 or 429 with Retry-After', async () => {
  await control(srv.url, 'faults', [{ status: 403, secondary: true, retryAfter: 2, times: 1 },
    { status: 429, secondary: true, times: 1 }]);
  const first = await gh.get('/repos/acme/app/issues');
  assert.equal(first.status, 403);
  assert.equal(first.headers.get('retry-after'), '2');
  assert.match(first.json.message, /^You have exceeded a secondary rate limit\. Please wait a few minutes before you try again\./);
  assert.match(first.json.documentation_url, /secondary-rate-limits$/);
  assert.notEqual(first.headers.get('x-ratelimit-remaining'), '0');
  const second = await gh.get('/repos/acme/app/issues');
  assert.equal(second.status, 429);
  assert.equal(second.headers.get('retry-after'), '1');
  assert.equal((await gh.get('/repos/acme/app/issues')).status, 200);
  await noViolations();
});

test('the primary rate limit: exhausted as GitHub answers, then reset', async () => {
  await control(srv.url, 'faults', [{ status: 403, remaining0: true, times: 1 }]);
  const r = await gh.get('/repos/acme/app/issues');
  assert.equal(r.status, 403);
  assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
  const reset = Number(r.headers.get('x-ratelimit-reset'));
  assert.ok(reset > Date.now() / 1000 - 1 && reset <= Date.now() / 1000 + 2, `reset ${reset}`);
  assert.match(r.json.message, /^API rate limit exceeded for user ID \d+\. If you reach out to GitHub Support for help, please include the request ID \S+ and timestamp \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.$/);
  assert.equal(r.json.documentation_url, 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api');
  assert.equal(r.json.status, '403');
  // Until the reset every request is refused; then the window is whole again.
  assert.equal((await gh.get('/user')).status, 403);
  await new Promise((resolve) => setTimeout(resolve, (reset + 1) * 1000 - Date.now()));
  const later = await gh.get('/user');
  assert.equal(later.status, 200);
  assert.equal(Number(later.headers.get('x-ratelimit-remaining')), 4999);

  // Spent the ordinary way: remaining counts down, then 403.
  await control(srv.url, 'reset', { repos: [{ owner: 'acme', name: 'app' }], rateLimit: { limit: 10, remaining: 2 } });
  assert.equal((await gh.get('/user')).headers.get('x-ratelimit-remaining'), '1');
  assert.equal((await gh.get('/user')).headers.get('x-ratelimit-remaining'), '0');
  const spent = await gh.get('/user');
  assert.equal(spent.status, 403);
  assert.match(spent.json.message, /^API rate limit exceeded/);
  await noViolations();
});

test('control: edit as a person, state as the API renders it, generate is deterministic', async () => {
  await control(srv.url, 'generate', { repo: 'acme/app', count: 30, seed: 42, taskLists: true, references: true });
  const a = (await control(srv.url, 'state')).issues;
  await control(srv.url, 'reset', { repos: [{ owner: 'acme', name: 'app' }] });
  await control(srv.url, 'generate', { repo: 'acme/app', count: 30, seed: 42, taskLists: true, references: true });
  const b = (await control(srv.url, 'state')).issues;
  assert.deepEqual(a, b);
  assert.ok(a.some((i) => /^- \[[ x]\] /m.test(i.body)));
  assert.ok(a.some((i) => /^Blocked by #\d+$/m.test(i.body)));
  assert.ok(a.some((i) => i.parent_issue_url));
  assert.ok(a.some((i) => i.milestone) && a.some((i) => i.labels.length));
  const before = a.find((i) => i.number === 3);
  await control(srv.url, 'edit', { repo: 'acme/app', number: 3, as: 'carol', state: before.state === 'open' ? 'closed' : 'open', comment: 'meanwhile' });
  const st = await control(srv.url, 'state');
  const now = st.issues.find((i) => i.number === 3);
  assert.notEqual(now.state, before.state);
  assert.ok(now.updated_at > before.updated_at);
  assert.deepEqual(st.comments.filter((c) => c.issue === 3).map((c) => [c.user.login, c.body]), [['carol', 'meanwhile']]);
  assert.deepEqual(await control(srv.url, 'log'), []);
  await assert.rejects(control(srv.url, 'edit', { repo: 'acme/app', number: 999 }), /400/);
  await assert.rejects(control(srv.url, 'faults', [{ status: 418 }]), /400/);
  await assert.rejects(control(srv.url, 'faults', [{ status: 500, path: '(' }]), /400.*fault path/);
  await assert.rejects(control(srv.url, 'generate', { repo: 'acme/app', count: 'many' }), /400/);
  await assert.rejects(control(srv.url, 'reset', { issues: [{ title: 'no repo' }] }), /400/);
  assert.deepEqual(await control(srv.url, 'violations'), []);
});

test('stdin closed stops the server', async () => {
  const s = await spawnScript('server.mjs');
  const exited = new Promise((resolve) => s.child.once('exit', resolve));
  s.child.stdin.end();
  assert.equal(await exited, 0);
});

test('summaries follow changes: sub-issues completed, milestone counts, dependencies', async () => {
  await control(srv.url, 'reset', { issues: [
    { repo: 'acme/app', title: 'epic', milestone: 'M1' },
    { repo: 'acme/app', title: 'child', parent: 1, milestone: 'M1' },
    { repo: 'acme/app', title: 'blocked', blocked_by: [2] },
  ] });
  const summary = async () => {
    const epic = (await gh.get('/repos/acme/app/issues/1')).json;
    const blocked = (await gh.get('/repos/acme/app/issues/3')).json;
    return [epic.sub_issues_summary.completed, epic.sub_issues_summary.percent_completed,
      epic.milestone.open_issues, epic.milestone.closed_issues, blocked.issue_dependencies_summary.blocked_by];
  };
  assert.deepEqual(await summary(), [0, 0, 2, 0, 1]);
  await gh.patch('/repos/acme/app/issues/2', { state: 'closed' });
  assert.deepEqual(await summary(), [1, 100, 1, 1, 0]);
  await control(srv.url, 'edit', { repo: 'acme/app', number: 2, as: 'alice', state: 'open' });
  assert.deepEqual(await summary(), [0, 0, 2, 0, 1]);
  await gh.patch('/repos/acme/app/issues/2', { milestone: null });
  assert.deepEqual(await summary(), [0, 0, 1, 0, 1]);
  await noViolations();
});

test('UTF-8 bodies arrive whole; answers carry Content-Length', async () => {
  await control(srv.url, 'reset', { repos: [{ owner: 'acme', name: 'app' }] });
  const title = 'Ünïcödé ✓ 日本語';
  const body = `Ünïcödé ✓ ${'日本語'.repeat(21000)}`;  // 180 kB, within the 65,536 characters a body holds
  const made = await gh.post('/repos/acme/app/issues', { title, body });
  assert.equal(made.status, 201);
  assert.equal(made.json.title, title);
  assert.equal(made.json.body, body);
  assert.equal(Number(made.headers.get('content-length')), Buffer.byteLength(made.text));
  await noViolations();
});

test('a PATCH that changes nothing leaves updated_at and the list ETag alone', async () => {
  await control(srv.url, 'reset', { issues: [{ repo: 'acme/app', title: 'same', labels: ['a'], body: 'b' }] });
  const list = await gh.get('/repos/acme/app/issues');
  const before = list.json[0].updated_at;
  const same = await gh.patch('/repos/acme/app/issues/1', { title: 'same', body: 'b', labels: ['a'], state: 'open' });
  assert.equal(same.json.updated_at, before);
  assert.equal((await gh.get('/repos/acme/app/issues', { 'if-none-match': list.headers.get('etag') })).status, 304);
  const moved = await gh.patch('/repos/acme/app/issues/1', { labels: ['a', 'b'] });
  assert.ok(moved.json.updated_at > before);
  await noViolations();
});

test('a deleted issue: gone from lists, 410 as GitHub answers', async () => {
  await control(srv.url, 'reset', { issues: [{ repo: 'acme/app', title: 'one' }, { repo: 'acme/app', title: 'two', comments: [{ user: 'a', body: 'c' }] }] });
  await control(srv.url, 'delete', { repo: 'acme/app', number: 2 });
  assert.deepEqual((await gh.get('/repos/acme/app/issues')).json.map((i) => i.number), [1]);
  const gone = await gh.get('/repos/acme/app/issues/2');
  assert.equal(gone.status, 410);
  assert.deepEqual(gone.json, { message: 'This issue was deleted', documentation_url: gone.json.documentation_url, status: '410' });
  assert.equal((await gh.patch('/repos/acme/app/issues/2', { state: 'closed' })).status, 410);
  assert.deepEqual((await gh.get('/repos/acme/app/issues/comments')).json, []);
  await assert.rejects(control(srv.url, 'delete', { repo: 'acme/app', number: 2 }), /400/);
  await noViolations();
});

test('faults: delayMs answers late, then on time', async () => {
  await control(srv.url, 'faults', [{ path: '^/user$', delayMs: 300, times: 1 }]);
  let t = Date.now();
  assert.equal((await gh.get('/user')).status, 200);
  assert.ok(Date.now() - t >= 290, `${Date.now() - t} ms`);
  t = Date.now();
  await gh.get('/user');
  assert.ok(Date.now() - t < 250);
});

test('sub-issues and blocked-by dependencies added and removed by id', async () => {
  await control(srv.url, 'reset', { issues: [
    { repo: 'acme/app', title: 'epic' }, { repo: 'acme/app', title: 'task' }, { repo: 'acme/app', title: 'other epic' }] });
  const id = async (n) => (await gh.get(`/repos/acme/app/issues/${n}`)).json.id;
  const [epic, task, other] = [await id(1), await id(2), await id(3)];
  const added = await gh.post('/repos/acme/app/issues/1/sub_issues', { sub_issue_id: task });
  assert.equal(added.status, 201);
  assert.equal(added.json.number, 1);
  assert.equal(added.json.sub_issues_summary.total, 1);
  assert.equal((await gh.get('/repos/acme/app/issues/2/parent')).json.number, 1);
  // One parent at a time, no cycles, unless the parent is replaced.
  assert.equal((await gh.post('/repos/acme/app/issues/3/sub_issues', { sub_issue_id: task })).status, 422);
  assert.equal((await gh.post('/repos/acme/app/issues/2/sub_issues', { sub_issue_id: epic })).status, 422);
  assert.equal((await gh.post('/repos/acme/app/issues/3/sub_issues', { sub_issue_id: task, replace_parent: true })).status, 201);
  assert.deepEqual((await gh.get('/repos/acme/app/issues/1/sub_issues')).json, []);
  assert.equal((await gh.call('DELETE', '/repos/acme/app/issues/3/sub_issue', { sub_issue_id: task })).status, 200);
  assert.equal((await gh.get('/repos/acme/app/issues/2/parent')).status, 404);
  assert.equal((await gh.call('DELETE', '/repos/acme/app/issues/3/sub_issue', { sub_issue_id: task })).status, 404);

  const blocked = await gh.post('/repos/acme/app/issues/2/dependencies/blocked_by', { issue_id: other });
  assert.equal(blocked.status, 201);
  assert.equal(blocked.json.issue_dependencies_summary.total_blocked_by, 1);
  assert.equal((await gh.post('/repos/acme/app/issues/2/dependencies/blocked_by', { issue_id: other })).status, 422);
  assert.equal((await gh.post('/repos/acme/app/issues/2/dependencies/blocked_by', { issue_id: task })).status, 422);
  assert.deepEqual((await gh.get('/repos/acme/app/issues/3/dependencies/blocking')).json.map((i) => i.number), [2]);
  assert.equal((await gh.call('DELETE', `/repos/acme/app/issues/2/dependencies/blocked_by/${other}`)).status, 200);
  assert.deepEqual((await gh.get('/repos/acme/app/issues/2/dependencies/blocked_by')).json, []);
  assert.equal((await gh.post('/repos/acme/app/issues/2/dependencies/blocked_by', { issue_id: 12345 })).status, 422);
  await noViolations();
});
