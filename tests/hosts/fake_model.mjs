// A stand-in for a model's API on loopback, for hosts that are run offline (check_hooks.sh): an
// OpenAI-compatible chat endpoint that answers every request with "ok" as a stream, and appends each
// request it was sent to LOG.jsonl, so that the check reads what the host would have sent a model.
//   node fake_model.mjs PORT_FILE LOG.jsonl      (writes the port it listens on to PORT_FILE)
import { createServer } from 'node:http';
import { appendFileSync, writeFileSync } from 'node:fs';

const [portFile, logFile] = process.argv.slice(2);
if (!portFile || !logFile) {
  process.stderr.write('usage: node fake_model.mjs PORT_FILE LOG.jsonl\n');
  process.exit(2);
}
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    let parsed = null;
    try {
      parsed = JSON.parse(body);
    } catch {
      // not JSON: recorded as text
    }
    appendFileSync(logFile, JSON.stringify({ method: req.method, url: req.url, body: parsed ?? body }) + '\n');
    const event = (o) => `data: ${JSON.stringify(o)}\n\n`;
    const base = { id: 'fake', object: 'chat.completion.chunk', created: 0, model: parsed?.model ?? 'fake' };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(event({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }] }));
    res.write(event({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
                      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    res.end('data: [DONE]\n\n');
  });
});
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
