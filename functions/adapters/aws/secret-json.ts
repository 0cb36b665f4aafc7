import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * The string value of one Secrets Manager secret of the stack's own (Stripe's keys, the model
 * providers' keys), read by its ARN with GetSecretValue. Only the functions granted that secret
 * call this (lib/constructs/billing-jobs.ts, llm-provider-keys.ts); others leave it out of their
 * bundle (lib/lambda-bundling.ts).
 */
export async function readSecretString(secretArn: string, region: string | undefined): Promise<string> {
  const out = await new SecretsManagerClient({ region }).send(
    new GetSecretValueCommand({ SecretId: secretArn }),
  );
  return out.SecretString ?? '{}';
}
