/**
 * A JSON-lines logger. Callers pass structured fields; request bodies, headers and secret values
 * are never passed in. `redact` strips anything that looks like an agenthost API key as a second
 * line of defence.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
/** API keys (ahk_), run credentials (ahr_) and run webhooks' signing secrets (whsec_). */
const API_KEY_PATTERN = /(ah[kr]_|whsec_)[A-Za-z0-9_-]{8,}/g;

export function redact(text: string): string {
  return text.replace(API_KEY_PATTERN, '$1[REDACTED]');
}

export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Logger {
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields });
    write(redact(line));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}
