// The fake's own cost, for benchmarks of the sync to set against theirs:
//   node tests/github/bench.mjs [--count N]     prints one JSON line
// generates N issues (10,000 by default) with task lists and references, walks them by Link at
// per_page=100 as a client would, and reports the times and the server's share (/_control/log).
import { startServer } from './server.mjs';

const k = process.argv.indexOf('--count');
const count = k > 0 ? Number(process.argv[k + 1]) : 10000;
const s = await startServer();
try {
  let t = performance.now();
  const gen = await fetch(`${s.url}/_control/generate`, { method: 'POST',
    body: JSON.stringify({ repo: 'bench/repo', count, seed: 1, taskLists: true, references: true }) });
  if (!gen.ok) throw new Error(`generate: ${gen.status}`);
  const generateMs = performance.now() - t;
  t = performance.now();
  let next = `${s.url}/repos/bench/repo/issues?state=all&per_page=100`;
  let issues = 0;
  let bytes = 0;
  while (next) {
    const res = await fetch(next, { headers: { authorization: 'token bench' } });
    const text = await res.text();
    bytes += Buffer.byteLength(text);
    issues += JSON.parse(text).length;
    next = (/<([^>]+)>; rel="next"/.exec(res.headers.get('link') || '') || [])[1];
  }
  const walkMs = performance.now() - t;
  const log = s.fake.log;
  const serverMs = log.reduce((sum, l) => sum + l.ms, 0);
  if (issues !== count || s.fake.violations.length) throw new Error(`walked ${issues} of ${count}, ${s.fake.violations.length} violations`);
  process.stdout.write(`${JSON.stringify({ node: process.version, issues, requests: log.length, mb: +(bytes / 1e6).toFixed(1),
    generate_ms: Math.round(generateMs), walk_ms: Math.round(walkMs), server_ms: Math.round(serverMs),
    server_ms_per_page: +(serverMs / log.length).toFixed(1) })}\n`);
} finally {
  await s.close();
}
