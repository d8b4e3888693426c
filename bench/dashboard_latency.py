#!/usr/bin/env python3
"""How long a change takes to reach the dashboard: a `ct add` in another process commits, and the
time from its exit to the `change` event on an open /events stream of `ct serve` is measured,
30 times.  Usage: bench/dashboard_latency.py build/release/ct   (results: docs/performance.md)"""
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ct = sys.argv[1]
d = tempfile.mkdtemp(prefix="cleo-dash-bench-")
srv = subprocess.Popen([ct, "serve", "--project", d, "--port", "0"], stdout=subprocess.PIPE, text=True)
port = None
for line in srv.stdout:
    m = re.search(r"127\.0\.0\.1:(\d+)/mcp", line)
    if m: port = int(m.group(1)); break
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
buf = b""
while b"event: hello" not in buf: buf += s.recv(4096)
lat = []
for i in range(30):
    time.sleep(0.1)
    subprocess.run([ct, "--project", d, "add", f"task {i}"], stdout=subprocess.DEVNULL, check=True)
    t0 = time.monotonic()
    buf = b""
    while b"event: change" not in buf: buf += s.recv(4096)
    lat.append((time.monotonic() - t0) * 1000)
srv.terminate()
srv.wait()
shutil.rmtree(d, ignore_errors=True)
lat.sort()
print(f"commit (ct exited) -> change event: median {statistics.median(lat):.0f} ms, p95 {lat[int(len(lat)*0.95)-1]:.0f} ms, max {lat[-1]:.0f} ms over {len(lat)}")
