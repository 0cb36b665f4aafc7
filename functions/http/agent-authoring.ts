import { forkAgent, patchAgent, publishAgent, uploadBundle } from '../core/agents/authoring.ts';
import type { Operations } from '../edge/operations.ts';
import { lambdaDeps } from '../platform/lambda-deps.ts';
import { createModuleHandler } from './module-handler.ts';

/**
 * The author-facing writes: publish, patch, upload, fork. A module of its own because they need
 * the manifest validators (ajv, yaml), the archive readers (tar, yauzl) and the S3 client, which
 * the read paths must not carry (docs/performance.md).
 */
export const operations: Operations<'agent-authoring'> = {
  publishAgent: ({ deps, auth, query, body }) =>
    publishAgent(deps, auth, body, {
      workspaceId: query.workspace_id,
      allowNoSecrets: query.allow_no_secrets ?? false,
    }),
  patchAgent: ({ deps, auth, params, body }) => patchAgent(deps, auth, params.id, body),
  uploadBundle: ({ deps, auth, params, body }) => uploadBundle(deps, auth, params.id, body),
  forkAgent: ({ deps, auth, params, body }) => forkAgent(deps, auth, params.id, body),
};

export const handler = createModuleHandler('agent-authoring', operations, lambdaDeps);
