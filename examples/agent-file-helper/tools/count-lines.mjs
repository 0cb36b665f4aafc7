// A custom tool of the file-helper agent: prints {"path", "lines"} for the file named by argv[2].
import { readFileSync } from 'node:fs';

const path = process.argv[2];
if (!path || path.startsWith('/') || path.split('/').includes('..')) {
  process.stderr.write('count-lines: give a relative path inside the working directory\n');
  process.exit(2);
}
const text = readFileSync(path, 'utf8');
process.stdout.write(JSON.stringify({ path, lines: text === '' ? 0 : text.split('\n').length }));
