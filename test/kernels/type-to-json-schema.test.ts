/**
 * The JSON Schema a kernel's declared output becomes, read by the compiler from a kernel file that
 * exists only in memory: every shape the converter knows, what JSON makes of typed arrays and
 * optional properties, and a refusal for what JSON cannot carry.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/load.js';
import { kernelOutputSchemas, type KernelOutputSchemas } from '../../src/kernels/kernel-output-schemas.js';

const root = projectRoot();
// beside the real kernels, so its imports resolve as theirs do; never written to disk
const FILE = join(root, 'workers', 'kernels', 'virtual-shapes.ts');

function schemasOf(run: string): KernelOutputSchemas {
  const text = `import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
interface Cell {
  /** row index */
  row: number;
  label?: string;
}
export default defineKernel({
  id: 'virtual/shapes', version: 1, input: 'query', summary: 's', technique: 't', references: [], honesty: 'h',
  params: { n: int(1, 8, 2).description('n') },
  worstCase: { n: 8 },
  run({ n }, rng) { ${run} },
});
`;
  const out = kernelOutputSchemas(root, [FILE], new Map([[FILE, text]]))['virtual/shapes'];
  if (!out) throw new Error('the virtual kernel was not found');
  return out;
}

describe('kernel output types as JSON Schema', function () {

  it('objects, optional keys, arrays, typed arrays, tuples, records, literal unions, null and documented interfaces', () => {
    const out = schemasOf(`
      const mode: 'fast' | 'slow' = n > 4 ? 'fast' : 'slow';
      const maybe: number[] | null = n > 1 ? [n] : null;
      const cells: Cell[] = [{ row: 0 }];
      const byName: Record<string, number> = { a: n };
      const pair: [number, string] = [n, 'x'];
      const opt: { x?: number; y: number | undefined } = { y: undefined };
      const holes: (string | undefined)[] = [undefined];
      return {
        result: { mode, maybe, holes, cells, byName, pair, opt, f64: new Float64Array(n), i32: new Int32Array(n), flag: n > 2, kind: 'fixed' as const, draw: rng.stream('x').next() },
        checks: { ok: true },
      };`);
    const result = out.result as { properties: Record<string, unknown>; required: string[]; additionalProperties: unknown };
    expect(result.additionalProperties).to.equal(false);
    expect(result.required).to.deep.equal(['mode', 'maybe', 'holes', 'cells', 'byName', 'pair', 'opt', 'f64', 'i32', 'flag', 'kind', 'draw']);
    expect(result.properties).to.deep.equal({
      mode: { enum: ['fast', 'slow'] },
      maybe: { anyOf: [{ type: 'array', items: { type: 'number' } }, { type: 'null' }] },
      holes: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
      cells: {
        type: 'array',
        items: { type: 'object', properties: { row: { description: 'row index', type: 'number' }, label: { type: 'string' } }, required: ['row'], additionalProperties: false },
      },
      byName: { type: 'object', additionalProperties: { type: 'number' } },
      pair: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }], minItems: 2, items: false, maxItems: 2 },
      opt: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, additionalProperties: false },
      f64: { type: 'array', items: { type: 'number' } },
      i32: { type: 'array', items: { type: 'integer' } },
      flag: { type: 'boolean' },
      kind: { const: 'fixed' },
      draw: { type: 'number' },
    });
    expect(out.checks).to.deep.equal({ type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false });
    expect(out).to.not.have.property('constants');
  });

  it('every return of run together: a key some returns lack is optional, checks some lack may be empty', () => {
    const out = schemasOf(`
      if (n > 4) return { result: { a: n, b: 'x' }, checks: { ok: true }, constants: { k: 1 } };
      return { result: { a: n } };`);
    expect(out.result).to.deep.equal({
      anyOf: [
        { type: 'object', properties: { a: { type: 'number' }, b: { type: 'string' } }, required: ['a', 'b'], additionalProperties: false },
        { type: 'object', properties: { a: { type: 'number' } }, required: ['a'], additionalProperties: false },
      ],
    });
    expect(out.checks).to.deep.equal({ anyOf: [{ type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false }, { type: 'object', additionalProperties: false }] });
    expect(out.constants).to.deep.equal({ type: 'object', properties: { k: { type: 'number' } }, required: ['k'], additionalProperties: false });
  });

  it('refuses what JSON cannot carry, naming where', () => {
    expect(() => schemasOf(`return { result: { seen: new Map<string, number>() }, checks: {} };`)).to.throw(/virtual\/shapes result\.seen: Map is not JSON/);
    expect(() => schemasOf(`return { result: { big: BigInt(n) }, checks: {} };`)).to.throw(/result\.big: bigint/);
  });
});
