import type { AnyOperation, Operations } from '../edge/operations.ts';
import { createPlatformApp } from '../edge/platform-app.ts';
import type { Deps } from '../platform/deps.ts';
import type { OperationId, ResourceModule } from '../platform/routes.ts';
import { lambdaStreamShell, type StreamedApiHandler } from './lambda-stream-shell.ts';

/**
 * The Lambda handler of a resource module whose method's integration streams (the call route and
 * POST /mcp, so a streamed call is sent as it runs and may outlast API Gateway's buffered limit):
 * the platform's app with that module's operations, in the streamed Lambda shell. Its own file, so the other
 * handlers do not bundle the streamed shell.
 */
export function createStreamedModuleHandler<M extends ResourceModule>(
  _module: M,
  operations: Operations<M>,
  getDeps: () => Promise<Deps>,
): StreamedApiHandler {
  return lambdaStreamShell(
    createPlatformApp(getDeps, operations as Partial<Record<OperationId, AnyOperation>>, {}),
    // A frozen function exports nothing: the call's spans go before the invocation ends.
    async () => (await getDeps()).tracer.flush(),
  );
}
