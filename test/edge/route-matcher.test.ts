import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RouteMatcher } from '../../functions/edge/route-matcher.ts';
import { type OperationId, type RouteDef, routes } from '../../functions/platform/routes.ts';

/*
 * The route table as the edge matches it (functions/edge/route-matcher.ts): a method and path to
 * a route and its decoded parameters, or to the path's template alone (405, preflight), or to
 * nothing (404); a literal segment before a parameter, whatever the table's order.
 */

const matcher = new RouteMatcher();

/** A route of the table at another path (a table of a test's own). */
const at = (id: OperationId, path: string): [OperationId, RouteDef] => [id, { ...routes[id], path }];

describe('route matcher (edge unit)', () => {
  it('matches a method and path to its route, with each parameter decoded', () => {
    assert.deepEqual(matcher.match('GET', '/tasks/t%201'), {
      match: { id: 'getTask', route: routes.getTask, params: { task_id: 't 1' } },
      template: '/tasks/{task_id}',
    });
    assert.equal(matcher.match('POST', '/tasks').match?.id, 'createTask');
    assert.equal(matcher.match('GET', '/tasks').match?.id, 'listTasks');
    assert.deepEqual(matcher.match('POST', '/tasks/t1/complete').match?.params, { task_id: 't1' });
  });

  it('keeps a parameter that does not decode as it was sent', () => {
    assert.deepEqual(matcher.match('GET', '/tasks/%E0%A4%A').match?.params, { task_id: '%E0%A4%A' });
  });

  it('gives a known path asked with another method its template and the template’s methods', () => {
    assert.deepEqual(matcher.match('PUT', '/tasks/t1'), { template: '/tasks/{task_id}' });
    assert.deepEqual(matcher.methodsOf('/tasks/{task_id}').sort(), ['DELETE', 'GET', 'PATCH']);
  });

  it('gives nothing for a path no route has: a parameter is one whole segment, a literal exact', () => {
    for (const path of ['/nowhere', '/tasks/', '/tasks/a/b', '/openapiXjson', '/TASKS', '/a/b/c/d/e'])
      assert.deepEqual(matcher.match('GET', path), {}, path);
    assert.equal(matcher.match('GET', '/openapi.json').match?.id, 'getOpenApi');
    // A literal's `.` is a dot, also where no first segment narrows the routes tried.
    const dotted = new RouteMatcher([at('getOpenApi', '/{org}/doc.json')]);
    assert.deepEqual(dotted.match('GET', '/acme/docXjson'), {});
    assert.equal(dotted.match('GET', '/acme/doc.json').match?.id, 'getOpenApi');
  });

  it('matches the agent call under any first segment, a literal route’s too, when only it has the path', () => {
    for (const org of ['acme', 'tasks', 'health'])
      assert.deepEqual(matcher.match('POST', `/${org}/summarize/v1/run`).match?.params, {
        org,
        agent: 'summarize',
        version: 'v1',
        endpoint: 'run',
      });
  });

  it('prefers a literal segment to a parameter, whatever the table’s order', () => {
    const table = [at('getTask', '/things/{id}'), at('listTasks', '/things/mine')];
    for (const order of [table, [...table].reverse()]) {
      const small = new RouteMatcher(order);
      assert.equal(small.match('GET', '/things/mine').match?.id, 'listTasks');
      assert.deepEqual(small.match('GET', '/things/yours').match?.params, { id: 'yours' });
    }
  });
});
