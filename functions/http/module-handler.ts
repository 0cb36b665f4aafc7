import type { CredentialChecks } from '../edge/keyless-bodies.ts';
import type { AnyOperation, Operations } from '../edge/operations.ts';
import { createPlatformApp } from '../edge/platform-app.ts';
import type { Deps } from '../platform/deps.ts';
import type { OperationId, ResourceModule } from '../platform/routes.ts';
import { type ApiHandler, lambdaShell } from './lambda-shell.ts';

/**
 * The Lambda handler of one API resource module (functions/http/<module>.ts): the platform's app
 * with that module's operations, in the buffered Lambda shell.
 */
export function createModuleHandler<M extends ResourceModule>(
  _module: M,
  operations: Operations<M>,
  getDeps: () => Promise<Deps>,
  credentialChecks: CredentialChecks = {},
): ApiHandler {
  return lambdaShell(
    createPlatformApp(getDeps, operations as Partial<Record<OperationId, AnyOperation>>, {
      credentialChecks,
    }),
    // A frozen function exports nothing: the invocation's spans go before it ends.
    async () => (await getDeps()).tracer.flush(),
  );
}
