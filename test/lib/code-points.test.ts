import { expect } from 'chai';
import JoiBase, { type Schema } from 'joi';
import { codePointLength, codePointsWithin, countsCodePoints, Joi, sliceCodePoints } from '../../src/lib/code-points.js';
import { Joi as ParamJoi, str } from '../../src/lib/params.js';
import { fastAccept } from '../../src/http/fast-accept.js';
import { validatePart } from '../../src/http/validation.js';
import { boundInput } from '../../src/http/errors.js';
import { toJsonSchema } from '../../src/docs/joi-to-json-schema.js';
import { kernelParamsSchema } from '../../workers/kernel-def.js';
import { KERNELS } from '../../workers/registry.js';
import { withTestApp } from '../helpers/app.js';

// String limits count characters (code points), as JSON Schema's maxLength and minLength do: an
// emoji is one character, though it is two UTF-16 code units, and a lone surrogate is one too.

const EMOJI = '\u{1F6F8}';
const LONE = '\ud800';

describe('src/lib/code-points: string lengths in characters', () => {
  it('counts a surrogate pair as one character and a lone surrogate as one', () => {
    expect(codePointLength('')).to.equal(0);
    expect(codePointLength('abc')).to.equal(3);
    expect(codePointLength(EMOJI.repeat(5))).to.equal(5);
    expect(codePointLength(`${LONE}a${EMOJI}\udc00`)).to.equal(4);
    // a low surrogate before a high one is two lone surrogates, not a pair
    expect(codePointLength('\udc00\ud800')).to.equal(2);
    expect(codePointLength(`${LONE}${EMOJI}`)).to.equal(2);
  });

  it('decides bounds the same with and without the walk', () => {
    const samples = ['', 'a', EMOJI, `${EMOJI}a`, EMOJI.repeat(3), `${LONE}${LONE}`, `a${EMOJI}${LONE}b`, 'x'.repeat(7)];
    for (const s of samples) {
      for (let min = 0; min <= 8; min++) {
        for (let max = min; max <= 8; max++) expect(codePointsWithin(s, min, max), `${JSON.stringify(s)} in [${min}, ${max}]`).to.equal(codePointLength(s) >= min && codePointLength(s) <= max);
      }
    }
  });

  it('cuts strings at a character boundary, never inside a pair', () => {
    expect(sliceCodePoints(`${EMOJI}${EMOJI}a`, 1)).to.equal(EMOJI);
    expect(sliceCodePoints(`a${EMOJI}`, 2)).to.equal(`a${EMOJI}`);
    expect(sliceCodePoints('abc', 5)).to.equal('abc');
    expect(sliceCodePoints(`${LONE}${LONE}${LONE}`, 2)).to.equal(`${LONE}${LONE}`);
    // an echoed input in an error body: 256 characters, then the ellipsis
    expect(boundInput(`a${EMOJI.repeat(300)}`)).to.equal(`a${EMOJI.repeat(255)}…`);
    expect(boundInput(EMOJI.repeat(256))).to.equal(EMOJI.repeat(256));
  });

  it("joi's string min, max and length count characters, with joi's own error codes", () => {
    const s = Joi.string().min(2).max(4);
    expect(s.validate(EMOJI.repeat(4)).error).to.equal(undefined);
    expect(s.validate(EMOJI.repeat(5)).error?.details[0]).to.include({ type: 'string.max' });
    expect(s.validate(EMOJI.repeat(5)).error?.details[0]?.context).to.include({ limit: 4 });
    expect(s.validate(EMOJI).error?.details[0]).to.include({ type: 'string.min' });
    expect(Joi.string().length(2).validate(`${EMOJI}a`).error).to.equal(undefined);
    expect(Joi.string().length(2).validate(`${EMOJI}${EMOJI}a`).error?.details[0]).to.include({ type: 'string.length' });
    // lone surrogates: one character each, as they were one code unit each
    expect(Joi.string().max(3).validate(LONE.repeat(3)).error).to.equal(undefined);
    expect(Joi.string().max(3).validate(LONE.repeat(4)).error?.details[0]).to.include({ type: 'string.max' });
    // plain joi would refuse the four emoji: the difference this module makes
    expect(JoiBase.string().max(4).validate(EMOJI.repeat(4)).error).to.not.equal(undefined);
  });

  it('keeps the description (rule names and limit), so the OpenAPI document reads the same bounds', () => {
    const ours = Joi.string().allow('').min(1).max(40).describe();
    expect(ours).to.deep.equal(JoiBase.string().allow('').min(1).max(40).describe());
    expect(toJsonSchema(Joi.string().min(1).max(40))).to.include({ type: 'string', minLength: 1, maxLength: 40 });
    // a later max replaces an earlier one, as in joi
    expect(Joi.string().max(3).max(5).validate(EMOJI.repeat(5)).error).to.equal(undefined);
    expect(() => Joi.string().max(-1)).to.throw(/non-negative integer/);
  });

  it('the parameter schemas (params.ts) and the JSON-body shortcut count characters too', () => {
    expect(str(3, '').validate(EMOJI.repeat(3)).error).to.equal(undefined);
    expect(str(3, '').validate(EMOJI.repeat(4)).error?.details[0]).to.include({ type: 'string.max' });
    expect(countsCodePoints(ParamJoi.string().max(3))).to.equal(true);
    const body = Joi.object({ name: Joi.string().min(2).max(3) });
    const accept = fastAccept(body)!;
    expect(accept).to.be.a('function');
    for (const name of [EMOJI.repeat(3), EMOJI.repeat(4), EMOJI, `${EMOJI}a`, LONE.repeat(3), LONE.repeat(4), 'abcd']) {
      expect(accept({ name }), JSON.stringify(name)).to.equal(body.validate({ name }).error === undefined);
    }
  });

  it('tells a schema built with plain joi from one built here', () => {
    expect(countsCodePoints(Joi.string().min(1).max(3))).to.equal(true);
    expect(countsCodePoints(Joi.string())).to.equal(true);
    expect(countsCodePoints(JoiBase.string().max(3))).to.equal(false);
  });
});

/** Every string schema with a length rule under `schema`, with its path. */
function lengthLimitedStrings(schema: Schema, path: string, out: { path: string; schema: Schema }[] = []): { path: string; schema: Schema }[] {
  if (schema.type === 'string' && ['min', 'max', 'length'].some((r) => schema.$_getRule(r) !== undefined)) out.push({ path, schema });
  // $_terms holds a schema's children: object keys, array items, alternatives, when branches
  for (const [term, entries] of Object.entries((schema as unknown as { $_terms?: Record<string, unknown[] | null> }).$_terms ?? {})) {
    for (const [i, entry] of (entries ?? []).entries()) {
      if (JoiBase.isSchema(entry)) lengthLimitedStrings(entry as Schema, `${path}.${term}[${i}]`, out);
      else if (entry && typeof entry === 'object') {
        const key = (entry as { key?: unknown }).key;
        for (const [k, v] of Object.entries(entry)) if (JoiBase.isSchema(v)) lengthLimitedStrings(v as Schema, typeof key === 'string' ? `${path}.${key}` : `${path}.${term}[${i}].${k}`, out);
      }
    }
  }
  return out;
}

describe('every request string limit counts characters', function () {
  const app = withTestApp();

  it('every length-limited string of every route (query, path, body) and kernel parameter counts code points', () => {
    const found: { path: string; schema: Schema }[] = [];
    for (const r of app().routes) {
      for (const [part, schema] of [['query', r.query], ['path', r.params], ['body', r.body]] as const) {
        if (JoiBase.isSchema(schema)) lengthLimitedStrings(schema as Schema, `${r.method} ${r.path} ${part}`, found);
      }
    }
    for (const def of KERNELS) lengthLimitedStrings(kernelParamsSchema(def), `kernel ${def.id}`, found);
    // the walk finds what it must: the kernel `request`, the verify body, the CoT track id
    const paths = found.map((f) => f.path);
    expect(paths).to.include.members([
      'GET /api/svc/v1/fgbrain/evolve query.request',
      'GET /api/svc/khipu/dag query.request',
      'POST /khipu/verify body.payloadType.whens[0].otherwise',
      'POST /api/svc/v1/edge/3d body.frames.items[0].ts_utc',
      'GET /api/svc/v1/cot/export/:track_id path.track_id',
      'kernel episodic/recall.query',
    ]);
    expect(found.length).to.be.above(20);
    expect(found.filter((f) => !countsCodePoints(f.schema as never)).map((f) => f.path)).to.deep.equal([]);
    // and it sees a plain joi string where one hides
    expect(lengthLimitedStrings(JoiBase.object({ a: JoiBase.any().when('b', { is: 1, then: JoiBase.string().max(2) }) }), 'x').map((f) => countsCodePoints(f.schema as never))).to.deep.equal([false]);
  });

  it('each query parameter limit in the OpenAPI document is the one enforced: maxLength emoji pass, one more is string_too_long', () => {
    const checked: string[] = [];
    for (const r of app().routes) {
      if (!r.query) continue;
      const props = (toJsonSchema(r.query) as { properties?: Record<string, { type?: string; maxLength?: number; pattern?: string; enum?: unknown[] }> }).properties ?? {};
      for (const [name, p] of Object.entries(props)) {
        if (p.type !== 'string' || p.maxLength === undefined || p.pattern !== undefined || p.enum !== undefined) continue;
        const at = (value: string) => validatePart(r.query, 'query', { [name]: value }).issues.filter((i) => i.loc[1] === name && i.loc.length === 2);
        expect(at(EMOJI.repeat(p.maxLength)), `${r.path} ${name}`).to.deep.equal([]);
        const over = at(EMOJI.repeat(p.maxLength + 1));
        expect(over.map((i) => [i.type, i.ctx]), `${r.path} ${name}`).to.deep.equal([['string_too_long', { max_length: p.maxLength }]]);
        checked.push(`${r.path} ${name}`);
      }
    }
    expect(checked).to.include.members(['/api/svc/v1/fgbrain/evolve request', '/api/svc/khipu/dag request']);
    expect(checked.length).to.be.above(5);
  });

  it('a JSON body string: 256 emoji in payloadType reach verification, 257 are 422 with the exact body', async () => {
    const envelope = (payloadType: string) => ({ payloadType, payload: 'e30=', signatures: [{ keyid: '', sig: 'AAAA' }] });
    const ok = await app().http.post('/khipu/verify').send(envelope(EMOJI.repeat(256)));
    expect(ok.status).to.equal(200);
    const lone = await app().http.post('/khipu/verify').send(envelope(LONE.repeat(256)));
    expect(lone.status).to.equal(200);
    const res = await app().http.post('/khipu/verify').send(envelope(EMOJI.repeat(257)));
    expect(res.status).to.equal(422);
    expect(res.body).to.deep.equal({
      detail: [{ type: 'string_too_long', loc: ['body', 'payloadType'], msg: 'String should have at most 256 characters', input: `${EMOJI.repeat(256)}…`, ctx: { max_length: 256 } }],
    });
  });
});
