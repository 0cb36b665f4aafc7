/* Call body limits and file types, without the multipart parser (the route table imports them). */

/** Each uploaded file may be at most this large (spec: the 25 MB of the sample error message). */
export const MAX_FILE_BYTES = 25 * 1024 * 1024;
/** At most this many files in one call. */
export const MAX_FILES = 20;
/** A whole call body (JSON, or multipart with its files) may be at most this large. */
export const MAX_CALL_BODY_BYTES = 100 * 1024 * 1024;

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
