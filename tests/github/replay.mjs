// Serves a recorded real GitHub exchange (@octokit/fixtures, pinned) verbatim, so a client can be
// tested against the bytes GitHub really sent.
//
//   node tests/github/replay.mjs <scenario> [--port N]    prints {"port":N} once listening
//   node tests/github/replay.mjs --list                   the scenarios, one a line
//
// <scenario> is a folder of the package's scenarios/api.github.com (paginate-issues,
// add-labels-to-issue, labels, errors, …). Each request is answered by the first recorded exchange
// not yet used with the same method, path and query (any order of query parameters) and, when one
// was recorded, the same JSON body: its status, headers and body as recorded — but for
// `https://api.github.com` in the Link and Location headers, which becomes this server's address so
// that following them stays here, and Content-Length, which is recomputed. A request no exchange
// matches is answered 404 and recorded. Control (not recorded, JSON):
//   GET /_control/pending   → ["GET /path?query", …] exchanges not yet used
//   GET /_control/unmatched → [{method, path, body}] requests no exchange matched
//   GET /_control/log       → [{method, path, status}]
//   POST /_control/rewind   → {"ok":true}: every exchange unused again, the logs emptied
// Exits on SIGTERM, and when its stdin (a pipe, socket or terminal) closes.
import http from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { isMain, serveUntilStopped } from './cli.mjs';
import { readBody } from './server.mjs';

const require = createRequire(import.meta.url);

export function scenariosDir() {
  return join(dirname(require.resolve('@octokit/fixtures/package.json')), 'scenarios', 'api.github.com');
}

export function listScenarios() {
  return readdirSync(scenariosDir()).sort();
}

export function loadScenario(name) {
  const short = name.replace(/^api\.github\.com\//, '');
  if (!listScenarios().includes(short)) throw new Error(`no scenario "${name}" (see --list)`);
  return JSON.parse(readFileSync(join(scenariosDir(), short, 'normalized-fixture.json'), 'utf8'));
}

function sameTarget(recordedPath, url) {
  const r = new URL(recordedPath, 'http://x');
  if (r.pathname !== url.pathname) return false;
  const a = [...r.searchParams].map(([k, v]) => `${k}=${v}`).sort();
  const b = [...url.searchParams].map(([k, v]) => `${k}=${v}`).sort();
  return isDeepStrictEqual(a, b);
}

const DROPPED = new Set(['content-length', 'connection', 'transfer-encoding', 'keep-alive']);

export async function startReplay(name, { port = 0, host = '127.0.0.1' } = {}) {
  const exchanges = loadScenario(name);
  let used = new Set();
  let unmatched = [];
  let log = [];
  const server = http.createServer(async (req, res) => {
    const raw = await readBody(req);
    const url = new URL(req.url, 'http://127.0.0.1');
    const reply = (status, value) => {
      const text = JSON.stringify(value);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (url.pathname.startsWith('/_control/')) {
      const what = `${req.method} ${url.pathname}`;
      if (what === 'GET /_control/pending') {
        return reply(200, exchanges.filter((_, k) => !used.has(k)).map((x) => `${x.method.toUpperCase()} ${x.path}`));
      }
      if (what === 'GET /_control/unmatched') return reply(200, unmatched);
      if (what === 'GET /_control/log') return reply(200, log);
      if (what === 'POST /_control/rewind') { used = new Set(); unmatched = []; log = []; return reply(200, { ok: true }); }
      return reply(404, { error: `no control endpoint ${what}` });
    }
    let body;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const k = exchanges.findIndex((x, i) => !used.has(i) && x.method.toUpperCase() === req.method
      && sameTarget(x.path, url) && (x.body === undefined || x.body === '' || isDeepStrictEqual(x.body, body)));
    if (k < 0) {
      unmatched.push({ method: req.method, path: req.url, body });
      log.push({ method: req.method, path: req.url, status: 404 });
      return reply(404, { message: `replay ${name}: no recorded exchange left for ${req.method} ${req.url}`,
        documentation_url: 'https://docs.github.com/rest', status: '404' });
    }
    used.add(k);
    const x = exchanges[k];
    const self = `http://${req.headers.host || `${host}:${server.address().port}`}`;
    const headers = {};
    for (const [h, v] of Object.entries(x.headers || {})) {
      if (DROPPED.has(h)) continue;
      headers[h] = (h === 'link' || h === 'location') ? String(v).replaceAll('https://api.github.com', self) : String(v);
    }
    const text = x.response === undefined || x.response === '' ? '' : typeof x.response === 'string' ? x.response : JSON.stringify(x.response);
    headers['content-length'] = String(Buffer.byteLength(text));
    log.push({ method: req.method, path: req.url, status: x.status });
    res.writeHead(x.status, headers);
    res.end(text);
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const actual = server.address().port;
  return { port: actual, url: `http://${host}:${actual}`, server, exchanges,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }) };
}

if (isMain(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args[0] === '--list') {
    process.stdout.write(`${listScenarios().join('\n')}\n`);
    process.exit(0);
  }
  let name;
  let port = 0;
  for (let k = 0; k < args.length; k++) {
    if (args[k] === '--port') port = Number(args[++k]);
    else if (!name && !args[k].startsWith('-')) name = args[k];
    else name = undefined, k = args.length;
  }
  if (!name) {
    process.stderr.write('usage: replay.mjs <scenario> [--port N] | --list\n');
    process.exit(2);
  }
  let r;
  try {
    r = await startReplay(name, { port });
  } catch (e) {
    process.stderr.write(`replay.mjs: ${e.message}\n`);
    process.exit(2);
  }
  serveUntilStopped(r.port, r.close);
}
