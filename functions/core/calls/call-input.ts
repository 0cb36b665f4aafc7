import busboy from 'busboy';
import {
  invalidInput,
  jsonDepthExceeded,
  MAX_JSON_DEPTH,
  PlatformError,
  parseJsonBody,
} from '../../platform/errors.ts';
import { CALL_FILE_TYPES, MAX_FILE_BYTES, MAX_FILES } from './call-limits.ts';

export { CALL_FILE_TYPES, MAX_CALL_BODY_BYTES, MAX_FILE_BYTES, MAX_FILES } from './call-limits.ts';

/** Files whose content is text: handed to prompt agents inline. */
export function isTextType(type: string): boolean {
  return type.startsWith('text/') || type === 'application/json' || type === 'application/xml';
}

export interface CallFile {
  original_name: string;
  content_type: string;
  size_bytes: number;
  data: Buffer;
}

export interface CallInput {
  /** The JSON object the agent receives (for multipart: the metadata part's object). */
  input: Record<string, unknown>;
  files: CallFile[];
  /** The multipart metadata part, when one was sent. */
  metadata: Record<string, unknown> | undefined;
}

/**
 * Parses a call's body: a JSON object (`application/json`), or multipart/form-data with one part
 * `file` or repeated `files[]`, plus an optional `metadata` part holding a JSON object.
 */
export async function parseCallBody(body: Buffer, contentType: string | undefined): Promise<CallInput> {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'multipart/form-data') return parseMultipart(body, contentType as string);
  if (body.length > 0 && type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) {
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
  const text = body.toString('utf8');
  let parsed: unknown = {};
  if (text.trim() !== '') parsed = parseJsonBody(text);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidInput([{ field: 'body', message: 'must be a JSON object' }]);
  }
  return { input: parsed as Record<string, unknown>, files: [], metadata: undefined };
}

function parseMultipart(body: Buffer, contentType: string): Promise<CallInput> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        limits: { fileSize: MAX_FILE_BYTES, files: MAX_FILES, fields: 10, fieldSize: 1024 * 1024 },
      });
    } catch (err) {
      reject(
        invalidInput([
          {
            field: 'header.content-type',
            message: `is not a usable multipart type (${(err as Error).message})`,
          },
        ]),
      );
      return;
    }
    const files: CallFile[] = [];
    let metadata: Record<string, unknown> | undefined;
    let failure: PlatformError | undefined;
    const fail = (err: PlatformError) => {
      failure ??= err;
    };
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      // A body that ends mid-file errors the file stream too ("Unexpected end of form"); without a
      // listener that error is unhandled and stops the process. bb's own 'error' reports it.
      stream.on('error', (err: Error) =>
        fail(invalidInput([{ field: 'body', message: `is not valid multipart/form-data (${err.message})` }])),
      );
      stream.on('limit', () =>
        fail(
          new PlatformError(
            'DOCUMENT_TOO_LARGE',
            `${info.filename || name} is over the 25 MB limit for a file`,
            {
              fields: [{ field: `body.${name}`, message: `must be at most ${MAX_FILE_BYTES} bytes` }],
            },
          ),
        ),
      );
      stream.on('end', () => {
        if (name !== 'file' && name !== 'files[]') {
          fail(
            invalidInput([{ field: `body.${name}`, message: 'files go in a part named file or files[]' }]),
          );
          return;
        }
        const type = info.mimeType.toLowerCase();
        if (!(CALL_FILE_TYPES as readonly string[]).includes(type)) {
          fail(
            new PlatformError(
              'UNSUPPORTED_TYPE',
              `${info.filename || name} has the unsupported type ${type}`,
              {
                fields: [
                  {
                    field: `body.${name}`,
                    message: `must be one of the supported file types (docs/calls.md), got ${type}`,
                  },
                ],
              },
            ),
          );
          return;
        }
        const data = Buffer.concat(chunks);
        files.push({
          original_name: info.filename || 'file',
          content_type: type,
          size_bytes: data.length,
          data,
        });
      });
    });
    bb.on('field', (name, value) => {
      if (name !== 'metadata') {
        fail(
          invalidInput([{ field: `body.${name}`, message: 'is not a known part (file, files[], metadata)' }]),
        );
        return;
      }
      if (jsonDepthExceeded(value, MAX_JSON_DEPTH) !== undefined) {
        fail(
          invalidInput([
            { field: 'body.metadata', message: `is nested deeper than ${MAX_JSON_DEPTH} levels` },
          ]),
        );
        return;
      }
      try {
        const parsed = JSON.parse(value) as unknown;
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
          throw new Error('not an object');
        metadata = parsed as Record<string, unknown>;
      } catch {
        fail(invalidInput([{ field: 'body.metadata', message: 'must be a JSON object' }]));
      }
    });
    bb.on('filesLimit', () =>
      fail(invalidInput([{ field: 'body', message: `at most ${MAX_FILES} files per call` }])),
    );
    // A parser error settles the call at once: 'close' may not follow it.
    bb.on('error', (err: Error) => {
      fail(invalidInput([{ field: 'body', message: `is not valid multipart/form-data (${err.message})` }]));
      reject(failure);
    });
    bb.on('close', () => {
      if (failure) reject(failure);
      else if (files.length === 0)
        reject(invalidInput([{ field: 'body.file', message: 'a multipart call needs a file part' }]));
      else resolve({ input: metadata ?? {}, files, metadata });
    });
    bb.end(body);
  });
}
