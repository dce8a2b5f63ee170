/**
 * The kernels' declared output schemas and examples (npm run kernels:schemas): the committed files
 * are what the generator writes from today's declarations; every kernel route of the served
 * /openapi.json carries real `result` and `checks` schemas; and each kernel's real body at its
 * defaults, its worst case and another seed matches the whole served response schema of its route
 * (envelope included), as does its documented example.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KERNELS } from '../../workers/registry.js';
import { kernelPath, kernelParamsSchema, type KernelDef } from '../../workers/kernel-def.js';
import { API } from '../../src/isomorphic/api.js';
import { projectRoot } from '../../src/config/load.js';
import { toJsonSchema } from '../../src/docs/joi-to-json-schema.js';
import { KERNEL_EXAMPLES_FILE, RESULT_SCHEMAS_FILE } from '../../src/kernels/kernel-docs.js';
import { kernelOutputSchemas, renderResultSchemas } from '../../src/kernels/kernel-output-schemas.js';
import { defaultParams, renderKernelExamples } from '../../src/kernels/kernel-examples.js';
import { kernelResponseSchema } from '../../src/kernels/kernel-response.js';
import { effectiveParams } from '../../src/kernels/kernel-params.js';
import { FIXTURE_KERNELS } from '../fixtures/kernels/registry.js';
import { withTestApp } from '../helpers/app.js';
import { documentValidator } from '../helpers/json-schema.js';
import { runBody } from '../helpers/kernels.js';

type Schema = Record<string, any>;

const root = projectRoot();
const committed = (file: string): string => readFileSync(join(root, file), 'utf8');

/** The 200 body schema of a kernel's route in the document, and its operation. */
function served(doc: Schema, def: KernelDef): { schema: Schema; op: Schema } {
  const op = doc.paths[`${API}${kernelPath(def)}`].get;
  return { schema: op.responses['200'].content['application/json'].schema, op };
}

/** Problems of `body` against `schema`, as short lines (empty when it matches). */
function problems(schema: Schema, body: unknown): string[] {
  const validate = documentValidator(schema);
  if (validate(body)) return [];
  return (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Whether a JSON Schema says no more than "an object" (its description aside). */
const bare = (s: Schema): boolean => Object.keys(s).filter((k) => k !== 'description').join() === 'type' && s.type === 'object';

/** The keywords whose value is one subschema, and those whose value is a list of them or a map of them. */
const ONE_SCHEMA = ['items', 'additionalProperties', 'contains', 'not', 'if', 'then', 'else', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties'];
const SCHEMA_LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions'];

/**
 * The paths of the subschemas of `schema` that constrain nothing: `{}` or a description alone, which
 * a generated client types `unknown` (a boolean schema, `false` or `true`, is a deliberate choice).
 */
function unconstrained(schema: unknown, path: string): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const s = schema as Schema;
  const found = Object.keys(s).every((k) => k === 'description') ? [path] : [];
  for (const k of ONE_SCHEMA) if (k in s) found.push(...unconstrained(s[k], `${path}${k === 'items' ? '[]' : k === 'additionalProperties' ? '[*]' : `<${k}>`}`));
  for (const k of SCHEMA_LIST) if (Array.isArray(s[k])) s[k].forEach((b: unknown, i: number) => found.push(...unconstrained(b, `${path}<${k} ${i}>`)));
  for (const k of SCHEMA_MAP) if (s[k] && typeof s[k] === 'object') for (const [name, b] of Object.entries(s[k] as Schema)) found.push(...unconstrained(b, `${path}${k === 'properties' ? '' : `<${k}>`}.${name}`));
  return found;
}

/**
 * Kernel output values that really are arbitrary JSON, by path (`<id> <part>.<field>…`), each with
 * why no type fits. None today: every value a kernel returns has a shape its code knows.
 */
const ARBITRARY_JSON: ReadonlyMap<string, string> = new Map();

/**
 * Where `a` and `b` differ, JSON paths; numbers both under 1e-12 in magnitude count as equal. The
 * examples are written on Node 20 and CI runs them on Node 24 too, whose V8 computes one round-off
 * residual (herotq/quantize's loss_formula_rel_gap, ~3e-15) in other last digits; every answer
 * and every residual above round-off must match exactly.
 */
function differences(a: unknown, b: unknown, path = '$'): string[] {
  if (typeof a === 'number' && typeof b === 'number') return a === b || (Math.abs(a) < 1e-12 && Math.abs(b) < 1e-12) ? [] : [`${path}: ${a} against ${b}`];
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return a === b ? [] : [`${path}: ${JSON.stringify(a)} against ${JSON.stringify(b)}`];
}

describe('kernel output schemas and examples', () => {
  const app = withTestApp();
  let doc: Schema;
  before(async () => {
    doc = (await app().http.get('/openapi.json')).body;
  });

  it('the committed schemas are what the generator writes from the kernels\' declarations', function () {
    // the TypeScript compiler checks the kernel files: seconds on a shared machine
    this.timeout(120_000);
    expect(renderResultSchemas(root, KERNELS) === committed(RESULT_SCHEMAS_FILE), `${RESULT_SCHEMAS_FILE} is stale: npm run kernels:schemas`).to.equal(true);
  });

  it('an edit of a kernel\'s return type changes its schema, so the committed file no longer matches', function () {
    const file = join(root, 'workers', 'kernels', 'ssm-scan.ts');
    const text = readFileSync(file, 'utf8');
    const edited = text.replace('state_norm_final: Math.sqrt(stateNorm),', 'state_norm_final: String(Math.sqrt(stateNorm)),');
    expect(edited).to.not.equal(text);
    const mine = JSON.parse(committed(RESULT_SCHEMAS_FILE))['ssm/scan'];
    expect(kernelOutputSchemas(root, [file])['ssm/scan']).to.deep.equal(mine);
    const changed = kernelOutputSchemas(root, [file], new Map([[file, edited]]))['ssm/scan']!;
    expect((changed.result as Schema).properties.state_norm_final).to.deep.equal({ type: 'string' });
    expect(mine.result.properties.state_norm_final).to.deep.equal({ type: 'number' });
  });

  it('examples compare exactly but for round-off residuals: a changed answer or a residual above 1e-12 is a difference', () => {
    expect(differences({ r: [1, 2.5e-15], s: 'x' }, { r: [1, 2.8e-15], s: 'x' })).to.deep.equal([]);
    expect(differences({ r: [1, 2.5e-15] }, { r: [1.0000000000001, 2.5e-15] })).to.deep.equal(['$.r.0: 1 against 1.0000000000001']);
    expect(differences({ g: 2e-12 }, { g: 3e-12 })).to.deep.equal(['$.g: 2e-12 against 3e-12']);
    expect(differences({ a: 1 }, { a: 1, b: null })).to.deep.equal(['$.b: undefined against null']);
  });

  it('the committed examples are the bodies the kernels answer at their defaults today', function () {
    const fresh = renderKernelExamples(KERNELS);
    const stored = committed(KERNEL_EXAMPLES_FILE);
    if (fresh !== stored) expect(differences(JSON.parse(stored), JSON.parse(fresh)), `${KERNEL_EXAMPLES_FILE} is stale: npm run kernels:schemas`).to.deep.equal([]);
  });

  it('every registered kernel has an entry in both files, and no other id does', () => {
    const ids = KERNELS.map((k) => k.id).sort();
    expect(Object.keys(JSON.parse(committed(RESULT_SCHEMAS_FILE))).sort()).to.deep.equal(ids);
    expect(Object.keys(JSON.parse(committed(KERNEL_EXAMPLES_FILE))).sort()).to.deep.equal(ids);
  });

  it('every kernel route documents real result and checks schemas; a kernel without an entry keeps bare objects', () => {
    for (const def of KERNELS) {
      const { properties } = served(doc, def).schema;
      for (const part of ['result', 'checks']) expect(bare(properties[part]), `${def.id} ${part}`).to.equal(false);
      expect(properties.result.type, def.id).to.equal('object');
    }
    const ssm = served(doc, KERNELS.find((k) => k.id === 'ssm/scan')!).schema.properties;
    expect(ssm.result.required).to.include.members(['y_sample', 'y_digest', 'combine_ops', 'retention']);
    expect(ssm.result.additionalProperties).to.equal(false);
    expect(ssm.result.properties.y_sample).to.deep.equal({ type: 'array', items: { type: 'number' } });
    expect(ssm.checks.properties.parallel_matches_sequential).to.deep.equal({ type: 'boolean' });
    expect(ssm.constants.properties.A).to.deep.equal({ type: 'string' });
    const fixture = FIXTURE_KERNELS.get('fixture/dice-tally')!;
    const envelope = toJsonSchema(kernelResponseSchema(fixture)) as Schema;
    for (const part of ['result', 'checks', 'constants']) expect(bare(envelope.properties[part]), part).to.equal(true);
  });

  it('no value inside a kernel\'s result, checks or constants is left unconstrained', () => {
    const schemas = JSON.parse(committed(RESULT_SCHEMAS_FILE)) as Record<string, Record<string, Schema>>;
    const found: string[] = [];
    for (const [id, parts] of Object.entries(schemas)) for (const [part, schema] of Object.entries(parts)) found.push(...unconstrained(schema, `${id} ${part}`));
    expect(found.filter((p) => !ARBITRARY_JSON.has(p)), 'values typed unknown: give them their real type in the kernel file').to.deep.equal([]);
    // an allowed path that is now typed is a stale entry
    expect([...ARBITRARY_JSON.keys()].filter((p) => !found.includes(p)), 'allowed but typed').to.deep.equal([]);
  });

  it('the unconstrained walk finds `{}` and a lone description at any depth, and nothing in a typed schema', () => {
    const typed = { type: 'object', properties: { a: { type: 'array', items: { type: 'number' } }, b: { anyOf: [{ type: 'null' }, { type: 'string' }] } }, additionalProperties: false };
    expect(unconstrained(typed, 'x')).to.deep.equal([]);
    expect(unconstrained({}, 'x')).to.deep.equal(['x']);
    expect(unconstrained({ description: 'anything' }, 'x')).to.deep.equal(['x']);
    const loose = {
      type: 'object',
      properties: { rows: { type: 'array', items: { type: 'object', additionalProperties: {} } }, pick: { anyOf: [{ type: 'null' }, { description: 'd' }] } },
      additionalProperties: false,
    };
    expect(unconstrained(loose, 'k result')).to.deep.equal(['k result.rows[][*]', 'k result.pick<anyOf 1>']);
    expect(unconstrained({ type: 'array', prefixItems: [{ type: 'number' }, {}], items: false }, 'x')).to.deep.equal(['x<prefixItems 1>']);
  });

  it('a kernel value annotated `Record<string, unknown>` is reported by that walk', function () {
    const file = join(root, 'workers', 'kernels', 'elf-flow.ts');
    const text = readFileSync(file, 'utf8');
    const edited = text.replace('const shown: ShownParticle[] = [];', 'const shown: Record<string, unknown>[] = [];');
    expect(edited).to.not.equal(text);
    const { result } = kernelOutputSchemas(root, [file], new Map([[file, edited]]))['elf/flow']!;
    expect(unconstrained(result, 'elf/flow result')).to.deep.equal(['elf/flow result.particles[][*]']);
    expect(unconstrained(kernelOutputSchemas(root, [file])['elf/flow']!.result, 'elf/flow result')).to.deep.equal([]);
  });

  it('every `informative` path of a kernel names a field of its declared result', () => {
    const schemas = JSON.parse(committed(RESULT_SCHEMAS_FILE)) as Record<string, { result: Schema }>;
    let paths = 0;
    for (const def of KERNELS) {
      for (const path of Object.keys(def.informative ?? {})) {
        let s: Schema | undefined = schemas[def.id]!.result;
        for (const part of path.split('.')) {
          // through arrays and unions to the object that holds the next key
          while (s && !s.properties && (s.items || s.anyOf)) s = s.items ?? s.anyOf.find((b: Schema) => b.properties);
          s = s?.properties?.[part];
        }
        expect(s, `${def.id} informative ${path}`).to.not.equal(undefined);
        paths++;
      }
    }
    expect(paths).to.be.above(0);
  });

  it('each kernel\'s body at its defaults, its worst case and seed 7 matches the served schema of its route', function () {
    this.timeout(120_000);
    for (const def of KERNELS) {
      const { schema } = served(doc, def);
      for (const [name, overrides] of [['defaults', {}], ['worst case', def.worstCase], ['seed 7', { seed: 7 }]] as const) {
        expect(problems(schema, JSON.parse(runBody(def, overrides))), `${def.id} at ${name}`).to.deep.equal([]);
      }
    }
  });

  it('a schema with one property type flipped refuses the real body', () => {
    let flipped = 0;
    for (const def of KERNELS) {
      const { schema } = served(doc, def);
      const body = JSON.parse(runBody(def));
      const wrong = structuredClone(schema);
      const result = wrong.properties.result;
      // the first required property of result (of the first branch when result is a union)
      const target = result.properties ? result : result.anyOf?.find((b: Schema) => b.properties);
      const key = target.required[0];
      const was = JSON.stringify(target.properties[key]);
      target.properties[key] = was.includes('"string"') ? { type: 'number' } : { type: 'string' };
      expect(problems(wrong, body).join('\n'), `${def.id} with result.${key} flipped`).to.match(new RegExp(`/result/${key}|anyOf`));
      flipped++;
    }
    expect(flipped).to.equal(KERNELS.length);
  });

  it('each kernel route\'s examples are the defaults and their real body, and match its schemas', () => {
    for (const def of KERNELS) {
      const { schema, op } = served(doc, def);
      const example = op.responses['200'].content['application/json'].example;
      expect(problems(schema, example), def.id).to.deep.equal([]);
      const query: Record<string, unknown> = Object.fromEntries(op.parameters.filter((p: Schema) => p.example !== undefined).map((p: Schema) => [p.name, p.example]));
      if (def.input === 'request') expect(Object.keys(query), def.id).to.deep.equal(['request']);
      // the documented query, validated and resolved as the route does, is the defaults the body echoes
      const route = app().routes.find((r) => r.path === `${API}${kernelPath(def)}` && r.method === 'GET')!;
      const { value, error } = route.query!.validate(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])));
      expect(error, def.id).to.equal(undefined);
      const { params } = effectiveParams(def, value, query);
      expect(params, def.id).to.deep.equal(defaultParams(def));
      expect(differences(example, JSON.parse(runBody(def))), def.id).to.deep.equal([]);
      expect(kernelParamsSchema(def).validate(example.params).error, def.id).to.equal(undefined);
    }
  });
});
