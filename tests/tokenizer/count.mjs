#!/usr/bin/env node
// Counts o200k_base tokens of UTF-8 text.
//   node count.mjs < FILE            one integer: the tokens of standard input
//   node count.mjs FILE...           one integer per file, one per line, in order
//   node count.mjs --json FILE...    {"FILE": n, ...}; "-" names standard input
//   node count.mjs --lines < FILE    [n, ...]: the tokens of each line of standard input
//   add --bytes to --json or --lines for {"tokens": n, "bytes": b} instead of n
// Exit status: 0, or 2 for bad usage, 3 when the tokenizer is not installed (run.sh --install).
import { readFileSync } from 'node:fs';
import { countBytes, countTokens } from './o200k.mjs';

const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith('--')));
const files = args.filter((a) => !a.startsWith('--'));
for (const flag of flags) {
  if (!['--json', '--lines', '--bytes'].includes(flag)) {
    process.stderr.write(`count.mjs: unknown option ${flag} (use --json, --lines, --bytes)\n`);
    process.exit(2);
  }
}
if (flags.has('--lines') && files.length > 0) {
  process.stderr.write('count.mjs: --lines reads standard input only\n');
  process.exit(2);
}

const read = (name) => readFileSync(name === '-' ? 0 : name, 'utf8');
const measure = (text) => (flags.has('--bytes') ? { tokens: countTokens(text), bytes: countBytes(text) } : countTokens(text));

if (flags.has('--lines')) {
  const lines = read('-').split('\n');
  if (lines.at(-1) === '') lines.pop();
  process.stdout.write(JSON.stringify(lines.map(measure)) + '\n');
} else if (flags.has('--json')) {
  const out = {};
  for (const name of files.length ? files : ['-']) out[name] = measure(read(name));
  process.stdout.write(JSON.stringify(out) + '\n');
} else if (files.length === 0) {
  process.stdout.write(`${countTokens(read('-'))}\n`);
} else {
  for (const name of files) process.stdout.write(`${countTokens(read(name))}\n`);
}
