/**
 * The REST API the API Gateway emulator (api-gateway-emulator.ts) serves, read from the
 * synthesized template: its routes (the resource tree's paths, methods and Lambda proxy
 * integrations with their timeouts, most specific first), binary media types, gateway response
 * templates, stage name and the stage's throttle.
 */
import type { TemplateResolver } from './cloudformation-template.ts';

/** API Gateway's default integration timeout (29 s). */
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

export interface Route {
  path: string;
  segments: string[];
  method: string;
  functionArn: string;
  timeoutMs: number;
  /**
   * Response streaming (`ResponseTransferMode: STREAM`, the function invoked with
   * InvokeWithResponseStream): the answer is the function's prelude and body as it writes them.
   */
  streaming: boolean;
}

export interface GatewayResponse {
  statusCode?: string;
  headers: Record<string, string>;
  template?: string;
}

/** A token bucket: the stage's steady rate and burst. */
export class Throttle {
  private tokens: number;
  private last = Date.now();
  private readonly rate: number;
  private readonly burst: number;
  constructor(rate: number, burst: number) {
    this.rate = rate;
    this.burst = burst;
    this.tokens = burst;
  }
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The REST API of a template, as the emulator serves it. */
export interface RestApiDefinition {
  apiId: string;
  binaryTypes: string[];
  routes: Route[];
  responses: Map<string, GatewayResponse>;
  stageName: string;
  throttle: Throttle | undefined;
}

/** The template's one REST API (more than one, or none, is an error). */
export function restApiFromTemplate(resolver: TemplateResolver): RestApiDefinition {
  const [api, ...others] = resolver.resourcesOfType('AWS::ApiGateway::RestApi');
  if (!api || others.length > 0) throw new Error('The emulator serves exactly one REST API');
  const stack = api.stack;
  const r = (v: unknown, where: string) => resolver.resolve(stack, v, where);
  const apiId = resolver.physicalName(stack, api.logicalId);
  const binaryTypes = ((api.resource.Properties?.BinaryMediaTypes as string[] | undefined) ?? []).map((t) =>
    t.toLowerCase(),
  );

  const routes: Route[] = [];
  const responses = new Map<string, GatewayResponse>();

  // Paths of the resource tree: each resource's part under its parent's path.
  const resources = resolver.resourcesOfType('AWS::ApiGateway::Resource');
  const pathOf = new Map<string, string>();
  const resolvePath = (logicalId: string): string => {
    const known = pathOf.get(logicalId);
    if (known !== undefined) return known;
    const res = resources.find((x) => x.logicalId === logicalId);
    if (!res) throw new Error(`API resource ${logicalId} is not in the template`);
    const parent = res.resource.Properties?.ParentId as Record<string, unknown>;
    const parentPath = 'Ref' in parent ? resolvePath(String(parent.Ref)) : '';
    const path = `${parentPath}/${String(res.resource.Properties?.PathPart)}`;
    pathOf.set(logicalId, path);
    return path;
  };
  for (const m of resolver.resourcesOfType('AWS::ApiGateway::Method')) {
    const p = m.resource.Properties ?? {};
    const target = p.ResourceId as Record<string, unknown>;
    const path = 'Ref' in target ? resolvePath(String(target.Ref)) : '/';
    const integration = p.Integration as {
      Type: string;
      Uri: unknown;
      TimeoutInMillis?: number;
      ResponseTransferMode?: string;
    };
    if (integration?.Type !== 'AWS_PROXY') {
      throw new Error(`${m.logicalId}: only Lambda proxy integrations are emulated`);
    }
    const uri = String(r(integration.Uri, `${m.logicalId}.Integration.Uri`));
    const functionArn = /\/functions\/(.+)\/(?:response-streaming-)?invocations$/.exec(uri)?.[1];
    if (!functionArn) throw new Error(`${m.logicalId}: not a Lambda integration URI: ${uri}`);
    routes.push({
      path,
      segments: path.split('/').filter(Boolean),
      method: String(p.HttpMethod),
      functionArn,
      timeoutMs: integration.TimeoutInMillis ?? DEFAULT_INTEGRATION_TIMEOUT_MS,
      streaming: integration.ResponseTransferMode === 'STREAM',
    });
  }
  // API Gateway picks the most specific match: literal segments before {parameters}.
  routes.sort((a, b) => specificity(b) - specificity(a));

  for (const g of resolver.resourcesOfType('AWS::ApiGateway::GatewayResponse')) {
    const p = r(g.resource.Properties ?? {}, g.logicalId) as {
      ResponseType: string;
      StatusCode?: string;
      ResponseParameters?: Record<string, string>;
      ResponseTemplates?: Record<string, string>;
    };
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(p.ResponseParameters ?? {})) {
      const name = /^gatewayresponse\.header\.(.+)$/.exec(k)?.[1];
      // Static values are quoted in the template: 'value'.
      if (name) headers[name] = v.replace(/^'(.*)'$/s, '$1');
    }
    responses.set(p.ResponseType, {
      ...(p.StatusCode ? { statusCode: p.StatusCode } : {}),
      headers,
      ...(p.ResponseTemplates?.['application/json']
        ? { template: p.ResponseTemplates['application/json'] }
        : {}),
    });
  }

  const [stage] = resolver.resourcesOfType('AWS::ApiGateway::Stage');
  const stageName = String(stage?.resource.Properties?.StageName ?? 'prod');
  const settings = (
    stage?.resource.Properties?.MethodSettings as Record<string, unknown>[] | undefined
  )?.find((s) => s.ResourcePath === '/*' && s.HttpMethod === '*');
  const throttle =
    settings?.ThrottlingRateLimit !== undefined
      ? new Throttle(Number(settings.ThrottlingRateLimit), Number(settings.ThrottlingBurstLimit ?? 1))
      : undefined;
  return { apiId, binaryTypes, routes, responses, stageName, throttle };
}

function specificity(route: Route): number {
  // Literal segments weigh more than parameters at each position, earlier positions most; a
  // greedy `{proxy+}` least of all, so that a path any other resource matches goes there.
  const greedy = route.segments.at(-1)?.endsWith('+}') ? 0.5 : 0;
  return route.segments.reduce((sum, seg, i) => sum + (seg.startsWith('{') ? 0 : 2 ** (20 - i)), 0) - greedy;
}

/**
 * As API Gateway: the most specific resource whose path matches (`routes` are sorted so, by
 * restApiFromTemplate), then its method, or its ANY method for any other; a resource without
 * either answers as an unknown path. The emulator's and the CDK tests' matching.
 */
export function matchRoute(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | undefined {
  const parts = path.split('/').filter(Boolean);
  for (const route of routes) {
    // A greedy last segment (`{proxy+}`) takes one segment or more, slashes and all.
    const greedy = /^\{(\w+)\+\}$/.exec(route.segments.at(-1) ?? '')?.[1];
    const fixed = greedy ? route.segments.length - 1 : route.segments.length;
    if (greedy ? parts.length <= fixed : parts.length !== fixed) continue;
    const params: Record<string, string> = {};
    let ok = true;
    route.segments.slice(0, fixed).forEach((seg, i) => {
      const part = parts[i] as string;
      const name = /^\{(\w+)\}$/.exec(seg)?.[1];
      if (name) params[name] = safeDecode(part);
      else if (seg !== part) ok = false;
    });
    if (!ok) continue;
    if (greedy) params[greedy] = parts.slice(fixed).map(safeDecode).join('/');
    const onResource = routes.filter((r) => r.path === route.path);
    const chosen = onResource.find((r) => r.method === method) ?? onResource.find((r) => r.method === 'ANY');
    return chosen ? { route: chosen, params } : undefined;
  }
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
