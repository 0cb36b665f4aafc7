import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isValidTimeZone,
  nextRun,
  nextRuns,
  type ParsedCron,
  parseCron,
  toEventBridge,
} from '../../functions/shared/cron.ts';

function parsed(expr: string): ParsedCron {
  const r = parseCron(expr);
  assert.ok(r.ok, `${expr}: ${r.ok ? '' : r.message}`);
  return r.cron;
}

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

/** Reference matcher in UTC, minute by minute, Unix semantics. */
function bruteForce(c: ParsedCron, after: Date, count: number): string[] {
  const out: string[] = [];
  let t = Math.floor(after.getTime() / 60_000) * 60_000 + 60_000;
  while (out.length < count) {
    const d = new Date(t);
    const domOk = c.dayOfMonth.includes(d.getUTCDate());
    const dowOk = c.dayOfWeek.includes(d.getUTCDay());
    const dayOk = c.domRestricted && c.dowRestricted ? domOk || dowOk : domOk && dowOk;
    if (
      dayOk &&
      c.minute.includes(d.getUTCMinutes()) &&
      c.hour.includes(d.getUTCHours()) &&
      c.month.includes(d.getUTCMonth() + 1)
    ) {
      out.push(d.toISOString());
    }
    t += 60_000;
  }
  return out;
}

describe('parseCron: accepted', () => {
  const accepted: [string, Partial<ParsedCron>][] = [
    ['* * * * *', { normalized: '* * * * *', domRestricted: false, dowRestricted: false }],
    ['0 0 1 1 0', { minute: [0], hour: [0], dayOfMonth: [1], month: [1], dayOfWeek: [0] }],
    ['59 23 31 12 7', { minute: [59], hour: [23], dayOfMonth: [31], month: [12], dayOfWeek: [0] }],
    ['*/15 * * * *', { minute: [0, 15, 30, 45], normalized: '*/15 * * * *' }],
    ['0 9-17/4 * * *', { hour: [9, 13, 17] }],
    ['0,30 8,20 * * 1-5', { minute: [0, 30], hour: [8, 20], dayOfWeek: [1, 2, 3, 4, 5] }],
    ['  0   12  *  *  *  ', { normalized: '0 12 * * *' }],
    ['0 0 * jan,Jul *', { month: [1, 7], normalized: '0 0 * 1,7 *' }],
    ['0 0 * * MON-FRI', { dayOfWeek: [1, 2, 3, 4, 5], normalized: '0 0 * * 1-5' }],
    ['0 0 * * 5-7', { dayOfWeek: [0, 5, 6] }],
    ['0 0 * * */2', { dayOfWeek: [0, 2, 4, 6] }],
    ['0 0 29 2 *', { dayOfMonth: [29], month: [2] }],
    ['*/59 * * * *', { minute: [0, 59] }],
    ['0 0 13 * 5', { domRestricted: true, dowRestricted: true }],
  ];
  for (const [expr, expected] of accepted) {
    it(expr, () => {
      const c = parsed(expr);
      for (const [k, v] of Object.entries(expected)) {
        assert.deepEqual(c[k as keyof ParsedCron], v, `${expr} ${k}`);
      }
    });
  }
});

describe('parseCron: rejected with a message naming the field', () => {
  const rejected: [unknown, RegExp][] = [
    ['', /empty/],
    [42, /string/],
    ['0 0 0 * * *', /6 fields.*seconds and year/],
    ['0 0 0 * * * 2026', /7 fields/],
    ['0 0 * *', /4 fields; expected exactly 5/],
    ['@daily', /nicknames/],
    ['60 * * * *', /^minute field "60": value 60 is out of range 0-59/],
    ['* 24 * * *', /^hour field "24": value 24 is out of range 0-23/],
    ['* * 0 * *', /^day of month field "0": value 0 is out of range 1-31/],
    ['* * 32 * *', /^day of month field/],
    ['* * * 13 *', /^month field "13": value 13 is out of range 1-12/],
    ['* * * 0 *', /^month field/],
    ['* * * * 8', /^day of week field "8": value 8 is out of range 0-7/],
    ['*/0 * * * *', /^minute field "\*\/0": step must be at least 1/],
    ['*/60 * * * *', /^minute field.*step 60 is larger than the range 0-59/],
    ['* */24 * * *', /^hour field.*step 24 is larger/],
    ['* * * * */7', /^day of week field.*step 7 is larger/],
    ['5/15 * * * *', /^minute field.*step needs "\*" or a range/],
    ['1,,2 * * * *', /^minute field.*empty list item/],
    ['1, * * * *', /^minute field.*empty list item/],
    ['10-5 * * * *', /^minute field.*reversed/],
    ['1-2-3 * * * *', /^minute field/],
    ['*/x * * * *', /^minute field.*not a whole number/],
    ['-1 * * * *', /^minute field/],
    ['* * L * *', /^day of month field/],
    ['* * 15W * *', /^day of month field/],
    ['* * ? * *', /^day of month field/],
    ['* * * * MON#1', /^day of week field/],
    ['* * * * 1L', /^day of week field/],
    ['* * * * +1', /^day of week field/],
    ['* * * FOO *', /^month field.*"FOO"/],
    ['0 0 30 2 *', /^day of month field "30": day 30 never occurs/],
    ['0 0 31 4,6 *', /^day of month field/],
    ['1.5 * * * *', /^minute field/],
  ];
  for (const [expr, re] of rejected) {
    it(String(expr), () => {
      const r = parseCron(expr);
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.message, re);
    });
  }
  it('Feb 30 is fine when day of week also selects days (OR)', () => {
    assert.ok(parseCron('0 0 30 2 1').ok);
  });
});

describe('isValidTimeZone', () => {
  for (const tz of [
    'UTC',
    'Etc/UTC',
    'America/New_York',
    'Europe/Berlin',
    'Asia/Kolkata',
    'Asia/Calcutta',
    'Etc/GMT+5',
    'America/Argentina/Buenos_Aires',
  ]) {
    it(`accepts ${tz}`, () => assert.equal(isValidTimeZone(tz), true));
  }
  for (const tz of [
    'EST',
    'PST',
    'CET',
    'MST',
    'EST5EDT',
    'GMT',
    'Zulu',
    'US/Eastern',
    'america/new_york',
    'America/New_york',
    'Mars/Olympus',
    '',
    5,
  ]) {
    it(`refuses ${String(tz)}`, () => assert.equal(isValidTimeZone(tz), false));
  }
  it('nextRuns refuses an abbreviation', () => {
    assert.throws(() => nextRuns('0 0 * * *', 'EST', new Date()), /timezone "EST"/);
  });
});

describe('nextRuns', () => {
  const after = new Date('2026-01-01T00:00:00Z');

  it('0 and 7 are both Sunday', () => {
    const a = iso(nextRuns('0 12 * * 0', 'UTC', after, 5));
    const b = iso(nextRuns('0 12 * * 7', 'UTC', after, 5));
    const c = iso(nextRuns('0 12 * * SUN', 'UTC', after, 5));
    assert.deepEqual(a, b);
    assert.deepEqual(a, c);
    for (const t of a) assert.equal(new Date(t).getUTCDay(), 0);
    assert.equal(a[0], '2026-01-04T12:00:00.000Z');
  });

  it('day of month and day of week both restricted: either matches (0 9 13 * 5)', () => {
    const runs = iso(nextRuns('0 9 13 * 5', 'UTC', after, 8));
    assert.deepEqual(runs, [
      '2026-01-02T09:00:00.000Z', // Friday
      '2026-01-09T09:00:00.000Z', // Friday
      '2026-01-13T09:00:00.000Z', // the 13th (Tuesday)
      '2026-01-16T09:00:00.000Z',
      '2026-01-23T09:00:00.000Z',
      '2026-01-30T09:00:00.000Z',
      '2026-02-06T09:00:00.000Z',
      '2026-02-13T09:00:00.000Z', // Friday the 13th: once
    ]);
  });

  it('only one of them restricted: that one decides', () => {
    for (const t of nextRuns('0 9 * * 5', 'UTC', after, 6)) assert.equal(t.getUTCDay(), 5);
    for (const t of nextRuns('0 9 13 * *', 'UTC', after, 6)) assert.equal(t.getUTCDate(), 13);
  });

  for (const expr of [
    '*/20 9-11 * * *',
    '0 0 */10 * 1',
    '30 6 1,15 * 6-7',
    '0 */6 * 2-3 *',
    '15 3 * * 1-5',
    '0 0 1-7 * 1',
    '0 12 31 * *',
  ]) {
    it(`matches a brute-force reference: ${expr}`, () => {
      const c = parsed(expr);
      assert.deepEqual(iso(nextRuns(c, 'UTC', after, 25)), bruteForce(c, after, 25));
    });
  }

  it('returns strictly increasing times after `after`', () => {
    for (const [expr, tz] of [
      ['*/7 * * * *', 'America/New_York'],
      ['30 1 * * *', 'America/New_York'],
      ['0 9 13 * 5', 'Europe/Berlin'],
      ['*/30 * * * *', 'Europe/Berlin'],
    ] as const) {
      const start = new Date('2026-03-07T00:00:00Z');
      const runs = nextRuns(expr, tz, start, 200);
      assert.equal(runs.length, 200);
      let prev = start.getTime();
      for (const r of runs) {
        assert.ok(r.getTime() > prev, `${expr} ${tz}: ${r.toISOString()}`);
        prev = r.getTime();
      }
    }
  });

  it('a run exactly at `after` is not returned', () => {
    assert.equal(
      nextRun('0 0 * * *', 'UTC', new Date('2026-03-08T00:00:00Z'))?.toISOString(),
      '2026-03-09T00:00:00.000Z',
    );
  });

  it('evaluates in the given time zone', () => {
    assert.equal(
      nextRun('0 9 * * *', 'America/New_York', after)?.toISOString(),
      '2026-01-01T14:00:00.000Z', // 09:00 EST
    );
  });

  it('changing cron or timezone changes the next time', () => {
    const a = nextRun('0 9 * * *', 'UTC', after)?.getTime();
    const b = nextRun('0 10 * * *', 'UTC', after)?.getTime();
    const c = nextRun('0 9 * * *', 'Asia/Tokyo', after)?.getTime();
    assert.notEqual(a, b);
    assert.notEqual(a, c);
  });

  it('throws on an invalid expression', () => {
    assert.throws(() => nextRuns('0 0 0 * * *', 'UTC', after), /6 fields/);
  });
});

describe('nextRuns across DST', () => {
  it('02:30 on the spring-forward day runs once, at 03:00 (America/New_York 2026-03-08)', () => {
    const runs = iso(nextRuns('30 2 * * *', 'America/New_York', new Date('2026-03-07T00:00:00Z'), 3));
    assert.deepEqual(runs, [
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT: first valid time after the gap
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  it('02:30 on the spring-forward day runs once, at 03:00 (Europe/Berlin 2026-03-29)', () => {
    const runs = iso(nextRuns('30 2 * * *', 'Europe/Berlin', new Date('2026-03-28T00:00:00Z'), 3));
    assert.deepEqual(runs, [
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('01:30 on the fall-back day runs exactly once (America/New_York 2026-11-01)', () => {
    const runs = iso(nextRuns('30 1 * * *', 'America/New_York', new Date('2026-10-31T00:00:00Z'), 3));
    assert.deepEqual(runs, [
      '2026-10-31T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T05:30:00.000Z', // 01:30 EDT, first occurrence only
      '2026-11-02T06:30:00.000Z', // 01:30 EST
    ]);
    // Asking from inside the repeated hour does not produce the second 01:30.
    assert.equal(
      nextRun('30 1 * * *', 'America/New_York', new Date('2026-11-01T05:45:00Z'))?.toISOString(),
      '2026-11-02T06:30:00.000Z',
    );
  });

  it('02:30 on the fall-back day runs exactly once (Europe/Berlin 2026-10-25)', () => {
    const runs = iso(nextRuns('30 2 * * *', 'Europe/Berlin', new Date('2026-10-24T12:00:00Z'), 2));
    assert.deepEqual(runs, ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
  });

  it('a list of hours counts as fixed-time: 01:30 and 13:30 each once on the fall-back day', () => {
    const runs = iso(nextRuns('30 1,13 * * *', 'America/New_York', new Date('2026-11-01T00:00:00Z'), 3));
    assert.deepEqual(runs, [
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T18:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ]);
  });

  it('an hourly job keeps running in real time through the repeated hour', () => {
    const runs = iso(nextRuns('30 * * * *', 'America/New_York', new Date('2026-11-01T04:00:00Z'), 3));
    assert.deepEqual(runs, [
      '2026-11-01T04:30:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T06:30:00.000Z',
    ]);
  });
});

describe('toEventBridge', () => {
  const table: [string, string[]][] = [
    ['* * * * *', ['cron(* * * * ? *)']],
    ['0 12 * * *', ['cron(0 12 * * ? *)']],
    ['*/15 * * * *', ['cron(0/15 * * * ? *)']],
    ['5-59/10 9-17 * * *', ['cron(5/10 9-17 * * ? *)']],
    ['0 9 * * 1-5', ['cron(0 9 ? * 2-6 *)']],
    ['0 9 * * MON-FRI', ['cron(0 9 ? * 2-6 *)']],
    ['0 9 * * 0', ['cron(0 9 ? * 1 *)']],
    ['0 9 * * 7', ['cron(0 9 ? * 1 *)']],
    ['0 9 * * 6,7', ['cron(0 9 ? * 1,7 *)']],
    ['0 9 * * 0-6', ['cron(0 9 * * ? *)']],
    ['0 9 * * */2', ['cron(0 9 ? * 1,3,5,7 *)']],
    ['0 9 * * 1-7', ['cron(0 9 * * ? *)']],
    ['0 0 1 * *', ['cron(0 0 1 * ? *)']],
    ['0 0 1,15 1-3 *', ['cron(0 0 1,15 1-3 ? *)']],
    ['0 0 */2 * *', ['cron(0 0 1/2 * ? *)']],
    ['0 9 13 * 5', ['cron(0 9 13 * ? *)', 'cron(0 9 ? * 6 *)']],
    ['30 6 1,15 * 6-7', ['cron(30 6 1,15 * ? *)', 'cron(30 6 ? * 1,7 *)']],
    ['0 0 1 * 0-6', ['cron(0 0 * * ? *)']],
    ['0 0 1-31 * 1', ['cron(0 0 * * ? *)']],
    ['0,20,40 0,1,2 1,2 * *', ['cron(0/20 0-2 1,2 * ? *)']],
    ['0 0 * JUN,DEC SAT', ['cron(0 0 ? 6,12 7 *)']],
  ];
  for (const [unix, expected] of table) {
    it(`${unix} -> ${expected.join(' + ')}`, () => {
      assert.deepEqual(toEventBridge(unix).expressions, expected);
    });
  }

  it('every expression has six fields and exactly one "?" in day of month / day of week', () => {
    for (const [unix] of table) {
      for (const e of toEventBridge(unix).expressions) {
        const fields = e.slice('cron('.length, -1).split(' ');
        assert.equal(fields.length, 6, e);
        assert.equal([fields[2], fields[4]].filter((f) => f === '?').length, 1, e);
        assert.equal(fields[5], '*', e);
      }
    }
  });

  it('throws on an invalid expression', () => {
    assert.throws(() => toEventBridge('0 0 * * 8'), /day of week/);
  });
});
