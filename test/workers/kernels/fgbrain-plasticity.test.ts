import { expect } from 'chai';
import plasticity, { onlineDw } from '../../../workers/kernels/fgbrain-plasticity.js';
import fire from '../../../workers/kernels/fgbrain-fire.js';
import { lif, priceDag } from '../../helpers/fgbrain-reference.js';
import { rejects, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

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

  it('every field recomputed with asymmetric windows and bounds: all-pairs dw on independent LIF trains, clamped w, summary, histogram, balance', () => {
    const cases = [
      { seed: 3, n: 30, m: 3, duration_ms: 400, drive_mv: 30, sources: 3, w_syn_mv: 12, a_plus: 0.02, a_minus: 0.005, tau_plus_ms: 7, tau_minus_ms: 45, w_init: 0.02, w_max: 0.05 },
      { seed: 8, n: 48, m: 2, duration_ms: 600, drive_mv: 25, sources: 4, w_syn_mv: 10, a_plus: 0.004, a_minus: 0.09, tau_plus_ms: 60, tau_minus_ms: 3, w_init: 2, w_max: 5 },
    ];
    const clamped: boolean[][] = [];
    for (const c of cases) {
      const r = runRaw(plasticity, c).result as any;
      const dag = priceDag(c.seed, c.n, c.m);
      // bg_rate_hz is not used: plasticity always runs the network without background input
      const trains = lif(dag, { durationMs: c.duration_ms, driveMv: c.drive_mv, sources: c.sources, wSynMv: c.w_syn_mv, bgRateHz: 0, bgWMv: 0 }, c.seed).spikes.map((l) => l.map((s) => Math.round(s) / 10));
      const win = (d: number): number => (d > 0 ? c.a_plus * Math.exp(-d / c.tau_plus_ms) : d < 0 ? -c.a_minus * Math.exp(d / c.tau_minus_ms) : 0);
      const expected = dag.deps.flatMap((list, t) => list.map((j) => {
        let dw = 0;
        for (const a of trains[j]!) for (const b of trains[t]!) dw += win(b - a);
        return { pre: j, post: t, pre_spikes: trains[j]!.length, post_spikes: trains[t]!.length, dw, w: Math.min(c.w_max, Math.max(0, c.w_init + dw)) };
      }));
      expect(r.synapses.length).to.equal(expected.length);
      r.synapses.forEach((syn: any, k: number) => {
        const e = expected[k]!;
        expect([syn.pre, syn.post, syn.pre_spikes, syn.post_spikes]).to.deep.equal([e.pre, e.post, e.pre_spikes, e.post_spikes]);
        expect(syn.dw).to.be.closeTo(e.dw, 1e-12);
        expect(syn.w).to.be.closeTo(e.w, 1e-12);
      });
      const dws = expected.map((e) => e.dw);
      // the sign counts: a dw within 1e-12 of 0 would be ambiguous; none is in these cases except exact zeros
      expect(dws.every((d) => d === 0 || Math.abs(d) > 1e-9)).to.equal(true);
      expect(r.summary.potentiated).to.equal(dws.filter((d) => d > 0).length);
      expect(r.summary.depressed).to.equal(dws.filter((d) => d < 0).length);
      expect(r.summary.unchanged).to.equal(dws.filter((d) => d === 0).length);
      expect(r.summary.mean_dw).to.be.closeTo(dws.reduce((a, b) => a + b, 0) / dws.length, 1e-13);
      const hist = new Array<number>(10).fill(0);
      for (const e of expected) addAt(hist, Math.min(9, Math.floor((e.w / c.w_max) * 10)));
      expect(r.weight_histogram).to.deep.equal(hist);
      expect(r.window).to.deep.equal({ a_plus: c.a_plus, a_minus: c.a_minus, tau_plus_ms: c.tau_plus_ms, tau_minus_ms: c.tau_minus_ms, balance: (c.a_minus * c.tau_minus_ms) / (c.a_plus * c.tau_plus_ms) });
      clamped.push([expected.some((e) => e.w === 0), expected.some((e) => e.w === c.w_max)]);
    }
    // precondition: the first case reaches both clamps, so clamp(w_init + dw, 0, w_max) is exercised
    expect(clamped[0]).to.deep.equal([true, true]);
    expect((runRaw(plasticity, { a_plus: 0 }).result as any).window.balance).to.equal(null);
  });

  it('potentiation dominates in the feed-forward net at the defaults; w_init must not exceed w_max', () => {
    const s = (runRaw(plasticity, {}).result as any).summary;
    expect(s.potentiated).to.be.greaterThan(s.depressed);
    expect(rejects(plasticity, { w_init: 2, w_max: 1 })).to.deep.equal(['w_init:constraint']);
  });
});
