#!/usr/bin/env python3
"""Whole-process cost of `ct`: `ct --version` and `ct show T001` on a project of N tasks, against
the floor of the `sqlite3` CLI reading the same row from the same database, interleaved run by run
(so that load on the machine moves all of them alike). With --baseline, another `ct` (an older
build) runs in the same loop.

Usage: bench/process_start.py --ct build/release/ct [--baseline OTHER/ct] [--tasks 10000] [--runs 200]
Prints a Markdown table: median and p95 in ms, and the median as a multiple of the floor.
(results: docs/performance.md, "Performance round 3")"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("--ct", required=True)
parser.add_argument("--baseline")
parser.add_argument("--tasks", type=int, default=10000)
parser.add_argument("--runs", type=int, default=200)
args = parser.parse_args()

home = tempfile.mkdtemp(prefix="cleo-start-home-")
project = tempfile.mkdtemp(prefix="cleo-start-")
env = dict(os.environ, HOME=home)
for name in ("CLEO_TEST_MODE", "CLEO_DATABASE_URL"):
    env.pop(name, None)

# The project, filled through one `ct mcp` (one process, tasks.add after tasks.add).
subprocess.run([args.ct, "--project", project, "init"], stdout=subprocess.DEVNULL, check=True, env=env)
server = subprocess.Popen([args.ct, "mcp", "--project", project], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, env=env)
def send(message):
    server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()
send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
      "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
server.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
for i in range(args.tasks):
    send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
          "params": {"name": "cleo_mutate", "arguments": {"domain": "tasks", "operation": "add",
                                                          "params": {"title": f"Task number {i} about caching"}}}})
    server.stdout.readline()
server.stdin.close()
server.wait()

database = os.path.join(project, ".cleo", "tasks.db")
cases = {"sqlite3 (floor)": ["sqlite3", database, "SELECT id, title, status FROM tasks WHERE id = 'T001'"]}
for label, ct in (("ct", args.ct), ("baseline ct", args.baseline)):
    if ct:
        cases[f"{label} show"] = [ct, "--project", project, "show", "T001"]
        cases[f"{label} --version"] = [ct, "--version"]
times = {name: [] for name in cases}
for _ in range(args.runs):
    for name, command in cases.items():
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
        times[name].append((time.perf_counter() - started) * 1000)
floor = statistics.median(times["sqlite3 (floor)"])
print(f"{args.tasks} tasks, {args.runs} interleaved runs")
print("| process | median ms | p95 ms | × floor |")
print("|---|---:|---:|---:|")
for name, samples in times.items():
    samples.sort()
    median = statistics.median(samples)
    print(f"| {name} | {median:.2f} | {samples[int(len(samples) * 0.95)]:.2f} | {median / floor:.2f}× |")
shutil.rmtree(project, ignore_errors=True)
shutil.rmtree(home, ignore_errors=True)
