/** Writes docs/cli.md from the CLI's own help (functions/cli/cli-reference.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { cliReference } from '../functions/cli/cli-reference.ts';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
writeFileSync(new URL('../docs/cli.md', import.meta.url), cliReference(version));
process.stdout.write('wrote docs/cli.md\n');
