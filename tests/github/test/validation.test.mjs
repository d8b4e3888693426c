// The validator is proven able to fail and to pass: deliberately invalid requests are answered 422
// as GitHub answers them and recorded as violations; a broken response is caught by the same
// description; normal traffic over every endpoint records none.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnScript, client, control } from './support.mjs';
import { loadSpec } from '../openapi.mjs';

let srv;
let gh;
before(async () => { srv = await spawnScript('server.mjs'); gh = client(srv.url); });
after(async () => { await srv.stop(); });
beforeEach(async () => {
  await control(srv.url, 'reset', { issues: [{ repo: 'acme/app', title: 'one', milestone: 'M1' }] });
});

const invalidCases = [
  ['PATCH', '/repos/acme/app/issues/1', { state: 'bogus' }, 'state', /body\.state: "bogus" is not one of/],
  ['PATCH', '/repos/acme/app/issues/1', { labels: 'bug' }, 'labels', /body\.labels: "bug" is not array/],
  ['PATCH', '/repos/acme/app/issues/1', { state_reason: 'finished' }, 'state_reason', /not one of/],
  ['POST', '/repos/acme/app/issues', { body: 'no title' }, 'title', /body: missing required title/],
  ['POST', '/repos/acme/app/issues', { title: 'x', assignees: [1] }, 'assignees', /body\.assignees\[0\]: 1 is not string/],
  ['POST', '/repos/acme/app/issues/1/comments', {}, 'body', /missing required body/],
  ['GET', '/repos/acme/app/issues?state=bogus', undefined, 'state', /query parameter state: "bogus" is not one of/],
  ['GET', '/repos/acme/app/issues?per_page=many', undefined, 'per_page', /"many" is not integer/],
  ['GET', '/repos/acme/app/issues?since=yesterday', undefined, 'since', /is not a date-time/],
  ['GET', '/repos/acme/app/issues/comments?direction=up', undefined, 'direction', /not one of/],
];

for (const [method, path, body, field, why] of invalidCases) {
  test(`422 and a violation: ${method} ${path} ${body ? JSON.stringify(body) : ''}`, async () => {
    const r = await gh.call(method, path, body);
    assert.equal(r.status, 422);
    assert.equal(r.json.message, 'Validation Failed');
    assert.equal(r.json.status, '422');
    assert.match(r.json.documentation_url, /^https:\/\/docs\.github\.com\/rest\//);
    assert.ok(r.json.errors.some((e) => e.field === field && ['invalid', 'missing_field'].includes(e.code)), JSON.stringify(r.json.errors));
    const v = await control(srv.url, 'violations');
    assert.equal(v.length, 1, JSON.stringify(v));
    assert.deepEqual([v[0].where, v[0].method, v[0].path], ['request', method, path.split('?')[0]]);
    assert.ok(v[0].errors.some((e) => why.test(e)), JSON.stringify(v[0].errors));
  });
}

test('a milestone that does not exist: 422 as GitHub answers, not a violation (the request is well-formed)', async () => {
  const r = await gh.patch('/repos/acme/app/issues/1', { milestone: 9 });
  assert.equal(r.status, 422);
  assert.deepEqual(r.json.errors, [{ resource: 'Issue', field: 'milestone', code: 'invalid', value: 9 }]);
  assert.deepEqual(await control(srv.url, 'violations'), []);
});

// GitHub's limits on what an issue and a comment hold: well-formed requests (no violation), refused
// with a custom error naming the field, the answer validated against the description like any other.
const limitCases = [
  ['PATCH', '/repos/acme/app/issues/1', { title: 't'.repeat(257) }, 'Issue', 'title', 256],
  ['POST', '/repos/acme/app/issues', { title: 'é'.repeat(257) }, 'Issue', 'title', 256],
  ['POST', '/repos/acme/app/issues', { title: 'ok', body: 'b'.repeat(65537) }, 'Issue', 'body', 65536],
  ['POST', '/repos/acme/app/issues/1/comments', { body: 'c'.repeat(65537) }, 'IssueComment', 'body', 65536],
];

for (const [method, path, body, resource, field, max] of limitCases) {
  test(`${method} ${path}: a ${field} over ${max} characters is 422 Validation Failed, as GitHub answers`, async () => {
    const r = await gh.call(method, path, body);
    assert.equal(r.status, 422);
    assert.equal(r.json.message, 'Validation Failed');
    assert.deepEqual(r.json.errors,
      [{ resource, code: 'custom', field, message: `${field} is too long (maximum is ${max} characters)` }]);
    assert.deepEqual(await control(srv.url, 'violations'), []);
    const issue = await gh.get('/repos/acme/app/issues/1');
    assert.equal(issue.json.title, 'one');  // nothing changed
    assert.equal(issue.json.comments, 0);
  });
}

test('/_control/limits lowers a limit until the next reset; GitHub\'s own are the most it takes', async () => {
  assert.equal((await fetch(`${srv.url}/_control/limits`, { method: 'POST', body: '{"title":300}' })).status, 400);
  await control(srv.url, 'limits', { title: 10 });
  const r = await gh.patch('/repos/acme/app/issues/1', { title: 'eleven char' });
  assert.equal(r.status, 422);
  assert.equal(r.json.errors[0].message, 'title is too long (maximum is 10 characters)');
  await control(srv.url, 'reset', { issues: [{ repo: 'acme/app', title: 'one' }] });
  assert.equal((await gh.patch('/repos/acme/app/issues/1', { title: 'eleven char' })).status, 200);
  assert.deepEqual(await control(srv.url, 'violations'), []);
});

test('at the limits exactly: accepted', async () => {
  const title = 'é'.repeat(256);
  const r = await gh.patch('/repos/acme/app/issues/1', { title, body: 'b'.repeat(65536) });
  assert.equal(r.status, 200);
  assert.equal(r.json.title, title);
  assert.deepEqual(await control(srv.url, 'violations'), []);
});

test('a label with a bad color: 422 as recorded from GitHub (fixture "errors")', async () => {
  const r = await gh.post('/repos/acme/app/labels', { name: 'foo', color: 'invalid' });
  assert.equal(r.status, 422);
  assert.deepEqual(r.json.errors, [{ resource: 'Label', code: 'invalid', field: 'color' }]);
  assert.deepEqual(await control(srv.url, 'violations'), []);
});

test('a body that is not JSON: 400 Problems parsing JSON, and a violation', async () => {
  const r = await gh.call('PATCH', '/repos/acme/app/issues/1', '{"state": ');
  assert.equal(r.status, 400);
  assert.equal(r.json.message, 'Problems parsing JSON');
  const v = await control(srv.url, 'violations');
  assert.deepEqual(v.map((x) => [x.where, x.errors[0]]), [['request', 'body: not JSON']]);
});

test('a path the description does not have: 404 and a violation', async () => {
  const r = await gh.get('/repos/acme/app/issuez');
  assert.equal(r.status, 404);
  const v = await control(srv.url, 'violations');
  assert.deepEqual(v.map((x) => x.errors[0]), ['no operation GET /repos/acme/app/issuez in the description']);
});

test('the response validator catches broken answers', () => {
  const spec = loadSpec();
  const route = spec.route('GET', '/repos/acme/app/issues/1');
  assert.equal(route.template, '/repos/{owner}/{repo}/issues/{issue_number}');
  const issue = { url: 'u', repository_url: 'u', labels_url: 'u', comments_url: 'u', events_url: 'u',
    html_url: 'u', id: 1, node_id: 'I_1', number: 1, title: 't', user: null, labels: [], state: 'open',
    locked: false, assignee: null, milestone: null, comments: 0, created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z', closed_at: null };
  assert.deepEqual(spec.validateResponse(route, 200, issue), []);
  const { title, ...untitled } = issue;
  void title;
  assert.deepEqual(spec.validateResponse(route, 200, untitled), ['body: missing required title']);
  assert.deepEqual(spec.validateResponse(route, 200, { ...issue, number: '1' }), ['body.number: "1" is not integer']);
  assert.deepEqual(spec.validateResponse(route, 200, { ...issue, state_reason: 'finished' }),
    ['body.state_reason: "finished" is not one of ["completed","reopened","not_planned","duplicate"]']);
  assert.deepEqual(spec.validateResponse(route, 200, { ...issue, closed_at: 'Tuesday' }), ['body.closed_at: "Tuesday" is not a date-time']);
  assert.deepEqual(spec.validateResponse(route, 200, { ...issue, labels: [{ name: 7 }] }).length, 1);
  assert.deepEqual(spec.validateResponse(route, 201, issue), ['status 201: not documented for /repos/{owner}/{repo}/issues/{issue_number}']);
  assert.deepEqual(spec.validateResponse(route, 304, issue), ['status 304: a body']);
  assert.deepEqual(spec.validateResponse(route, 500, { message: 7 }), ['body.message: 7 is not string']);
  assert.deepEqual(spec.validateResponse(route, 500, { message: 'Server Error' }), []);
  const list = spec.route('GET', '/rate_limit');
  const overview = { resources: { core: { limit: 1, used: 0, remaining: 1, reset: 1 }, search: { limit: 1, used: 0, remaining: 1, reset: 1 } },
    rate: { limit: 1, used: 0, remaining: 1, reset: 1 } };
  assert.deepEqual(spec.validateResponse(list, 200, overview, { 'X-RateLimit-Remaining': '4999' }), []);
  assert.deepEqual(spec.validateResponse(list, 200, overview, { 'x-ratelimit-remaining': 'many' }),
    ['header X-RateLimit-Remaining: "many" is not integer']);
});

test('normal traffic over every endpoint records no violation', async () => {
  await control(srv.url, 'reset', { tokens: { tok: 'octocat' }, issues: [
    { repo: 'acme/app', title: 'epic', milestone: 'M1', labels: ['epic'], assignees: ['alice'], comments: [{ user: 'bob', body: 'hi' }] },
    { repo: 'acme/app', title: 'child', parent: 1, blocked_by: [3], body: '- [ ] one' },
    { repo: 'acme/app', title: 'blocker', state: 'closed', state_reason: 'not_planned' },
    { repo: 'acme/app', title: 'a PR', pull_request: true },
  ] });
  await control(srv.url, 'generate', { repo: 'acme/app', count: 120, seed: 3, taskLists: true, references: true, pullRequests: 0.1 });
  const calls = [
    ['GET', '/repos/acme/app/issues?state=all&per_page=100&sort=updated&direction=asc&since=2026-01-01T00:00:00Z'],
    ['GET', '/repositories/1000/issues?state=all&per_page=100&page=2'],
    ['GET', '/repos/acme/app/issues?labels=epic&milestone=1&assignee=alice&creator=octocat'],
    ['GET', '/repos/acme/app/issues/1'], ['GET', '/repos/acme/app/issues/4'],
    ['PATCH', '/repos/acme/app/issues/2', { title: 'child, renamed', body: null, labels: ['a', { name: 'b' }], assignees: ['bob'], milestone: null }],
    ['PATCH', '/repos/acme/app/issues/2', { state: 'closed', state_reason: 'completed' }],
    ['PATCH', '/repos/acme/app/issues/2', { state: 'open' }],
    ['POST', '/repos/acme/app/issues', { title: 'new', body: 'b', labels: ['x'], assignees: ['carol'], milestone: 1 }],
    ['POST', '/repos/acme/app/issues/1/comments', { body: 'closing note' }],
    ['GET', '/repos/acme/app/issues/comments/500000'],
    ['PATCH', '/repos/acme/app/issues/comments/500000', { body: 'edited' }],
    ['GET', '/repos/acme/app'],
    ['GET', '/repos/acme/app/issues/1/comments?per_page=1&page=2'],
    ['GET', '/repos/acme/app/issues/comments?since=2026-01-01T00:00:00Z&sort=updated&direction=desc'],
    ['GET', '/repos/acme/app/milestones?state=all'], ['GET', '/repos/acme/app/labels?per_page=100'],
    ['GET', '/repos/acme/app/issues/1/sub_issues'], ['GET', '/repos/acme/app/issues/2/dependencies/blocked_by'],
    ['GET', '/repos/acme/app/issues/3/dependencies/blocking'], ['GET', '/repos/acme/app/issues/2/parent'],
    ['POST', '/repos/acme/app/labels', { name: 'new-label', color: 'BADA55', description: 'd' }],
    ['POST', '/repos/acme/app/issues/1/labels', { labels: ['more'] }],
    ['GET', '/repos/acme/app/issues/1/labels'],
    ['GET', '/rate_limit'], ['GET', '/user'],
    ['GET', '/repos/acme/app/issues/999'], ['GET', '/repos/acme/other/issues'],
  ];
  for (const [method, path, body] of calls) {
    const r = await gh.call(method, path, body);
    assert.ok(r.status < 300 || r.status === 404, `${method} ${path}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  await control(srv.url, 'faults', [{ status: 500, times: 1 }, { status: 403, secondary: true, times: 1 },
    { status: 429, remaining0: true, times: 1 }]);
  for (let k = 0; k < 3; k++) assert.ok((await gh.get('/repos/acme/app/issues')).status >= 400);
  assert.equal((await client(srv.url, null).get('/user')).status, 401);
  assert.deepEqual(await control(srv.url, 'violations'), []);
  assert.equal((await control(srv.url, 'log')).length, calls.length + 4);
});
