// Run by `npm ci` (postinstall): @octokit/openapi ships every GitHub flavour's description, plain and
// dereferenced (about 390 MB); the fake uses api.github.com.json alone (13 MB), so the others go.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, 'node_modules/@octokit/openapi/generated');
let removed = 0;
if (!existsSync(dir)) process.exit(0);   // `npm install --package-lock-only`: nothing installed
for (const name of readdirSync(dir)) {
  if (name.endsWith('.json') && name !== 'api.github.com.json') {
    rmSync(join(dir, name));
    removed++;
  }
}
process.stderr.write(`prune.mjs: kept api.github.com.json, removed ${removed} other descriptions\n`);
