import * as z from 'zod';

/** A whole-number query parameter within [min, max] (query values arrive as strings). */
export const intParam = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
