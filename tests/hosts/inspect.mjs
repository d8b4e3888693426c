// Reads what the host CLIs print or record, for check_hooks.sh:
//   node inspect.mjs claude OUT.jsonl EXPECTED SOURCE HOOKS
//                                                  Claude Code's stream-json (--include-hook-events):
//                                                  HOOKS SessionStart:SOURCE hook_responses, each exit 0,
//                                                  exactly one printing EXPECTED and the others nothing
//   node inspect.mjs claude-session OUT.jsonl      the session id of Claude Code's init event
//   node inspect.mjs claude-mcp OUT.jsonl PROMPTS  Claude Code's stream-json init event: ct mcp connected,
//                                                  its tools, its prompts as slash commands (PROMPTS:
//                                                  ct mcp's prompts/list reply), the resource tools
//   node inspect.mjs gemini-context BRIEFING.json  the additionalContext of `ct briefing --hook gemini`
//   node inspect.mjs gemini OUT.jsonl CONTEXT      Gemini CLI's stream-json: the first user message
//                                                  carries <hook_context>CONTEXT</hook_context>, and
//                                                  CONTEXT once; exit 3 while that message has not
//                                                  been printed yet
//   node inspect.mjs codex-errors OUT.jsonl        `codex exec --json`: errors that name a hook (exit 1)
//   node inspect.mjs codex-rollout DIR EXPECTED    the session Codex recorded under DIR (its sessions
//                                                  folder) has exactly one developer message EXPECTED
//   node inspect.mjs prompt-filled REPLY.jsonl WORD  the text of ct mcp's prompts/get reply (id 2), its
//                                                  $1 filled in with WORD as opencode fills it in
//   node inspect.mjs opencode LOG.jsonl EXPECTED   the requests opencode sent the model (fake_model.mjs):
//                                                  one whose last user message is EXPECTED
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
    const [file, expectedFile, source, hooks] = args;
    const expected = readFileSync(expectedFile, 'utf8');
    const want = Number(hooks);
    const responses = lines(file).filter(
      (m) => m.type === 'system' && m.subtype === 'hook_response' && m.hook_event === 'SessionStart',
    );
    if (responses.length !== want)
      fail(`expected ${want} SessionStart hook_responses in Claude Code's stream, found ${responses.length}`);
    for (const r of responses) {
      if (r.hook_name !== `SessionStart:${source}`) fail(`hook_name is ${clip(r.hook_name)}, not "SessionStart:${source}"`);
      if (r.exit_code !== 0 || r.outcome !== 'success')
        fail(`a hook failed: exit_code ${r.exit_code}, outcome ${clip(r.outcome)}, stderr ${clip(r.stderr)}`);
    }
    const briefed = responses.filter((r) => r.stdout === expected);
    const silent = responses.filter((r) => r.stdout === '');
    if (briefed.length !== 1 || silent.length !== want - 1)
      fail(`the hooks printed ${responses.map((r) => clip(r.stdout)).join(' and ')}\n` +
           `  but one should print what ct briefing --hook claude prints, ${clip(expected)}, and the others nothing`);
    console.log(`SessionStart:${source}: ${want} hooks ran, exit 0; one printed the briefing ${clip(expected)}`);
    break;
  }
  case 'claude-session': {
    const [file] = args;
    const init = lines(file).find((m) => m.type === 'system' && m.subtype === 'init');
    if (!init?.session_id) fail(`no session id in Claude Code's stream`);
    console.log(init.session_id);
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
    // Gemini CLI escapes < and > of a hook's additionalContext before it wraps it in its own
    // <hook_context> tags (DefaultHookOutput.getAdditionalContext in @google/gemini-cli-core), so
    // the briefing's <data-N> fence reaches the model as &lt;data-N&gt;.
    const context = readFileSync(contextFile, 'utf8').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const user = lines(file).find((m) => m.type === 'message' && m.role === 'user');
    if (!user) process.exit(3);
    const want = `<hook_context>${context}</hook_context>`;
    if (typeof user.content !== 'string' || !user.content.includes(want))
      fail(`Gemini CLI's first user message is ${clip(user.content)}\n  and does not carry ${clip(want)}`);
    if (user.content.split(context).length !== 2)
      fail(`Gemini CLI's first user message carries the briefing ${user.content.split(context).length - 1} times`);
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
    const briefings = texts.filter((t) => t.trim() === expected).length;
    if (briefings !== 1)
      fail(`${briefings} developer messages in ${files[0]} are ct briefing --hook codex's output ${clip(expected)}, not one`);
    console.log(`the session has the hook's output as a developer message: ${clip(expected)}`);
    break;
  }
  case 'prompt-filled': {
    // opencode (packages/opencode/src/command/index.ts, session/prompt.ts) asks for a prompt with
    // its arguments as $1, $2 …, joins the text of its messages, then puts the N-th word typed
    // in place of $N (the highest N takes the rest; one not typed becomes nothing).
    const [file, ...words] = args;
    const reply = lines(file).find((m) => m.id === 2);
    const messages = reply?.result?.messages;
    if (!Array.isArray(messages)) fail(`ct mcp did not render the prompt: ${clip(JSON.stringify(reply))}`);
    const template = messages.map((m) => (m.content?.type === 'text' ? m.content.text : '')).join('\n');
    const last = Math.max(0, ...[...template.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    const filled = template.replaceAll(/\$(\d+)/g, (_, n) => {
      const i = Number(n) - 1;
      if (i >= words.length) return '';
      return Number(n) === last ? words.slice(i).join(' ') : words[i];
    });
    process.stdout.write(filled);
    break;
  }
  case 'opencode': {
    const [file, expectedFile] = args;
    const expected = readFileSync(expectedFile, 'utf8').trim();
    const text = (content) =>
      typeof content === 'string' ? content : (content ?? []).map((p) => (p?.type === 'text' ? p.text : '')).join('');
    const sent = [];
    for (const request of lines(file)) {
      const users = (request.body?.messages ?? []).filter((m) => m.role === 'user');
      if (users.length) sent.push(text(users[users.length - 1].content).trim());
    }
    if (!sent.length) fail(`opencode sent the model nothing`);
    if (!sent.includes(expected))
      fail(`opencode sent the model ${sent.map(clip).join(' and ')}\n  not the prompt ct renders, ${clip(expected)}`);
    console.log(`the model got the prompt: ${clip(expected)}`);
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
    process.stderr.write('usage: node inspect.mjs claude|claude-session|claude-mcp|gemini-context|gemini|codex-errors|codex-rollout|prompt-filled|opencode ...\n');
    process.exit(2);
}
