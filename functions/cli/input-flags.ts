/**
 * A call's input from `--input JSON` or `--input-file PATH` (`-` for stdin), as `agenthost call`
 * reads it; one of the two at most. Returns undefined when neither is given, so a command can pick
 * its own default.
 */
import { readFile } from 'node:fs/promises';
import type { CliContext } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';
import { parseJsonOption } from './json-option.ts';

export async function readInputFlags(
  ctx: CliContext,
  flags: { input?: string; inputFile?: string },
): Promise<Record<string, unknown> | undefined> {
  if (flags.input !== undefined && flags.inputFile !== undefined)
    throw new CliError('give the input with --input or --input-file, not both', EXIT.usage);
  if (flags.input !== undefined) return parseJsonOption('--input', flags.input);
  if (flags.inputFile === undefined) return undefined;
  const path = flags.inputFile;
  const text =
    path === '-'
      ? await readStream(ctx.io.stdin)
      : await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
          throw new CliError(`cannot read ${path}: ${err.code ?? err.message}`, EXIT.usage);
        });
  return parseJsonOption('--input-file', text);
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}
