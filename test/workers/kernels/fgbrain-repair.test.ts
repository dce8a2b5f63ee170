import { expect } from 'chai';
import repair, { stretchBound } from '../../../workers/kernels/fgbrain-repair.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

describe('kernel fgbrain/repair', () => {
  it('healing keeps the graph connected, adds ≤ 3 edges per node per deletion and respects the stretch bound (30 runs)', () => {
    for (let seed = 0; seed < 10; seed++) {
      for (const m of [1, 2, 3]) {
        const r = runRaw(repair, { seed, m, lesion: [0, 3, 5, 7] }).result as any;
        expect(r.before.components).to.equal(1);
        expect(r.after_healed.components).to.equal(1);
        for (const step of r.steps) {
          expect(step.pairs_disconnected).to.equal(0);
          expect(step.max_new_edges_per_node).to.be.at.most(3);
          expect(step.worst_stretch).to.be.at.most(step.stretch_bound);
          expect(step.stretch_bound).to.equal(stretchBound(step.neighbours.length));
          // the added edges are exactly the heap-layout tree among the neighbours (minus existing ones)
          for (const [a, b] of step.added_edges) {
            const i = step.neighbours.indexOf(a);
            const j = step.neighbours.indexOf(b);
            expect([2 * i + 1, 2 * i + 2]).to.include(j);
          }
        }
        // spectral consistency: λ2 > 0 exactly when connected
        expect(r.after_healed.lambda2 > 1e-9).to.equal(r.after_healed.components === 1);
      }
    }
  });

  it('healing matters: on a tree (m = 1) deleting internal nodes disconnects the unhealed graph only', () => {
    const r = runRaw(repair, { m: 1 }).result as any;
    expect(r.after_unhealed.components).to.be.greaterThan(1);
    expect(r.after_healed.components).to.equal(1);
    const none = runRaw(repair, { m: 1, heal: 'none' }).result as any;
    expect(none.after_healed.components).to.equal(none.after_unhealed.components);
    expect(none.after_healed.total_edges_added).to.equal(0);
  });

  it('defaults to the three largest in-degrees; validates lesions', () => {
    const r = runRaw(repair, {}).result as any;
    expect(r.lesion_effective).to.have.length(3);
    expect(stretchBound(1)).to.equal(0);
    expect(stretchBound(8)).to.equal(4);
    expect(runBody(repair, { seed: 4 })).to.equal(runBody(repair, { seed: 4 }));
    expect(rejects(repair, { n: 16, lesion: [20] })).to.deep.equal(['lesion:constraint']);
    expect(rejects(repair, { lesion: [1, 1] })).to.deep.equal(['lesion.1:array.unique']);
    expect(rejects(repair, { heal: 'magic' })).to.deep.equal(['heal:any.only']);
  });
});
