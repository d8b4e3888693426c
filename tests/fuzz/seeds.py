#!/usr/bin/env python3
"""Writes the seed corpora tests/fuzz/corpus/<target>/ from the repository's own test data.

    python3 tests/fuzz/seeds.py [--build-dir build/fuzz]

Sources (each seed file is named by the SHA-1 of its content, like libFuzzer names its inputs):
  json     every `>>>` and `<<<` line of tests/transcripts/**/*.test, every `json` expectation of
           tests/cli/*.test, every example of the registry, and the edge cases below
  jsonrpc  every `>>>` line of tests/transcripts/**/*.test, the edge cases below and the batch and
           plan ops at their edges (ops_edges)
  params   one byte (the operation's index in the registry, from params_fuzz with
           CT_FUZZ_LIST_OPERATIONS=1) + params JSON: every example of the registry and the params
           of every tools/call in the transcripts
  scope    every scope written in tests/ (`epic:T001` …) and the edge cases below
  cli      every `$ ct …` line of tests/cli/*.test, split into words as the transcript runner
           splits them (shlex, POSIX rules), words separated by NUL
  http     every `>>>` line as the POST a client sends (with the live session: `$session`), and
           requests that break the endpoint's rules (methods, Host, Origin, framing, token …)
Existing files are kept (inputs merged by `scripts/fuzz.sh --merge` stay); rerunning adds nothing
twice.

It also writes the libFuzzer dictionaries tests/fuzz/<target>.dict (jsonrpc, params, cli, http): JSON-RPC
and MCP words, and the registry's domains, operations, param names (as JSON keys, and as kebab-case
flags for cli), enum choices and shortcuts.
"""
import argparse
import hashlib
import json
import pathlib
import re
import shlex
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus"

JSON_EDGES = [
    "", " ", "null", "true", "false", "0", "-0", "-0.0", "1.0", "1e2", "-1E-2", "1.5e308", "4.9e-324",
    "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551615",
    "18446744073709551616", "1e999", "-1e999", '""', '"\\u0000"', '"\\ud83d\\ude00"', '"\\ud800"',
    '"\\u00e9\\n\\t\\"\\\\\\/"', '"é😀"', "[]", "{}", "[[]]", '{"a":{"b":[1,2,{"c":null}]}}',
    '{"a":1,"a":2}', '{"a":1,"b":2,"a":3}', "[1,2,3,]", "{,}", '{"a" 1}', "[01]", "[1.]", "[.5]",
    "[-]", "[1e]", "\t[ 1 ,\r\n 2 ]\n", "[" * 63 + "]" * 63, "[" * 64 + "]" * 64,
    "[" * 63 + "1" + "]" * 63, '{"a":' * 40 + "1" + "}" * 40, '"\x7f"', '"\xc3\xa9"',
]

JSONRPC_EDGES = [
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":"abc","method":"ping"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    '{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}',
    '{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e999}}',
    '{"jsonrpc":"2.0","id":7,"result":{}}',
    '{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}',
    '{"jsonrpc":"1.0","id":1,"method":"ping"}',
    '{"id":1,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1,"method":5}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cleo_query","arguments":{"domain":"tasks","operation":"show","params":{"id":"\\ud800"}}}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}',
    '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    '[{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    '[1,{"jsonrpc":"2.0","id":2,"method":"ping"}]',
    '[]', '[{"jsonrpc":"2.0","id":1e999,"method":"ping"}]', "42", "{not json", '"ping"',
]

SCOPE_EDGES = [
    "global", " global ", "GLOBAL", "global:", "task:T1", "task:t001", "task:1", "task: T001 ",
    "taskGroup:T1", "subtree:T0001", "epic:T001", "custom:T1,T2", "custom:T1,T1", "custom:T1, T2 ,T3",
    "custom:", "custom:,", "custom:T1,", "task:T1,T2", "epic", ":", "", "task:T99999999999999999999",
    "task:T-1", "task:T1\x00", "custom:" + ",".join(f"T{i}" for i in range(1, 40)),
]


HTTP_HEAD = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8808\r\nAccept: application/json, text/event-stream\r\n"
             "Content-Type: application/json\r\n")
PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
HTTP_EDGES = [
    HTTP_HEAD + "\r\n" + '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nMCP-Protocol-Version: 1999-01-01\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n\r\n" + PING,
    HTTP_HEAD + "\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\n\r\n" + '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    HTTP_HEAD + "Mcp-Session-Id: $session\r\n\r\n" + '{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
    HTTP_HEAD + "Mcp-Session-Id: $session\r\n\r\n{not json",
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nAuthorization: Bearer fuzz-token\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nAuthorization: bearer   fuzz-token  \r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nAuthorization: Bearer wrong\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nOrigin: http://localhost:5173\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nOrigin: https://evil.example\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nOrigin: null\r\n\r\n" + PING,
    HTTP_HEAD.replace("Host: 127.0.0.1:8808", "Host: evil.example:8808") + "Mcp-Session-Id: $session\r\n\r\n" + PING,
    HTTP_HEAD.replace("Host: 127.0.0.1:8808", "Host: [::1]:8808") + "Mcp-Session-Id: $session\r\n\r\n" + PING,
    HTTP_HEAD + "Host: localhost\r\nMcp-Session-Id: $session\r\n\r\n" + PING,
    HTTP_HEAD.replace("Host: 127.0.0.1:8808\r\n", "") + "Mcp-Session-Id: $session\r\n\r\n" + PING,
    HTTP_HEAD.replace("HTTP/1.1", "HTTP/1.0").replace("Host: 127.0.0.1:8808\r\n", "") + "Mcp-Session-Id: $session\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nContent-Length: 40\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nContent-Length: 40\r\nContent-Length: 41\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nContent-Length: 99999999999999999999\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nContent-Length: 4x\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nTransfer-Encoding: chunked\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nTransfer-Encoding: gzip\r\n\r\n" + PING,
    HTTP_HEAD + "Mcp-Session-Id: $session\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n" + PING,
    HTTP_HEAD.replace("Accept: application/json, text/event-stream", "Accept: text/html") + "\r\n" + PING,
    HTTP_HEAD.replace("Content-Type: application/json", "Content-Type: text/plain") + "\r\n" + PING,
    HTTP_HEAD.replace("POST /mcp", "POST /mcp?x=1") + "Mcp-Session-Id: $session\r\n\r\n" + PING,
    HTTP_HEAD.replace("POST /mcp", "POST /other") + "\r\n" + PING,
    "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
    "OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: $session\r\n\r\n",
    "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "POST /mcp HTTP/1.1\nHost: localhost\n\n" + PING,
    "",
]


def ops_edges():
    """tools/call messages of tasks.batch and the plan domain at their edges (issue 50): "$N" in a task
    id param and as text elsewhere (a note "$1" stays text), placeholders that name no op or are not
    one ("$0", "$01", "$1 "), the original's name of an id (taskId), one call's limit of 500 ops and
    one over it, a plan grown past one call's limit, its rebase (forced), diff and commit, and the
    other agent's change of fields a plan changes."""
    def call(tool, domain, operation, params):
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": tool, "arguments": {"domain": domain, "operation": operation,
                                                                  "params": params}}},
                          ensure_ascii=False, separators=(",", ":"))

    def mutate(domain, operation, params):
        return call("cleo_mutate", domain, operation, params)

    def add(**params):
        return {"operation": "tasks.add", "params": params}

    return [
        mutate("tasks", "batch", {"ops": [add(title="Price list"),
                                          add(title="Invoice", description="$1", acceptance=["$1", "costs $2"],
                                              depends=["$1"], notes="$3"),
                                          {"operation": "tasks.update", "params": {"taskId": "$2", "notes": "$2"}}]}),
        mutate("tasks", "batch", {"ops": [add(title="First task"),
                                          {"operation": "update", "params": {"id": "$1", "parent": "$1"}}]}),
        mutate("tasks", "batch", {"ops": [add(title="First task"),
                                          {"operation": "update", "params": {"id": "$0", "depends": [
                                              "$01", "$9999999", "$1 ", "$-1", "$1"]}}]}),
        mutate("tasks", "batch", {"ops": [add(title="First task"),
                                          {"operation": "relate", "params": {"id": "$1", "target": "$1", "notes": "$1"}}]}),
        mutate("tasks", "batch", {"ops": [add(title="First task"),
                                          {"operation": "complete", "params": {"id": "T001",
                                                                              "waive": {"ac": "$1", "reason": "$1"}}}]}),
        mutate("tasks", "batch", {"ops": [add(title="First task"),
                                          {"operation": "update", "params": {"id": "$1", "labels": ["$1"],
                                                                             "files": ["$1"], "title": "$1 $1"}}]}),
        mutate("tasks", "batch", {"ops": [add(title="Many task %d" % i) for i in range(501)]}),
        mutate("tasks", "batch", {"ops": [add(title="Many task %d" % i) for i in range(500)]}),
        mutate("plan", "begin", {"label": "fuzz plan"}),
        mutate("plan", "apply", {"plan": "PL001", "ops": [
            add(title="Budget"),
            {"operation": "tasks.update", "params": {"id": "T001", "notes": "$1", "depends": ["$1"], "priority": "high"}}]}),
        mutate("plan", "apply", {"plan": "PL001", "ops": [add(title="Step %d" % i) for i in range(500)]}),
        mutate("plan", "apply", {"plan": "PL001", "ops": [{"operation": "tasks.update",
                                                          "params": {"id": "$600", "title": "$1"}}]}),
        mutate("plan", "rebase", {"plan": "PL001"}),
        mutate("plan", "rebase", {"plan": "PL001", "force": True}),
        call("cleo_query", "plan", "diff", {"plans": ["PL001", "PL002"], "detail": "full"}),
        mutate("plan", "commit", {"plan": "PL001"}),
        mutate("tasks", "update", {"id": "T001", "title": "Someone else's title", "notes": "their note",
                                   "labels": ["three"]}),
    ]


def write(target, content):
    data = content.encode() if isinstance(content, str) else content
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / hashlib.sha1(data).hexdigest()
    if not path.exists():
        path.write_bytes(data)


def directive_lines(paths, prefix):
    for path in sorted(paths):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(prefix):
                yield line[len(prefix):]


def kebab(name):
    return re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", name).lower()


def dict_entry(text):
    """A libFuzzer dictionary value: a quoted string with \\, \" and non-printables escaped."""
    out = ""
    for byte in text.encode():
        if byte in (0x22, 0x5C) or byte < 0x20 or byte > 0x7E:
            out += "\\x%02X" % byte
        else:
            out += chr(byte)
    return '"' + out + '"'


def write_dictionaries(index, params, choices, shortcuts):
    domains = sorted({domain for domain, _ in index})
    operations = sorted({name for _, name in index})
    header = "# Generated by tests/fuzz/seeds.py from the registry; do not edit.\n"
    rpc = ['"jsonrpc"', '"2.0"', '"id"', '"method"', '"params"', '"result"', '"error"', '"initialize"',
           '"protocolVersion"', '"2025-11-25"', '"2025-06-18"', '"2025-03-26"', '"clientInfo"',
           '"notifications/initialized"', '"ping"', '"tools/list"', '"tools/call"', '"cursor"', '"name"',
           '"arguments"', '"cleo_query"', '"cleo_mutate"', '"domain"', '"operation"', '"1e999"',
           '"18446744073709551616"', dict_entry("\\ud800"), '"null"', '"true"', '"false"']
    words = sorted(set(domains + operations) | params | choices)
    quoted = [dict_entry('"' + word + '"') for word in words]
    (CORPUS.parent / "jsonrpc.dict").write_text(header + "\n".join(rpc + quoted) + "\n")
    (CORPUS.parent / "params.dict").write_text(header + "\n".join(quoted + rpc[-4:]) + "\n")
    flags = ["--" + kebab(p) for p in sorted(params)] + ["--no-" + kebab(p) for p in sorted(params)]
    flags += ["--json", "--project", "--meta", "--reason", "--session", "--read-only", "--version", "--help",
              "-h", "--", "-", "@", "@missing.json", "mcp", "serve", "mcp-config", "help"]
    cli_words = sorted(set(domains + operations + sorted(shortcuts) + sorted(choices) + flags))
    (CORPUS.parent / "cli.dict").write_text(header + "\n".join(dict_entry(w) for w in cli_words) + "\n")
    http = ["POST", "GET", "DELETE", "OPTIONS", "HEAD", "/mcp", "HTTP/1.1", "HTTP/1.0", "\r\n", "\r\n\r\n",
            "Host: ", "Origin: ", "Accept: ", "Content-Type: ", "Content-Length: ", "Transfer-Encoding: ",
            "Authorization: ", "Mcp-Session-Id: ", "MCP-Protocol-Version: ", "$session", "Bearer ", "fuzz-token",
            "chunked", "application/json", "text/event-stream", "*/*", "localhost", "127.0.0.1", "[::1]", ":8808",
            "http://", "https://", "null", "evil.example", "2025-11-25", "2025-03-26"]
    (CORPUS.parent / "http.dict").write_text(header + "\n".join(dict_entry(w) for w in http + rpc[:24]) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build" / "fuzz"))
    args = parser.parse_args()

    transcripts = list((ROOT / "tests" / "transcripts").rglob("*.test"))
    cli_tests = list((ROOT / "tests" / "cli").glob("*.test"))
    requests = list(directive_lines(transcripts, ">>> "))

    listing = subprocess.run([str(pathlib.Path(args.build_dir) / "tests" / "fuzz" / "params_fuzz")],
                             env={"CT_FUZZ_LIST_OPERATIONS": "1"}, capture_output=True, text=True, check=True)
    index = {}
    examples = []
    params, choices, shortcuts = set(), set(), set()
    for line in listing.stdout.splitlines():
        kind, number, rest = line.split(" ", 2)
        if kind == "op":
            index[tuple(rest.split(" "))] = int(number)
        elif kind == "example":
            examples.append((int(number), rest))
        elif kind == "param":
            params.add(rest)
        elif kind == "choice":
            choices.add(rest)
        elif kind == "shortcut":
            shortcuts.update(rest.split(" "))
    write_dictionaries(index, params, choices, shortcuts)

    # json
    for text in requests + list(directive_lines(transcripts, "<<< ")) + list(directive_lines(cli_tests, "json ")):
        if text != "none":
            write("json", text)
    for _, params in examples:
        write("json", params)
    for text in JSON_EDGES:
        write("json", text)

    # jsonrpc
    for text in requests + JSONRPC_EDGES + ops_edges():
        write("jsonrpc", text)
        write("json", text)

    # params
    for number, params in examples:
        write("params", bytes([number]) + params.encode())
    for text in requests:
        try:
            message = json.loads(text)
        except ValueError:
            continue
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            continue
        arguments = (message.get("params") or {}).get("arguments")
        if not isinstance(arguments, dict):
            continue
        key = (arguments.get("domain"), arguments.get("operation"))
        if key in index and "params" in arguments:
            try:
                text = json.dumps(arguments["params"], ensure_ascii=False, separators=(",", ":")).encode()
            except UnicodeEncodeError:  # a lone surrogate escape: keep it escaped
                text = json.dumps(arguments["params"], separators=(",", ":")).encode()
            write("params", bytes([index[key]]) + text)

    # scope
    pattern = re.compile(r"\b(?:task|taskGroup|subtree|epic|custom):[A-Za-z0-9,]*")
    for path in transcripts + cli_tests + list((ROOT / "tests" / "unit").rglob("*.cpp")):
        for match in pattern.findall(path.read_text(encoding="utf-8")):
            write("scope", match)
    for text in SCOPE_EDGES:
        write("scope", text)

    # cli
    for line in directive_lines(cli_tests, "$ "):
        try:
            words = shlex.split(line, posix=True)
        except ValueError:
            continue
        if words and words[0] == "ct":
            write("cli", "\0".join(words[1:]))

    # http
    for text in requests:
        write("http", HTTP_HEAD + "Mcp-Session-Id: $session\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n" + text)
    for text in HTTP_EDGES:
        write("http", text)

    for target in ("json", "jsonrpc", "params", "scope", "cli", "http"):
        print(f"{target}: {len(list((CORPUS / target).iterdir()))} seeds")


if __name__ == "__main__":
    main()
