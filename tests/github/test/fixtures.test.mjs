// Parity with real GitHub: the recorded exchanges of @octokit/fixtures (pinned) that cover endpoints
// the sync uses are sent to the fake, and its answers must have the recorded status, headers and
// shape (keys and types, not values); replay.mjs serves the recordings themselves verbatim.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnScript, client, control, links, shape, shapeDiff } from './support.mjs';
import { loadScenario, listScenarios } from '../replay.mjs';

// The scenarios of endpoints the sync uses, and the repository state each was recorded from.
const ORG = 'octokit-fixture-org';
const SCENARIOS = {
  'paginate-issues': { repos: [{ owner: ORG, name: 'paginate-issues' }],
    issues: Array.from({ length: 13 }, (_, k) => ({ repo: `${ORG}/paginate-issues`, title: `Test issue ${k + 1}` })) },
  'add-labels-to-issue': { repos: [{ owner: ORG, name: 'add-labels-to-issue' }] },
  labels: { repos: [{ owner: ORG, name: 'labels', defaultLabels: true }] },
  errors: { repos: [{ owner: ORG, name: 'errors' }] },
  'get-repository': { repos: [{ owner: ORG, name: 'hello-world', org: true }] },
};

// Headers GitHub sent that the sync relies on, whenever the recording has them.
const HEADERS = ['content-type', 'etag', 'link', 'location', 'x-github-media-type', 'x-github-request-id',
  'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-resource', 'x-ratelimit-used'];

let srv;
before(async () => { srv = await spawnScript('server.mjs'); });
after(async () => { await srv.stop(); });

test('the pinned fixtures have the scenarios this parity test relies on', () => {
  const all = listScenarios();
  for (const s of Object.keys(SCENARIOS)) assert.ok(all.includes(s), s);
});

for (const [scenario, state] of Object.entries(SCENARIOS)) {
  test(`the fake answers as GitHub did: ${scenario}`, async () => {
    await control(srv.url, 'reset', state);
    const gh = client(srv.url, 'a-token');
    const origin = srv.url;
    for (const x of loadScenario(scenario)) {
      const what = `${x.method.toUpperCase()} ${x.path}`;
      const r = await gh.call(x.method.toUpperCase(), x.path, x.body === '' ? undefined : x.body);
      assert.equal(r.status, x.status, `${what}: ${r.text.slice(0, 300)}`);
      for (const h of HEADERS) {
        if (x.headers[h] !== undefined) assert.ok(r.headers.get(h) !== null, `${what}: header ${h}`);
      }
      if (x.headers.link) {
        // The same relations, to the same paths and queries, in GitHub's order.
        assert.equal(r.headers.get('link').replaceAll(origin, 'https://api.github.com'), x.headers.link, what);
        assert.deepEqual(Object.keys(links(r.headers.get('link'))), Object.keys(links(x.headers.link)));
      }
      if (x.headers.location) {
        assert.equal(r.headers.get('location').replace(origin, 'https://api.github.com'), x.headers.location, what);
      }
      if (x.response === '' || x.response === undefined) {
        assert.equal(r.text, '', what);
        continue;
      }
      assert.deepEqual(shapeDiff(shape(x.response), shape(r.json)), [], what);
    }
    assert.deepEqual(await control(srv.url, 'violations'), []);
  });
}

test('shapeDiff finds a missing key and a changed type', () => {
  const recorded = shape({ a: 1, b: { c: 'x' }, d: [{ e: true }], n: null });
  assert.deepEqual(shapeDiff(recorded, shape({ a: 1, b: { c: 'x' }, d: [{ e: true }], n: 5, extra: 1 })), []);
  assert.deepEqual(shapeDiff(recorded, shape({ a: '1', b: {}, d: [{ e: 1 }] })),
    ['$.a: number vs string', '$.b.c: missing', '$.d[].e: boolean vs number', '$.n: missing']);
});

test('replay.mjs serves paginate-issues verbatim and its Link pages stay on it', async () => {
  const recorded = loadScenario('paginate-issues');
  const r = await spawnScript('replay.mjs', ['paginate-issues']);
  try {
    assert.match(r.line, /^\{"port":\d+\}$/);
    const gh = client(r.url, 'any');
    let next = `/repos/${ORG}/paginate-issues/issues?per_page=3`;
    const numbers = [];
    let k = 0;
    while (next) {
      const res = await gh.get(next);
      assert.equal(res.status, 200);
      assert.equal(res.text, JSON.stringify(recorded[k].response));
      assert.equal(res.headers.get('etag'), recorded[k].headers.etag);
      assert.equal(res.headers.get('x-ratelimit-remaining'), recorded[k].headers['x-ratelimit-remaining']);
      numbers.push(...res.json.map((i) => i.number));
      next = links(res.headers.get('link')).next;
      if (next) assert.ok(next.startsWith(`${r.url}/repositories/1000/issues?`), next);
      k++;
    }
    assert.deepEqual(numbers, [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    assert.deepEqual(await control(r.url, 'pending'), []);
    // Nothing recorded is left for a sixth request: 404, and it is reported.
    assert.equal((await gh.get(`/repositories/1000/issues?per_page=3&page=2`)).status, 404);
    assert.deepEqual((await control(r.url, 'unmatched')).map((u) => u.path), ['/repositories/1000/issues?per_page=3&page=2']);
    await control(r.url, 'rewind', {});
    assert.equal((await control(r.url, 'pending')).length, 5);
  } finally {
    await r.stop();
  }
});

test('replay.mjs: a POST matches on its body; errors are GitHub\'s recorded bytes', async () => {
  const r = await spawnScript('replay.mjs', ['api.github.com/errors']);
  try {
    const gh = client(r.url, 'any');
    assert.equal((await gh.post(`/repos/${ORG}/errors/labels`, { name: 'foo', color: 'other' })).status, 404);
    const res = await gh.post(`/repos/${ORG}/errors/labels`, { name: 'foo', color: 'invalid' });
    assert.equal(res.status, 422);
    assert.equal(res.text, JSON.stringify(loadScenario('errors')[0].response));
  } finally {
    await r.stop();
  }
});
