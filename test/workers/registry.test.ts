import { expect } from 'chai';
import { KERNELS, KERNELS_BY_ID } from '../../workers/registry.js';
import { kernelPath } from '../../workers/kernel-def.js';
import { runBody } from '../helpers/kernels.js';

// Generous against CI noise: the design target is 100 ms of worker time at the worst bound.
const BUDGET_MS = 1000;

describe('workers/registry', () => {
  it('has unique ids and paths under the API prefix (or the khipu prefix)', () => {
    expect(KERNELS_BY_ID.size).to.equal(KERNELS.length);
    for (const def of KERNELS) expect(kernelPath(def)).to.match(/^\/api\/svc\/(v1\/)?[a-z0-9/-]+$/);
  });

  for (const def of KERNELS) {
    describe(def.id, () => {
      // determinism and bounds: test/kernels/contract.test.ts
      it('answers at defaults with the envelope, and at its worst case within budget', () => {
        const body = JSON.parse(runBody(def));
        expect(body).to.include({ schema: 'svc.kernel/v1', kernel: def.id, seed: 42 });
        const t0 = performance.now();
        // query kernels receive strings, request kernels JSON values: exercise the same parsing path
        const worst = def.input === 'query' ? Object.fromEntries(Object.entries(def.worstCase).map(([k, v]) => [k, String(v)])) : def.worstCase;
        runBody(def, worst);
        expect(performance.now() - t0).to.be.below(BUDGET_MS);
      });
    });
  }
});
