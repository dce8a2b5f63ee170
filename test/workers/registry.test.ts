import { expect } from 'chai';
import { KERNELS, REGISTRY, kernelRegistry, withKernels } from '../../workers/registry.js';
import { kernelPath, type KernelDef } from '../../workers/kernel-def.js';
import { runBody } from '../helpers/kernels.js';
import { cpuMsOf } from '../helpers/cpu-time.js';

// CPU time, not wall time, so a busy machine does not count; generous against noise: the design
// target is 100 ms of worker time at the worst bound.
const BUDGET_MS = 1000;

describe('workers/registry', () => {
  it('has unique ids, and paths relative to the API prefix (mounted under it)', () => {
    expect(new Set(KERNELS.map((d) => d.id)).size).to.equal(KERNELS.length);
    for (const def of KERNELS) {
      expect(REGISTRY.get(def.id)).to.equal(def);
      expect(kernelPath(def)).to.match(/^(\/[a-z0-9-]+)+$/);
    }
    expect(REGISTRY.get('no/such-kernel')).to.equal(undefined);
  });

  it('refuses a duplicate id, and withKernels adds kernels after the base ones without changing the base', () => {
    const [a, b] = KERNELS as [KernelDef, KernelDef];
    expect(() => kernelRegistry([a, b, a])).to.throw(`duplicate kernel id ${a.id}`);
    expect(() => withKernels(REGISTRY, [b])).to.throw(`duplicate kernel id ${b.id}`);
    const extra = { ...a, id: 'extra/kernel' };
    const more = withKernels(REGISTRY, [extra]);
    expect(more.kernels).to.deep.equal([...KERNELS, extra]);
    expect(more.get('extra/kernel')).to.equal(extra);
    expect(REGISTRY.get('extra/kernel')).to.equal(undefined);
  });

  it('informative fields are declared with a reason, exist in the result as numbers, and are listed in the body', function () {
    // every kernel runs once: seconds on a quiet machine, minutes on a loaded one
    this.timeout(300_000);
    const declaring = KERNELS.filter((d) => d.informative);
    expect(declaring.map((d) => d.id).sort()).to.deep.equal(['flower/graph', 'goat/transport', 'inplacettt/adapt', 'kan/fit', 'keyless/attention', 'mla/latent-compress', 'nsa/simulate', 'ssm/scan']);
    const numeric = (v: unknown): boolean => typeof v === 'number' || (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number'));
    for (const def of KERNELS) {
      const body = JSON.parse(runBody(def)) as { result: Record<string, unknown>; informative?: Record<string, string> };
      expect(body.informative, def.id).to.deep.equal(def.informative);
      for (const [path, why] of Object.entries(def.informative ?? {})) {
        expect(why.length, `${def.id} ${path}: a reason`).to.be.above(40);
        const value = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], body.result);
        expect(numeric(value), `${def.id} result.${path} is a number`).to.equal(true);
      }
    }
  });

  for (const def of KERNELS) {
    describe(def.id, () => {
      // determinism and bounds: test/kernels/contract.test.ts
      it('answers at defaults with the envelope, and at its worst case within budget', function () {
        // the budget is on CPU time; the wall time a loaded machine takes is not the kernel's
        this.timeout(120_000);
        const body = JSON.parse(runBody(def));
        expect(body).to.include({ schema: 'svc.kernel/v1', kernel: def.id, seed: 42 });
        // query kernels receive strings, request kernels JSON values: exercise the same parsing path
        const worst = def.input === 'query' ? Object.fromEntries(Object.entries(def.worstCase).map(([k, v]) => [k, String(v)])) : def.worstCase;
        const { ms } = cpuMsOf(() => runBody(def, worst));
        expect(ms, `${def.id} at its worst case: ms of CPU`).to.be.below(BUDGET_MS);
      });
    });
  }
});
