import type { OperationId, ResourceModule, RouteDef } from '../functions/platform/routes.ts';

/**
 * The REST API's resources and methods, from the route table (docs/http.md, "How AWS does the
 * same"). A path whose routes, its own and every one below it, all belong to one module is one
 * resource with an `ANY` method to that module's function, and, when routes lie below it, a greedy
 * `{proxy+}` child with another (where the path has a variable child, that child instead, each
 * of its children collapsed the same way): the function matches the request again (edge/route-matcher.ts)
 * and answers its routes, 405 with `Allow`, the preflight or 404 as the edge function would. A path
 * shared by several modules keeps a method per route, to its module's function, and an `ANY` to
 * the `edge` function for every other method. The root is shared.
 *
 * Why: one method per route and an `ANY` on every resource would make 222 of the stateless stack's
 * resources (CloudFormation allows 500 a stack); this tree makes far fewer (docs/http.md). The
 * resources that remain keep their paths, so their logical ids do not change, and a greedy child
 * is added only where no variable child was:
 * CloudFormation creates an update's new resources before it deletes the old ones, and API Gateway
 * refuses two resources of one path, or two variable children of one resource, so an existing
 * deployment updates in place. What it changes: a path deeper than a one-module subtree's routes
 * reaches that module's function, which answers 404 with the rate-limit headers, where API
 * Gateway's own 404 answered before.
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
      // A greedy child never goes beside a variable one, even one this tree drops: CloudFormation
      // creates an update's new resources before it deletes the old, and API Gateway refuses a
      // second variable child of one resource. Such a path keeps its children, each collapsed.
      if ([...node.children.keys()].some((segment) => segment.startsWith('{'))) {
        for (const [segment, child] of node.children) visit(child, `${path}/${segment}`, false);
      } else if (node.children.size > 0) {
        out.push({ path: `${path}/${GREEDY_SEGMENT}`, method: 'ANY', target: only });
      }
      return;
    }
    for (const [operationId, route] of node.routes) {
      out.push({ path, method: route.method, target: route.module, operationId });
    }
    out.push({ path, method: 'ANY', target: 'edge' });
    for (const [segment, child] of node.children) {
      if (reachedThroughVariable(node, segment, child)) continue;
      visit(child, `${path === '/' ? '' : path}/${segment}`, false);
    }
  };
  visit(root, '/', true);
  return out;
}

/**
 * Whether a literal child needs no resources of its own: its routes, and every one below it, are of
 * the one module whose subtree its variable sibling is, and that sibling's resources match every
 * path of the child's routes (a path of as many segments, or a greedy child), so API Gateway sends
 * them to the same function, which matches them again (`/runs/{run_id}` under `/{org}/{agent}`, to
 * the calls function). Dropping resources is an update API Gateway takes in place (unlike adding
 * a second variable child), and the stack's resources stay under their cap (docs/http.md).
 */
function reachedThroughVariable(parent: Node, segment: string, child: Node): boolean {
  if (segment.startsWith('{')) return false;
  const variable = [...parent.children].find(([s]) => s.startsWith('{'))?.[1];
  const [module] = child.modules;
  if (!variable || child.modules.size !== 1 || variable.modules.size !== 1 || !variable.modules.has(module!))
    return false;
  return depth(child) <= reach(variable);
}

/** How many segments the deepest route of a subtree has, counting its own. */
function depth(node: Node): number {
  return 1 + Math.max(0, ...[...node.children.values()].map(depth));
}

/** How many segments of any value a one-module subtree's resources match (Infinity with a greedy child). */
function reach(node: Node): number {
  const variable = [...node.children].find(([s]) => s.startsWith('{'))?.[1];
  if (variable) return 1 + reach(variable);
  return node.children.size > 0 ? Number.POSITIVE_INFINITY : 1;
}
