import { newRequestId } from '../shared/request-ids.ts';

/**
 * The request id the platform reports (`req_<uuid>`): the local server's own, or API Gateway's
 * (a bare UUID, which the access log and API Gateway's own answers carry) with the same prefix, so a
 * client sees one shape on both deployments and an operator finds the id in the access log.
 */
export function platformRequestId(gatewayId: string | undefined): string {
  if (!gatewayId) return newRequestId();
  return gatewayId.startsWith('req_') ? gatewayId : `req_${gatewayId}`;
}
