#!/usr/bin/env bash
# Checks that the real agent hosts load what `ct providers install <host>` writes, offline (no
# login, no API key, no network but loopback), and do with it what they should:
#   check_hooks.sh --ct /path/to/ct [--host claude|gemini|codex|opencode]...     (default: all four)
# For each hook host, in a fresh temporary project with its own temporary HOME: `ct init`, then
# `ct providers install <host> --hooks` (the project's hook, the portable `ct`) and the same with
# --scope user run by a copy of ct under a path with a space ("…/Application Support/bin/ct", the
# user's own hook: its absolute path), so the host runs two of CLEO's hooks at each start, then
#   claude  `claude doctor` reports no invalid settings, and `claude -p` (stream-json with hook
#           events) shows both SessionStart hooks ran (exit 0) and one printed what `ct briefing
#           --hook claude` prints, the other nothing; again for a resumed and a forked session;
#           then, with the MCP entry it wrote beside the hook (.mcp.json), `claude -p`
#           connects to `ct mcp` and lists its tools, its prompts as slash commands and the resource tools;
#   gemini  `gemini mcp list` reports no invalid configuration, and `gemini -p` (stream-json, a dummy
#           API key) sends the first prompt with the hook's additionalContext in it, once;
#   codex   `codex exec --strict-config` reports no hooks.json error, and the session it records has
#           the hook's output as a developer message, once.
#   opencode  `opencode run --command cleo:take T002` against a stand-in model on loopback
#           (fake_model.mjs): the model is sent ct's take prompt for T002.
# Each host's check is first shown a broken file (opencode: a project without a store), which it
# must reject: a host that stopped reporting errors would make the check blind, and that fails too.
# Installs the locked packages (npm ci, ../npm_locked.sh) into tests/hosts/node_modules when they
# are missing or older than package-lock.json. Exit 77 (skipped) without npm or when the npm
# registry can't be reached for that install. NODE and NPM may name the programs to use.
set -euo pipefail

usage() {
  echo "usage: $0 --ct /path/to/ct [--host claude|gemini|codex|opencode]..." >&2
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
[ ${#hosts[@]} -gt 0 ] || hosts=(claude gemini codex opencode)
for h in "${hosts[@]}"; do
  case $h in claude | gemini | codex | opencode) ;; *) echo "$0: unknown host: $h" >&2; usage ;; esac
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
# opencode's own binary package: the `opencode-ai` wrapper lists every platform's build as an
# optional dependency, which a registry without them cannot lock (npm ci then refuses the lock).
opencode=$nm/opencode-linux-x64/bin/opencode
inspect=$here/inspect.mjs
fake_model=$here/fake_model.mjs

work=$(mktemp -d "${TMPDIR:-/tmp}/ct-hosts.XXXXXX")
work=$(realpath "$work")
bg=
model=
cleanup() {
  # the process group of the one host this script started in the background, if still running, and
  # the stand-in model
  if [ -n "$bg" ]; then kill -TERM -- "-$bg" 2>/dev/null || true; fi
  if [ -n "$model" ]; then kill -TERM "$model" 2>/dev/null || true; fi
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

# A fresh project and HOME for $host: $work/$host/{proj,home}; `ct init`, then the hooks twice: the
# project's (the portable `ct`) and the user's own, installed by a copy of ct under a path with a
# space, whose absolute path that hook runs. prepare_home_$host, when defined, first writes what a
# person would have in their HOME (the installs merge into it).
make_project() {
  proj=$work/$host/proj
  home=$work/$host/home
  spaced="$work/$host/Application Support/bin"
  mkdir -p "$proj" "$home" "$spaced"
  cp "$ct" "$spaced/ct"
  if declare -F "prepare_home_$host" >/dev/null; then "prepare_home_$host"; fi
  (cd "$proj" && in_host_env ct init >"$work/$host/init.log" 2>&1) ||
    { cat "$work/$host/init.log" >&2; fail "ct init failed"; return 1; }
  (cd "$proj" && in_host_env ct providers install "$host" --hooks >"$work/$host/install.log" 2>&1) ||
    { cat "$work/$host/install.log" >&2; fail "ct providers install $host --hooks failed"; return 1; }
  # The user-scope install is a person's setup (it writes outside the project): with no terminal
  # here, a person key speaks for them (tests/support/person_key_fixture.h), listed in $home.
  mkdir -p "$home/.config/cleo" && (umask 077 && printf '%s\n' \
    '{"keys":[{"name":"tests","sha256":"b2f09f61b002f94cd493bbe59ddd167c2dcc4271f14e3db413896bcec30121b5","createdAt":"2026-01-01T00:00:00Z"}]}' \
    >"$home/.config/cleo/person-keys.json")
  (cd "$proj" && in_host_env CT_PERSON_KEY=ctpk_7e577e577e577e577e577e577e577e577e577e577e577e577e577e577e577e57 \
    "$spaced/ct" providers install "$host" --hooks --scope user >"$work/$host/install-user.log" 2>&1) ||
    { cat "$work/$host/install-user.log" >&2; fail "ct providers install $host --hooks --scope user failed"; return 1; }
  grep -q "has CLEO's hook too" "$work/$host/install-user.log" ||
    { cat "$work/$host/install-user.log" >&2; fail "the user-scope install did not say the project has the hook too"; return 1; }
  (cd "$proj" && in_host_env ct briefing --hook "$host" </dev/null >"$work/$host/expected" 2>"$work/$host/briefing.err") ||
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
  # credentials it stops at "Not logged in" after the SessionStart hooks have run, and keeps the
  # session, which a second run resumes and a third forks (SessionStart "resume", "fork").
  claude_hooks() { # SOURCE OUT.jsonl [claude arguments…]
    local source=$1 stream=$2
    shift 2
    (cd "$proj" && in_host_env CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 timeout 120 "$claude" -p ping \
      --output-format stream-json --include-hook-events --verbose "$@" \
      </dev/null >"$stream" 2>"$stream.err") || true
    out=$("$node" "$inspect" claude "$stream" "$work/claude/expected" "$source" 2 2>&1) ||
      { echo "$out" >&2; head -c 4000 "$stream.err" >&2; fail "the SessionStart hooks ($source) did not run as expected"; return 1; }
  }
  t=$SECONDS
  claude_hooks startup "$work/claude/stream.jsonl" || return 1
  note "claude -p: $out ($((SECONDS - t)) s)"
  local session
  session=$("$node" "$inspect" claude-session "$work/claude/stream.jsonl") || { fail "no session to resume"; return 1; }
  t=$SECONDS
  claude_hooks resume "$work/claude/resume.jsonl" --resume "$session" || return 1
  note "claude -p --resume: $out ($((SECONDS - t)) s)"
  t=$SECONDS
  claude_hooks fork "$work/claude/fork.jsonl" --resume "$session" --fork-session || return 1
  note "claude -p --resume --fork-session: $out ($((SECONDS - t)) s)"

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
# In the temporary HOME: the user settings send no usage statistics (ct's user-scope install then
# adds its entry and hook), and the project is a trusted folder — Gemini CLI reads a project's
# settings and runs its hooks only there (--skip-trust comes too late for the settings), as a
# person's "trust" would.
prepare_home_gemini() {
  mkdir -p "$home/.gemini"
  echo '{"privacy":{"usageStatisticsEnabled":false}}' >"$home/.gemini/settings.json"
  "$node" -e 'process.stdout.write(JSON.stringify({[process.argv[1]]: "TRUST_FOLDER"}))' "$proj" \
    >"$home/.gemini/trustedFolders.json"
}
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
  # First with the user's own hook alone (the project's file set aside): the ct under a path with a
  # space runs; then with both: the briefing reaches the prompt once.
  mv "$proj/.gemini/settings.json" "$proj/.gemini/settings.json.off"
  t=$SECONDS
  gemini_prompt "$work/gemini/user" || return 1
  note "gemini -p, the user's hook alone: $out ($((SECONDS - t)) s)"
  mv "$proj/.gemini/settings.json.off" "$proj/.gemini/settings.json"
  t=$SECONDS
  gemini_prompt "$work/gemini/stream" || return 1
  note "gemini -p, both hooks: $out ($((SECONDS - t)) s)"
}

# `gemini -p` in the project until it prints the first prompt: it must carry the hook's context,
# once. A dummy key gets past the auth check; the first prompt is printed (stream-json) before the
# model is called, which then retries without end offline: this stops it once that prompt is out.
gemini_prompt() { # OUT (OUT.jsonl, OUT.err)
  local t=$SECONDS rc=3
  # setsid: its own process group (led by $bg), so that stopping it stops the MCP server it started
  cd "$proj"
  setsid env -i HOME="$home" PATH="$work/bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 TERM=dumb \
    NO_COLOR=1 CLEO_TEST_MODE=1 GEMINI_API_KEY=cleo-offline-dummy "$node" "$gemini" -p ping \
    --output-format stream-json </dev/null >"$1.jsonl" 2>"$1.err" &
  bg=$!
  cd "$here"
  while [ $((SECONDS - t)) -lt 120 ]; do
    rc=0
    out=$("$node" "$inspect" gemini "$1.jsonl" "$work/gemini/context" 2>&1) || rc=$?
    [ "$rc" -eq 3 ] && kill -0 "$bg" 2>/dev/null && { sleep 0.5; continue; }
    break
  done
  kill -TERM -- "-$bg" 2>/dev/null || true
  wait "$bg" 2>/dev/null || true
  bg=
  if [ "$rc" -ne 0 ]; then
    [ "$rc" -eq 3 ] && out="Gemini CLI printed no prompt within 120 s"
    echo "$out" >&2
    grep -v '^\s*at ' "$1.err" | head -c 4000 >&2
    fail "the SessionStart hook's context did not reach the prompt once"
    return 1
  fi
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
prepare_home_codex() { trust_codex_project "$home" "$proj"; }
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
  # First with the user's own hook alone (the project's hooks.json set aside): the ct under a path
  # with a space runs; then with both: the session holds the briefing once.
  local t=$SECONDS what
  for what in user both; do
    [ "$what" = user ] && mv "$proj/.codex/hooks.json" "$proj/.codex/hooks.json.off"
    [ "$what" = both ] && mv "$proj/.codex/hooks.json.off" "$proj/.codex/hooks.json"
    rm -rf "$home/.codex/sessions"
    codex_exec "$proj" "$work/codex/exec-$what.jsonl"
    out=$("$node" "$inspect" codex-errors "$work/codex/exec-$what.jsonl" 2>&1) ||
      { echo "$out" >&2; fail "Codex rejects the hooks.json files ($what)"; return 1; }
    out=$("$node" "$inspect" codex-rollout "$home/.codex/sessions" "$work/codex/expected" 2>&1) ||
      { echo "$out" >&2; cat "$work/codex/exec-$what.jsonl" "$work/codex/exec-$what.jsonl.err" | head -c 4000 >&2
        fail "the SessionStart hook's output is not in the session once ($what)"; return 1; }
    note "codex exec --strict-config, $([ "$what" = user ] && echo "the user's hook alone" || echo "both hooks"): $out ($((SECONDS - t)) s)"
  done
}

# ---- opencode ------------------------------------------------------------------------------------
# opencode turns each MCP prompt into a command (cleo:take): it asks for the prompt with its
# arguments as $1, $2 … and puts the words typed after the command in their place, then sends the
# result to the model — here a stand-in on loopback (fake_model.mjs) that records what it is sent,
# named in the temporary HOME's opencode.json (the project's file is ct's alone).
opencode_env() {
  in_host_env OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_SHARE=1 \
    OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_CLAUDE_CODE=1 "$@"
}
opencode_run() { # DIR LOG.jsonl COMMAND WORDS…
  local dir=$1 log=$2
  shift 2
  : >"$work/opencode/model.jsonl"
  (cd "$dir" && opencode_env timeout 120 "$opencode" run --format json --command "$@" </dev/null >"$log" 2>"$log.err") || true
  cp "$work/opencode/model.jsonl" "$log.model"
}
check_opencode() {
  if [ ! -x "$opencode" ]; then
    note "SKIP: no opencode build for $(uname -m) in node_modules (only linux x64 is locked)"
    return 0
  fi
  note "opencode $(env -i HOME="$work" PATH=/usr/bin:/bin "$opencode" --version 2>/dev/null)"
  proj=$work/opencode/proj
  home=$work/opencode/home
  mkdir -p "$proj" "$home/.config/opencode" "$work/opencode/bad"
  "$node" "$fake_model" "$work/opencode/port" "$work/opencode/model.jsonl" &
  model=$!
  local i
  for i in $(seq 1 100); do [ -s "$work/opencode/port" ] && break; sleep 0.1; done
  [ -s "$work/opencode/port" ] || { fail "the stand-in model did not start"; return 1; }
  printf '{"model":"offline/m","provider":{"offline":{"npm":"@ai-sdk/openai-compatible","name":"offline","options":{"baseURL":"http://127.0.0.1:%s/v1","apiKey":"cleo-offline-dummy"},"models":{"m":{"name":"m"}}}}}\n' \
    "$(cat "$work/opencode/port")" >"$home/.config/opencode/opencode.json"
  local out t=$SECONDS
  (cd "$proj" && in_host_env ct init >/dev/null && in_host_env ct add "First task" >/dev/null &&
    in_host_env ct add "Second task" --acceptance "it is done" >/dev/null &&
    in_host_env ct providers install opencode >"$work/opencode/install.log" 2>&1) ||
    { cat "$work/opencode/install.log" >&2; fail "ct init, add or providers install opencode failed"; return 1; }
  # What the model should get: ct mcp's take prompt as opencode asks for it ({"id":"$1"}), T002 in place.
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"opencode","version":"1"}}}' \
    '{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"take","arguments":{"id":"$1"}}}' |
    (cd "$proj" && in_host_env ct mcp) >"$work/opencode/prompt.jsonl" 2>/dev/null || true
  "$node" "$inspect" prompt-filled "$work/opencode/prompt.jsonl" T002 >"$work/opencode/expected" ||
    { fail "ct mcp did not render the take prompt as a template"; return 1; }

  # The negative control: an entry whose command is missing must be reported failed, or the
  # check that ours connects would be blind.
  echo '{"mcp":{"cleo":{"type":"local","command":["ct-not-installed","mcp"],"enabled":true}}}' \
    >"$work/opencode/bad/opencode.json"
  out=$(cd "$work/opencode/bad" && opencode_env timeout 120 "$opencode" mcp list </dev/null 2>&1) || true
  grep -q 'cleo' <<<"$out" && ! grep -q 'connected' <<<"$out" ||
    { echo "$out" >&2; fail "opencode no longer reports an MCP server it cannot start: the check would be blind"; return 1; }
  out=$(cd "$proj" && opencode_env timeout 120 "$opencode" mcp list </dev/null 2>&1) || true
  grep -q 'cleo.*connected' <<<"$out" || { echo "$out" >&2; fail "opencode does not connect to ct mcp from opencode.json"; return 1; }
  note "opencode mcp list: cleo connected ($((SECONDS - t)) s)"

  t=$SECONDS
  opencode_run "$proj" "$work/opencode/take.jsonl" cleo:take T002
  out=$("$node" "$inspect" opencode "$work/opencode/take.jsonl.model" "$work/opencode/expected" 2>&1) ||
    { echo "$out" >&2; head -c 4000 "$work/opencode/take.jsonl.err" >&2; fail "opencode did not send the model ct's prompt"; return 1; }
  note "opencode run --command cleo:take T002: $out ($((SECONDS - t)) s)"
  kill -TERM "$model" 2>/dev/null || true
  wait "$model" 2>/dev/null || true
  model=
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
