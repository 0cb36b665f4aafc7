import * as z from 'zod';
import { cursorParam, intParam } from '../../shared/query-params.ts';

/**
 * One shape for every log the platform serves (an agent version's execution logs, an always-on
 * service's app logs): the same line fields, severities, filters and paging, so one client reads
 * both. Decisions in docs/logs.md.
 */
export const LOG_LEVELS = ['info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Whether `level` is at least `min` (a `level` filter keeps that severity and the ones above it). */
export function atLeast(level: LogLevel, min: LogLevel | undefined): boolean {
  return min === undefined || LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(min);
}

/** A stored or read level as one of LOG_LEVELS (anything unknown reads as info). */
export function asLogLevel(value: unknown): LogLevel {
  return (LOG_LEVELS as readonly unknown[]).includes(value) ? (value as LogLevel) : 'info';
}

export const LOG_LIMIT_MAX = 5000;

export const logsQuery = z.strictObject({
  since: z.iso.datetime({ offset: true }).optional().describe('Only lines at or after this time (ISO 8601)'),
  until: z.iso.datetime({ offset: true }).optional().describe('Only lines at or before this time (ISO 8601)'),
  level: z
    .enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`)
    .optional()
    .describe('Lowest severity to return: warn returns warn and error lines'),
  limit: intParam(1, LOG_LIMIT_MAX).default(100).describe(`Page size, 1-${LOG_LIMIT_MAX}, default 100`),
  cursor: cursorParam(),
});
export type LogsQuery = z.infer<typeof logsQuery>;

export const logLineSchema = z.object({
  timestamp: z.string().describe('When the line was written (ISO 8601, UTC)'),
  level: z.enum(LOG_LEVELS),
  message: z.string().describe('The line, with secret values redacted'),
  request_id: z.string().nullable().describe('The call the line belongs to; null for a service’s own output'),
});
export type LogLine = z.infer<typeof logLineSchema>;

export const logPageSchema = z.object({
  logs: z.array(logLineSchema).describe('Newest first'),
  next_cursor: z
    .string()
    .nullable()
    .describe('Pass as cursor for the next (older) page; null on the last page'),
});
export type LogPage = z.infer<typeof logPageSchema>;
