/**
 * A configuration the platform cannot start with (config.ts names every bad or missing variable
 * in one). Its own module so that whoever only recognizes one (the CLI's error lines) does not
 * load the settings' schema, and zod with it, on every start.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
