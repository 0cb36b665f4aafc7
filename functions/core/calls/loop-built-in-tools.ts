/**
 * The managed loop's built-in tools, run in the loop's sandbox session: bash, read_file,
 * write_file, list_files, and submit_result, whose call ends the loop with its arguments.
 */
import type { LlmTool } from '../../ports/llm-gateway.ts';
import { SandboxPathError } from '../../ports/sandbox.ts';
import { redactSecrets } from '../../shared/redact-secrets.ts';
import { execForModel, type LoopState, log, record, refusal, shorten } from './loop-state.ts';

/** The tool whose call ends the loop with its arguments as the result. */
export const SUBMIT_TOOL = 'submit_result';
/** Characters of a file read_file returns; write_file's content limit. */
const MAX_READ_CHARS = 64_000;
const MAX_WRITE_BYTES = 1024 * 1024;
/** Paths list_files returns. */
const MAX_LISTED = 500;

/** A session file operation's failure, in words safe for the model (no host paths). */
function fileError(err: unknown, path: string, verb: string): Error {
  const e = err as NodeJS.ErrnoException;
  if (err instanceof SandboxPathError) return new Error(err.message);
  const why =
    e?.code === 'ENOENT'
      ? 'it does not exist'
      : e?.code === 'EISDIR'
        ? 'it is a directory'
        : e?.code === 'EACCES' || e?.code === 'EPERM'
          ? 'permission denied'
          : e?.code
            ? e.code
            : 'an unexpected error';
  return new Error(`Could not ${verb} ${JSON.stringify(path)}: ${why}`);
}

function stringArg(
  state: LoopState,
  tool: string,
  args: unknown,
  name: string,
  required: boolean,
): string | undefined {
  const v = record(args)[name];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string')
    throw refusal(
      state,
      `${tool} → invalid arguments (${name} is not a string)`,
      `The argument ${name} must be a string`,
    );
  return v;
}

/** write_file: a text file of at most MAX_WRITE_BYTES, written in the working directory. */
function writeFileTool(state: LoopState): LlmTool {
  return {
    name: 'write_file',
    description:
      'Writes a text file (creating directories, replacing an existing file); the path is relative to the working directory.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
    execute: async (args) => {
      const path = stringArg(state, 'write_file', args, 'path', true)!;
      const content = stringArg(state, 'write_file', args, 'content', true)!;
      const bytes = Buffer.byteLength(content);
      if (bytes > MAX_WRITE_BYTES) {
        throw refusal(
          state,
          `write_file ${JSON.stringify(path)} → refused: ${bytes} bytes`,
          `The content is over ${MAX_WRITE_BYTES} bytes`,
          `write_file → refused: ${bytes} bytes`,
        );
      }
      try {
        await state.session.writeFile(path, content);
      } catch (err) {
        log(state, 'error', 'write_file', JSON.stringify(path), 'refused');
        throw fileError(err, path, 'write');
      }
      log(state, 'info', 'write_file', JSON.stringify(path), `${bytes} bytes`);
      return `Wrote ${bytes} bytes to ${path}`;
    },
  };
}

export function builtInTools(state: LoopState, outputSchema: Record<string, unknown> | undefined): LlmTool[] {
  const { session } = state;
  const submitSchema =
    outputSchema && outputSchema.type === 'object'
      ? outputSchema
      : { type: 'object', description: 'The final result: a JSON object', additionalProperties: true };
  return [
    {
      name: 'bash',
      description:
        'Runs a shell command (/bin/sh -c) in the working directory and returns its exit code, stdout and the tail of stderr. There is no network.',
      inputSchema: {
        type: 'object',
        properties: { command: { type: 'string', description: 'The command line' } },
        required: ['command'],
      },
      execute: async (args) => {
        const command = stringArg(state, 'bash', args, 'command', true)!;
        return execForModel(state, command, 'bash', JSON.stringify(shorten(command, 200)));
      },
    },
    {
      name: 'read_file',
      description: 'Reads a text file; the path is relative to the working directory.',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
      },
      execute: async (args) => {
        const path = stringArg(state, 'read_file', args, 'path', true)!;
        let data: Buffer;
        try {
          data = await session.readFile(path);
        } catch (err) {
          log(state, 'error', 'read_file', JSON.stringify(path), 'refused');
          throw fileError(err, path, 'read');
        }
        log(state, 'info', 'read_file', JSON.stringify(path), `${data.length} bytes`);
        const text = redactSecrets(data.toString('utf8'), state.secrets);
        return text.length > MAX_READ_CHARS
          ? `${text.slice(0, MAX_READ_CHARS)}\n[cut: the file has ${data.length} bytes]`
          : text;
      },
    },
    writeFileTool(state),
    {
      name: 'list_files',
      description:
        'Lists the regular files under a directory (default: the whole working directory), as paths relative to the working directory.',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string', description: 'A directory; omit for the working directory' } },
      },
      execute: async (args) => {
        const path = stringArg(state, 'list_files', args, 'path', false);
        let found: string[];
        try {
          found = await session.listFiles(path || undefined);
        } catch (err) {
          log(state, 'error', 'list_files', JSON.stringify(path ?? ''), 'refused');
          throw fileError(err, path ?? '', 'list');
        }
        log(state, 'info', 'list_files', JSON.stringify(path ?? ''), `${found.length} files`);
        const shown = found.slice(0, MAX_LISTED).join('\n');
        return found.length === 0
          ? '(no files)'
          : found.length > MAX_LISTED
            ? `${shown}\n[${found.length - MAX_LISTED} more not shown]`
            : shown;
      },
    },
    {
      name: SUBMIT_TOOL,
      description:
        'Submits the final result (a JSON object) and ends the task. Call it exactly once, when you are done.',
      inputSchema: submitSchema,
      execute: async (args) => {
        if (args === null || typeof args !== 'object' || Array.isArray(args)) {
          throw refusal(state, 'submit_result → refused: not an object', 'The result must be a JSON object');
        }
        if (state.requireSubCall && (await state.requireSubCall()) === 0) {
          throw refusal(
            state,
            'submit_result → refused: no dependency called yet (strict mode)',
            'Strict orchestration mode: call at least one dependency before submit_result',
          );
        }
        state.submitted = args as Record<string, unknown>;
        log(state, 'info', SUBMIT_TOOL, undefined, `${JSON.stringify(args).length} characters`);
        return 'Result received.';
      },
    },
  ];
}
