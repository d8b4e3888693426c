// Helpers of the fake GitHub's tests: start server.mjs (or replay.mjs) as a person or the C++ tests
// would — a child process that prints {"port":N} — and talk to it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

export const here = dirname(dirname(fileURLToPath(import.meta.url)));

export async function spawnScript(script, args = []) {
  const child = spawn(process.execPath, [join(here, script), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', (l) => { rl.close(); resolve(l); });
    child.once('exit', (code) => reject(new Error(`${script} exited ${code} before listening`)));
  });
  const { port } = JSON.parse(line);
  const url = `http://127.0.0.1:${port}`;
  return {
    port, url, child, line,
    stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGTERM'); }),
  };
}

export function client(url, token = 'tok') {
  const call = async (method, path, body, headers = {}) => {
    const res = await fetch(path.startsWith('http') ? path : url + path, {
      method,
      headers: { accept: 'application/vnd.github+json', ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
  };
  return {
    call,
    get: (p, h) => call('GET', p, undefined, h),
    post: (p, b, h) => call('POST', p, b, h),
    patch: (p, b, h) => call('PATCH', p, b, h),
  };
}

export async function control(url, what, body) {
  const res = await fetch(`${url}/_control/${what}`, body === undefined ? {} : {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

// The Link header's relations: {next: url, last: url, ...}.
export function links(header) {
  const out = {};
  for (const part of (header || '').split(',')) {
    const m = /<([^>]+)>;\s*rel="([^"]+)"/.exec(part);
    if (m) out[m[2]] = m[1];
  }
  return out;
}

// A JSON value's shape: objects by key, arrays by their first item, scalars by type; null is "null".
export function shape(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length ? [shape(value[0])] : [];
  if (typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, shape(value[k])]));
  return typeof value;
}

// Where `ours` lacks a key of `recorded` or has another type for it ("path: recorded vs ours");
// null matches any type on either side (a field empty in one recording is not a type change), and
// keys only we send are newer fields of GitHub's (the recordings are from 2017–2022).
export function shapeDiff(recorded, ours, where = '$', out = []) {
  if (recorded === 'null' || ours === 'null') return out;
  if (Array.isArray(recorded)) {
    if (!Array.isArray(ours)) out.push(`${where}: array vs ${JSON.stringify(ours)}`);
    else if (recorded.length && ours.length) shapeDiff(recorded[0], ours[0], `${where}[]`, out);
    return out;
  }
  if (typeof recorded === 'object') {
    if (typeof ours !== 'object' || Array.isArray(ours)) { out.push(`${where}: object vs ${JSON.stringify(ours)}`); return out; }
    for (const k of Object.keys(recorded)) {
      if (!(k in ours)) out.push(`${where}.${k}: missing`);
      else shapeDiff(recorded[k], ours[k], `${where}.${k}`, out);
    }
    return out;
  }
  if (recorded !== ours) out.push(`${where}: ${recorded} vs ${ours}`);
  return out;
}
