// What server.mjs and replay.mjs share as programs: whether a module is the one node runs, and
// staying up until SIGTERM/SIGINT or until stdin — a pipe, socket or terminal; not /dev/null or a
// file, which end at once — closes, so that a parent that dies takes the server along.
import { fstatSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function isMain(metaUrl) {
  try {
    return realpathSync(fileURLToPath(metaUrl)) === realpathSync(process.argv[1]);
  } catch {
    return false;
  }
}

function stdinWatchable() {
  try {
    const st = fstatSync(0);
    return st.isFIFO() || st.isSocket() || !!process.stdin.isTTY;
  } catch {
    return false;
  }
}

// Prints {"port":N} (the one line a parent reads) and exits 0 once stopped.
export function serveUntilStopped(port, close) {
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  const stop = () => { close().then(() => process.exit(0)); setTimeout(() => process.exit(0), 1000).unref(); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (stdinWatchable()) {
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.resume();
  }
}
