// The command line both interop scripts take: `--ct /path/to/ct` (or --ct=PATH), -h for usage.
import path from 'node:path';

/** The absolute path of `ct` from argv; prints usage and exits on anything else. */
export function ctPathFromArgs(program, argv) {
  const usage = `usage: node ${program}.mjs --ct /path/to/ct`;
  let ct;
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--ct') ct = argv[++i];
    else if (argv[i].startsWith('--ct=')) ct = argv[i].slice(5);
    else if (argv[i] === '-h' || argv[i] === '--help') {
      console.log(usage);
      process.exit(0);
    } else {
      console.error(`${program}: unknown argument '${argv[i]}'\n${usage}`);
      process.exit(2);
    }
  }
  if (!ct) {
    console.error(`${program}: --ct /path/to/ct is required`);
    process.exit(2);
  }
  return path.resolve(ct);
}
