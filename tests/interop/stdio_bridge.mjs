// Streamable HTTP in front of `ct mcp` over stdio, so that the conformance suite — whose `server`
// command drives a URL only — can judge ct's stdio server too. Each HTTP session starts its own
// `ct mcp --project DIR`; messages pass through unchanged both ways: the HTTP side is the official
// SDK's server transport, the stdio side its client transport, and nothing of CLEO is here (a
// reply goes back on the stream of the request it answers, a notification on the session's GET
// stream). The handshake revisions only: 2026-07-28 over stdio is covered by interop.mjs.
//
// Usage: node stdio_bridge.mjs --ct /path/to/ct --project DIR
// Prints "stdio bridge: http://127.0.0.1:PORT/mcp" once it listens; SIGTERM stops it and every child.
import { randomUUID } from 'node:crypto';
import http from 'node:http';

import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

import { ctPathFromArgs } from './args.mjs';

const args = process.argv.slice(2);
const projectAt = args.indexOf('--project');
if (projectAt < 0 || !args[projectAt + 1]) {
  console.error('usage: node stdio_bridge.mjs --ct /path/to/ct --project DIR');
  process.exit(2);
}
const project = args[projectAt + 1];
const ct = ctPathFromArgs('stdio_bridge', args.filter((_, i) => i !== projectAt && i !== projectAt + 1));
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CLEO_')));

const sessions = new Map(); // Mcp-Session-Id → { httpSide, stdioSide }

function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function refuse(response, status, message) {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message } }));
}

/// A new session: a `ct mcp` child wired to a server transport of its own.
async function openSession() {
  const stdioSide = new StdioClientTransport({ command: ct, args: ['mcp', '--project', project], env: childEnv, stderr: 'inherit' });
  const httpSide = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.set(id, { httpSide, stdioSide }),
  });
  httpSide.onmessage = (message) => stdioSide.send(message).catch((error) => console.error(`to ct mcp: ${error.message}`));
  stdioSide.onmessage = (message) => httpSide.send(message).catch((error) => console.error(`to the client: ${error.message}`));
  httpSide.onclose = () => {
    if (httpSide.sessionId) sessions.delete(httpSide.sessionId);
    stdioSide.close().catch(() => {});
  };
  stdioSide.onclose = () => httpSide.close().catch(() => {});
  await stdioSide.start();
  await httpSide.start();
  return httpSide;
}

const server = http.createServer(async (request, response) => {
  try {
    if (new URL(request.url, 'http://bridge').pathname !== '/mcp') return refuse(response, 404, 'Not Found: the endpoint is /mcp');
    let body;
    if (request.method === 'POST') {
      const text = await readBody(request);
      try {
        body = JSON.parse(text);
      } catch {
        return refuse(response, 400, 'Parse error');
      }
    }
    const id = request.headers['mcp-session-id'];
    if (id) {
      const session = sessions.get(id);
      if (!session) return refuse(response, 404, 'Session not found');
      return await session.httpSide.handleRequest(request, response, body);
    }
    const initialize = body && !Array.isArray(body) && body.method === 'initialize';
    if (!initialize) return refuse(response, 400, 'Bad Request: Mcp-Session-Id header is required');
    const httpSide = await openSession();
    return await httpSide.handleRequest(request, response, body);
  } catch (error) {
    console.error(`bridge: ${error.stack ?? error}`);
    if (!response.headersSent) refuse(response, 500, 'Internal error in the bridge');
  }
});

async function stop() {
  for (const { httpSide, stdioSide } of sessions.values()) {
    await httpSide.close().catch(() => {});
    await stdioSide.close().catch(() => {});
  }
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

server.listen(0, '127.0.0.1', () => {
  console.log(`stdio bridge: http://127.0.0.1:${server.address().port}/mcp`);
});
