import type { SharedRead } from '../adapters/local/file-bundle-store.ts';
import { DOWNLOADS_PATH } from '../adapters/local/signed-downloads.ts';
import { errorEnvelope } from '../edge/error-answer.ts';
import type { BundleStore } from '../ports/bundle-store.ts';
import { PlatformError } from '../shared/errors.ts';
import { newRequestId } from '../shared/request-ids.ts';

/** A bundle store that serves its own shared links (the file store; S3 serves the AWS ones). */
interface ServesSharedLinks {
  readShared(pathname: string, query: URLSearchParams): Promise<SharedRead>;
}

const servesLinks = (bundles: BundleStore): bundles is BundleStore & ServesSharedLinks =>
  typeof (bundles as Partial<ServesSharedLinks>).readShared === 'function';

/**
 * The local platform's answer to a shared link (BundleStore.shareUrl: a large output's download
 * URL), what S3 answers for a presigned GET in AWS: the bytes, or 403 once the link has expired
 * or when it was altered. Outside the route table, as S3 is outside the API: no API key (the
 * signature is the credential) and no envelope around the bytes. Undefined for any other request.
 */
export async function sharedDownload(bundles: BundleStore, request: Request): Promise<Response | undefined> {
  // Most requests are not downloads: the URL is parsed only for those that may be.
  if (!request.url.includes(DOWNLOADS_PATH) || !servesLinks(bundles)) return undefined;
  const url = new URL(request.url);
  if (!url.pathname.startsWith(DOWNLOADS_PATH)) return undefined;
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
  const read = await bundles.readShared(url.pathname, url.searchParams);
  if (read.status === 200) {
    return new Response(new Uint8Array(read.body), {
      status: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'private, no-store' },
    });
  }
  const error = new PlatformError(read.status === 403 ? 'FORBIDDEN' : 'NOT_FOUND', read.message);
  return new Response(JSON.stringify(errorEnvelope(error, newRequestId())), {
    status: read.status,
    headers: { 'Content-Type': 'application/json' },
  });
}
