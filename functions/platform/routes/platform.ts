/*
 * Platform routes: the readiness check and this API's OpenAPI description.
 * Spread into the route table in functions/platform/routes.ts, whose order they keep.
 */

import * as z from 'zod';
import { route } from './route-def.ts';

export const platformRoutes = {
  health: route({
    method: 'GET',
    path: '/health',
    module: 'health',
    auth: 'none',
    summary: 'Readiness check',
    description:
      'Answers 200 `{"status":"ok"}` once the platform serves requests; no API key. For load balancers and uptime checks.',
    tag: 'Platform',
    success: { status: 200, schema: z.object({ status: z.literal('ok') }), description: 'Ready' },
  }),
  getOpenApi: route({
    method: 'GET',
    path: '/openapi.json',
    module: 'openapi',
    auth: 'none',
    summary: 'This API’s OpenAPI 3.1 description',
    description:
      'This document, as served: generated from the route table and its schemas (the SDK’s types are generated from it); `servers` names the platform’s public URL. No API key.',
    tag: 'Platform',
    success: { status: 200, schema: z.record(z.string(), z.unknown()), description: 'OpenAPI document' },
    document: true,
  }),
} as const;
