/**
 * Reads a secret (an API key, a secret's value) the way a CLI must: never from an argument, where
 * it would land in the shell's history and the process list. On a terminal it prompts with the
 * input masked (@inquirer/password, drawn on stderr); otherwise it reads stdin to its end, so
 * `printf %s "$TOKEN" | agenthost secrets set NAME` works in scripts.
 */

import type { CliContext } from './cli-context.ts';
import { CliError, EXIT } from './cli-errors.ts';

export async function readSecretInput(ctx: CliContext, prompt: string): Promise<string> {
  const stdin = ctx.io.stdin;
  let value: string;
  if (stdin.isTTY) {
    const { default: password } = await import('@inquirer/password');
    try {
      value = await password(
        { message: prompt, mask: '*' },
        { input: stdin, output: ctx.io.stderr as NodeJS.WritableStream },
      );
    } catch (err) {
      // Ctrl-C at the prompt: the shell's convention for an interrupted command.
      if ((err as Error).name === 'ExitPromptError') throw new CliError('cancelled', 130);
      throw err;
    }
  } else {
    ctx.note(`reading the ${prompt.toLowerCase()} from stdin …`);
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    // One trailing newline is the shell's (echo), not the secret's.
    value = Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  if (value === '')
    throw new CliError(
      `${prompt}: nothing was given`,
      EXIT.usage,
      'pipe the value on stdin, or run on a terminal to be prompted',
    );
  return value;
}
