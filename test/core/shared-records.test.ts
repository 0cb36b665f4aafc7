/**
 * What is kept for items read shared (deep-frozen: ports/store.ts, ReadOptions): an entity's
 * record of such an item is parsed once and shared, frozen (core/entity.ts), and a schema's
 * validator is found by the schema object (core/agents/user-schema.ts); an item or schema that is
 * not frozen is parsed or looked up as before, each reader getting its own record.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { compileInputValidator } from '../../functions/core/agents/user-schema.ts';
import { defineEntity } from '../../functions/core/entity.ts';
import { deepFreeze } from '../../functions/shared/deep-freeze.ts';

const thing = defineEntity({
  name: 'thing',
  keys: {},
  schema: z.object({ id: z.string(), tags: z.array(z.string()), extra: z.record(z.string(), z.number()) }),
  locate: (t: { id: string }) => ({ pk: `THING#${t.id}`, sk: 'THING' }),
});
const item = () => ({ pk: 'THING#1', sk: 'THING', id: '1', tags: ['a'], extra: { n: 1 } });

describe('records and validators of shared items', () => {
  it('parses a shared item once, into a frozen record every reader shares', () => {
    const shared = deepFreeze(item());
    const first = thing.fromItem(shared);
    assert.equal(thing.fromItem(shared), first);
    assert.deepEqual(first, { id: '1', tags: ['a'], extra: { n: 1 } });
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.tags) && Object.isFrozen(first.extra));
    assert.throws(() => first.tags.push('b'), TypeError);
  });

  it('gives each reader of an item that is not shared a record of its own', () => {
    const own = item();
    const first = thing.fromItem(own);
    const second = thing.fromItem(own);
    assert.notEqual(second, first);
    assert.ok(!Object.isFrozen(first));
    first.tags.push('b');
    assert.deepEqual(second.tags, ['a']);
  });

  it('finds a shared schema’s validator by the object, the same as its text finds', () => {
    const text = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
    const shared = deepFreeze(structuredClone(text));
    const validate = compileInputValidator(shared);
    assert.equal(compileInputValidator(shared), validate);
    assert.equal(compileInputValidator(structuredClone(text)), validate);
    assert.equal(validate({ text: 'hi' }), true);
    assert.equal(validate({ text: 1 }), false);
  });
});
