import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ENV } from '../../functions/shared/env-names.ts';
import { acknowledge } from '../acknowledge.ts';
import type { PlatformFunction } from './platform-function.ts';

/**
 * The model providers' API keys for the functions that run agents (calls, schedule-runs, the
 * schedule-fire job): one Secrets Manager secret holding a JSON object under the environment's
 * names (ANTHROPIC_API_KEY, OPENAI_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, and optionally the
 * *_BASE_URL ones), created empty; the operator puts the keys in after the first deploy
 * (docs/deploy.md). The functions get the secret's ARN, never a key, in their environment
 * (functions/platform/deps.ts reads it on the first model call).
 */
export class LlmProviderKeys extends Construct {
  readonly secret: secretsmanager.Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.secret = new secretsmanager.Secret(this, 'Secret', {
      description: `agenthost: model provider API keys, JSON such as {"${ENV.anthropicApiKey}": "...", "${ENV.openaiApiKey}": "..."} (docs/deploy.md)`,
      secretObjectValue: {},
    });
    acknowledge(this.secret, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'The model providers issue and revoke these keys in their own consoles; the operator puts new ones here (docs/deploy.md). A Secrets Manager rotation function cannot create provider keys.',
      },
    ]);
  }

  /** A function that calls models: the secret's ARN in PLATFORM_LLM_SECRET_ARN, and read access to it alone. */
  grantRead(fn: PlatformFunction): void {
    this.secret.grantRead(fn.role);
    fn.function.addEnvironment(ENV.llmSecretArn, this.secret.secretArn);
  }
}
