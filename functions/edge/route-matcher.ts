import { type OperationId, type RouteDef, routeList } from '../platform/routes.ts';

/*
 * The route table as the edge matches it: a request's method and path to its route and path
 * parameters, or to the path's template alone when no route of that method has it (405 and the
 * CORS preflight). Every shell's requests are matched here, API Gateway's included: a Lambda is
 * handed its API resource's requests, and matching them again keeps one behaviour on both
 * deployments (a HEAD, for one, goes to the API's ANY method there and is 405 here too).
 */

interface CompiledRoute {
  id: OperationId;
  route: RouteDef;
  pattern: RegExp;
  names: string[];
  /** The path's first segment when it is literal (`tasks` of /tasks/{id}); undefined for a parameter. */
  first: string | undefined;
}

export interface RouteMatch {
  id: OperationId;
  route: RouteDef;
  params: Record<string, string>;
}

function compile(id: OperationId, route: RouteDef): CompiledRoute {
  const names: string[] = [];
  const source = route.path
    .split('/')
    .map((seg) => {
      const m = /^\{(\w+)\}$/.exec(seg);
      if (!m?.[1]) return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1]);
      return '([^/]+)';
    })
    .join('/');
  const firstSegment = route.path.split('/')[1] ?? '';
  return {
    id,
    route,
    pattern: new RegExp(`^${source}$`),
    names,
    first: /^\{\w+\}$/.test(firstSegment) ? undefined : firstSegment,
  };
}

/** A path's first segment as sent (`tasks` of /tasks/t1), which a literal first segment matches exactly. */
function firstSegment(pathname: string): string {
  const end = pathname.indexOf('/', 1);
  return pathname.slice(1, end < 0 ? undefined : end);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export class RouteMatcher {
  private readonly compiled: CompiledRoute[];
  /**
   * The routes a path can match, by its first segment, in the order of `compiled`: those with that
   * literal first segment or a parameter there. An agent call (/{org}/{agent}/…), matched last of
   * 69, then tries a handful of patterns instead of every one.
   */
  private readonly byFirstSegment = new Map<string, CompiledRoute[]>();
  /** The routes whose first segment is a parameter: all a path with any other first segment can match. */
  private readonly parameterFirst: CompiledRoute[];

  constructor(routes: readonly [OperationId, RouteDef][] = routeList) {
    // Literal segments before parameters, so /tasks/x never shadows a literal sibling route.
    this.compiled = routes
      .map(([id, r]) => compile(id, r))
      .sort((a, b) => a.names.length - b.names.length || b.route.path.length - a.route.path.length);
    this.parameterFirst = this.compiled.filter((c) => c.first === undefined);
    for (const c of this.compiled)
      if (c.first !== undefined && !this.byFirstSegment.has(c.first))
        this.byFirstSegment.set(
          c.first,
          this.compiled.filter((d) => d.first === c.first || d.first === undefined),
        );
  }

  /**
   * The route of `method` on `pathname` (its parameters decoded), and the template of the first
   * route whose path matches whatever its method (undefined when no route has the path).
   */
  match(method: string, pathname: string): { match?: RouteMatch; template?: string } {
    let template: string | undefined;
    const candidates = this.byFirstSegment.get(firstSegment(pathname)) ?? this.parameterFirst;
    for (const c of candidates) {
      const m = c.pattern.exec(pathname);
      if (!m) continue;
      template ??= c.route.path;
      if (c.route.method !== method) continue;
      const params: Record<string, string> = {};
      c.names.forEach((name, i) => {
        params[name] = safeDecode(m[i + 1] ?? '');
      });
      return { match: { id: c.id, route: c.route, params }, template };
    }
    return template === undefined ? {} : { template };
  }

  /** The methods of the routes whose template is `template`. */
  methodsOf(template: string): string[] {
    return [...new Set(this.compiled.filter((c) => c.route.path === template).map((c) => c.route.method))];
  }
}
