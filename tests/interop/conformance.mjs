// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in package.json)
// against `ct serve`. Usage: node conformance.mjs --ct /path/to/ct
//
// Starts `ct serve --port 0` on a fresh project and runs the suite's server scenarios once per
// protocol revision, each at that revision's wire (the suite's --requirements sets for 2026-07-28
// and 2025-11-25; every scenario of 2025-06-18 and 2025-03-26; the extension scenarios that name
// no revision), every run judged against conformance-baseline.yaml: the scenarios and checks that
// do not apply, each with its reason. A run passes when every failure is in the baseline and no
// baseline entry passes. The suite drives HTTP only (its `server` command takes a URL): stdio is
// judged through stdio_bridge.mjs (HTTP in front of `ct mcp`) on the scenarios of prompts,
// resources, completion and logging, and covered otherwise by interop.mjs and the MCP transcripts.
//
// One line per run ("ok   …" or "FAIL …", with the suite's verdict), then "N passed, M failed".
// Needs Node 22 or later (the suite uses fs.globSync): run.sh runs it with the pinned `node`.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { ctPathFromArgs } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const RUN_MS = 180_000;  // one conformance run (the slowest takes a few seconds)
const TOTAL_MS = 420_000;

const RUNS = [
  { name: '2026-07-28 (stateless; the revision\'s requirement set)', args: ['--requirements', '2026-07-28'] },
  { name: '2025-11-25 (handshake; the revision\'s requirement set)', args: ['--requirements', '2025-11-25'] },
  { name: '2025-06-18 (handshake; every scenario of the revision)', args: ['--suite', 'all', '--spec-version', '2025-06-18'] },
  { name: '2025-03-26 (handshake; every scenario of the revision)', args: ['--suite', 'all', '--spec-version', '2025-03-26'] },
  // Extension scenarios that belong to no revision (skills served as resources: none here).
  { name: 'extension sep-2640-skills-directory', args: ['--scenario', 'sep-2640-skills-directory'] },
  { name: 'extension sep-2640-skills-enumeration', args: ['--scenario', 'sep-2640-skills-enumeration'] },
  { name: 'extension sep-2640-skills-manifest', args: ['--scenario', 'sep-2640-skills-manifest'] },
];

// Over stdio, through stdio_bridge.mjs (HTTP in front of `ct mcp`): the scenarios of what a server
// offers besides its transport — prompts, resources, completion, logging — at 2025-11-25's wire, one
// run each.
const BRIDGED = ['server-initialize', 'ping', 'tools-list', 'prompts-list', 'prompts-get-simple', 'prompts-get-with-args',
                 'prompts-get-embedded-resource', 'prompts-get-with-image', 'resources-list', 'resources-read-text',
                 'resources-read-binary', 'resources-templates-read', 'resources-subscribe', 'resources-unsubscribe',
                 'completion-complete', 'sep-2164-resource-not-found', 'logging-set-level'];

const ct = ctPathFromArgs('conformance', process.argv.slice(2));
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CLEO_')));
const cli = path.join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const baseline = path.join(here, 'conformance-baseline.yaml');

let passed = 0;
let failed = 0;
const children = new Set();

function run(command, args, options, ms) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('error', (error) => { output += String(error); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, output });
    });
  });
}

/// `ct serve` on `dir`, or (bridge) stdio_bridge.mjs in front of `ct mcp` on it; `url` is where it listens.
function startServe(dir, bridge = false) {
  const [command, args, banner] = bridge
    ? [process.execPath, [path.join(here, 'stdio_bridge.mjs'), '--ct', ct, '--project', dir], /stdio bridge: (http:\/\/\S+)/]
    : [ct, ['serve', '--project', dir, '--port', '0'], /CLEO MCP server: (http:\/\/\S+)/];
  const child = spawn(command, args, { cwd: dir, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const output = [];
  child.stderr.on('data', (chunk) => output.push(chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => { children.delete(child); resolve({ code, signal }); }));
  const url = new Promise((resolve, reject) => {
    child.once('error', reject);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const match = banner.exec(line);
      if (match) resolve(match[1]);
    });
    exited.then(({ code, signal }) => reject(new Error(`${bridge ? 'the stdio bridge' : 'ct serve'} exited (${code ?? signal}) before printing its URL`)));
  });
  return { child, url, exited, output };
}

/// What a run's results directory holds (checks.json per scenario): scenarios run and checks by
/// status. The suite's exit status, not these counts, decides the run.
async function tally(dir) {
  const counts = { scenarios: 0, SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 };
  for (const entry of await fs.readdir(dir).catch(() => [])) {
    const text = await fs.readFile(path.join(dir, entry, 'checks.json'), 'utf8').catch(() => null);
    if (text === null) continue;
    counts.scenarios += 1;
    for (const check of JSON.parse(text)) counts[check.status] = (counts[check.status] ?? 0) + 1;
  }
  const summary = `${counts.scenarios} scenarios; checks: ${counts.SUCCESS} passed, ${counts.FAILURE} failed, ` +
                  `${counts.WARNING} warnings, ${counts.SKIPPED} skipped`;
  return { counts, summary };
}

/// The suite's own report, from its summary on, without the lines of checks that passed.
function report(output) {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const from = Math.max(plain.lastIndexOf('=== SUMMARY'), plain.lastIndexOf('Test Results:'), 0);
  return plain.slice(from).split('\n').filter((line) => !/^\s*[✓~]/.test(line)).slice(-60).join('\n');
}

async function cleanup(dirs) {
  for (const child of children) {
    try { child.kill('SIGKILL'); } catch { /* gone */ }
  }
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true }).catch(() => {})));
}

const watchdog = setTimeout(() => {
  console.log(`FAIL the whole run took longer than ${TOTAL_MS / 1000} s`);
  for (const child of children) child.kill('SIGKILL');
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
}, TOTAL_MS);
watchdog.unref();

/// Runs the suite with `args` against `url`; prints the verdict.
async function judge(name, url, args, out, server) {
  const result = await run(process.execPath, [cli, 'server', '--url', url, ...args, '--expected-failures', baseline, '-o', out],
                           { cwd: results, env: childEnv }, RUN_MS);
  const { counts, summary } = await tally(out);
  if (result.code === 0 && counts.scenarios > 0) {
    passed += 1;
    console.log(`ok   ${name}: ${summary}; every failure and warning is in the baseline`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}: exit ${result.code ?? result.signal}; ${summary}`);
    console.log(`     | node ${path.relative(here, cli)} server --url ${url} ${args.join(' ')} --expected-failures ${path.basename(baseline)}`);
    console.log((report(result.output) || result.output.slice(-3000)).replace(/^/gm, '     | '));
    if (server.output.length) console.log(`     | server stderr:\n${server.output.join('').trim().split('\n').slice(-20).join('\n').replace(/^/gm, '     | ')}`);
  }
}

const project = await fs.mkdtemp(path.join(os.tmpdir(), 'ct-conformance-'));
const bridged = await fs.mkdtemp(path.join(os.tmpdir(), 'ct-conformance-stdio-'));
const results = await fs.mkdtemp(path.join(os.tmpdir(), 'ct-conformance-results-'));
const version = JSON.parse(await fs.readFile(path.join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'package.json'), 'utf8')).version;
console.log(`# ct: ${ct}`);
console.log(`# node ${process.version}, @modelcontextprotocol/conformance ${version}, baseline ${path.basename(baseline)}`);

let server;
try {
  const init = await run(ct, ['init'], { cwd: project, env: childEnv }, 15_000);
  if (init.code !== 0) throw new Error(`ct init exited with ${init.code ?? init.signal}: ${init.output.trim()}`);
  server = startServe(project);
  const url = await Promise.race([server.url, new Promise((_, reject) => setTimeout(() => reject(new Error('ct serve printed no URL in 15 s')), 15_000))]);
  console.log(`# ct serve: ${url}`);

  for (const [index, spec] of RUNS.entries()) await judge(spec.name, url, spec.args, path.join(results, String(index)), server);

  // stdio, through the bridge: a project of its own, so the two servers do not share a store.
  const initStdio = await run(ct, ['init'], { cwd: bridged, env: childEnv }, 15_000);
  if (initStdio.code !== 0) throw new Error(`ct init exited with ${initStdio.code ?? initStdio.signal}: ${initStdio.output.trim()}`);
  const bridge = startServe(bridged, true);
  try {
    const bridgeUrl = await Promise.race([bridge.url, new Promise((_, reject) => setTimeout(() => reject(new Error('the stdio bridge printed no URL in 15 s')), 15_000))]);
    console.log(`# stdio bridge: ${bridgeUrl}`);
    for (const [index, scenario] of BRIDGED.entries())
      // --force: a scenario a later revision introduced (sep-2164) runs at 2025-11-25's wire too.
      await judge(`stdio ${scenario} (2025-11-25, through the bridge)`, bridgeUrl, ['--scenario', scenario, '--spec-version', '2025-11-25', '--force'],
                  path.join(results, `stdio-${index}`), bridge);
  } finally {
    bridge.child.kill('SIGTERM');
  }

  const alive = server.child.exitCode === null && server.child.signalCode === null;
  if (alive) {
    server.child.kill('SIGTERM');
    const { code, signal } = await server.exited;
    if (code === 0 && signal === null) {
      passed += 1;
      console.log('ok   ct serve kept serving and exits with status 0 on SIGTERM');
    } else {
      failed += 1;
      console.log(`FAIL ct serve ended with ${code ?? signal} after SIGTERM`);
    }
  } else {
    failed += 1;
    console.log(`FAIL ct serve stopped during the runs (${server.child.exitCode ?? server.child.signalCode})`);
  }
} catch (error) {
  failed += 1;
  console.log(`FAIL ${error.message}`);
  if (server?.output.length) console.log(server.output.join('').trim().replace(/^/gm, '     | '));
}

await cleanup([project, bridged, results]);
clearTimeout(watchdog);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
