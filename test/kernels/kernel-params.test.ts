import { expect } from 'chai';
import { effectiveParams } from '../../src/kernels/kernel-params.js';
import { AppError } from '../../src/http/errors.js';
import { defineKernel } from '../../workers/kernel-def.js';
import { Joi, int, typed } from '../../src/lib/params.js';

// A request-mode kernel written for this test: the real ones live in workers/kernels.
const def = defineKernel({
  id: 'test/request',
  version: 1,
  input: 'request',
  summary: 't',
  technique: 't',
  references: [],
  honesty: 't',
  params: { down: int(1, 10, 2), lesion: typed<number[]>(Joi.array().items(Joi.number().integer().min(0).max(9)).max(3).default([])) },
  rules: ['lesion must not contain down'],
  constraints: (p) => (p.lesion.includes(p.down) ? [{ param: 'lesion', msg: 'lesion must not contain down' }] : []),
  worstCase: {},
  run: () => ({ result: {} }),
});

function issues(request: string): unknown {
  try {
    effectiveParams(def, { request }, { request });
  } catch (err) {
    return (err as AppError).detail;
  }
  return null;
}

describe('src/kernels/kernel-params (the request parameter: JSON object or opaque label)', () => {
  it('reads params from a JSON object, in declaration order, with defaults', () => {
    expect(effectiveParams(def, { request: '{"lesion":[1],"seed":7}' }, {})).to.deep.equal({ params: { seed: 7, down: 2, lesion: [1] }, requestLabel: null });
  });

  it('treats any other string as an opaque label with defaults', () => {
    expect(effectiveParams(def, { request: 'probe' }, {})).to.deep.equal({ params: { seed: 42, down: 2, lesion: [] }, requestLabel: 'probe' });
  });

  it('422 with loc under request for bad keys, json_invalid for broken JSON, value_error for constraints', () => {
    expect(issues('{"down":11,"lesion":[1,"x"],"zz":1}')).to.deep.equal([
      { type: 'less_than_equal', loc: ['query', 'request', 'down'], msg: 'Input should be less than or equal to 10', input: 11, ctx: { le: 10 } },
      { type: 'int_type', loc: ['query', 'request', 'lesion', 1], msg: 'Input should be a valid integer', input: 'x' },
      { type: 'extra_forbidden', loc: ['query', 'request', 'zz'], msg: 'Extra inputs are not permitted', input: 1 },
    ]);
    const broken = issues('{"down":') as { type: string; loc: string[] }[];
    expect(broken[0]).to.include({ type: 'json_invalid' });
    expect(broken[0]!.loc).to.deep.equal(['query', 'request']);
    expect(issues('{"down":3,"lesion":[3]}')).to.deep.equal([
      { type: 'value_error', loc: ['query', 'request', 'lesion'], msg: 'Value error, lesion must not contain down', input: [3], ctx: { error: {} } },
    ]);
  });
});
