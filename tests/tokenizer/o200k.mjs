// The o200k_base token count (the encoding of GPT-4o and later OpenAI models), from the
// `gpt-tokenizer` package locked in package-lock.json. Text that looks like a special token
// (<|endoftext|>) is counted as the ordinary text it is.
let encode;
try {
  ({ encode } = await import('gpt-tokenizer/encoding/o200k_base'));
} catch (error) {
  process.stderr.write(
    `tests/tokenizer: gpt-tokenizer is not installed (${error.code ?? error.message}); ` +
      'run tests/tokenizer/run.sh --install (npm ci) first\n');
  process.exit(3);
}

const plain = { disallowedSpecial: new Set() };

/** Tokens of `text` in o200k_base. */
export function countTokens(text) {
  return encode(text, plain).length;
}

/** Bytes of `text` in UTF-8. */
export function countBytes(text) {
  return Buffer.byteLength(text, 'utf8');
}
