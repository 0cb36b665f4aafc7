import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SharedRead } from '../adapters/local/file-bundle-store.ts';
import { DOWNLOADS_PATH } from '../adapters/local/signed-downloads.ts';
import type { BundleStore } from '../ports/bundle-store.ts';
import { PlatformError } from '../shared/errors.ts';
import { errorEnvelope } from './error-answer.ts';

/** A bundle store that serves its own shared links (the file store; S3 serves the AWS ones). */
interface ServesSharedLinks {
  readShared(pathname: string, query: URLSearchParams): Promise<SharedRead>;
}

const servesLinks = (bundles: BundleStore): bundles is BundleStore & ServesSharedLinks =>
  typeof (bundles as Partial<ServesSharedLinks>).readShared === 'function';

/**
 * The local server's answer to a shared link (BundleStore.shareUrl: a large output's download
 * URL), what S3 answers for a presigned GET in AWS: the bytes, or 403 once the link has expired
 * or when it was altered. Outside the route table, as S3 is outside the API: no API key (the
 * signature is the credential) and no envelope around the bytes. Returns false for any other path.
 */
export async function serveSharedDownload(
  bundles: BundleStore,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const method = (req.method ?? 'GET').toUpperCase();
  if (!url.pathname.startsWith(DOWNLOADS_PATH) || !servesLinks(bundles)) return false;
  if (method !== 'GET' && method !== 'HEAD') return false;
  req.resume();
  const read = await bundles.readShared(url.pathname, url.searchParams);
  if (read.status === 200) {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Length': read.body.length,
      'Cache-Control': 'private, no-store',
    });
    res.end(method === 'HEAD' ? undefined : read.body);
    return true;
  }
  const error = new PlatformError(read.status === 403 ? 'FORBIDDEN' : 'NOT_FOUND', read.message);
  const body = Buffer.from(JSON.stringify(errorEnvelope(error, `req_${randomUUID()}`)));
  res.writeHead(read.status, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(method === 'HEAD' ? undefined : body);
  return true;
}
