/**
 * `--input <json>` / `--input-file <path|->`: the JSON object a command sends as an agent's input
 * (call, schedules create/update/trigger). One reader, so every command takes input the same way.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { CliContext } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';
import { parseJsonOption } from './json-option.ts';

export interface InputFlags {
  input?: string;
  inputFile?: string;
}

/** Adds `--input` and `--input-file` to a command; `what` names the input in their help. */
export const inputOptions = (command: Command, what: string): Command =>
  command
    .option('-i, --input <json>', `${what}, a JSON object`)
    .option('--input-file <path>', `read ${what} from a JSON file (- for stdin)`);

/** The object given with --input or --input-file (- reads stdin); undefined when neither is given. */
export async function readInputOption(
  ctx: CliContext,
  flags: InputFlags,
): Promise<Record<string, unknown> | undefined> {
  if (flags.input !== undefined && flags.inputFile !== undefined)
    throw new CliError('give the input with --input or --input-file, not both', EXIT.usage);
  if (flags.input !== undefined) return parseJsonOption('--input', flags.input);
  if (flags.inputFile === undefined) return undefined;
  const text =
    flags.inputFile === '-'
      ? await readStdin(ctx.io.stdin)
      : await readFile(flags.inputFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
          throw new CliError(`cannot read ${flags.inputFile}: ${err.code ?? err.message}`, EXIT.usage);
        });
  return parseJsonOption('--input-file', text);
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}
