import type { OperationId, ResourceModule, RouteDef } from '../functions/platform/routes.ts';

/**
 * The REST API's resources and methods, from the route table (docs/http.md, "How AWS does the
 * same"). A path whose routes, its own and every one below it, all belong to one module is one
 * resource with an `ANY` method to that module's function, and, when routes lie below it, a greedy
 * `{proxy+}` child with another: the function matches the request again (edge/route-matcher.ts)
 * and answers its routes, 405 with `Allow`, the preflight or 404 as the edge function would. A path
 * shared by several modules keeps a method per route, to its module's function, and an `ANY` to
 * the `edge` function for every other method. The root is shared.
 *
 * Why: one method per route and an `ANY` on every resource made 222 of the stateless stack's
 * resources (CloudFormation allows 500 a stack, and the stack held 469 with every option on);
 * this tree makes about 106 (issue 58, point 4). The resources that remain keep their paths, so
 * their logical ids do not change and an existing deployment updates in place (a resource moved or
 * renamed would be created beside the old one first, and API Gateway refuses two resources of one
 * path). What it changes: a path deeper than a one-module subtree's routes reaches that module's
 * function, which answers 404 with the rate-limit headers, where API Gateway's own 404 answered
 * before.
 */

/** One method of the API: on `path`, for `method` (or ANY), integrated with `target`'s function. */
export interface ApiMethod {
  path: string;
  method: string;
  target: ResourceModule;
  /** The route it serves alone (its method and path are that route's), for its operation name. */
  operationId?: OperationId;
}

/** A greedy path parameter: every segment from here on (API Gateway's `{proxy+}`). */
export const GREEDY_SEGMENT = '{proxy+}';

interface Node {
  children: Map<string, Node>;
  /** The modules of this path's routes and of every route below it. */
  modules: Set<ResourceModule>;
  routes: [OperationId, RouteDef][];
}

const newNode = (): Node => ({ children: new Map(), modules: new Set(), routes: [] });

export function apiMethods(routes: readonly [OperationId, RouteDef][]): ApiMethod[] {
  const root = newNode();
  for (const entry of routes) {
    const [, route] = entry;
    let node = root;
    node.modules.add(route.module);
    for (const segment of route.path.split('/').filter(Boolean)) {
      let child = node.children.get(segment);
      if (!child) {
        child = newNode();
        node.children.set(segment, child);
      }
      child.modules.add(route.module);
      node = child;
    }
    node.routes.push(entry);
  }
  const out: ApiMethod[] = [];
  const visit = (node: Node, path: string, isRoot: boolean) => {
    const [only] = node.modules;
    if (!isRoot && only && node.modules.size === 1) {
      out.push({ path, method: 'ANY', target: only });
      if (node.children.size > 0)
        out.push({ path: `${path}/${GREEDY_SEGMENT}`, method: 'ANY', target: only });
      return;
    }
    for (const [operationId, route] of node.routes) {
      out.push({ path, method: route.method, target: route.module, operationId });
    }
    out.push({ path, method: 'ANY', target: 'edge' });
    for (const [segment, child] of node.children)
      visit(child, `${path === '/' ? '' : path}/${segment}`, false);
  };
  visit(root, '/', true);
  return out;
}
