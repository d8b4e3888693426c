// A stateful fake of the GitHub REST API the tracker sync uses (issue 55), every request and
// response validated against GitHub's own OpenAPI description (openapi.mjs). The contract —
// endpoints, control endpoints, faults — is README.md's.
//
//   node tests/github/server.mjs [--port N]      prints {"port":N} once listening on 127.0.0.1
//
// Also a module: `await startServer({port})` → {port, url, server, fake, close()}.
import http from 'node:http';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { loadSpec } from './openapi.mjs';
import { isMain, serveUntilStopped } from './cli.mjs';

const DOCS = 'https://docs.github.com/rest';
const EPOCH = Date.parse('2026-01-01T00:00:00Z');

// ---------------------------------------------------------------- state

export // GitHub's limits on what an issue or a comment holds, in characters: a title of 256, a body of
// 65,536. Past them it answers 422 "Validation Failed" with a custom error naming the field.
// /_control/limits lowers them for a test whose client keeps under GitHub's own.
const LIMITS = { title: 256, body: 65536 };

class FakeGitHub {
  constructor(spec = loadSpec()) {
    this.spec = spec;
    this.log = [];
    this.violations = [];
    this.reset({});
  }

  reset(cfg) {
    this.clock = EPOCH;
    this.writes = 0;
    this.repos = new Map();      // "o/r" (lower case) → repo
    this.users = new Map();      // login → id
    this.comments = new Map();   // id → comment
    this.nextId = { repo: 1000, issue: 100000, comment: 500000, label: 9000, milestone: 7000 };
    this.faults = [];
    this.limits = { ...LIMITS };
    this.requestSeq = 0;
    this.tokens = cfg.tokens || null;   // null: any token is octocat
    const rl = cfg.rateLimit || {};
    this.rateLimit = { limit: rl.limit ?? 5000, remaining: rl.remaining ?? rl.limit ?? 5000, used: 0,
      reset: nowSeconds() + (rl.resetIn ?? 3600) };
    this.rateLimit.used = this.rateLimit.limit - this.rateLimit.remaining;
    this.log = [];
    this.violations = [];
    this.userId('octocat');
    for (const r of cfg.repos || []) {
      const repo = this.repo(r.owner, r.name, true);
      repo.org = !!r.org;
      if (r.defaultLabels) {
        for (const [name, color, description] of DEFAULT_LABELS) {
          Object.assign(this.label(repo, name), { color, description, default: true });
        }
      }
    }
    for (const i of cfg.issues || []) this.seedIssue(i);
  }

  // Every write advances the fake clock a second, and invalidates what derived() computed.
  tick() { this.clock += 1000; this.writes++; return new Date(this.clock).toISOString().replace('.000Z', 'Z'); }

  // Per repository, computed once per write rather than per issue rendered: sub-issues by parent,
  // the issues each one blocks, and each milestone's open and closed issues.
  derived(repo) {
    if (repo.derived && repo.derived.at === this.writes) return repo.derived;
    const d = { at: this.writes, children: new Map(), blocking: new Map(), milestones: new Map() };
    const push = (map, key, value) => { if (!map.has(key)) map.set(key, []); map.get(key).push(value); };
    for (const i of repo.issues.values()) {
      if (i.parent) push(d.children, i.parent, i);
      for (const b of i.blocked_by) push(d.blocking, b, i);
      if (i.milestone && !i.pull_request) {
        if (!d.milestones.has(i.milestone)) d.milestones.set(i.milestone, { open: 0, closed: 0 });
        d.milestones.get(i.milestone)[i.state]++;
      }
    }
    repo.derived = d;
    return d;
  }
  now() { return new Date(this.clock).toISOString().replace('.000Z', 'Z'); }

  userId(login) {
    if (!this.users.has(login)) this.users.set(login, 1 + this.users.size);
    return this.users.get(login);
  }

  repo(owner, name, create = false) {
    const key = `${owner}/${name}`.toLowerCase();
    if (!this.repos.has(key) && create) {
      const id = this.nextId.repo++;
      this.repos.set(key, { owner, name, id, nextNumber: 1, issues: new Map(), deleted: new Set(), labels: new Map(),
        milestones: new Map(), created_at: this.now() });
      this.userId(owner);
    }
    return this.repos.get(key);
  }

  repoById(id) {
    for (const r of this.repos.values()) if (r.id === id) return r;
    return undefined;
  }

  label(repo, name) {
    const key = name.toLowerCase();
    if (!repo.labels.has(key)) {
      repo.labels.set(key, { id: this.nextId.label++, name, color: colorOf(name), description: null });
    }
    return repo.labels.get(key);
  }

  milestone(repo, title) {
    for (const m of repo.milestones.values()) if (m.title === title) return m;
    const number = repo.milestones.size + 1;
    const m = { id: this.nextId.milestone++, number, title, state: 'open', description: null,
      creator: repo.owner, created_at: this.now(), updated_at: this.now(), closed_at: null, due_on: null };
    repo.milestones.set(number, m);
    return m;
  }

  // An issue from /_control/reset or /_control/generate.
  seedIssue(spec) {
    const [owner, name] = String(spec.repo || '').split('/');
    if (!owner || !name) throw new BadControl(`issue without repo "owner/name": ${JSON.stringify(spec)}`);
    const repo = this.repo(owner, name, true);
    const number = spec.number ?? repo.nextNumber;
    if (repo.issues.has(number)) throw new BadControl(`issue ${spec.repo}#${number} twice`);
    repo.nextNumber = Math.max(repo.nextNumber, number + 1);
    const at = this.tick();
    const issue = {
      number, id: this.nextId.issue++, title: String(spec.title ?? `Issue ${number}`),
      body: spec.body ?? null, state: spec.state || 'open', state_reason: spec.state_reason ?? null,
      labels: (spec.labels || []).map((l) => this.label(repo, l).name),
      milestone: spec.milestone ? this.milestone(repo, spec.milestone).number : null,
      assignees: [...(spec.assignees || [])], user: spec.user || 'octocat',
      parent: spec.parent ?? null, blocked_by: [...(spec.blocked_by || [])],
      pull_request: !!spec.pull_request, locked: false,
      comments: [], created_at: at, updated_at: at,
      closed_at: null, closed_by: null,
    };
    if (issue.state === 'closed') {
      issue.closed_at = at;
      issue.closed_by = issue.user;
      issue.state_reason = issue.state_reason || 'completed';
    }
    this.userId(issue.user);
    issue.assignees.forEach((a) => this.userId(a));
    repo.issues.set(number, issue);
    this.writes++;
    for (const c of spec.comments || []) this.addComment(repo, issue, c.user || 'octocat', String(c.body ?? ''));
    return issue;
  }

  addComment(repo, issue, login, body) {
    const at = this.tick();
    const c = { id: this.nextId.comment++, repo: repo, issue: issue.number, user: login, body,
      created_at: at, updated_at: at };
    this.userId(login);
    this.comments.set(c.id, c);
    issue.comments.push(c.id);
    issue.updated_at = at;
    return c;
  }

  // ------------------------------------------------------------- rendering, as GitHub answers

  simpleUser(base, login) {
    const id = this.userId(login);
    const api = `${base}/users/${login}`;
    return {
      login, id, node_id: nodeId('U_kgDO', id), avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
      gravatar_id: '', url: api, html_url: `https://github.com/${login}`,
      followers_url: `${api}/followers`, following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`, starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`, organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`, events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`, type: 'User', user_view_type: 'public',
      site_admin: false,
    };
  }

  renderRepo(base, repo) {
    const api = `${base}/repos/${repo.owner}/${repo.name}`;
    const html = `https://github.com/${repo.owner}/${repo.name}`;
    const owner = { ...this.simpleUser(base, repo.owner), ...(repo.org ? { type: 'Organization' } : {}) };
    const open = [...repo.issues.values()].filter((i) => i.state === 'open').length;
    const urls = Object.fromEntries(Object.entries({
      forks: '/forks', keys: '/keys{/key_id}', collaborators: '/collaborators{/collaborator}', teams: '/teams',
      hooks: '/hooks', issue_events: '/issues/events{/number}', events: '/events', assignees: '/assignees{/user}',
      branches: '/branches{/branch}', tags: '/tags', blobs: '/git/blobs{/sha}', git_tags: '/git/tags{/sha}',
      git_refs: '/git/refs{/sha}', trees: '/git/trees{/sha}', statuses: '/statuses/{sha}', languages: '/languages',
      stargazers: '/stargazers', contributors: '/contributors', subscribers: '/subscribers',
      subscription: '/subscription', commits: '/commits{/sha}', git_commits: '/git/commits{/sha}',
      comments: '/comments{/number}', issue_comment: '/issues/comments{/number}', contents: '/contents/{+path}',
      compare: '/compare/{base}...{head}', merges: '/merges', archive: '/{archive_format}{/ref}',
      downloads: '/downloads', issues: '/issues{/number}', pulls: '/pulls{/number}',
      milestones: '/milestones{/number}', notifications: '/notifications{?since,all,participating}',
      labels: '/labels{/name}', releases: '/releases{/id}', deployments: '/deployments',
    }).map(([k, v]) => [`${k}_url`, api + v]));
    return {
      id: repo.id, node_id: nodeId('R_kgDO', repo.id), name: repo.name, full_name: `${repo.owner}/${repo.name}`,
      private: false, owner, html_url: html, description: null, fork: false, url: api, ...urls,
      created_at: repo.created_at, updated_at: repo.created_at, pushed_at: repo.created_at,
      git_url: `git://github.com/${repo.owner}/${repo.name}.git`, ssh_url: `git@github.com:${repo.owner}/${repo.name}.git`,
      clone_url: `${html}.git`, svn_url: html, homepage: null, size: 0, stargazers_count: 0, watchers_count: 0,
      language: null, has_issues: true, has_projects: true, has_downloads: true, has_wiki: true, has_pages: false,
      has_discussions: false, forks_count: 0, mirror_url: null, archived: false, disabled: false,
      open_issues_count: open, license: null, allow_forking: true, is_template: false,
      web_commit_signoff_required: false, topics: [], visibility: 'public', forks: 0, open_issues: open,
      watchers: 0, default_branch: 'main',
      permissions: { admin: true, maintain: true, push: true, triage: true, pull: true },
      temp_clone_token: '', allow_squash_merge: true, allow_merge_commit: true, allow_rebase_merge: true,
      allow_auto_merge: false, delete_branch_on_merge: false, allow_update_branch: false,
      use_squash_pr_title_as_default: false, ...(repo.org ? { organization: owner } : {}),
      network_count: 0, subscribers_count: 0,
    };
  }

  renderLabel(base, repo, l) {
    return { id: l.id, node_id: nodeId('LA_kwDO', l.id), url: `${base}/repos/${repo.owner}/${repo.name}/labels/${encodeURIComponent(l.name)}`,
      name: l.name, color: l.color, default: !!l.default, description: l.description };
  }

  renderMilestone(base, repo, m) {
    const counts = this.derived(repo).milestones.get(m.number) || { open: 0, closed: 0 };
    const api = `${base}/repos/${repo.owner}/${repo.name}/milestones/${m.number}`;
    return { url: api, html_url: `https://github.com/${repo.owner}/${repo.name}/milestone/${m.number}`,
      labels_url: `${api}/labels`, id: m.id, node_id: nodeId('MI_kwDO', m.id), number: m.number,
      title: m.title, description: m.description, creator: this.simpleUser(base, m.creator),
      open_issues: counts.open, closed_issues: counts.closed, state: m.state,
      created_at: m.created_at, updated_at: m.updated_at, due_on: m.due_on, closed_at: m.closed_at };
  }

  renderIssue(base, repo, i) {
    const api = `${base}/repos/${repo.owner}/${repo.name}/issues/${i.number}`;
    const html = `https://github.com/${repo.owner}/${repo.name}/${i.pull_request ? 'pull' : 'issues'}/${i.number}`;
    const d = this.derived(repo);
    const subs = d.children.get(i.number) || [];
    const blocking = d.blocking.get(i.number) || [];
    const out = {
      url: api, repository_url: `${base}/repos/${repo.owner}/${repo.name}`,
      labels_url: `${api}/labels{/name}`, comments_url: `${api}/comments`, events_url: `${api}/events`,
      html_url: html, id: i.id, node_id: nodeId(i.pull_request ? 'PR_kwDO' : 'I_kwDO', i.id),
      number: i.number, title: i.title, user: this.simpleUser(base, i.user),
      labels: i.labels.map((n) => this.renderLabel(base, repo, this.label(repo, n))),
      state: i.state, locked: i.locked,
      assignee: i.assignees.length ? this.simpleUser(base, i.assignees[0]) : null,
      assignees: i.assignees.map((a) => this.simpleUser(base, a)),
      milestone: i.milestone ? this.renderMilestone(base, repo, repo.milestones.get(i.milestone)) : null,
      comments: i.comments.length, created_at: i.created_at, updated_at: i.updated_at,
      closed_at: i.closed_at, closed_by: i.closed_by ? this.simpleUser(base, i.closed_by) : null,
      author_association: i.user === repo.owner ? 'OWNER' : 'CONTRIBUTOR', active_lock_reason: null,
      body: i.body,
      reactions: { url: `${api}/reactions`, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0,
        confused: 0, heart: 0, rocket: 0, eyes: 0 },
      timeline_url: `${api}/timeline`, performed_via_github_app: null, state_reason: i.state_reason,
    };
    if (i.pull_request) {
      const pr = `${base}/repos/${repo.owner}/${repo.name}/pulls/${i.number}`;
      out.draft = false;
      out.pull_request = { url: pr, html_url: html, diff_url: `${html}.diff`, patch_url: `${html}.patch`,
        merged_at: null };
    } else {
      const done = subs.filter((s) => s.state === 'closed').length;
      out.sub_issues_summary = { total: subs.length, completed: done,
        percent_completed: subs.length ? Math.floor((100 * done) / subs.length) : 0 };
      out.issue_dependencies_summary = {
        blocked_by: i.blocked_by.filter((n) => repo.issues.get(n)?.state === 'open').length,
        blocking: blocking.filter((b) => b.state === 'open').length,
        total_blocked_by: i.blocked_by.length, total_blocking: blocking.length };
      out.parent_issue_url = i.parent ? `${base}/repos/${repo.owner}/${repo.name}/issues/${i.parent}` : null;
    }
    return out;
  }

  renderComment(base, c) {
    const repo = c.repo;
    return { url: `${base}/repos/${repo.owner}/${repo.name}/issues/comments/${c.id}`,
      html_url: `https://github.com/${repo.owner}/${repo.name}/issues/${c.issue}#issuecomment-${c.id}`,
      issue_url: `${base}/repos/${repo.owner}/${repo.name}/issues/${c.issue}`, id: c.id,
      node_id: nodeId('IC_kwDO', c.id), user: this.simpleUser(base, c.user), created_at: c.created_at,
      updated_at: c.updated_at, body: c.body, author_association: c.user === repo.owner ? 'OWNER' : 'CONTRIBUTOR',
      reactions: { url: `${base}/repos/${repo.owner}/${repo.name}/issues/comments/${c.id}/reactions`,
        total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
      performed_via_github_app: null };
  }

  state(base) {
    const repos = [...this.repos.values()].map((r) => ({ owner: r.owner, name: r.name, id: r.id }));
    const issues = [];
    const comments = [];
    for (const r of this.repos.values()) {
      for (const i of r.issues.values()) issues.push({ repo: `${r.owner}/${r.name}`, ...this.renderIssue(base, r, i) });
    }
    for (const c of this.comments.values()) comments.push({ repo: `${c.repo.owner}/${c.repo.name}`, issue: c.issue, ...this.renderComment(base, c) });
    return { repos, issues, comments };
  }
}

class BadControl extends Error {}

// ---------------------------------------------------------------- helpers

function nowSeconds() { return Math.floor(Date.now() / 1000); }

function nodeId(prefix, n) {
  return prefix + Buffer.from(`0:${n}`).toString('base64').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

function colorOf(name) {
  return createHash('sha1').update(name).digest('hex').slice(0, 6);
}

function etagOf(text) {
  return `W/"${createHash('sha256').update(text).digest('hex')}"`;
}

// Deterministic pseudo-random numbers (mulberry32) for /_control/generate.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The labels GitHub gives a new repository.
const DEFAULT_LABELS = [
  ['bug', 'd73a4a', "Something isn't working"],
  ['documentation', '0075ca', 'Improvements or additions to documentation'],
  ['duplicate', 'cfd3d7', 'This issue or pull request already exists'],
  ['enhancement', 'a2eeef', 'New feature or request'],
  ['good first issue', '7057ff', 'Good for newcomers'],
  ['help wanted', '008672', 'Extra attention is needed'],
  ['invalid', 'e4e669', "This doesn't seem right"],
  ['question', 'd876e3', 'Further information is requested'],
  ['wontfix', 'ffffff', 'This will not be worked on'],
];

const WORDS = ['sync', 'parser', 'cache', 'login', 'export', 'index', 'report', 'queue', 'theme',
  'upload', 'search', 'billing', 'docs', 'retry', 'timeout', 'schema', 'badge', 'widget'];

// ---------------------------------------------------------------- HTTP

class ApiError extends Error {
  constructor(status, body, headers = {}) { super(body.message); this.status = status; this.body = body; this.headers = headers; }
}

function notFound(doc = DOCS) {
  return new ApiError(404, { message: 'Not Found', documentation_url: doc, status: '404' });
}

function invalid(resource, errors, doc = DOCS) {
  return new ApiError(422, { message: 'Validation Failed',
    errors: errors.map((e) => ({ resource, ...e })), documentation_url: doc, status: '422' });
}

export function createHandler(fake) {
  return async (req, res) => {
    const started = process.hrtime.bigint();
    const url = new URL(req.url, 'http://127.0.0.1');
    const base = `http://${req.headers.host || '127.0.0.1'}`;
    const raw = await readBody(req);
    if (url.pathname.startsWith('/_control/')) return control(fake, req, res, url, raw, base);
    const slow = fake.faults.find((f) => f.delayMs && !f.status && f.times > 0 && matches(f, req.method, url.pathname));
    if (slow) {
      slow.times--;
      await new Promise((resolve) => setTimeout(resolve, slow.delayMs));
    }
    const out = api(fake, req, url, raw, base);
    const body = out.body === undefined ? '' : JSON.stringify(out.body);
    if (body) out.headers['content-length'] = String(Buffer.byteLength(body));
    fake.log.push({ method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams),
      status: out.status, ms: Number(process.hrtime.bigint() - started) / 1e6 });
    res.writeHead(out.status, out.headers);
    res.end(body);
  };
}

// A request's body as UTF-8 text (decoded whole: a character may straddle chunks).
export async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function control(fake, req, res, url, raw, base) {
  let body;
  try {
    body = raw ? JSON.parse(raw) : {};
  } catch (e) {
    return sendJson(res, 400, { error: `not JSON: ${e.message}` });
  }
  try {
    const what = `${req.method} ${url.pathname}`;
    switch (what) {
      case 'POST /_control/reset': fake.reset(body); return sendJson(res, 200, { ok: true });
      case 'POST /_control/generate': return sendJson(res, 200, { ok: true, ...generate(fake, body) });
      case 'POST /_control/faults':
        if (!Array.isArray(body)) throw new BadControl('faults: an array');
        for (const f of body) {
          if (!(f.delayMs > 0 && f.status === undefined) && ![500, 502, 503, 403, 429].includes(f.status)) {
            throw new BadControl(`fault status ${f.status}`);
          }
          let regex = null;
          try {
            regex = f.path ? new RegExp(f.path) : null;
          } catch (e) {
            throw new BadControl(`fault path: ${e.message}`);
          }
          fake.faults.push({ ...f, times: f.times ?? 1, regex });
        }
        return sendJson(res, 200, { ok: true });
      case 'POST /_control/edit': edit(fake, body); return sendJson(res, 200, { ok: true });
      case 'POST /_control/limits':
        for (const [field, max] of Object.entries(body || {})) {
          if (!(field in LIMITS) || !Number.isInteger(max) || max < 1 || max > LIMITS[field]) {
            throw new BadControl(`limits: ${field} is title or body, 1 to GitHub's ${LIMITS[field] ?? '…'}`);
          }
          fake.limits[field] = max;
        }
        return sendJson(res, 200, { ok: true });
      case 'POST /_control/delete': {
        const [owner, name] = String(body.repo || '').split('/');
        const repo = owner && name && fake.repo(owner, name);
        if (!repo || !repo.issues.has(body.number)) throw new BadControl(`delete: no issue ${body.repo}#${body.number}`);
        repo.issues.delete(body.number);
        repo.deleted.add(body.number);
        for (const [id, c] of fake.comments) if (c.repo === repo && c.issue === body.number) fake.comments.delete(id);
        fake.tick();
        return sendJson(res, 200, { ok: true });
      }
      case 'GET /_control/log': return sendJson(res, 200, fake.log);
      case 'GET /_control/violations': return sendJson(res, 200, fake.violations);
      case 'GET /_control/state': return sendJson(res, 200, fake.state(base));
      default: return sendJson(res, 404, { error: `no control endpoint ${what}` });
    }
  } catch (e) {
    // A control request the fake cannot follow is the test's mistake: 400, never a violation.
    return sendJson(res, 400, { error: e instanceof BadControl ? e.message : `${e.name}: ${e.message}` });
  }
}

function edit(fake, b) {
  const [owner, name] = String(b.repo || '').split('/');
  const repo = owner && name && fake.repo(owner, name);
  const issue = repo && repo.issues.get(b.number);
  if (!issue) throw new BadControl(`edit: no issue ${b.repo}#${b.number}`);
  const login = b.as || 'octocat';
  fake.userId(login);
  change(fake, issue, {
    title: b.title === undefined ? undefined : String(b.title), body: b.body,
    labels: b.labels === undefined ? undefined : labelNames(fake, repo, b.labels),
    assignees: b.assignees,
    milestone: b.milestone === undefined ? undefined : b.milestone === null ? null : fake.milestone(repo, b.milestone).number,
    state: b.state, state_reason: b.state_reason,
  }, login);
  if (b.comment !== undefined) fake.addComment(repo, issue, login, String(b.comment));
}

// Applies the fields given (undefined: left as is). As on GitHub, only a real change moves
// updated_at; closing sets closed_at, closed_by and a reason (completed unless given), reopening
// clears closed_at with the reason "reopened"; a reason alone changes a closed issue's reason.
function change(fake, issue, c, login) {
  const next = {};
  for (const k of ['title', 'body', 'labels', 'assignees', 'milestone']) {
    if (c[k] !== undefined && !isDeepStrictEqual(c[k], issue[k])) next[k] = c[k];
  }
  const closing = c.state === 'closed' && issue.state !== 'closed';
  const reopening = c.state === 'open' && issue.state !== 'open';
  const reason = issue.state === 'closed' && !reopening && c.state_reason && c.state_reason !== issue.state_reason;
  if (!Object.keys(next).length && !closing && !reopening && !reason) return false;
  const at = fake.tick();
  Object.assign(issue, next);
  if (closing) Object.assign(issue, { state: 'closed', closed_at: at, closed_by: login, state_reason: c.state_reason || 'completed' });
  else if (reopening) Object.assign(issue, { state: 'open', closed_at: null, state_reason: 'reopened' });
  else if (reason) issue.state_reason = c.state_reason;
  issue.updated_at = at;
  return true;
}

function generate(fake, b) {
  const [owner, name] = String(b.repo || '').split('/');
  if (!owner || !name) throw new BadControl('generate: repo "owner/name"');
  const count = b.count ?? 100;
  if (!Number.isInteger(count) || count < 0 || count > 200000) throw new BadControl('generate: count, 0 to 200000');
  const random = rng(b.seed ?? 1);
  const labels = Array.isArray(b.labels) ? b.labels
    : Array.from({ length: b.labels ?? 8 }, (_, k) => `label-${k + 1}`);
  const milestones = Array.isArray(b.milestones) ? b.milestones
    : Array.from({ length: b.milestones ?? 4 }, (_, k) => `Milestone ${k + 1}`);
  const repo = fake.repo(owner, name, true);
  const first = repo.nextNumber;
  const pick = (list) => list[Math.floor(random() * list.length)];
  for (let k = 0; k < count; k++) {
    const number = first + k;
    const words = [pick(WORDS), pick(WORDS), pick(WORDS)];
    const lines = [`Generated issue ${number}: ${words.join(' ')}.`];
    const blocked = [];
    let parent = null;
    if (b.taskLists) {
      const n = 1 + Math.floor(random() * 3);
      lines.push('', ...Array.from({ length: n }, (_, t) => `- [${random() < 0.3 ? 'x' : ' '}] step ${t + 1}: ${pick(WORDS)}`));
    }
    if (b.references && k > 0) {
      const r = random();
      const earlier = first + Math.floor(random() * k);
      if (r < 0.15) { blocked.push(earlier); lines.push('', `Blocked by #${earlier}`); }
      else if (r < 0.25) { lines.push('', `Depends on #${earlier}`); }
      else if (r < 0.35) { parent = earlier; }
    }
    const state = random() < 0.2 ? 'closed' : 'open';
    fake.seedIssue({
      repo: `${owner}/${name}`, number, title: `${words[0]}: ${words[1]} ${words[2]} (${number})`,
      body: lines.join('\n'), state, state_reason: state === 'closed' ? (random() < 0.8 ? 'completed' : 'not_planned') : null,
      labels: labels.length ? [...new Set([pick(labels), ...(random() < 0.3 ? [pick(labels)] : [])])] : [],
      milestone: milestones.length && random() < 0.5 ? pick(milestones) : undefined,
      assignees: random() < 0.4 ? [pick(['alice', 'bob', 'carol'])] : [],
      user: pick(['octocat', 'alice', 'bob']), parent, blocked_by: blocked,
      pull_request: b.pullRequests ? random() < b.pullRequests : false,
    });
  }
  return { first, last: first + count - 1 };
}

// Rate-limit and request-id headers every API answer carries.
function commonHeaders(fake, extra = {}) {
  const rl = fake.rateLimit;
  const seq = ++fake.requestSeq;
  return {
    'content-type': 'application/json; charset=utf-8',
    'x-github-api-version-selected': '2022-11-28',
    'x-github-media-type': 'github.v3; format=json',
    'x-ratelimit-limit': String(rl.limit), 'x-ratelimit-remaining': String(rl.remaining),
    'x-ratelimit-used': String(rl.used), 'x-ratelimit-reset': String(rl.reset),
    'x-ratelimit-resource': 'core',
    'x-github-request-id': `C1E0:${seq.toString(16).toUpperCase().padStart(5, '0')}:${(seq * 7919).toString(16).toUpperCase()}:${(seq * 104729).toString(16).toUpperCase()}:6A000000`,
    ...extra,
  };
}

function api(fake, req, url, raw, base) {
  const method = req.method;
  // GitHub's Link headers name repository-scoped lists as /repositories/{id}/…: the same lists.
  let path = url.pathname;
  const byId = /^\/repositories\/(\d+)(\/.*)?$/.exec(path);
  if (byId) {
    const r = fake.repoById(Number(byId[1]));
    if (r) path = `/repos/${r.owner}/${r.name}${byId[2] || ''}`;
  }
  const route = fake.spec.route(method, path);
  let body;
  let reqErrors = [];
  if (raw) {
    try {
      body = JSON.parse(raw);
    } catch {
      reqErrors = ['body: not JSON'];
    }
  }
  if (route) reqErrors = reqErrors.concat(fake.spec.validateRequest(route, url.searchParams, body));
  else reqErrors.push(`no operation ${method} ${path} in the description`);
  if (reqErrors.length) fake.violations.push({ where: 'request', method, path: url.pathname, errors: reqErrors });

  let out;
  try {
    out = answer(fake, req, method, path, url, body, base, route, reqErrors);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    out = { status: e.status, body: e.body, headers: e.headers };
  }
  out.headers = commonHeaders(fake, out.headers);
  if (out.body === undefined) delete out.headers['content-type'];
  if (route) {
    const resErrors = fake.spec.validateResponse(route, out.status, out.body, out.headers);
    if (resErrors.length) fake.violations.push({ where: 'response', method, path: url.pathname, status: out.status, errors: resErrors });
  }
  return out;
}

function answer(fake, req, method, path, url, body, base, route, reqErrors) {
  // Authentication.
  const auth = req.headers.authorization || '';
  const m = /^(?:Bearer|token)\s+(\S+)$/i.exec(auth);
  if (!m) throw new ApiError(401, { message: 'Requires authentication', documentation_url: DOCS, status: '401' });
  const login = fake.tokens ? fake.tokens[m[1]] : 'octocat';
  if (!login) throw new ApiError(401, { message: 'Bad credentials', documentation_url: DOCS, status: '401' });
  fake.userId(login);

  // Faults the test asked for.
  const fault = fake.faults.find((f) => f.status && f.times > 0 && matches(f, method, url.pathname));
  if (fault) {
    fault.times--;
    return faultAnswer(fake, fault, login);
  }

  // The primary rate limit (GET /rate_limit is free, as on GitHub).
  const rl = fake.rateLimit;
  if (nowSeconds() >= rl.reset) { rl.remaining = rl.limit; rl.used = 0; rl.reset = nowSeconds() + 3600; }
  if (path !== '/rate_limit') {
    if (rl.remaining <= 0) return primaryExhausted(fake, login);
    rl.remaining--; rl.used++;
  }

  if (reqErrors.includes('body: not JSON')) {
    throw new ApiError(400, { message: 'Problems parsing JSON', documentation_url: route ? docOf(route) : DOCS, status: '400' });
  }
  if (!route) throw notFound();
  if (reqErrors.length) {
    throw invalid(resourceOf(route.template), reqErrors.map((e) => ({ code: 'invalid', message: e, ...fieldOf(e) })),
      docOf(route));
  }
  const out = handle(fake, method, route, url.searchParams, body, base, login);
  if (out.status < 300 && out.body !== undefined) {
    // GitHub tags every answer with a body; only a GET can be answered 304.
    const etag = etagOf(JSON.stringify(out.body));
    out.headers = { ...(out.headers || {}), etag, 'cache-control': 'private, max-age=60, s-maxage=60',
      vary: 'Accept, Authorization, Cookie, X-GitHub-OTP' };
    const inm = method === 'GET' && req.headers['if-none-match'];
    if (inm && inm.split(',').map((s) => s.trim()).some((t) => t === etag || t === etag.slice(2) || t === '*')) {
      if (path !== '/rate_limit') { rl.remaining++; rl.used--; }   // 304s are free on GitHub
      return { status: 304, body: undefined, headers: { etag } };
    }
  }
  return out;
}

function resourceOf(template) {
  if (/comments/.test(template)) return 'IssueComment';
  if (/labels/.test(template)) return 'Label';
  if (/milestones/.test(template)) return 'Milestone';
  return 'Issue';
}

function fieldOf(message) {
  const m = /^body\.([A-Za-z_]+)|^body: missing required ([A-Za-z_]+)|parameter ([A-Za-z_]+)/.exec(message);
  const field = m && (m[1] || m[2] || m[3]);
  return field ? { field, code: /missing required/.test(message) ? 'missing_field' : 'invalid' } : {};
}

function docOf(route) {
  const d = route.op.externalDocs && route.op.externalDocs.url;
  return d || DOCS;
}

function matches(fault, method, path) {
  return (!fault.method || fault.method.toUpperCase() === method) && (!fault.regex || fault.regex.test(path));
}

function faultAnswer(fake, f, login) {
  const reqId = commonHeaders(fake)['x-github-request-id'];
  if (f.remaining0) return primaryExhausted(fake, login, f.status, f.resetIn);
  if (f.secondary) {
    return { status: f.status, headers: { 'retry-after': String(f.retryAfter ?? 1) },
      body: { message: `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${reqId}.`,
        documentation_url: 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
        status: String(f.status) } };
  }
  const messages = { 500: 'Server Error', 502: 'Server Error', 503: 'Service Unavailable',
    403: 'Forbidden', 429: 'Too Many Requests' };
  const headers = f.retryAfter !== undefined ? { 'retry-after': String(f.retryAfter) } : {};
  return { status: f.status, headers, body: { message: messages[f.status], documentation_url: DOCS, status: String(f.status) } };
}

// GitHub's answer when the primary rate limit is used up: 403, X-RateLimit-Remaining 0 and the
// reset time. Here the window resets a second later, so clients that wait for it wait briefly.
function primaryExhausted(fake, login, status = 403, resetIn = 1) {
  const rl = fake.rateLimit;
  rl.remaining = 0;
  rl.used = rl.limit;
  rl.reset = nowSeconds() + (resetIn ?? 1);
  const reqId = commonHeaders(fake)['x-github-request-id'];
  const stamp = new Date().toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  return { status: status || 403, headers: {},
    body: { message: `API rate limit exceeded for user ID ${fake.userId(login)}. If you reach out to GitHub Support for help, please include the request ID ${reqId} and timestamp ${stamp}.`,
      documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api', status: String(status || 403) } };
}

// ---------------------------------------------------------------- the endpoints

function page(items, query, base, path) {
  const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') || 30)));
  const pageNo = Math.max(1, Number(query.get('page') || 1));
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((pageNo - 1) * perPage, pageNo * perPage);
  const links = [];
  const href = (p) => {
    const q = new URLSearchParams(query);
    q.set('page', String(p));
    return `<${base}${path}?${q.toString()}>`;
  };
  if (pageNo > 1) links.push(`${href(pageNo - 1)}; rel="prev"`);
  if (pageNo < last) links.push(`${href(pageNo + 1)}; rel="next"`, `${href(last)}; rel="last"`);
  if (pageNo > 1) links.push(`${href(1)}; rel="first"`);
  return { slice, headers: links.length ? { link: links.join(', ') } : {} };
}

function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

function handle(fake, method, route, q, body, base, login) {
  const p = route.params;
  const t = `${method} ${route.template}`;
  if (t === 'GET /rate_limit') {
    const rl = fake.rateLimit;
    const core = { limit: rl.limit, used: rl.used, remaining: rl.remaining, reset: rl.reset };
    const search = { limit: 30, used: 0, remaining: 30, reset: nowSeconds() + 60 };
    return { status: 200, body: { resources: { core, search, graphql: { limit: 5000, used: 0, remaining: 5000, reset: rl.reset } }, rate: core } };
  }
  if (t === 'GET /user') {
    const u = fake.simpleUser(base, login);
    return { status: 200, body: { ...u, name: null, company: null, blog: '', location: null, email: null,
      hireable: null, bio: null, twitter_username: null, public_repos: 1, public_gists: 0, followers: 0,
      following: 0, created_at: '2020-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' } };
  }
  if (!p.owner) throw notFound(docOf(route));
  const repo = fake.repo(p.owner, p.repo);
  if (!repo) throw notFound(docOf(route));
  const repoPath = `/repositories/${repo.id}`;
  const issueOf = (n) => {
    const issue = repo.issues.get(Number(n));
    if (!issue && repo.deleted.has(Number(n))) {
      throw new ApiError(410, { message: 'This issue was deleted', documentation_url: docOf(route), status: '410' });
    }
    if (!issue) throw notFound(docOf(route));
    return issue;
  };

  switch (t) {
    case 'GET /repos/{owner}/{repo}':
      return { status: 200, body: fake.renderRepo(base, repo) };
    case 'GET /repos/{owner}/{repo}/issues': {
      const state = q.get('state') || 'open';
      const since = q.get('since');
      const labels = q.get('labels') ? q.get('labels').split(',').map((s) => s.trim().toLowerCase()) : null;
      const ms = q.get('milestone');
      const assignee = q.get('assignee');
      const creator = q.get('creator');
      let items = [...repo.issues.values()].filter((i) => (state === 'all' || i.state === state)
        && (!since || Date.parse(i.updated_at) >= Date.parse(since))
        && (!labels || labels.every((l) => i.labels.some((n) => n.toLowerCase() === l)))
        && (!ms || (ms === '*' ? i.milestone !== null : ms === 'none' ? i.milestone === null : i.milestone === Number(ms)))
        && (!assignee || (assignee === '*' ? i.assignees.length > 0 : assignee === 'none' ? i.assignees.length === 0 : i.assignees.includes(assignee)))
        && (!creator || i.user === creator));
      const sort = q.get('sort') || 'created';
      const key = sort === 'updated' ? (i) => i.updated_at : sort === 'comments' ? (i) => i.comments.length : (i) => i.created_at;
      const dir = (q.get('direction') || 'desc') === 'asc' ? 1 : -1;
      items.sort((a, b) => dir * (cmp(key(a), key(b)) || cmp(a.number, b.number)));
      const { slice, headers } = page(items, q, base, `${repoPath}/issues`);
      return { status: 200, headers, body: slice.map((i) => fake.renderIssue(base, repo, i)) };
    }
    case 'POST /repos/{owner}/{repo}/issues': {
      limits(fake, 'Issue', body, route);
      const number = repo.nextNumber++;
      const at = fake.tick();
      const issue = { number, id: fake.nextId.issue++, title: String(body.title), body: body.body ?? null,
        state: 'open', state_reason: null, labels: labelNames(fake, repo, body.labels),
        milestone: milestoneNumber(repo, body.milestone, route),
        assignees: assigneesOf(body), user: login, parent: null, blocked_by: [], pull_request: false,
        locked: false, comments: [], created_at: at, updated_at: at, closed_at: null, closed_by: null };
      repo.issues.set(number, issue);
      fake.writes++;
      const out = fake.renderIssue(base, repo, issue);
      return { status: 201, headers: { location: out.url }, body: out };
    }
    case 'GET /repos/{owner}/{repo}/issues/{issue_number}':
      return { status: 200, body: fake.renderIssue(base, repo, issueOf(p.issue_number)) };
    case 'PATCH /repos/{owner}/{repo}/issues/{issue_number}': {
      const issue = issueOf(p.issue_number);
      const b = body || {};
      limits(fake, 'Issue', b, route);
      change(fake, issue, {
        title: b.title === null || b.title === undefined ? undefined : String(b.title),
        body: b.body,
        labels: b.labels === undefined ? undefined : labelNames(fake, repo, b.labels),
        assignees: b.assignees === undefined && b.assignee === undefined ? undefined : assigneesOf(b),
        milestone: b.milestone === undefined ? undefined : milestoneNumber(repo, b.milestone, route),
        state: b.state, state_reason: b.state_reason,
      }, login);
      return { status: 200, body: fake.renderIssue(base, repo, issue) };
    }
    case 'GET /repos/{owner}/{repo}/issues/{issue_number}/comments': {
      const issue = issueOf(p.issue_number);
      const since = q.get('since');
      const items = issue.comments.map((id) => fake.comments.get(id))
        .filter((c) => !since || Date.parse(c.updated_at) >= Date.parse(since));
      const { slice, headers } = page(items, q, base, `${repoPath}/issues/${issue.number}/comments`);
      return { status: 200, headers, body: slice.map((c) => fake.renderComment(base, c)) };
    }
    case 'POST /repos/{owner}/{repo}/issues/{issue_number}/comments': {
      const issue = issueOf(p.issue_number);
      limits(fake, 'IssueComment', body, route);
      const c = fake.addComment(repo, issue, login, String(body.body));
      const out = fake.renderComment(base, c);
      return { status: 201, headers: { location: out.url }, body: out };
    }
    case 'GET /repos/{owner}/{repo}/issues/comments': {
      const since = q.get('since');
      const items = [...fake.comments.values()].filter((c) => c.repo === repo
        && (!since || Date.parse(c.updated_at) >= Date.parse(since)));
      const key = q.get('sort') === 'updated' ? (c) => c.updated_at : (c) => c.created_at;
      const dir = q.get('sort') && q.get('direction') === 'desc' ? -1 : 1;
      items.sort((a, b) => dir * (cmp(key(a), key(b)) || cmp(a.id, b.id)));
      const { slice, headers } = page(items, q, base, `${repoPath}/issues/comments`);
      return { status: 200, headers, body: slice.map((c) => fake.renderComment(base, c)) };
    }
    case 'GET /repos/{owner}/{repo}/issues/comments/{comment_id}':
    case 'PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}': {
      const c = fake.comments.get(Number(p.comment_id));
      if (!c || c.repo !== repo) throw notFound(docOf(route));
      if (method === 'PATCH') limits(fake, 'IssueComment', body, route);
      if (method === 'PATCH' && String(body.body) !== c.body) {
        c.body = String(body.body);
        c.updated_at = fake.tick();
        repo.issues.get(c.issue).updated_at = c.updated_at;
      }
      return { status: 200, body: fake.renderComment(base, c) };
    }
    case 'GET /repos/{owner}/{repo}/milestones': {
      const state = q.get('state') || 'open';
      const items = [...repo.milestones.values()].filter((m) => state === 'all' || m.state === state);
      const { slice, headers } = page(items, q, base, `${repoPath}/milestones`);
      return { status: 200, headers, body: slice.map((m) => fake.renderMilestone(base, repo, m)) };
    }
    case 'GET /repos/{owner}/{repo}/labels': {
      const { slice, headers } = page([...repo.labels.values()], q, base, `${repoPath}/labels`);
      return { status: 200, headers, body: slice.map((l) => fake.renderLabel(base, repo, l)) };
    }
    case 'POST /repos/{owner}/{repo}/labels': {
      if (!/^[0-9a-fA-F]{6}$/.test(String(body.color ?? 'ededed'))) {
        throw invalid('Label', [{ code: 'invalid', field: 'color' }], docOf(route));
      }
      if (repo.labels.has(String(body.name).toLowerCase())) {
        throw invalid('Label', [{ code: 'already_exists', field: 'name' }], docOf(route));
      }
      const l = fake.label(repo, String(body.name));
      if (body.color) l.color = body.color.toLowerCase();
      if (body.description !== undefined) l.description = body.description;
      const out = fake.renderLabel(base, repo, l);
      return { status: 201, headers: { location: out.url }, body: out };
    }
    case 'GET /repos/{owner}/{repo}/labels/{name}': {
      const l = repo.labels.get(p.name.toLowerCase());
      if (!l) throw notFound(docOf(route));
      return { status: 200, body: fake.renderLabel(base, repo, l) };
    }
    case 'PATCH /repos/{owner}/{repo}/labels/{name}': {
      const l = repo.labels.get(p.name.toLowerCase());
      if (!l) throw notFound(docOf(route));
      if (body.color !== undefined && !/^[0-9a-fA-F]{6}$/.test(body.color)) {
        throw invalid('Label', [{ code: 'invalid', field: 'color' }], docOf(route));
      }
      if (body.new_name !== undefined && body.new_name.toLowerCase() !== p.name.toLowerCase()) {
        if (repo.labels.has(body.new_name.toLowerCase())) {
          throw invalid('Label', [{ code: 'already_exists', field: 'name' }], docOf(route));
        }
        repo.labels.delete(p.name.toLowerCase());
        for (const i of repo.issues.values()) i.labels = i.labels.map((n) => (n === l.name ? body.new_name : n));
        l.name = body.new_name;
        repo.labels.set(l.name.toLowerCase(), l);
      }
      if (body.color !== undefined) l.color = body.color.toLowerCase();
      if (body.description !== undefined) l.description = body.description;
      return { status: 200, body: fake.renderLabel(base, repo, l) };
    }
    case 'DELETE /repos/{owner}/{repo}/labels/{name}': {
      const l = repo.labels.get(p.name.toLowerCase());
      if (!l) throw notFound(docOf(route));
      repo.labels.delete(p.name.toLowerCase());
      for (const i of repo.issues.values()) i.labels = i.labels.filter((n) => n !== l.name);
      return { status: 204, body: undefined };
    }
    case 'POST /repos/{owner}/{repo}/issues/{issue_number}/labels': {
      const issue = issueOf(p.issue_number);
      const add = Array.isArray(body) ? body : Array.isArray(body.labels) ? body.labels : [];
      issue.labels = labelNames(fake, repo, [...issue.labels, ...add]);
      issue.updated_at = fake.tick();
      return { status: 200, body: issue.labels.map((n) => fake.renderLabel(base, repo, fake.label(repo, n))) };
    }
    case 'GET /repos/{owner}/{repo}/issues/{issue_number}/labels': {
      const issue = issueOf(p.issue_number);
      const { slice, headers } = page(issue.labels, q, base, `${repoPath}/issues/${issue.number}/labels`);
      return { status: 200, headers, body: slice.map((n) => fake.renderLabel(base, repo, fake.label(repo, n))) };
    }
    case 'GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues': {
      const issue = issueOf(p.issue_number);
      const items = fake.derived(repo).children.get(issue.number) || [];
      const { slice, headers } = page(items, q, base, `${repoPath}/issues/${issue.number}/sub_issues`);
      return { status: 200, headers, body: slice.map((s) => fake.renderIssue(base, repo, s)) };
    }
    case 'POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues': {
      const parent = issueOf(p.issue_number);
      const sub = issueById(repo, body.sub_issue_id);
      const bad = (why) => invalid('Issue', [{ field: 'sub_issue_id', code: 'invalid', message: why }], docOf(route));
      if (!sub) throw bad('no issue with that id in this repository');
      if (sub === parent || ancestors(repo, parent).includes(sub.number)) throw bad('an issue cannot be its own ancestor');
      if (sub.parent === parent.number) throw bad('already a sub-issue of this issue');
      if (sub.parent && !body.replace_parent) throw bad('already has a parent (replace_parent: true moves it)');
      sub.parent = parent.number;
      fake.tick();
      const out = fake.renderIssue(base, repo, parent);
      return { status: 201, headers: { location: `${out.url}/sub_issues` }, body: out };
    }
    case 'DELETE /repos/{owner}/{repo}/issues/{issue_number}/sub_issue': {
      const parent = issueOf(p.issue_number);
      const sub = issueById(repo, body.sub_issue_id);
      if (!sub || sub.parent !== parent.number) throw notFound(docOf(route));
      sub.parent = null;
      fake.tick();
      return { status: 200, body: fake.renderIssue(base, repo, parent) };
    }
    case 'POST /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by': {
      const issue = issueOf(p.issue_number);
      const blocker = issueById(repo, body.issue_id);
      const bad = (why) => invalid('Issue', [{ field: 'issue_id', code: 'invalid', message: why }], docOf(route));
      if (!blocker) throw bad('no issue with that id in this repository');
      if (blocker === issue) throw bad('an issue cannot block itself');
      if (issue.blocked_by.includes(blocker.number)) throw bad('already blocked by that issue');
      issue.blocked_by.push(blocker.number);
      fake.tick();
      const out = fake.renderIssue(base, repo, issue);
      return { status: 201, headers: { location: `${out.url}/dependencies/blocked_by` }, body: out };
    }
    case 'DELETE /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by/{issue_id}': {
      const issue = issueOf(p.issue_number);
      const blocker = issueById(repo, Number(p.issue_id));
      if (!blocker || !issue.blocked_by.includes(blocker.number)) throw notFound(docOf(route));
      issue.blocked_by = issue.blocked_by.filter((n) => n !== blocker.number);
      fake.tick();
      return { status: 200, body: fake.renderIssue(base, repo, issue) };
    }
    case 'GET /repos/{owner}/{repo}/issues/{issue_number}/parent': {
      const issue = issueOf(p.issue_number);
      if (!issue.parent) throw notFound(docOf(route));
      return { status: 200, body: fake.renderIssue(base, repo, issueOf(issue.parent)) };
    }
    case 'GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by': {
      const issue = issueOf(p.issue_number);
      const items = issue.blocked_by.map((n) => repo.issues.get(n)).filter(Boolean);
      const { slice, headers } = page(items, q, base, `${repoPath}/issues/${issue.number}/dependencies/blocked_by`);
      return { status: 200, headers, body: slice.map((s) => fake.renderIssue(base, repo, s)) };
    }
    case 'GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocking': {
      const issue = issueOf(p.issue_number);
      const items = fake.derived(repo).blocking.get(issue.number) || [];
      const { slice, headers } = page(items, q, base, `${repoPath}/issues/${issue.number}/dependencies/blocking`);
      return { status: 200, headers, body: slice.map((s) => fake.renderIssue(base, repo, s)) };
    }
    default:
      throw notFound(docOf(route));
  }
}

// An issue of the repository by its `id` (what the sub-issue and dependency endpoints take).
function issueById(repo, id) {
  for (const i of repo.issues.values()) if (i.id === id) return i;
  return undefined;
}

function ancestors(repo, issue) {
  const out = [];
  for (let p = issue.parent; p && !out.includes(p); p = repo.issues.get(p)?.parent) out.push(p);
  return out;
}

function labelNames(fake, repo, labels) {
  if (!labels) return [];
  return [...new Set(labels.map((l) => fake.label(repo, typeof l === 'string' ? l : l.name).name))];
}

function assigneesOf(b) {
  if (b.assignees) return b.assignees.map((a) => (typeof a === 'string' ? a : a.login));
  if (b.assignee) return [b.assignee];
  return [];
}

function limits(fake, resource, b, route) {
  const errors = [];
  for (const [field, max] of Object.entries(fake.limits)) {
    if (field === 'title' && resource !== 'Issue') continue;
    const value = b && b[field];
    if (typeof value === 'string' && [...value].length > max) {
      errors.push({ code: 'custom', field, message: `${field} is too long (maximum is ${max} characters)` });
    }
  }
  if (errors.length) throw invalid(resource, errors, docOf(route));
}

function milestoneNumber(repo, value, route) {
  if (value === undefined || value === null) return null;
  const n = Number(value);
  if (!repo.milestones.has(n)) {
    throw invalid('Issue', [{ field: 'milestone', code: 'invalid', value }], docOf(route));
  }
  return n;
}

// ---------------------------------------------------------------- start

export async function startServer({ port = 0, host = '127.0.0.1' } = {}) {
  const fake = new FakeGitHub();
  const handler = createHandler(fake);
  const server = http.createServer((req, res) => {
    handler(req, res).catch((e) => {
      fake.violations.push({ where: 'server', method: req.method, path: req.url, errors: [String(e.stack || e)] });
      if (!res.headersSent) sendJson(res, 500, { message: `fake GitHub failed: ${e.message}` });
      else res.end();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise((resolve) => server.listen(port, host, resolve));
  const actual = server.address().port;
  return { port: actual, url: `http://${host}:${actual}`, server, fake,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }) };
}

function parseArgs(argv) {
  const out = { port: 0 };
  for (let k = 0; k < argv.length; k++) {
    if (argv[k] === '--port') out.port = Number(argv[++k]);
    else if (argv[k].startsWith('--port=')) out.port = Number(argv[k].slice(7));
    else { process.stderr.write(`usage: server.mjs [--port N]\n`); process.exit(2); }
  }
  return out;
}

if (isMain(import.meta.url)) {
  const { port, close } = await startServer(parseArgs(process.argv.slice(2)));
  serveUntilStopped(port, close);
}
