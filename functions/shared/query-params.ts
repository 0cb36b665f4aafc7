import * as z from 'zod';

/** A whole-number query parameter within [min, max] (query values arrive as strings). */
export const intParam = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** The `cursor` of a newest-first list (usage logs, agent and service logs): a previous page's next_cursor. */
export const cursorParam = () =>
  z
    .string()
    .min(1, 'must not be empty')
    .max(1000)
    .optional()
    .describe('next_cursor of the previous page, to read the next (older) page');
