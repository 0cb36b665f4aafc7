import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../functions/core/accounts/account.ts';
import { compileInputValidator } from '../../functions/core/agents/user-schema.ts';
import { errorOf, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

// A user's JSON Schema pattern is matched on a linear-time engine (RE2), so a
// catastrophic-backtracking pattern cannot hold the shared event loop; patterns RE2 cannot run
// (backreferences, lookaround) are refused at publish with a 400 naming the field.

const EVIL = '^(a+)+$';
const HOSTILE_INPUT = `${'a'.repeat(27)}!`; // about 1.4 s of backtracking on Node's RegExp

const agent = (name: string, pattern: string) => ({
  name,
  description: 'Echoes a word.',
  supported_providers: ['openai'],
  prompt_template: 'Say {{word}}',
  input_schema: {
    type: 'object',
    properties: { word: { type: 'string', pattern } },
    required: ['word'],
  },
});

describe("users' JSON Schema patterns run in linear time", () => {
  let p: TestPlatform;
  let attacker: string;
  let other: string;

  before(async () => {
    p = await startTestPlatform(
      {
        OPENAI_API_KEY: 'sk-openai-test',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      },
      'sqlite',
      {},
      { inMemory: true },
    );
    attacker = (await createAccount(p.deps, { org: 'regexattacker', tier: 'pro' })).api_key;
    other = (await createAccount(p.deps, { org: 'regexbystander', tier: 'pro' })).api_key;
    const published = await p.request('POST', '/agents', { key: attacker, body: agent('evil', EVIL) });
    assert.equal(published.status, 201, published.text);
  });
  after(async () => {
    await p.close();
  });

  it('validates the hostile input in under 50 ms', () => {
    const validate = compileInputValidator(agent('evil', EVIL).input_schema);
    let worst = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      assert.equal(validate({ word: HOSTILE_INPUT }), false);
      worst = Math.max(worst, performance.now() - t);
    }
    // The bound is the issue's; backtracking takes over a second, RE2 well under a millisecond.
    assert.ok(worst < 50, `validation took ${worst.toFixed(1)} ms`);
  });

  it("does not delay another tenant's request by more than 50 ms", async () => {
    const tasks = async () => {
      const t = performance.now();
      const res = await p.request('GET', '/tasks', { key: other });
      assert.equal(res.status, 200, res.text);
      return performance.now() - t;
    };
    let baseline = 0;
    for (let i = 0; i < 3; i++) baseline = Math.max(baseline, await tasks());
    let leastDelay = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      // The hostile call is sent first; the bystander's request is in flight while it is validated.
      const hostile = p.request('POST', '/regexattacker/evil/v1/run', {
        key: attacker,
        body: { word: HOSTILE_INPUT },
      });
      const during = await tasks();
      const res = await hostile;
      assert.equal(res.status, 400, res.text);
      assert.equal(errorOf(res).code, 'INVALID_INPUT');
      leastDelay = Math.min(leastDelay, during - baseline);
    }
    // The least delay of five tries: a pattern that blocks the event loop delays every one of them
    // (backtracking adds over a second each time), while a shared machine's scheduling noise hits
    // only some. Compared with the worst of three undisturbed requests.
    assert.ok(leastDelay < 50, `the other tenant's request was delayed by ${leastDelay.toFixed(1)} ms`);
  });

  for (const [what, schema, field] of [
    [
      'a backreference in pattern',
      { type: 'object', properties: { w: { type: 'string', pattern: '^(a)\\1$' } } },
      'input_schema',
    ],
    [
      'lookahead in patternProperties',
      { type: 'object', patternProperties: { '^(?=x)': { type: 'string' } } },
      'input_schema',
    ],
  ] as const) {
    it(`refuses ${what} at publish with 400 INVALID_INPUT naming the field`, async () => {
      const res = await p.request('POST', '/agents', {
        key: attacker,
        body: { ...agent('refused', 'a'), input_schema: schema },
      });
      assert.equal(res.status, 400, res.text);
      const err = errorOf(res);
      assert.equal(err.code, 'INVALID_INPUT');
      assert.ok(
        err.fields.some((f) => f.includes(field)),
        `fields: ${err.fields}`,
      );
      assert.match(res.text, /linear-time engine/);
    });
  }

  it("refuses lookaround in a custom tool's input_schema at publish", async () => {
    const res = await p.request('POST', '/agents', {
      key: attacker,
      body: {
        ...agent('refusedtool', 'a'),
        custom_tools: [
          {
            name: 't',
            description: 'A tool.',
            command: 'echo',
            input_schema: { type: 'object', properties: { q: { type: 'string', pattern: '(?<=a)b' } } },
          },
        ],
      },
    });
    assert.equal(res.status, 400, res.text);
    const err = errorOf(res);
    assert.equal(err.code, 'INVALID_INPUT');
    assert.ok(
      err.fields.some((f) => f.includes('custom_tools')),
      `fields: ${err.fields}`,
    );
    assert.match(res.text, /linear-time engine/);
  });
});
