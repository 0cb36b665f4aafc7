import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import busboy from 'busboy';
import { bodyTooLarge, invalidInput, PlatformError, parseJsonBody } from '../../shared/errors.ts';
import type { FileTypePolicy } from './accepted-file-types.ts';
import { MAX_CALL_BODY_BYTES, MAX_FILE_BYTES, MAX_FILES } from './call-limits.ts';

export { CALL_FILE_TYPES, MAX_CALL_BODY_BYTES, MAX_FILE_BYTES, MAX_FILES } from './call-limits.ts';

/** Files whose content is text: handed to prompt agents inline. */
export function isTextType(type: string): boolean {
  return type.startsWith('text/') || type === 'application/json' || type === 'application/xml';
}

export interface CallFile {
  original_name: string;
  content_type: string;
  size_bytes: number;
  /** The file's content, in a temporary file (0600) removed by CallInput.cleanup. */
  path: string;
}

export interface CallInput {
  /** The JSON object the agent receives (for multipart: the metadata part's object). */
  input: Record<string, unknown>;
  files: CallFile[];
  /** The multipart metadata part, when one was sent. */
  metadata: Record<string, unknown> | undefined;
  /** Removes the files' temporary directory; call it once the call is over, whatever its outcome. */
  cleanup: () => Promise<void>;
}

const noCleanup = async () => undefined;

/**
 * Parses a call's body: a JSON object (`application/json`), or multipart/form-data with one part
 * `file` or repeated `files[]`, plus an optional `metadata` part holding a JSON object. The body is
 * a stream (the local server's spooled file, or a Lambda event's body) or, for calls the platform
 * makes itself, a Buffer. Multipart files are streamed to temporary files, never held in memory.
 */
export async function parseCallBody(
  body: Buffer | Readable,
  contentType: string | undefined,
  /** The file types the called agent takes (accepted-file-types.ts). */
  types: FileTypePolicy,
): Promise<CallInput> {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'multipart/form-data') {
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    return parseMultipart(source, contentType as string, types);
  }
  // Bytes already (every JSON call body read into memory) are parsed as they are: no stream of them.
  const data = Buffer.isBuffer(body) ? body : await readAll(body, MAX_CALL_BODY_BYTES);
  if (data.length > 0 && type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) {
    throw new PlatformError(
      'UNSUPPORTED_TYPE',
      'A call body must be application/json or multipart/form-data',
      {
        fields: [
          {
            field: 'header.content-type',
            message: `must be application/json or multipart/form-data, got "${type || 'none'}"`,
          },
        ],
      },
    );
  }
  const text = data.toString('utf8');
  let parsed: unknown = {};
  if (text.trim() !== '') parsed = parseJsonBody(text);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidInput([{ field: 'body', message: 'must be a JSON object' }]);
  }
  return { input: parsed as Record<string, unknown>, files: [], metadata: undefined, cleanup: noCleanup };
}

/** A JSON call body, read whole (it is parsed whole anyway); a broken stream is 400. */
async function readAll(source: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      if (size > limit) throw bodyTooLarge(limit);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    throw invalidInput([{ field: 'body', message: `could not be read (${(err as Error).message})` }]);
  }
  return Buffer.concat(chunks);
}

/**
 * Streams a multipart body through busboy; each file part goes to its own temporary file (0600) in
 * a fresh directory, which is removed on any failure (and by `cleanup` after a successful parse).
 */
async function parseMultipart(
  source: Readable,
  contentType: string,
  types: FileTypePolicy,
): Promise<CallInput> {
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: { 'content-type': contentType },
      limits: { fileSize: MAX_FILE_BYTES, files: MAX_FILES, fields: 10, fieldSize: 1024 * 1024 },
    });
  } catch (err) {
    source.destroy();
    throw invalidInput([
      {
        field: 'header.content-type',
        message: `is not a usable multipart type (${(err as Error).message})`,
      },
    ]);
  }
  // Named for this process, so a later start can remove it if the process dies mid-request
  // (functions/edge/temp-files.ts).
  const dir = await mkdtemp(join(tmpdir(), `agenthost-call-${process.pid}-`));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const parsed = await new Promise<Omit<CallInput, 'cleanup'>>((resolve, reject) =>
      streamParts(bb, source, dir, types, resolve, reject),
    );
    return { ...parsed, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Why a file part is refused before it is read (its part's name or its type), if it is. */
function refusedFilePart(
  name: string,
  filename: string | undefined,
  type: string,
  types: FileTypePolicy,
): PlatformError | undefined {
  if (name !== 'file' && name !== 'files[]')
    return invalidInput([{ field: `body.${name}`, message: 'files go in a part named file or files[]' }]);
  if (types.accepts(type)) return undefined;
  return new PlatformError('UNSUPPORTED_TYPE', `${filename || name} has the unsupported type ${type}`, {
    fields: [
      {
        field: `body.${name}`,
        message: `must be ${types.described}, got ${type}`,
      },
    ],
  });
}

function fileTooLarge(name: string, filename: string | undefined): PlatformError {
  return new PlatformError(
    'DOCUMENT_TOO_LARGE',
    `${filename || name} is over the ${MAX_FILE_BYTES}-byte limit for a file`,
    {
      fields: [{ field: `body.${name}`, message: `must be at most ${MAX_FILE_BYTES} bytes` }],
    },
  );
}

function streamParts(
  bb: busboy.Busboy,
  source: Readable,
  dir: string,
  types: FileTypePolicy,
  resolve: (parsed: Omit<CallInput, 'cleanup'>) => void,
  reject: (err: PlatformError) => void,
): void {
  const files: CallFile[] = [];
  const writes: Promise<unknown>[] = [];
  let metadata: Record<string, unknown> | undefined;
  let failure: PlatformError | undefined;
  const fail = (err: PlatformError) => {
    failure ??= err;
  };
  const broken = (err: Error) =>
    invalidInput([{ field: 'body', message: `is not valid multipart/form-data (${err.message})` }]);
  bb.on('file', (name, stream, info) => {
    const type = info.mimeType.toLowerCase();
    const refused = refusedFilePart(name, info.filename, type, types);
    if (refused) fail(refused);
    // A body that ends mid-file errors the file stream too ("Unexpected end of form"); without a
    // listener that error is unhandled and stops the process.
    stream.on('error', (err: Error) => fail(broken(err)));
    stream.on('limit', () => fail(fileTooLarge(name, info.filename)));
    if (failure) {
      stream.resume();
      return;
    }
    const path = join(dir, String(files.length + 1).padStart(2, '0'));
    const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    const file: CallFile = {
      original_name: info.filename || 'file',
      content_type: type,
      size_bytes: 0,
      path,
    };
    files.push(file);
    stream.on('data', (c: Buffer) => {
      file.size_bytes += c.length;
    });
    // A file stream that errors does not end the file it is piped to: destroy it, so `writes` settles.
    stream.on('error', () => out.destroy());
    stream.pipe(out);
    writes.push(
      finished(out).catch((err: Error) =>
        fail(new PlatformError('INTERNAL_ERROR', `could not store an uploaded file (${err.message})`)),
      ),
    );
  });
  bb.on('field', (name, value) => {
    if (name !== 'metadata') {
      fail(
        invalidInput([{ field: `body.${name}`, message: 'is not a known part (file, files[], metadata)' }]),
      );
      return;
    }
    try {
      const parsed = parseJsonBody(value, 'body.metadata');
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        throw invalidInput([{ field: 'body.metadata', message: 'must be a JSON object' }]);
      metadata = parsed as Record<string, unknown>;
    } catch (err) {
      fail(err as PlatformError);
    }
  });
  bb.on('filesLimit', () =>
    fail(invalidInput([{ field: 'body', message: `at most ${MAX_FILES} files per call` }])),
  );
  // A parser or source error settles the call at once: 'close' may not follow it.
  const abort = (err: Error) => {
    fail(broken(err));
    source.unpipe(bb);
    source.destroy();
    void Promise.allSettled(writes).then(() => reject(failure as PlatformError));
  };
  bb.on('error', abort);
  source.on('error', abort);
  bb.on('close', () => {
    void Promise.allSettled(writes).then(() => {
      if (failure) reject(failure);
      else if (files.length === 0)
        reject(invalidInput([{ field: 'body.file', message: 'a multipart call needs a file part' }]));
      else resolve({ input: metadata ?? {}, files, metadata });
    });
  });
  source.pipe(bb);
}
