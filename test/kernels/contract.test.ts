/**
 * The kernel contract, derived from each kernel's joi schema and checked through the routes of one
 * shared app, for every kernel of the registry: each numeric parameter (seed included) is refused
 * just past each bound with the exact 422 body and accepted at the bound; every integer parameter
 * refuses a fraction and every number parameter text (the seed, and each kernel's first number
 * parameter, every other malformed form: one parser serves them all); booleans refuse a
 * non-boolean; strings refuse one character over their maximum; an unknown parameter is
 * extra_forbidden; the defaults answer byte-identical bodies; and another seed changes the body
 * exactly when the kernel draws randomness. The files in test/workers/kernels keep only each
 * kernel's own invariants and its cross-field rules.
 */
import { expect } from 'chai';
import type { Description } from 'joi';
import { kernelParamsSchema, kernelPath, type KernelDef } from '../../workers/kernel-def.js';
import { RngStreams, type Rng } from '../../src/lib/prng.js';
import { API } from '../../src/isomorphic/api.js';
import { KERNELS } from '../../workers/registry.js';
import { withTestApp, type TestApp } from '../helpers/app.js';
import { paramsFor } from '../helpers/kernels.js';

interface Param {
  key: string;
  type: string;
  min?: number;
  max?: number;
}

/** The kernel's parameters as its schema describes them (seed first). */
function paramsOf(def: KernelDef): Param[] {
  const keys = (kernelParamsSchema(def).describe() as Description & { keys: Record<string, Description> }).keys;
  return Object.entries(keys).map(([key, d]) => {
    const limit = (name: string): number | undefined => (d.rules as { name: string; args?: { limit?: number } }[] | undefined)?.find((r) => r.name === name)?.args?.limit;
    return { key, type: d.type!, min: limit('min'), max: limit('max') };
  });
}

/** Text an integer parameter refuses (int_parsing): integers are plain decimals. */
const MALFORMED_INTEGERS = ['', 'x', 'NaN', '1.0', '1e3', ' 1', '0x1', '-', '4k'];
/** Text a number parameter refuses (float_parsing): finite decimals only. */
const MALFORMED_NUMBERS = ['', 'abc', 'NaN', 'Infinity', '1e', '0x1', '1,5', '0.5x', '1/2'];

/** A value just past a numeric bound: one for integers, a millionth of the bound for numbers. */
function past(p: Param, bound: number, dir: -1 | 1): number {
  if (p.type === 'qint') return bound + dir;
  return bound + dir * (bound === 0 ? 1e-9 : Math.abs(bound) * 1e-6);
}

/** Draws from any stream are recorded: the kernel's output depends on its seed iff it draws. */
class SpyStreams extends RngStreams {
  drew = false;
  override shared(fullLabel: string): Rng {
    const rng = super.shared(fullLabel);
    return new Proxy(rng, {
      get: (target, prop, receiver) => {
        const v = Reflect.get(target, prop, receiver);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          this.drew = true;
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
}

function drawsRandomness(def: KernelDef): boolean {
  const params = paramsFor(def);
  const rng = new SpyStreams(params.seed as number, def.id);
  def.run(params, rng);
  return rng.drew;
}

/** The kernel's route with the given parameters: query keys, or the JSON `request` of a request kernel. */
function url(def: KernelDef, params: Record<string, unknown>): string {
  if (def.input === 'request') return `${API}${kernelPath(def)}?request=${encodeURIComponent(JSON.stringify(params))}`;
  const q = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]));
  return `${API}${kernelPath(def)}${q.size ? `?${q}` : ''}`;
}

/** The one 422 issue a single bad parameter gets: where it is and what it echoes, by input mode. */
function issue(def: KernelDef, key: string, value: unknown, type: string, msg: string, ctx?: Record<string, unknown>) {
  const inRequest = def.input === 'request';
  return {
    type,
    loc: inRequest ? ['query', 'request', key] : ['query', key],
    msg,
    input: inRequest ? value : String(value),
    ...(ctx ? { ctx } : {}),
  };
}

async function expect422(t: TestApp, def: KernelDef, params: Record<string, unknown>, expected: ReturnType<typeof issue>): Promise<void> {
  const res = await t.http.get(url(def, params));
  expect(res.status, `${def.id} ${JSON.stringify(params)}`).to.equal(422);
  expect(res.body, `${def.id} ${JSON.stringify(params)}`).to.deep.equal({ detail: [expected] });
}

/** A body without what a seed change must change anyway: the echoed seed (and the params' hash). */
function withoutSeed(text: string): string {
  const { seed: _seed, params, request_sha256: _hash, ...rest } = JSON.parse(text) as Record<string, unknown>;
  const { seed: _s, ...others } = params as Record<string, unknown>;
  return JSON.stringify({ ...rest, params: others });
}

describe('kernel contract: every kernel, derived from its schema, through the routes', () => {
  const app = withTestApp();

  it('covers every kernel of the registry, each with a seed', () => {
    expect(KERNELS.length).to.be.at.least(60);
    for (const def of KERNELS) expect(paramsOf(def)[0], def.id).to.deep.include({ key: 'seed', type: 'qint', min: 0, max: 4294967295 });
  });

  for (const def of KERNELS) {
    describe(def.id, () => {
      const params = paramsOf(def);
      const numeric = params.filter((p) => p.type === 'qint' || p.type === 'qnum');

      it('every numeric parameter just past each bound is 422 with the exact body; the bounds themselves pass', async () => {
        const schema = kernelParamsSchema(def);
        for (const p of numeric) {
          expect(p.min, `${def.id} ${p.key} has a minimum`).to.be.a('number');
          expect(p.max, `${def.id} ${p.key} has a maximum`).to.be.a('number');
          const [min, max] = [p.min!, p.max!];
          const below = past(p, min, -1);
          const above = past(p, max, 1);
          await expect422(app(), def, { [p.key]: below }, issue(def, p.key, below, 'greater_than_equal', `Input should be greater than or equal to ${min}`, { ge: min }));
          await expect422(app(), def, { [p.key]: above }, issue(def, p.key, above, 'less_than_equal', `Input should be less than or equal to ${max}`, { le: max }));
          for (const bound of [min, max]) {
            const value = def.input === 'request' ? bound : String(bound);
            expect(schema.validate({ [p.key]: value }).error, `${def.id} ${p.key}=${bound}`).to.equal(undefined);
          }
        }
      });

      it('integers refuse a fraction and malformed text, numbers malformed text, booleans a non-boolean', async () => {
        const intText = (key: string, text: string) => expect422(app(), def, { [key]: text }, issue(def, key, text, 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'));
        const numText = (key: string, text: string) => expect422(app(), def, { [key]: text }, issue(def, key, text, 'float_parsing', 'Input should be a valid number, unable to parse string as a number'));
        for (const p of params.filter((x) => x.type === 'qint')) {
          // a fraction: the text `1.5` in a query, the JSON number 1.5 in a request
          if (def.input === 'request') await expect422(app(), def, { [p.key]: p.min! + 0.5 }, issue(def, p.key, p.min! + 0.5, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part'));
          else await intText(p.key, `${p.min!}.5`);
        }
        for (const text of MALFORMED_INTEGERS) await intText('seed', text);
        const numbers = params.filter((x) => x.type === 'qnum');
        for (const p of numbers) await numText(p.key, 'abc');
        if (numbers[0]) for (const text of MALFORMED_NUMBERS) await numText(numbers[0].key, text);
        for (const p of params.filter((x) => x.type === 'qbool')) {
          await expect422(app(), def, { [p.key]: 'maybe' }, issue(def, p.key, 'maybe', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'));
        }
      });

      it('a string parameter one character over its maximum is 422; an unknown parameter is extra_forbidden', async () => {
        for (const p of params.filter((x) => x.type === 'string' && x.max !== undefined)) {
          const long = 'x'.repeat(p.max! + 1);
          const echoed = long.length > 256 ? `${long.slice(0, 256)}…` : long; // 422 bodies cut echoed strings at 256 characters
          const expected = { ...issue(def, p.key, long, 'string_too_long', `String should have at most ${p.max!} characters`, { max_length: p.max! }), input: echoed };
          await expect422(app(), def, { [p.key]: long }, expected);
        }
        await expect422(app(), def, { not_a_param: 1 }, issue(def, 'not_a_param', 1, 'extra_forbidden', 'Extra inputs are not permitted'));
      });

      it('its defaults answer byte-identical bodies; another seed changes the body exactly when it draws randomness', async () => {
        const a = await app().http.get(url(def, {}));
        const b = await app().http.get(url(def, {}));
        expect(a.status, def.id).to.equal(200);
        expect(b.text, def.id).to.equal(a.text);
        expect(JSON.parse(a.text)).to.include({ kernel: def.id, seed: 42 });
        const other = await app().http.get(url(def, { seed: 43 }));
        expect(other.status, def.id).to.equal(200);
        expect(JSON.parse(other.text)).to.include({ seed: 43 });
        if (drawsRandomness(def)) expect(withoutSeed(other.text), `${def.id} draws randomness`).to.not.equal(withoutSeed(a.text));
        else expect(withoutSeed(other.text), `${def.id} draws nothing`).to.equal(withoutSeed(a.text));
      });
    });
  }
});
