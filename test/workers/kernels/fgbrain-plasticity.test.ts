import { expect } from 'chai';
import plasticity, { onlineDw } from '../../../workers/kernels/fgbrain-plasticity.js';
import fire from '../../../workers/kernels/fgbrain-fire.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const W = { aPlus: 0.01, aMinus: 0.0105, tauPlus: 20, tauMinus: 20 };
/** The window written out in the test. */
const window = (d: number): number => (d > 0 ? 0.01 * Math.exp(-d / 20) : d < 0 ? -0.0105 * Math.exp(d / 20) : 0);

describe('kernel fgbrain/plasticity', () => {
  it('one pre/post pair gives the window closed form; simultaneous gives 0', () => {
    expect(onlineDw([10], [15], W)).to.be.closeTo(0.01 * Math.exp(-5 / 20), 1e-15);
    expect(onlineDw([15], [10], W)).to.be.closeTo(-0.0105 * Math.exp(-5 / 20), 1e-15);
    expect(onlineDw([10], [10], W)).to.equal(0);
    const sym = { aPlus: 0.01, aMinus: 0.01, tauPlus: 20, tauMinus: 20 };
    expect(onlineDw([1, 7.5, 30], [3, 31], sym)).to.be.closeTo(-onlineDw([3, 31], [1, 7.5, 30], sym), 1e-15);
  });

  it('online equals the all-pairs sum computed in the test from /fgbrain/fire trains, for every synapse (5 seeds)', () => {
    for (let seed = 0; seed < 5; seed++) {
      const r = runRaw(plasticity, { seed }).result as any;
      const f = runRaw(fire, { seed: String(seed), duration_ms: '500' }).result as any;
      const trains = new Map<number, number[]>();
      for (const [t, id] of f.raster) trains.set(id, [...(trains.get(id) ?? []), t]);
      for (const syn of r.synapses) {
        const pre = trains.get(syn.pre) ?? [];
        const post = trains.get(syn.post) ?? [];
        let ref = 0;
        for (const a of pre) for (const b of post) ref += window(b - a);
        expect(syn.dw).to.be.closeTo(ref, 1e-12);
        if (pre.length === 0 || post.length === 0) expect(syn.dw).to.equal(0);
        expect(syn.w).to.be.within(0, 1);
      }
    }
  });

  it('potentiation dominates in the feed-forward net at the defaults; keys are validated', () => {
    const s = (runRaw(plasticity, {}).result as any).summary;
    expect(s.potentiated).to.be.greaterThan(s.depressed);
    expect(runBody(plasticity, { seed: 9 })).to.equal(runBody(plasticity, { seed: 9 }));
    expect(rejects(plasticity, { w_init: 2, w_max: 1 })).to.deep.equal(['w_init:constraint']);
    expect(rejects(plasticity, { a_plus: 0.5 })).to.deep.equal(['a_plus:number.max']);
  });
});
