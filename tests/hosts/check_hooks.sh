#!/usr/bin/env bash
# Checks that the real agent hosts load the session-start hooks `ct providers install <host> --hooks`
# writes, offline (no login, no API key, no network but loopback), and run them:
#   check_hooks.sh --ct /path/to/ct [--host claude|gemini|codex]...     (default: all three)
# For each host, in a fresh temporary project with its own temporary HOME: `ct init`, then
# `ct providers install <host> --hooks`, then
#   claude  `claude doctor` reports no invalid settings, and `claude -p` (stream-json with hook
#           events) shows the SessionStart hook ran and printed what `ct briefing --hook claude` prints;
#           then, with the MCP entry it wrote beside the hook (.mcp.json), `claude -p`
#           connects to `ct mcp` and lists its tools, its prompts as slash commands and the resource tools;
#   gemini  `gemini mcp list` reports no invalid configuration, and `gemini -p` (stream-json, a dummy
#           API key) sends the first prompt with the hook's additionalContext in it;
#   codex   `codex exec --strict-config` reports no hooks.json error, and the session it records has
#           the hook's output as a developer message.
# Each host's check is first shown a broken file, which it must reject: a host that stopped
# reporting errors would make the check blind, and that fails too.
# Installs the locked packages (npm ci, ../npm_locked.sh) into tests/hosts/node_modules when they
# are missing or older than package-lock.json. Exit 77 (skipped) without npm or when the npm
# registry can't be reached for that install. NODE and NPM may name the programs to use.
set -euo pipefail

usage() {
  echo "usage: $0 --ct /path/to/ct [--host claude|gemini|codex]..." >&2
  exit 2
}
ct=
hosts=()
while [ $# -gt 0 ]; do
  case $1 in
    --ct) [ $# -ge 2 ] || usage; ct=$2; shift 2 ;;
    --ct=*) ct=${1#--ct=}; shift ;;
    --host) [ $# -ge 2 ] || usage; hosts+=("$2"); shift 2 ;;
    --host=*) hosts+=("${1#--host=}"); shift ;;
    *) usage ;;
  esac
done
[ -n "$ct" ] || usage
if [ ! -x "$ct" ] || [ -d "$ct" ]; then
  echo "$0: not an executable: $ct" >&2
  exit 2
fi
ct=$(realpath "$ct")
[ ${#hosts[@]} -gt 0 ] || hosts=(claude gemini codex)
for h in "${hosts[@]}"; do
  case $h in claude | gemini | codex) ;; *) echo "$0: unknown host: $h" >&2; usage ;; esac
done

node=${NODE:-node}
npm=${NPM:-npm}
cd "$(dirname "${BASH_SOURCE[0]}")"
here=$PWD

if ! command -v "$npm" >/dev/null 2>&1 || ! command -v "$node" >/dev/null 2>&1; then
  echo "SKIP host hook checks: no npm or node (apt-get install nodejs npm)"
  exit 77
fi
if [ ! -f node_modules/.installed ] || [ package-lock.json -nt node_modules/.installed ]; then
  if ! timeout 30 "$npm" ping --fetch-retries=0 --fetch-timeout=20000 >/dev/null 2>&1; then
    echo "SKIP host hook checks: the npm registry can't be reached to install the host CLIs"
    exit 77
  fi
fi
started=$SECONDS
source ../npm_locked.sh
echo "==> packages ready in $((SECONDS - started)) s"
case $node in */*) node=$(realpath "$node") ;; *) node=$(command -v "$node") ;; esac

nm=$here/node_modules
claude=$nm/.bin/claude
gemini=$nm/@google/gemini-cli/bundle/gemini.js
codex=$nm/@openai/codex/bin/codex.js
inspect=$here/inspect.mjs

work=$(mktemp -d "${TMPDIR:-/tmp}/ct-hosts.XXXXXX")
work=$(realpath "$work")
bg=
cleanup() {
  # the process group of the one host this script started in the background, if still running
  if [ -n "$bg" ]; then kill -TERM -- "-$bg" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/bin"
ln -s "$ct" "$work/bin/ct" # the hooks run `ct` from PATH

# Runs a command with a clean environment: the temporary HOME, `ct` first on PATH, no credentials.
home=
in_host_env() {
  env -i HOME="$home" PATH="$work/bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 TERM=dumb \
    NO_COLOR=1 CLEO_TEST_MODE=1 "$@"
}

failures=0
passed=0
fail() {
  echo "FAIL [$host] $*" >&2
  failures=$((failures + 1))
  return 1
}
note() { echo "  [$host] $*"; }

# A fresh project and HOME for $host: $work/$host/{proj,home}; `ct init`, then the hooks.
make_project() {
  proj=$work/$host/proj
  home=$work/$host/home
  mkdir -p "$proj" "$home"
  (cd "$proj" && in_host_env ct init >"$work/$host/init.log" 2>&1) ||
    { cat "$work/$host/init.log" >&2; fail "ct init failed"; return 1; }
  (cd "$proj" && in_host_env ct providers install "$host" --hooks >"$work/$host/install.log" 2>&1) ||
    { cat "$work/$host/install.log" >&2; fail "ct providers install $host --hooks failed"; return 1; }
  (cd "$proj" && in_host_env ct briefing --hook "$host" >"$work/$host/expected" 2>"$work/$host/briefing.err") ||
    { cat "$work/$host/briefing.err" >&2; fail "ct briefing --hook $host failed"; return 1; }
}

# ---- Claude Code ---------------------------------------------------------------------------------
claude_doctor() { # DIR -> output of `claude doctor` run there
  (cd "$1" && in_host_env CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 timeout 120 "$claude" doctor </dev/null 2>&1)
}
check_claude() {
  note "$("$claude" --version)"
  # The negative control: doctor must still list a settings file it rejects.
  local bad=$work/claude/bad
  mkdir -p "$bad/.claude" "$work/claude/badhome"
  echo '{"hooks":{"SessionStart":[{"hooks":[{"type":"nonsense","command":1}]}]}}' >"$bad/.claude/settings.json"
  local out
  out=$(home=$work/claude/badhome claude_doctor "$bad") || true
  grep -q 'Invalid settings' <<<"$out" && grep -q 'hooks.SessionStart' <<<"$out" ||
    { echo "$out" >&2; fail "claude doctor no longer reports a broken settings file: the check would be blind"; return 1; }

  make_project || return 1
  local t=$SECONDS
  out=$(claude_doctor "$proj") || { echo "$out" >&2; fail "claude doctor failed"; return 1; }
  if grep -q 'Invalid settings' <<<"$out"; then
    echo "$out" | sed -n '/Invalid settings/,/^$/p' >&2
    fail "Claude Code rejects $proj/.claude/settings.json"
    return 1
  fi
  note "claude doctor: .claude/settings.json valid ($((SECONDS - t)) s)"

  # -p skips the trust dialog (and ignores invalid settings silently, hence doctor above). With no
  # credentials it stops at "Not logged in" after the SessionStart hooks have run.
  t=$SECONDS
  (cd "$proj" && in_host_env CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 timeout 120 "$claude" -p ping \
    --output-format stream-json --include-hook-events --verbose --no-session-persistence \
    </dev/null >"$work/claude/stream.jsonl" 2>"$work/claude/stream.err") || true
  out=$("$node" "$inspect" claude "$work/claude/stream.jsonl" "$work/claude/expected" 2>&1) ||
    { echo "$out" >&2; head -c 4000 "$work/claude/stream.err" >&2; fail "the SessionStart hook did not run as expected"; return 1; }
  note "claude -p: $out ($((SECONDS - t)) s)"

  # The MCP entry `ct providers install claude --hooks` wrote beside the hook (.mcp.json, the
  # portable `ct`): Claude Code starts `ct mcp` from it, and its init event lists the two tools, the
  # prompts as slash commands and the resource tools. The negative control first: an entry whose
  # command is missing must be reported failed, or the check would be blind.
  [ -f "$proj/.mcp.json" ] || { fail "ct providers install claude --hooks wrote no .mcp.json"; return 1; }
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"check","version":"1"}}}' \
    '{"jsonrpc":"2.0","id":2,"method":"prompts/list"}' | (cd "$proj" && in_host_env ct mcp) >"$work/claude/prompts.jsonl" 2>/dev/null ||
    { fail "ct mcp did not list its prompts"; return 1; }
  claude_mcp() { # CONFIG OUT.jsonl
    (cd "$proj" && in_host_env CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 timeout 120 "$claude" -p ping \
      --output-format stream-json --verbose --no-session-persistence --mcp-config "$1" --strict-mcp-config \
      </dev/null >"$2" 2>"$2.err") || true
  }
  echo '{"mcpServers":{"cleo":{"command":"ct-not-installed","args":["mcp"]}}}' >"$work/claude/bad-mcp.json"
  claude_mcp "$work/claude/bad-mcp.json" "$work/claude/bad-mcp.jsonl"
  if "$node" "$inspect" claude-mcp "$work/claude/bad-mcp.jsonl" "$work/claude/prompts.jsonl" >/dev/null 2>&1; then
    fail "Claude Code no longer reports an MCP server it cannot start: the check would be blind"
    return 1
  fi
  t=$SECONDS
  claude_mcp "$proj/.mcp.json" "$work/claude/mcp.jsonl"
  out=$("$node" "$inspect" claude-mcp "$work/claude/mcp.jsonl" "$work/claude/prompts.jsonl" 2>&1) ||
    { echo "$out" >&2; head -c 4000 "$work/claude/mcp.jsonl.err" >&2; fail "Claude Code does not list ct mcp's tools and prompts"; return 1; }
  note "claude -p with .mcp.json: $out ($((SECONDS - t)) s)"
}

# ---- Gemini CLI ----------------------------------------------------------------------------------
gemini_mcp_list() { # DIR -> output of `gemini mcp list` run there; fails when it does
  (cd "$1" && in_host_env timeout 120 "$node" "$gemini" mcp list </dev/null 2>&1)
}
check_gemini() {
  note "gemini $(in_host_env "$node" "$gemini" --version 2>/dev/null)"
  local bad=$work/gemini/bad out
  mkdir -p "$bad/.gemini" "$work/gemini/badhome"
  echo '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":1}]}]}}' >"$bad/.gemini/settings.json"
  out=$(home=$work/gemini/badhome gemini_mcp_list "$bad") || true
  grep -q 'Invalid configuration' <<<"$out" && grep -q 'hooks.SessionStart' <<<"$out" ||
    { echo "$out" >&2; fail "gemini no longer reports a broken settings file: the check would be blind"; return 1; }

  make_project || return 1
  # In the temporary HOME: the user settings send no usage statistics (the project's file is ct's
  # alone), and the project is a trusted folder — Gemini CLI reads a project's settings and runs its
  # hooks only there (--skip-trust comes too late for the settings), as a person's "trust" would.
  mkdir -p "$home/.gemini"
  echo '{"privacy":{"usageStatisticsEnabled":false}}' >"$home/.gemini/settings.json"
  "$node" -e 'process.stdout.write(JSON.stringify({[process.argv[1]]: "TRUST_FOLDER"}))' "$proj" \
    >"$home/.gemini/trustedFolders.json"
  local t=$SECONDS
  local rc=0
  out=$(gemini_mcp_list "$proj") || rc=$?
  [ "$rc" -eq 0 ] || { echo "$out" >&2; fail "gemini mcp list failed (exit $rc)"; return 1; }
  if grep -q -e 'Invalid configuration' -e 'Error in' <<<"$out"; then
    echo "$out" >&2
    fail "Gemini CLI rejects $proj/.gemini/settings.json"
    return 1
  fi
  grep -q 'cleo' <<<"$out" || { echo "$out" >&2; fail "gemini mcp list did not read $proj/.gemini/settings.json"; return 1; }
  note "gemini mcp list: .gemini/settings.json valid ($((SECONDS - t)) s)"

  "$node" "$inspect" gemini-context "$work/gemini/expected" >"$work/gemini/context" ||
    { fail "ct briefing --hook gemini's output"; return 1; }
  # A dummy key gets past the auth check; the first prompt is printed (stream-json) before the model is called, which then retries without
  # end offline: this script stops it once that prompt is out.
  t=$SECONDS
  # setsid: its own process group (led by $bg), so that stopping it stops the MCP server it started
  cd "$proj"
  setsid env -i HOME="$home" PATH="$work/bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 TERM=dumb \
    NO_COLOR=1 CLEO_TEST_MODE=1 GEMINI_API_KEY=cleo-offline-dummy "$node" "$gemini" -p ping \
    --output-format stream-json </dev/null >"$work/gemini/stream.jsonl" 2>"$work/gemini/stream.err" &
  bg=$!
  cd "$here"
  rc=3
  while [ $((SECONDS - t)) -lt 120 ]; do
    rc=0
    out=$("$node" "$inspect" gemini "$work/gemini/stream.jsonl" "$work/gemini/context" 2>&1) || rc=$?
    [ "$rc" -eq 3 ] && kill -0 "$bg" 2>/dev/null && { sleep 0.5; continue; }
    break
  done
  kill -TERM -- "-$bg" 2>/dev/null || true
  wait "$bg" 2>/dev/null || true
  bg=
  if [ "$rc" -ne 0 ]; then
    [ "$rc" -eq 3 ] && out="Gemini CLI printed no prompt within 120 s"
    echo "$out" >&2
    grep -v '^\s*at ' "$work/gemini/stream.err" | head -c 4000 >&2
    fail "the SessionStart hook's context did not reach the prompt"
    return 1
  fi
  note "gemini -p: $out ($((SECONDS - t)) s)"
}

# ---- Codex ---------------------------------------------------------------------------------------
# `codex exec` with a dummy key against a closed loopback port, no retries: it loads the config and
# hooks, runs the SessionStart hooks, records the session, then fails to reach the model at once.
# Project config (.codex/) is read only in a trusted project, and a hook runs only once trusted in
# /hooks — a person's step, which --dangerously-bypass-hook-trust stands in for here.
codex_exec() { # DIR OUT.jsonl
  (cd "$1" && in_host_env OPENAI_API_KEY=cleo-offline-dummy timeout 120 "$node" "$codex" exec --json \
    --skip-git-repo-check --dangerously-bypass-hook-trust --strict-config \
    --disable unbounded_connection_retries -c model_provider=cleo_offline \
    -c 'model_providers.cleo_offline={name="cleo_offline",base_url="http://127.0.0.1:9/v1",env_key="OPENAI_API_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0,supports_websockets=false}' \
    ping </dev/null >"$2" 2>"$2.err") || true
}
trust_codex_project() { # HOME DIR
  mkdir -p "$1/.codex"
  printf '[projects."%s"]\ntrust_level = "trusted"\n' "$2" >"$1/.codex/config.toml"
}
check_codex() {
  note "$(in_host_env "$node" "$codex" --version 2>/dev/null)"
  local bad=$work/codex/bad out
  mkdir -p "$bad/.codex"
  echo '{"hooks":{"SessionStart":[{"hooks":[{"type":"nonsense","command":"true"}]}]}}' >"$bad/.codex/hooks.json"
  trust_codex_project "$work/codex/badhome" "$bad"
  home=$work/codex/badhome codex_exec "$bad" "$work/codex/bad.jsonl"
  grep -q 'failed to parse hooks config' "$work/codex/bad.jsonl" ||
    { cat "$work/codex/bad.jsonl" "$work/codex/bad.jsonl.err" >&2; fail "codex no longer reports a broken hooks.json: the check would be blind"; return 1; }

  make_project || return 1
  trust_codex_project "$home" "$proj"
  local t=$SECONDS
  codex_exec "$proj" "$work/codex/exec.jsonl"
  out=$("$node" "$inspect" codex-errors "$work/codex/exec.jsonl" 2>&1) ||
    { echo "$out" >&2; fail "Codex rejects $proj/.codex/hooks.json"; return 1; }
  note "codex exec --strict-config: .codex/hooks.json valid"
  out=$("$node" "$inspect" codex-rollout "$home/.codex/sessions" "$work/codex/expected" 2>&1) ||
    { echo "$out" >&2; cat "$work/codex/exec.jsonl" "$work/codex/exec.jsonl.err" | head -c 4000 >&2; fail "the SessionStart hook's output is not in the session"; return 1; }
  note "codex exec: $out ($((SECONDS - t)) s)"
}

for host in "${hosts[@]}"; do
  echo "==> $host"
  if "check_$host"; then
    passed=$((passed + 1))
    echo "PASS [$host]"
  fi
done
echo "hosts: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
