/**
 * Sends the platform's spans to X-Ray on AWS (`cdk deploy -c tracing=xray`; docs/deploy.md, "Traces
 * to X-Ray"): the OTLP/HTTP protobuf batch the OpenTelemetry exporter serialized, POSTed to X-Ray's
 * own OTLP endpoint (https://xray.<region>.amazonaws.com/v1/traces) and signed with SigV4 (service
 * `xray`) with the function's role credentials. No ADOT collector layer: a layer adds its
 * extension's start to every cold start and a collector process beside the handler, while this is
 * the same spans and the same exporter as the local OTLP export (otlp-export.ts), only the last
 * hop signed. The endpoint takes W3C trace ids, so the spans keep theirs.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import type { ExportResponse, IExporterTransport } from '@opentelemetry/otlp-exporter-base';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import { NodeSha256 } from '../aws/node-sha256.ts';

export interface XrayTransportOptions {
  /**
   * Who signs. @default the AWS SDK's default chain: in Lambda, the role credentials in its
   * environment (refreshed by the chain when they expire)
   */
  credentials?: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
  /** How the request is sent (tests). @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** The statuses OTLP/HTTP says to retry (the OpenTelemetry exporters' own list). */
const RETRYABLE = new Set([429, 502, 503, 504]);

/**
 * The exporter's transport to X-Ray's OTLP endpoint at `url`. It throws nothing once built: every
 * outcome is an ExportResponse, and no error it reports carries the credentials or the spans.
 */
export function xrayTransport(
  url: string,
  region: string | undefined,
  options: XrayTransportOptions = {},
): IExporterTransport {
  if (!region) {
    throw new Error(
      'Exporting traces to X-Ray needs the AWS region (AWS_REGION, which Lambda sets): none is configured',
    );
  }
  const target = new URL(url);
  const signer = new SignatureV4({
    service: 'xray',
    region,
    credentials: options.credentials ?? defaultProvider(),
    sha256: NodeSha256,
  });
  const send = options.fetch ?? fetch;

  return {
    async send(data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
      const signal = AbortSignal.timeout(timeoutMillis);
      let headers: Record<string, string>;
      try {
        const signed = await signer.sign(
          new HttpRequest({
            method: 'POST',
            protocol: target.protocol,
            hostname: target.hostname,
            ...(target.port ? { port: Number(target.port) } : {}),
            path: target.pathname,
            headers: { host: target.host, 'content-type': 'application/x-protobuf' },
            body: data,
          }),
        );
        // fetch sets Host itself, from the same URL: the value that was signed.
        const { host: _host, ...rest } = signed.headers;
        headers = rest;
      } catch (err) {
        // No credentials in reach: retrying the same batch would not find any either.
        return {
          status: 'failure',
          error: new Error('Could not sign the X-Ray span export', { cause: err }),
        };
      }
      let response: Response;
      try {
        response = await send(target, { method: 'POST', headers, body: data, signal });
      } catch (err) {
        // Refused, reset, unreachable or timed out: the next attempt may get through.
        return {
          status: 'retryable',
          error: new Error('X-Ray span export did not get an answer', { cause: err }),
        };
      }
      if (response.ok) {
        // The body is an ExportTraceServiceResponse (partial success, if any), which the exporter reads.
        try {
          return { status: 'success', data: new Uint8Array(await response.arrayBuffer()) };
        } catch {
          return { status: 'success' };
        }
      }
      await response.body?.cancel().catch(() => undefined);
      if (RETRYABLE.has(response.status)) {
        const retryInMillis = retryAfterMillis(response.headers.get('retry-after'));
        return {
          status: 'retryable',
          error: statusError(response),
          ...(retryInMillis === undefined ? {} : { retryInMillis }),
        };
      }
      return { status: 'failure', error: statusError(response) };
    },
    // Nothing to release: fetch keeps no connection of this transport's own.
    shutdown(): void {},
  };
}

/**
 * The status and AWS's error type (x-amzn-ErrorType, e.g. AccessDeniedException), never the body:
 * enough to tell a missing grant or Transaction Search from a bad batch.
 */
function statusError(response: Response): Error {
  const type = response.headers.get('x-amzn-errortype')?.split(':')[0];
  return new Error(
    `X-Ray's OTLP endpoint answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${type ? ` (${type})` : ''}`,
  );
}

/** Retry-After in milliseconds: delay-seconds or an HTTP date (RFC 9110), if it is either. */
export function retryAfterMillis(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
