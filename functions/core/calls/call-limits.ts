import { EVENT_BODY_BYTES, MAX_BINARY_BODY_BYTES } from '../../shared/byte-limits.ts';

/* Call body limits and file types, without the multipart parser (the route table imports them). */

/**
 * A whole call body, on both deployments, is held to what AWS carries to a function: 6,225,920
 * bytes as the event carries it (JSON with its escaping, multipart as base64). Raw bytes never
 * count more than that, so this is also the raw limit; the local server and the handler count the
 * carried size (edge/event-body-budget.ts). docs/decisions.md "Request sizes" says why not 25 MB.
 */
export const MAX_CALL_BODY_BYTES = EVENT_BODY_BYTES;
/** A file travels in a multipart body, so it can be at most the largest binary body (4,669,440 bytes). */
export const MAX_FILE_BYTES = MAX_BINARY_BODY_BYTES;
/** At most this many files in one call. */
export const MAX_FILES = 20;

/**
 * The file types a call may carry (anything else is 415 UNSUPPORTED_TYPE): documents, data and
 * images that agents commonly process. docs/calls.md lists them.
 */
export const CALL_FILE_TYPES = [
  'application/pdf',
  'application/json',
  'application/xml',
  'application/zip',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'text/plain',
  'text/markdown',
  'text/csv',
  'text/html',
  'text/xml',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'audio/mpeg',
  'audio/wav',
] as const;
