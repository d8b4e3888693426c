#!/usr/bin/env python3
"""Resident memory of `ct mcp` on a store: one process serves a fixed stream of calls (show, list,
sorted list, find, next, then adds), and /proc/<pid>/status is read after each phase: RssAnon
(heap: SQLite's page cache, statements, our data) and RssFile (the memory-mapped database, up to
mmap_size, and the binary).  Usage: bench/mcp_memory.py build/release/ct PROJECT_DIR [ADDS]
The project's store is changed (the adds): run it on a copy.  Results: docs/performance.md."""
import json
import subprocess
import sys

ct, project = sys.argv[1], sys.argv[2]
adds = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
proc = subprocess.Popen([ct, "mcp", "--project", project], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
next_id = 0


def rpc(method, params):
    global next_id
    next_id += 1
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    if "error" in reply:
        raise SystemExit(f"{method}: {reply['error']}")
    return reply


def call(tool, domain, operation, params):
    return rpc("tools/call", {"name": tool, "arguments": {"domain": domain, "operation": operation, "params": params}})


def memory(phase):
    fields = {}
    with open(f"/proc/{proc.pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
    print(f"| {phase} | {fields['RssAnon']:.1f} MB | {fields['RssFile']:.1f} MB | {fields['VmHWM']:.1f} MB |")


rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
print("| after | RSS anon | RSS file | peak RSS |\n|---|---:|---:|---:|")
memory("initialize")
for i in range(1, 201):
    call("cleo_query", "tasks", "show", {"id": f"T{i:03d}"})
memory("200 × tasks.show")
for status in ("pending", "active", "done"):
    call("cleo_query", "tasks", "list", {"status": [status], "limit": 50})
    call("cleo_query", "tasks", "list", {"status": [status], "limit": 50, "sort": "updated", "order": "desc"})
memory("6 × tasks.list")
for word in ("cache", "config", "database", "parser", "token"):
    call("cleo_query", "tasks", "find", {"query": word})
memory("5 × tasks.find")
call("cleo_query", "tasks", "next", {})
memory("tasks.next")
for i in range(adds):
    call("cleo_mutate", "tasks", "add", {"title": f"Memory probe task {i}"})
memory(f"{adds} × tasks.add")
proc.stdin.close()
proc.wait()
