#!/usr/bin/env python3
"""Start to the `initialize` reply: spawn `ct mcp` on a fresh project, send initialize, read the reply;
the same for `cat` (the floor: a process that echoes the request). 40 runs each, median and p90.
Usage: bench/start_latency.py build/release/ct   (results: docs/performance.md)"""
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ct = sys.argv[1]
d = tempfile.mkdtemp(prefix="cleo-start-")
subprocess.run([ct, "--project", d, "init"], stdout=subprocess.DEVNULL, check=True)
init = json.dumps({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}) + "\n"
def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdin.write(init.encode())
    p.stdin.flush()
    p.stdout.readline()
    t = (time.perf_counter() - t0) * 1000
    p.stdin.close()
    p.wait()
    return t
for name, cmd in [("cat (floor)", ["cat"]), ("ct mcp", [ct, "mcp", "--project", d])]:
    xs = sorted(run(cmd) for _ in range(40))
    print(f"{name}: median {statistics.median(xs):.2f} ms, p90 {xs[int(len(xs)*0.9)]:.2f} ms")
shutil.rmtree(d, ignore_errors=True)
