export {
  type AgentCall,
  type AgentRef,
  agentRef,
  type CallEnvelope,
  type CallOptions,
  type CallResult,
  callAgent,
  parseAgentRef,
  type TypedAgentCall,
} from './call.ts';
export { type AgentHostClient, type ClientOptions, createClient } from './client.ts';
export { AgentHostError, type ErrorCode, type ErrorEnvelope } from './errors.ts';
export { contentTypeOf, type FileInput } from './files.ts';
export type { components, JsonValue, operations, paths } from './generated/openapi.ts';
export { cursorPages, offsetPages } from './paginate.ts';
export type { RetryOptions } from './retry.ts';
export type { FollowedEvent, FollowOptions, Run, RunEvent, WaitOptions } from './runs.ts';
export type { StreamEvent } from './stream.ts';
export { DEFAULT_WEBHOOK_TOLERANCE_SECONDS, verifyWebhook, WEBHOOK_SIGNATURE_HEADER } from './webhooks.ts';
