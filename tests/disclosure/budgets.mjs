#!/usr/bin/env node
// What CLEO hands an agent, measured in o200k tokens against the budgets of docs/architecture.md §6 and
// seed 003 §9: help levels 0–3, the MCP initialize instructions and tools/list reply, the block
// `ct inject` writes into CLAUDE.md, and the rendered templates. Fails when one is over budget.
//   budgets.mjs --ct PATH [--synthetic PATH] [--markdown]   (--markdown: the table of docs/disclosure.md)
// --synthetic names ct-synthetic-help (tests/disclosure/synthetic_registry.cpp): the same texts
// with the registry grown by 12 operations, held to the same budgets (issue 13: help that scales).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countBytes, countTokens } from '../tokenizer/o200k.mjs';

const args = process.argv.slice(2);
const ctAt = args.indexOf('--ct');
if (ctAt < 0 || !args[ctAt + 1]) {
  process.stderr.write('usage: budgets.mjs --ct PATH [--synthetic PATH] [--markdown]\n');
  process.exit(2);
}
const ct = args[ctAt + 1];
const markdown = args.includes('--markdown');
const syntheticAt = args.indexOf('--synthetic');
const synthetic = syntheticAt >= 0 ? args[syntheticAt + 1] : null;

const sandbox = mkdtempSync(join(tmpdir(), 'ct-budgets-'));
const env = { PATH: process.env.PATH, HOME: join(sandbox, 'home'), CLEO_TEST_MODE: '1', NO_COLOR: '1' };

function run(argv, input) {
  const result = spawnSync(ct, argv, { cwd: sandbox, env, input, encoding: 'utf8' });
  if (result.error) throw result.error;
  return result;
}
function help(...argv) {
  const result = run(['help', ...argv, '--json']);
  const reply = JSON.parse(result.stdout);
  if (!reply.success) throw new Error(`ct help ${argv.join(' ')}: ${result.stdout}`);
  return reply.data;
}

const rows = [];
let failures = 0;
function measure(what, text, budget, target, note = '') {
  const tokens = countTokens(text);
  const bytes = countBytes(text);
  const over = budget !== null && tokens > budget;
  if (over) failures++;
  rows.push({ what, tokens, bytes, budget, target, note, over });
  return tokens;
}

try {
  // Help levels: the reply's own estimate must also be near the real count.
  for (const [level, budget, target] of [[0, 249, '~200'], [1, 900, '≤ 900 (issue 9), ~500 aimed'], [3, 5000, '~4,500']]) {
    const data = help('--level', String(level));
    measure(`help level ${level}`, data.content, budget, target);
    const ratio = data.tokens / countTokens(data.content);
    if (ratio < 0.8 || ratio > 1.25) {
      process.stderr.write(`help level ${level}: the estimate ${data.tokens} is off the o200k count by more than 25%\n`);
      failures++;
    }
  }
  // Level 2: every operation, listed by level 1.
  const level1 = help('--level', '1').content;
  let domain = '';
  const operations = [];
  for (const line of level1.split('\n')) {
    const heading = line.match(/^([a-z]+) \(cleo_(query|mutate)\):$/);
    if (heading) domain = heading[1];
    const also = line.match(/^- also: (.*)$/);
    if (also && domain) for (const name of also[1].split(', ')) operations.push([domain, name]);
    const op = !also && line.match(/^- ([A-Za-z.]+): /);
    if (op && domain) operations.push([domain, op[1]]);
  }
  if (operations.length < 30) throw new Error(`level 1 listed only ${operations.length} operations`);
  let largest = { tokens: 0 };
  let total = 0;
  for (const [d, op] of operations) {
    const text = help('--level', '2', d, op).content;
    const tokens = countTokens(text);
    total += tokens;
    if (tokens > largest.tokens) largest = { tokens, name: `${d}.${op}`, text };
    if (tokens > 2000) {
      process.stderr.write(`help level 2 of ${d}.${op}: ${tokens} tokens > 2000\n`);
      failures++;
    }
  }
  measure(`help level 2, largest (${largest.name})`, largest.text, 2000, '~500–2,000 per operation',
          `mean ${Math.round(total / operations.length)} over ${operations.length} operations`);

  // MCP: initialize (instructions = level 0) and tools/list, as one client would receive them.
  const messages = [
    { jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'budgets', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ];
  const mcp = run(['mcp', '--project', sandbox], messages.map((m) => JSON.stringify(m)).join('\n') + '\n');
  const replies = mcp.stdout.trim().split('\n').map((line) => JSON.parse(line));
  const init = replies.find((r) => r.id === 1);
  const tools = replies.find((r) => r.id === 2);
  if (!init?.result?.instructions || !tools?.result?.tools) throw new Error(`ct mcp replied: ${mcp.stdout}${mcp.stderr}`);
  if (init.result.instructions !== help('--level', '0').content) {
    process.stderr.write('the initialize instructions are not help level 0\n');
    failures++;
  }
  measure('MCP tools/list result', JSON.stringify(tools.result), 250, '≤ 250 (docs/architecture.md §3.1)');

  // The registry grown by 12 operations: help levels 0 and 1 and tools/list within the same budgets.
  if (synthetic) {
    const grown = spawnSync(synthetic, [], { encoding: 'utf8' });
    if (grown.status !== 0) throw new Error(`${synthetic}: ${grown.stderr}`);
    const texts = JSON.parse(grown.stdout);
    const also = `added ${texts.added.join(', ')}`;
    measure(`help level 0, ${texts.operations} operations (synthetic)`, texts.level0, 249, 'issue 13: < 250, all 13 domains');
    measure(`help level 1, ${texts.operations} operations (synthetic)`, texts.level1, 900, 'issue 13: ≤ 900', also);
    measure(`MCP tools/list result, ${texts.operations} operations (synthetic)`, texts.toolsList, 250, 'issue 13: ≤ 250');
    const domains = texts.level0.match(/^Domains: (.*)\.$/m)?.[1]?.split(', ') ?? [];
    if (domains.length !== 13) {
      process.stderr.write(`help level 0 of the grown registry lists ${domains.length} domains, not 13\n`);
      failures++;
    }
  }

  // Injection: ct init renders the templates and fills the block of an existing CLAUDE.md.
  writeFileSync(join(sandbox, 'CLAUDE.md'), '# Project\n');
  const init_run = run(['init', '--json']);
  if (init_run.status !== 0) throw new Error(`ct init: ${init_run.stdout}${init_run.stderr}`);
  const claude = readFileSync(join(sandbox, 'CLAUDE.md'), 'utf8');
  const block = claude.slice(claude.indexOf('<!-- CLEO:START'));
  measure('CLAUDE.md block (ct inject, level 0)', block, 249, '~200 (always loaded)');
  measure('.cleo/templates/AGENT-INJECTION.md', readFileSync(join(sandbox, '.cleo/templates/AGENT-INJECTION.md'), 'utf8'),
          1200, 'issue 13: ≤ 1,200 (old: 1,451)', 'loaded with --level 1');
  measure('.cleo/templates/CLEO-INJECTION.md', readFileSync(join(sandbox, '.cleo/templates/CLEO-INJECTION.md'), 'utf8'),
          3500, 'issue 13: ≤ 3,500 (old: ~4,500)', 'loaded with --level 3');

  // orchestrate.spawn: a subagent's whole prompt (help level 1 included). Typical: a task with a
  // paragraph of description, three criteria, two files and two finished dependencies, in an
  // epic. Largest: every part at the length the prompt clips it to.
  const ok = (argv) => {
    const result = run([...argv, '--json']);
    const reply = JSON.parse(result.stdout);
    if (!reply.success) throw new Error(`ct ${argv.join(' ')}: ${result.stdout}`);
    return reply.data;
  };
  const sentence = 'The ledger keeps every charge as an immutable entry and derives balances from them. ';
  ok(['add', 'Move billing to the ledger', '--type', 'epic', '--description', sentence.repeat(4)]);
  for (const title of ['Ledger schema', 'Ledger writer']) {
    const id = ok(['add', title, '--parent', 'T001']).id;
    ok(['complete', id, '--notes', `${title} done in src/ledger/; ` + sentence.repeat(2)]);
  }
  ok(['add', 'Port invoices to the ledger', '--parent', 'T001', '--depends', 'T002,T003',
      '--description', sentence.repeat(6), '--acceptance', 'invoices read balances from the ledger',
      '--acceptance', 'old tables are dropped by a migration', '--acceptance', 'tests cover refunds',
      '--files', 'src/billing/invoices.cpp,src/billing/invoices.h']);
  const typical = ok(['orchestrate', 'spawn', 'T004']);
  measure('orchestrate.spawn prompt, typical (level 1)', typical.prompt, 2500, 'seed: ~5,700 per subagent',
          `the reply estimates ${typical.tokens}`);
  const deps = [];
  for (let i = 0; i < 12; i++) {
    const id = ok(['add', `Dependency ${i} with a longer title than most tasks carry`, '--parent', 'T001']).id;
    ok(['complete', id, '--notes', sentence.repeat(8)]);
    deps.push(id);
  }
  const big = ok(['add', 'Everything at its longest', '--parent', 'T001', '--depends', deps.join(','),
                  '--description', sentence.repeat(23), '--acceptance', sentence.repeat(2),
                  '--acceptance', sentence.repeat(2), '--acceptance', sentence.repeat(2)]).id;
  for (let i = 0; i < 5; i++) ok(['update', big, '--notes', sentence.repeat(6)]);
  const longest = ok(["orchestrate", "spawn", big]);
  measure('orchestrate.spawn prompt, largest (every part clipped)', longest.prompt, 4000, '',
          `the reply estimates ${longest.tokens}`);
  for (const reply of [typical, longest]) {
    const ratio = reply.tokens / countTokens(reply.prompt);
    if (ratio < 0.8 || ratio > 1.25) {
      process.stderr.write(`orchestrate.spawn: the estimate ${reply.tokens} is off the o200k count by more than 25%\n`);
      failures++;
    }
  }
} finally {
  rmSync(sandbox, { recursive: true, force: true });
}

if (markdown) {
  console.log('| text | o200k tokens | bytes | budget (test) | seed §9 target | notes |');
  console.log('|---|---:|---:|---:|---|---|');
  for (const r of rows)
    console.log(`| ${r.what} | ${r.tokens.toLocaleString('en')} | ${r.bytes.toLocaleString('en')} | ` +
                `${r.budget === null ? '' : r.budget.toLocaleString('en')} | ${r.target} | ${r.note} |`);
} else {
  for (const r of rows)
    console.log(`${r.over ? 'OVER' : 'ok  '} ${String(r.tokens).padStart(6)} tokens ${String(r.bytes).padStart(7)} bytes` +
                `  (budget ${r.budget})  ${r.what}${r.note ? ' — ' + r.note : ''}`);
}
if (failures) {
  process.stderr.write(`${failures} budget check(s) failed\n`);
  process.exit(1);
}
