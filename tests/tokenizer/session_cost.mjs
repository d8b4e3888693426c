#!/usr/bin/env node
// What an agent session costs in tokens (issues 5 and 13; docs/disclosure.md).
//   node session_cost.mjs --ct /path/to/ct [--markdown] [--doc docs/disclosure.md]
//
// Two fixed workloads, each in a fresh temporary project, over `ct mcp` on stdio with
// CLEO_TEST_MODE=1 (fixed clock and ids, so the numbers are reproducible):
//
// "typical" (issue 5): two tasks, then ten tools/call requests — session.start, tasks.find,
// tasks.show, tasks.add ×2, tasks.start, a note (tasks.update notes), tasks.complete, tasks.next,
// session.end. Each call is measured twice, in o200k_base tokens and UTF-8 bytes:
//   - context: what the agent's context window holds — the call it writes (tool name and
//     arguments) and the reply it reads (the envelope: the tool result's text content);
//   - wire: the JSON-RPC lines as sent both ways, framing included; the reply line carries the
//     envelope twice (docs/architecture.md §3.2: structuredContent, mirrored as a text block).
// Checks: every call succeeds; the context cost is under 800 tokens (issue 5); the wire cost
// stays under its ceiling (a regression guard, WIRE_CEILING).
//
// "agent" (issue 13): an epic T001 with 100 tasks under it and the CLAUDE.md block `ct inject`
// writes; then session.start {scope epic:T001, name}, tasks.find (a word ~20 tasks carry),
// tasks.show (the first hit), tasks.add ×2 (the second depending on the first), tasks.start,
// tasks.update {notes}, tasks.complete {notes}, tasks.next, session.end {notes}. Counted as an agent
// host sees it: the fixed context (tools/list result as compact JSON, the initialize instructions,
// the CLAUDE.md block; the client is Claude Code, which loads that block, so the instructions point
// at it instead of repeating level 0) plus every call (tool name and arguments) and every reply — the text block,
// and, for hosts that hand the model structuredContent instead, that too (the larger one counts).
// Checks: every call succeeds; the total stays under AGENT_CEILING (a regression guard at the
// measured cost). Issue 13's target (AGENT_TARGET) is reported as met or missed, with the numbers.
//
// "resume" (issue 33): an agent mid-task whose context was compacted recovers what it needs — its
// session, scope and handoff notes, the task in focus with its acceptance criteria, notes and gates,
// its finished dependency's result, the ready tasks and what others changed — once with
// session.briefing and once with the cheapest sequence of the other calls (session.show,
// tasks.show of the focus, tasks.deps, tasks.show of the finished dependency, tasks.next,
// system.log). Each counted as call + reply (the larger of text and structuredContent). Check: the
// briefing costs fewer tokens.
//
// With --doc, the file must hold all three tables (so the published numbers cannot go stale).
// Output: the tables, "ok"/"FAIL" lines and "N passed, M failed"; with --markdown, the tables for
// docs/disclosure.md only.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

import { countBytes, countTokens } from './o200k.mjs';

const CONTEXT_BUDGET = 800; // issue 5: the whole ten-call session, requests and replies
const WIRE_CEILING = 1500;  // regression guard for the JSON-RPC lines (measured: see the doc)
const AGENT_TARGET = 1050; // issue 13: the whole agent session, fixed context included
const AGENT_CEILING = 1050; // regression guard for the agent session: measured 1,040 (docs/disclosure.md)
const STEP_MS = 15_000;

const CALLS = [
  ['cleo_mutate', 'session', 'start', { scope: 'global' }],
  ['cleo_query', 'tasks', 'find', { query: 'login' }],
  ['cleo_query', 'tasks', 'show', { id: 'T002' }],
  ['cleo_mutate', 'tasks', 'add', { title: 'Validate the login form', parent: 'T002' }],
  ['cleo_mutate', 'tasks', 'add', { title: 'Style the login form', parent: 'T002' }],
  ['cleo_mutate', 'tasks', 'start', { id: 'T003' }],
  ['cleo_mutate', 'tasks', 'update', { id: 'T003', notes: 'Email and password are checked before submit' }],
  ['cleo_mutate', 'tasks', 'complete', { id: 'T003' }],
  ['cleo_query', 'tasks', 'next', {}],
  ['cleo_mutate', 'session', 'end', { notes: 'Validation done; styling next' }],
];

function parseArgs(argv) {
  const args = { ct: undefined, markdown: false, doc: undefined };
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--ct') args.ct = argv[++i];
    else if (argv[i] === '--markdown') args.markdown = true;
    else if (argv[i] === '--doc') args.doc = argv[++i];
    else {
      console.error(`session_cost: unknown argument '${argv[i]}'\nusage: node session_cost.mjs --ct /path/to/ct [--markdown] [--doc FILE]`);
      process.exit(2);
    }
  }
  if (!args.ct) {
    console.error('session_cost: --ct /path/to/ct is required');
    process.exit(2);
  }
  args.ct = path.resolve(args.ct);
  return args;
}

/** The environment of a hermetic run: no CLEO_* from outside, a fixed clock. */
function environment(home) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('CLEO_')) env[key] = value;
  env.CLEO_TEST_MODE = '1';
  env.HOME = home;
  return env;
}

function ct(args, options) {
  const run = spawnSync(options.ct, args, { env: options.env, encoding: 'utf8', timeout: STEP_MS });
  if (run.status !== 0) throw new Error(`ct ${args.join(' ')} failed (${run.status}): ${run.stderr}${run.stdout}`);
  return run.stdout;
}

/** A line-oriented JSON-RPC client on `ct mcp`'s stdio. */
class StdioSession {
  constructor(ctPath, dir, env) {
    this.child = spawn(ctPath, ['mcp', '--project', dir], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.stderr = '';
    this.child.stderr.on('data', (chunk) => (this.stderr += chunk));
    this.waiting = new Map();
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => {
      let id;
      try {
        id = JSON.parse(line).id;
      } catch {
        return;
      }
      const resolve = this.waiting.get(id);
      if (resolve) {
        this.waiting.delete(id);
        resolve(line);
      }
    });
  }

  /** Sends one line; resolves with the reply line of the same id (none for a notification). */
  send(message) {
    const line = JSON.stringify(message);
    this.child.stdin.write(line + '\n');
    if (message.id === undefined) return Promise.resolve({ request: line, reply: null });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to ${line} within ${STEP_MS} ms\n${this.stderr}`)), STEP_MS);
      this.waiting.set(message.id, (reply) => {
        clearTimeout(timer);
        resolve({ request: line, reply });
      });
    });
  }

  close() {
    this.child.stdin.end();
    return new Promise((resolve) => this.child.on('close', resolve));
  }
}

async function measure(options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-session-cost-'));
  try {
    options.env = environment(dir);
    ct(['init', '--project', dir], options);
    ct(['add', 'Set up CI', '--project', dir], options);
    ct(['add', 'Write the login form', '--priority', 'high', '--project', dir], options);

    const session = new StdioSession(options.ct, dir, options.env);
    await session.send({
      jsonrpc: '2.0', id: 0, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'agent', version: '1.0' } },
    });
    await session.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const rows = [];
    let id = 1;
    for (const [tool, domain, operation, params] of CALLS) {
      const args = Object.keys(params).length ? { domain, operation, params } : { domain, operation };
      const { request, reply } = await session.send({
        jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: tool, arguments: args },
      });
      const result = JSON.parse(reply).result ?? {};
      const text = result.content?.[0]?.text ?? '';
      const call = `${tool} ${JSON.stringify(args)}`;
      rows.push({
        name: `${domain}.${operation}`,
        ok: result.isError === false && JSON.parse(text || '{}').success === true,
        reply: text,
        context: { callTokens: countTokens(call), replyTokens: countTokens(text), callBytes: countBytes(call), replyBytes: countBytes(text) },
        wire: { callTokens: countTokens(request), replyTokens: countTokens(reply), callBytes: countBytes(request), replyBytes: countBytes(reply) },
      });
    }
    await session.close();
    return rows;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const WORDS = ['alpha', 'beta', 'gamma', 'kappa', 'sigma'];
const PRIORITIES = ['low', 'medium', 'high'];

/** Issue 13's session: what the host's context holds, fixed part and calls. */
async function measureAgent(options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-agent-session-'));
  try {
    options.env = environment(dir);
    ct(['init', '--project', dir], options);
    // The CLAUDE.md block as `ct inject --create` writes it (level 0).
    const injected = spawnSync(options.ct, ['inject', '--targets', 'CLAUDE.md', '--create', '--project', dir], { env: options.env, encoding: 'utf8', timeout: STEP_MS });
    if (injected.status !== 0 && injected.status !== 102) throw new Error(`ct inject failed: ${injected.stderr}`);
    const block = fs.readFileSync(path.join(dir, 'CLAUDE.md'), 'utf8');

    const session = new StdioSession(options.ct, dir, options.env);
    let id = 1;
    const rpc = async (method, params) => {
      const { request, reply } = await session.send({ jsonrpc: '2.0', id: id++, method, params });
      return { request, reply, message: JSON.parse(reply) };
    };
    const init = await rpc('initialize', {
      protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claude-code', version: '2.1.0' },
    });
    await session.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const tools = await rpc('tools/list', {});
    const call = (tool, domain, operation, params) =>
      rpc('tools/call', { name: tool, arguments: Object.keys(params).length ? { domain, operation, params } : { domain, operation } });

    // The project: an epic and 100 tasks under it (not counted).
    await call('cleo_mutate', 'tasks', 'add', { title: 'Bench epic', type: 'epic' });
    for (let n = 1; n <= 100; ++n) {
      const added = await call('cleo_mutate', 'tasks', 'add', {
        title: `Bench task ${n} ${WORDS[n % WORDS.length]} delta`, description: `Work item ${n} of the bench epic`,
        parent: 'T001', priority: PRIORITIES[n % PRIORITIES.length], size: 'medium', phase: 'setup',
      });
      if (added.message.result?.isError !== false) throw new Error(`seeding failed: ${added.reply}`);
    }

    const fixed = [
      { name: 'tools/list result', text: JSON.stringify(tools.message.result) },
      { name: 'initialize instructions', text: init.message.result?.instructions ?? '' },
      { name: 'CLAUDE.md block (ct inject)', text: block },
    ].map((part) => ({ ...part, tokens: countTokens(part.text), bytes: countBytes(part.text) }));

    const rows = [];
    const measured = async (tool, domain, operation, params) => {
      const args = Object.keys(params).length ? { domain, operation, params } : { domain, operation };
      const { message } = await call(tool, domain, operation, params);
      const result = message.result ?? {};
      const text = result.content?.[0]?.text ?? '';
      const structured = JSON.stringify(result.structuredContent ?? {});
      const envelope = JSON.parse(text || '{}');
      const written = `${tool} ${JSON.stringify(args)}`;
      rows.push({
        name: `${domain}.${operation}`, ok: result.isError === false && envelope.success === true, reply: text,
        callTokens: countTokens(written), textTokens: countTokens(text), structuredTokens: countTokens(structured),
      });
      return envelope;
    };
    await measured('cleo_mutate', 'session', 'start', { scope: 'epic:T001', name: 'bench' });
    const found = await measured('cleo_query', 'tasks', 'find', { query: 'gamma' });
    const first = (Array.isArray(found.data) ? found.data[0]?.id : found.data?.rows?.[0]?.[0]) ?? 'T002';
    await measured('cleo_query', 'tasks', 'show', { id: first });
    const a = await measured('cleo_mutate', 'tasks', 'add',
                             { title: 'Validate the bench input', description: 'Reject empty rows before the run', parent: 'T001' });
    const newId = a.data?.id ?? 'T102';
    await measured('cleo_mutate', 'tasks', 'add',
                   { title: 'Report the bench results', description: 'A table of medians per size', parent: 'T001', depends: [newId] });
    await measured('cleo_mutate', 'tasks', 'start', { id: newId });
    await measured('cleo_mutate', 'tasks', 'update', { id: newId, notes: 'Empty rows are rejected with a clear error' });
    await measured('cleo_mutate', 'tasks', 'complete', { id: newId, notes: 'Validation merged' });
    await measured('cleo_query', 'tasks', 'next', {});
    await measured('cleo_mutate', 'session', 'end', { notes: 'Validation done; the report is next' });
    await session.close();
    return { fixed, rows };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Issue 33's resume after a compaction: session.briefing against the calls it replaces. */
async function measureResume(options) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-resume-'));
  try {
    options.env = environment(dir);
    ct(['init', '--project', dir], options);
    const session = new StdioSession(options.ct, dir, options.env);
    let id = 1;
    const call = async (tool, domain, operation, params) => {
      const args = Object.keys(params).length ? { domain, operation, params } : { domain, operation };
      const { reply } = await session.send({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: tool, arguments: args } });
      const result = JSON.parse(reply).result ?? {};
      const text = result.content?.[0]?.text ?? '';
      const structured = JSON.stringify(result.structuredContent ?? {});
      return {
        name: `${domain}.${operation}`, ok: result.isError === false && JSON.parse(text || '{}').success === true,
        tokens: countTokens(`${tool} ${JSON.stringify(args)}`) + Math.max(countTokens(text), countTokens(structured)),
      };
    };
    await session.send({ jsonrpc: '2.0', id: id++, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claude-code', version: '2.1.0' } } });
    await session.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // The project and the agent's work so far (not counted).
    const seed = [
      ['tasks', 'add', { title: 'Login epic', type: 'epic' }],
      ['tasks', 'add', { title: 'Users table', parent: 'T001' }],
      ['tasks', 'add', { title: 'Login form', parent: 'T001', depends: ['T002'], acceptance: ['renders the form', 'rejects an empty password'] }],
    ];
    for (let n = 4; n <= 10; ++n) seed.push(['tasks', 'add', { title: `Login step ${n}`, parent: 'T001', priority: PRIORITIES[n % 3] }]);
    seed.push(['session', 'start', { scope: 'epic:T001', name: 'login' }],
              ['tasks', 'complete', { id: 'T002', notes: 'users table with a unique email index' }],
              ['tasks', 'start', { id: 'T003' }],
              ['tasks', 'update', { id: 'T003', notes: 'The form renders; validation is next' }],
              ['session', 'note', { nextAction: 'Reject an empty password in the form' }]);
    for (const [domain, operation, params] of seed) {
      const done = await call('cleo_mutate', domain, operation, params);
      if (!done.ok) throw new Error(`resume seed ${domain}.${operation} failed`);
    }
    // Another agent works on the epic meanwhile, in a session of its own.
    ct(['session', 'start', 'global', '--name', 'other', '--project', dir], options);
    ct(['update', 'T004', '--priority', 'critical', '--project', dir], options);
    ct(['update', 'T005', '--notes', 'blocked on the design review', '--project', dir], options);

    const briefing = [await call('cleo_query', 'session', 'briefing', {})];
    const sequence = [
      await call('cleo_query', 'session', 'show', {}),
      await call('cleo_query', 'tasks', 'show', { id: 'T003' }),
      await call('cleo_query', 'tasks', 'deps', { id: 'T003' }),
      await call('cleo_query', 'tasks', 'show', { id: 'T002' }),
      await call('cleo_query', 'tasks', 'next', {}),
      await call('cleo_query', 'system', 'log', { limit: 5 }),
    ];
    await session.close();
    return { briefing, sequence };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function resumeTable(resume) {
  const total = (rows) => rows.reduce((t, r) => t + r.tokens, 0);
  const lines = ['| resume after a compaction | calls | tokens (call + reply) |', '|---|---:|---:|'];
  lines.push(`| session.briefing | 1 | ${total(resume.briefing)} |`);
  lines.push(`| ${resume.sequence.map((r) => r.name).join(', ')} | ${resume.sequence.length} | ${total(resume.sequence)} |`);
  return lines.join('\n');
}

function agentTotals(agent) {
  const fixed = agent.fixed.reduce((t, p) => t + p.tokens, 0);
  const calls = agent.rows.reduce((t, r) => t + r.callTokens, 0);
  const text = agent.rows.reduce((t, r) => t + r.textTokens, 0);
  const structured = agent.rows.reduce((t, r) => t + r.structuredTokens, 0);
  return { fixed, calls, text, structured, total: fixed + calls + Math.max(text, structured) };
}

function agentTable(agent) {
  const t = agentTotals(agent);
  const lines = ['| part | tokens |', '|---|---:|'];
  for (const part of agent.fixed) lines.push(`| ${part.name} | ${part.tokens} |`);
  lines.push(`| **fixed context** | **${t.fixed}** |`);
  agent.rows.forEach((row, i) =>
    lines.push(`| ${i + 1}. ${row.name}: call + reply (structuredContent) | ${row.callTokens} + ${row.textTokens} (${row.structuredTokens}) |`));
  lines.push(`| **calls** | **${t.calls} + ${t.text} (${t.structured})** |`);
  lines.push(`| **session total** | **${t.total}** |`);
  return lines.join('\n');
}

const sum = (rows, view, key) => rows.reduce((total, row) => total + row[view][key], 0);

function table(rows) {
  const lines = [
    '| # | call | context: call | context: reply | context tokens | wire: request | wire: reply | wire tokens |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  const cell = (tokens, bytes) => `${tokens} tok / ${bytes} B`;
  rows.forEach((row, i) => {
    const c = row.context;
    const w = row.wire;
    lines.push(`| ${i + 1} | ${row.name} | ${cell(c.callTokens, c.callBytes)} | ${cell(c.replyTokens, c.replyBytes)} | ` +
               `${c.callTokens + c.replyTokens} | ${cell(w.callTokens, w.callBytes)} | ${cell(w.replyTokens, w.replyBytes)} | ` +
               `${w.callTokens + w.replyTokens} |`);
  });
  const total = (view) => sum(rows, view, 'callTokens') + sum(rows, view, 'replyTokens');
  lines.push(`| | **total** | ${cell(sum(rows, 'context', 'callTokens'), sum(rows, 'context', 'callBytes'))} | ` +
             `${cell(sum(rows, 'context', 'replyTokens'), sum(rows, 'context', 'replyBytes'))} | **${total('context')}** | ` +
             `${cell(sum(rows, 'wire', 'callTokens'), sum(rows, 'wire', 'callBytes'))} | ` +
             `${cell(sum(rows, 'wire', 'replyTokens'), sum(rows, 'wire', 'replyBytes'))} | **${total('wire')}** |`);
  return lines.join('\n');
}

const options = parseArgs(process.argv.slice(2));
const overall = setTimeout(() => {
  console.error('session_cost: timed out');
  process.exit(1);
}, 120_000);
let rows;
let agent;
let resume;
try {
  rows = await measure(options);
  agent = await measureAgent(options);
  resume = await measureResume(options);
} catch (error) {
  console.error(`FAIL session: ${error.message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
clearTimeout(overall);

if (options.markdown) {
  console.log(table(rows));
  console.log('');
  console.log(agentTable(agent));
  console.log('');
  console.log(resumeTable(resume));
  process.exit(0);
}
console.log(table(rows));
console.log('');
for (const row of rows) console.log(`  ${row.name.padEnd(16)} ${row.reply}`);
console.log('');
console.log(agentTable(agent));
console.log('');
for (const row of agent.rows) console.log(`  ${row.name.padEnd(16)} ${row.reply}`);
console.log('');
console.log(resumeTable(resume));
console.log('');
let passed = 0;
let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  ok ? ++passed : ++failed;
};
for (const row of rows) check(row.ok, `${row.name} succeeds`);
const context = sum(rows, 'context', 'callTokens') + sum(rows, 'context', 'replyTokens');
const wire = sum(rows, 'wire', 'callTokens') + sum(rows, 'wire', 'replyTokens');
check(context < CONTEXT_BUDGET, `context cost ${context} tokens < ${CONTEXT_BUDGET}`);
check(wire < WIRE_CEILING, `wire cost ${wire} tokens < ${WIRE_CEILING} (regression ceiling)`);
for (const row of agent.rows) check(row.ok, `agent session: ${row.name} succeeds`);
const totals = agentTotals(agent);
check(totals.total < AGENT_CEILING, `agent session ${totals.total} tokens < ${AGENT_CEILING} (regression ceiling)`);
// Issue 13's target: reported, met or missed, never rounded (it is not a failure of this guard).
console.log(`${totals.total <= AGENT_TARGET ? 'met ' : 'MISSED'} agent session target ${AGENT_TARGET}: ` +
            `${totals.total} tokens (fixed ${totals.fixed}, calls ${totals.calls}, replies ${Math.max(totals.text, totals.structured)})`);
for (const row of [...resume.briefing, ...resume.sequence]) check(row.ok, `resume: ${row.name} succeeds`);
const briefed = resume.briefing.reduce((t, r) => t + r.tokens, 0);
const sequenced = resume.sequence.reduce((t, r) => t + r.tokens, 0);
check(briefed < sequenced, `resume: session.briefing ${briefed} tokens < the ${resume.sequence.length} calls it replaces, ${sequenced}`);
if (options.doc) {
  const published = fs.readFileSync(options.doc, 'utf8');
  check(published.includes(resumeTable(resume)), `${options.doc} shows the resume table`);
  check(published.includes(agentTable(agent)), `${options.doc} shows the agent session table`);
  check(published.includes(table(rows)),
        `${options.doc} shows these numbers (else paste the output of: tests/tokenizer/run.sh session_cost.mjs --ct <ct> --markdown)`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
