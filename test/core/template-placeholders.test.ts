/**
 * A prompt template's placeholders (core/agents/placeholders.ts) and its rendering
 * (direct-llm.ts, renderTemplate): each distinct name once in order of appearance, every
 * `{{ name }}` filled (strings as they are, with no replacement patterns read in them, other values
 * as JSON), text that is no placeholder left as it is; and the same answers for a template asked
 * again after another (the last template's are kept).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { placeholders } from '../../functions/core/agents/placeholders.ts';
import { renderTemplate } from '../../functions/core/calls/direct-llm.ts';

describe('template placeholders', () => {
  it('names each placeholder once, in order, and only well-formed ones', () => {
    assert.deepEqual(placeholders('{{a}}{{ b }} x {{a}} {{}} {{1a}} {{_x}} {{c}'), ['a', 'b', '_x']);
    assert.deepEqual(placeholders('no placeholders'), []);
    assert.deepEqual(placeholders(''), []);
  });

  it('renders every placeholder, and the same again after another template', () => {
    const input = { text: 'hi $& $1', n: 1, obj: { z: [1] }, flag: false };
    const template = 'Say {{ text }} {{n}}{{obj}} {{flag}} {{text}} {{}} {{x}';
    const expected = 'Say hi $& $1 1{"z":[1]} false hi $& $1 {{}} {{x}';
    assert.equal(renderTemplate(template, input), expected);
    assert.equal(renderTemplate('Echo {{text}}!', input), 'Echo hi $& $1!');
    assert.equal(renderTemplate(template, input), expected);
    assert.deepEqual(placeholders(template), ['text', 'n', 'obj', 'flag']);
    assert.throws(() => renderTemplate('{{missing}}', input), /required by the prompt template/);
  });
});
