/**
 * Pieces of the emulated deployment (functions/emulator/) that tests start on their own, outside
 * `npm run start:emulated`: the S3 emulator on a loopback port, and a stack holding only the
 * services' HTTPS listener.
 */
import { join } from 'node:path';
import { freeLoopbackPort } from '../../functions/emulator/dynamodb-local.ts';
import { newEmulatorCredentials, S3Emulator } from '../../functions/emulator/s3-emulator.ts';

/** The key pair the S3 emulators of this test process answer (new for each process, as for each deployment). */
export const S3_EMULATOR_CREDENTIALS = newEmulatorCredentials();

/** s3rver under `<dir>/s3` with `bucket`, on a free loopback port; close with `s3.close()`. */
export async function startEmulatedS3(
  dir: string,
  bucket: string,
  kmsKeys?: string[],
): Promise<{ s3: S3Emulator; endpoint: string }> {
  const s3 = new S3Emulator({
    directory: join(dir, 's3'),
    host: '127.0.0.1',
    port: await freeLoopbackPort(),
    buckets: [bucket],
    credentials: S3_EMULATOR_CREDENTIALS,
    ...(kmsKeys ? { kmsKeys } : {}),
  });
  return { s3, endpoint: await s3.listen() };
}

/**
 * A stack with only the services' HTTPS listener (lib/constructs/service-hosting.ts), whose
 * default action answers hosts no service rule matches with `response`.
 */
export function listenerOnlyStack(
  stackName: string,
  response: { StatusCode: string; ContentType: string; MessageBody: string },
) {
  return {
    stackName,
    template: {
      Resources: {
        Listener: {
          Type: 'AWS::ElasticLoadBalancingV2::Listener',
          Properties: {
            DefaultActions: [{ Type: 'fixed-response', FixedResponseConfig: response }],
          },
        },
      },
    },
  };
}
