/*
 * The manifest's defaults and platform limits, and the names a manifest may not reuse (the
 * built-in tools, the injected service-key secret).
 */

export const BUILT_IN_TOOLS = ['bash', 'read_file', 'write_file', 'list_files', 'submit_result'] as const;

export const DEFAULT_TIMEOUT_SECONDS = 300;
export const MAX_TIMEOUT_SECONDS = 300;
/**
 * A run's own limit (manifest run_timeout_seconds): a run is not a request, so the spec's 300 s cap
 * of timeout_seconds is not its; the caller's tier and the deployment bound it further.
 */
export const MAX_RUN_TIMEOUT_SECONDS = 3600;
export const DEFAULT_MAX_TURNS = 25;
export const MAX_TURNS_LIMIT = 50;
export const MAX_HOPS_LIMIT = 10;
export const MAX_TIMEOUT_MS = MAX_TIMEOUT_SECONDS * 1000;
export const DEFAULT_PER_CALL_DOWNSTREAM_CAP = 50;
export const MAX_PRICE_CREDITS = 10_000;
/** Injected automatically into agents with dependencies; a manifest must not list it. */
export const SERVICE_KEY_SECRET = 'PLATFORM_SERVICE_KEY';
