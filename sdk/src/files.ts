// The Node modules (node:fs, node:path) are imported only where a file on disk or a
// Node stream is read: the client also runs in browsers (the dashboard), whose bundle must not
// carry them, and a browser only ever hands Blobs, Files and bytes.

/**
 * A file for a multipart agent call: a path on disk, bytes, a Blob/File, or a Node stream. Bytes
 * and streams need a name (the agent sees it as original_name); the content type defaults from the
 * name's extension (the platform refuses types the agent does not take, 415).
 */
export type FileInput =
  | string
  | Blob
  | {
      name: string;
      data: Uint8Array | Blob | NodeJS.ReadableStream | ReadableStream<Uint8Array>;
      type?: string;
    }
  | { path: string; name?: string; type?: string };

const TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.xml': 'application/xml',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

export const contentTypeOf = (name: string): string =>
  TYPES[extensionOf(name).toLowerCase()] ?? 'application/octet-stream';

/** What node:path's extname answers (`.txt`, '' for `.bashrc` or `name`), without node:path. */
function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot) : '';
}

const isNodeStream = (v: unknown): v is NodeJS.ReadableStream =>
  typeof (v as NodeJS.ReadableStream | null)?.pipe === 'function';

/** A file as a named Blob for FormData. Files on disk are read lazily (fs.openAsBlob), not loaded. */
export async function toNamedBlob(file: FileInput): Promise<{ blob: Blob; name: string }> {
  if (typeof file === 'string') return fromPath(file);
  if (file instanceof Blob) {
    const name = (file as File).name || 'file';
    return { blob: file.type ? file : retype(file, contentTypeOf(name)), name };
  }
  if ('path' in file) return fromPath(file.path, file.name, file.type);
  const type = file.type ?? contentTypeOf(file.name);
  const { data } = file;
  if (data instanceof Blob) return { blob: retype(data, file.type ?? (data.type || type)), name: file.name };
  if (data instanceof Uint8Array)
    return { blob: new Blob([data as Uint8Array<ArrayBuffer>], { type }), name: file.name };
  // A stream's length is unknown until it ends, and multipart needs each part whole: read it.
  if (!isNodeStream(data)) {
    // A web stream, read as Response reads it (in Node and in browsers alike).
    const bytes = await new Response(data as ReadableStream<Uint8Array>).arrayBuffer();
    return { blob: new Blob([bytes], { type }), name: file.name };
  }
  const chunks: Uint8Array[] = [];
  // A Node stream in object or text mode yields strings: they are the file's UTF-8 text.
  for await (const chunk of data as AsyncIterable<Uint8Array | string>)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return { blob: new Blob(chunks as Uint8Array<ArrayBuffer>[], { type }), name: file.name };
}

async function fromPath(path: string, givenName?: string, givenType?: string) {
  const [{ openAsBlob }, { basename }] = await Promise.all([import('node:fs'), import('node:path')]);
  const name = givenName ?? basename(path);
  return { blob: await openAsBlob(path, { type: givenType ?? contentTypeOf(name) }), name };
}

const retype = (blob: Blob, type: string) => (blob.type === type ? blob : new Blob([blob], { type }));
