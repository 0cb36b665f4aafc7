// How long call records are kept: apart from the call-record entity, so that the usage request
// schemas (in every handler's route table) can name it without bundling the entity's zod schema.

/** Call records are kept this long (then the store's TTL removes them). */
export const CALL_RECORD_RETENTION_DAYS = 90;
