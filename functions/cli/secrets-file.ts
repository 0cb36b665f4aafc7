/**
 * `--secrets-file`: secrets for a local run as dotenv-style lines, so they never go on the command
 * line. `KEY=VALUE`, optionally `export KEY=VALUE`; a value may be wrapped in single or double
 * quotes (double quotes understand \n, \" and \\); blank lines and lines starting with # are
 * skipped. A line that is none of these is an error naming its number, never its text (it may
 * hold a secret).
 */
import { readFile } from 'node:fs/promises';
import { CliError, EXIT } from './cli-errors.ts';

const LINE = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

export function parseSecretsFile(text: string, path: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m)
      throw new CliError(
        `${path} line ${i + 1} is not KEY=VALUE`,
        EXIT.usage,
        'write one NAME=value per line (# starts a comment)',
      );
    const [, name = '', rest = ''] = m;
    values[name] = unquote(rest, path, i + 1);
  }
  return values;
}

function unquote(value: string, path: string, lineNo: number): string {
  const quote = value[0];
  if (quote === '"' || quote === "'") {
    const end = value.lastIndexOf(quote);
    if (end === 0) throw new CliError(`${path} line ${lineNo} has an unclosed ${quote}`, EXIT.usage);
    const after = value.slice(end + 1).trim();
    if (after !== '' && !after.startsWith('#'))
      throw new CliError(`${path} line ${lineNo} has text after its closing ${quote}`, EXIT.usage);
    const inner = value.slice(1, end);
    return quote === "'" ? inner : inner.replace(/\\([n"\\])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
  }
  // Unquoted: a # after whitespace starts a comment, as in dotenv.
  return value.replace(/\s+#.*$/, '').trim();
}

export async function readSecretsFile(path: string): Promise<Record<string, string>> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${path}: ${err.code ?? err.message}`, EXIT.usage);
  });
  return parseSecretsFile(text, path);
}
