// Reads what the host CLIs print or record, for check_hooks.sh:
//   node inspect.mjs claude OUT.jsonl EXPECTED     Claude Code's stream-json (--include-hook-events):
//                                                  the SessionStart hook_response ran and printed EXPECTED
//   node inspect.mjs claude-mcp OUT.jsonl PROMPTS  Claude Code's stream-json init event: ct mcp connected,
//                                                  its tools, its prompts as slash commands (PROMPTS:
//                                                  ct mcp's prompts/list reply), the resource tools
//   node inspect.mjs gemini-context BRIEFING.json  the additionalContext of `ct briefing --hook gemini`
//   node inspect.mjs gemini OUT.jsonl CONTEXT      Gemini CLI's stream-json: the first user message
//                                                  carries <hook_context>CONTEXT</hook_context>;
//                                                  exit 3 while that message has not been printed yet
//   node inspect.mjs codex-errors OUT.jsonl        `codex exec --json`: errors that name a hook (exit 1)
//   node inspect.mjs codex-rollout DIR EXPECTED    the session Codex recorded under DIR (its sessions
//                                                  folder) has a developer message EXPECTED
// Exit 0: as expected; 1: not (the reason on stderr); 2: usage; 3: gemini, not yet.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [mode, ...args] = process.argv.slice(2);

function lines(file) {
  const out = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      out.push(JSON.parse(t));
    } catch {
      // a line cut short while the host is still writing, or not JSON: not ours
    }
  }
  return out;
}

function fail(message) {
  process.stderr.write(message + '\n');
  process.exit(1);
}

const clip = (s) => JSON.stringify(String(s).length > 600 ? String(s).slice(0, 600) + '…' : s);

switch (mode) {
  case 'claude': {
    const [file, expectedFile] = args;
    const expected = readFileSync(expectedFile, 'utf8');
    const responses = lines(file).filter(
      (m) => m.type === 'system' && m.subtype === 'hook_response' && m.hook_event === 'SessionStart',
    );
    if (responses.length !== 1)
      fail(`expected one SessionStart hook_response in Claude Code's stream, found ${responses.length}`);
    const r = responses[0];
    if (r.hook_name !== 'SessionStart:startup') fail(`hook_name is ${clip(r.hook_name)}, not "SessionStart:startup"`);
    if (r.exit_code !== 0 || r.outcome !== 'success')
      fail(`the hook failed: exit_code ${r.exit_code}, outcome ${clip(r.outcome)}, stderr ${clip(r.stderr)}`);
    if (r.stdout !== expected)
      fail(`the hook printed ${clip(r.stdout)}\n  but ct briefing --hook claude prints ${clip(expected)}`);
    console.log(`SessionStart:startup ran: exit 0, stdout ${clip(r.stdout)}`);
    break;
  }
  case 'gemini-context': {
    const [file] = args;
    let out;
    try {
      out = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      fail(`ct briefing --hook gemini did not print JSON: ${e.message}`);
    }
    const ctx = out?.hookSpecificOutput?.additionalContext;
    if (out?.hookSpecificOutput?.hookEventName !== 'SessionStart' || typeof ctx !== 'string')
      fail(`ct briefing --hook gemini printed no SessionStart additionalContext: ${clip(JSON.stringify(out))}`);
    process.stdout.write(ctx);
    break;
  }
  case 'gemini': {
    const [file, contextFile] = args;
    const context = readFileSync(contextFile, 'utf8');
    const user = lines(file).find((m) => m.type === 'message' && m.role === 'user');
    if (!user) process.exit(3);
    const want = `<hook_context>${context}</hook_context>`;
    if (typeof user.content !== 'string' || !user.content.includes(want))
      fail(`Gemini CLI's first user message is ${clip(user.content)}\n  and does not carry ${clip(want)}`);
    console.log(`the first user message carries the hook's context: ${clip(want)}`);
    break;
  }
  case 'codex-errors': {
    const [file] = args;
    const bad = [];
    for (const m of lines(file)) {
      const msg = m.item?.type === 'error' ? m.item.message : m.type === 'error' ? m.message : null;
      if (typeof msg === 'string' && /hook/i.test(msg) && !msg.includes('--dangerously-bypass-hook-trust'))
        bad.push(msg);
    }
    if (bad.length) fail(bad.join('\n'));
    break;
  }
  case 'codex-rollout': {
    const [dir, expectedFile] = args;
    const expected = readFileSync(expectedFile, 'utf8').trim();
    const files = [];
    const walk = (d) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (/^rollout-.*\.jsonl$/.test(name)) files.push(p);
      }
    };
    try {
      walk(dir);
    } catch (e) {
      fail(`Codex recorded no session under ${dir}: ${e.message}`);
    }
    if (files.length !== 1) fail(`expected one recorded Codex session under ${dir}, found ${files.length}`);
    const texts = [];
    for (const m of lines(files[0])) {
      const p = m.payload;
      if (m.type !== 'response_item' || p?.type !== 'message' || p.role !== 'developer') continue;
      for (const c of p.content ?? []) if (typeof c?.text === 'string') texts.push(c.text);
    }
    if (!texts.some((t) => t.trim() === expected))
      fail(`no developer message in ${files[0]} is ct briefing --hook codex's output ${clip(expected)}`);
    console.log(`the session has the hook's output as a developer message: ${clip(expected)}`);
    break;
  }
  case 'claude-mcp': {
    // Claude Code's init event for a session whose --mcp-config names `ct mcp` as "cleo": the server
    // connected, its two tools, its prompts as slash commands (mcp__cleo__<name>) and the tools that
    // read MCP resources. PROMPTS.jsonl holds ct mcp's own prompts/list reply (the names expected).
    const [file, promptsFile] = args;
    const init = lines(file).find((m) => m.type === 'system' && m.subtype === 'init');
    if (!init) fail(`no init event in Claude Code's stream`);
    const server = (init.mcp_servers ?? []).find((s) => s.name === 'cleo');
    if (server?.status !== 'connected') fail(`the cleo MCP server is ${clip(JSON.stringify(server ?? 'not listed'))}, not connected`);
    const reply = lines(promptsFile).find((m) => m.id === 2);
    const names = (reply?.result?.prompts ?? []).map((p) => p.name);
    if (names.length === 0) fail(`ct mcp listed no prompts: ${clip(JSON.stringify(reply))}`);
    const missing = [
      ...['mcp__cleo__cleo_query', 'mcp__cleo__cleo_mutate', 'ListMcpResourcesTool', 'ReadMcpResourceTool'].filter((t) => !(init.tools ?? []).includes(t)),
      ...names.map((n) => `mcp__cleo__${n}`).filter((c) => !(init.slash_commands ?? []).includes(c)),
    ];
    if (missing.length) fail(`Claude Code's init event lacks ${missing.join(', ')}`);
    console.log(`cleo connected; tools cleo_query, cleo_mutate; slash commands ${names.map((n) => `/mcp__cleo__${n}`).join(' ')}; resource tools`);
    break;
  }
  default:
    process.stderr.write('usage: node inspect.mjs claude|claude-mcp|gemini-context|gemini|codex-errors|codex-rollout ...\n');
    process.exit(2);
}
