import { expect } from 'chai';
import fire from '../../../workers/kernels/fgbrain-fire.js';
import graph from '../../../workers/kernels/fgbrain-graph.js';
import { lif, priceDag } from '../../helpers/fgbrain-reference.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const TAU = 20;
const VTH = 20;

describe('kernel fgbrain/fire', () => {
  it('every reported value recomputed by the independent LIF reference (with and without background input)', () => {
    const cases = [
      { seed: 42, n: 48, m: 2, duration_ms: 500, drive_mv: 25, sources: 4, w_syn_mv: 10, bg_rate_hz: 0, bg_w_mv: 4 },
      { seed: 7, n: 20, m: 3, duration_ms: 300, drive_mv: 40, sources: 2, w_syn_mv: 8, bg_rate_hz: 80, bg_w_mv: 6 },
      { seed: 3, n: 96, m: 4, duration_ms: 2000, drive_mv: 100, sources: 96, w_syn_mv: 20, bg_rate_hz: 200, bg_w_mv: 20 },
    ];
    for (const c of cases) {
      const r = runRaw(fire, Object.fromEntries(Object.entries(c).map(([k, v]) => [k, String(v)]))).result as any;
      const ref = lif(priceDag(c.seed, c.n, c.m), { durationMs: c.duration_ms, driveMv: c.drive_mv, sources: c.sources, wSynMv: c.w_syn_mv, bgRateHz: c.bg_rate_hz, bgWMv: c.bg_w_mv }, c.seed);
      const dag = priceDag(c.seed, c.n, c.m);
      expect(r.neurons).to.deep.equal(ref.spikes.map((list, id) => ({ id, spikes: list.length, rate_hz: list.length / (c.duration_ms / 1000), first_spike_ms: list.length ? list[0]! * 0.1 : null })));
      const all = ref.spikes.flatMap((list, id) => list.map((s) => [s, id])).sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
      expect(r.raster_truncated).to.equal(all.length > 4000);
      expect(r.raster).to.deep.equal(all.slice(0, 4000).map(([s, id]) => [s! * 0.1, id]));
      const pop = new Array<number>(Math.ceil(c.duration_ms / 10)).fill(0);
      for (const [s] of all) addAt(pop, Math.min(pop.length - 1, Math.floor((s! * 0.1) / 10)));
      expect(r.population_rate_hz).to.deep.equal(pop.map((k) => k / c.n / 0.01));
      expect(r.totals).to.deep.equal({ spikes: all.length, active_neurons: ref.spikes.filter((l) => l.length).length, synaptic_events: ref.spikes.reduce((s, l, id) => s + l.length * dag.indeg[id]!, 0) });
      const T = 20 * Math.log(c.drive_mv / (c.drive_mv - 20));
      expect(r.theory.root_first_spike_ms).to.be.closeTo(T, 1e-12);
      expect(r.theory.root_isi_ms).to.be.closeTo(2 + T, 1e-12);
    }
    // the third case has more than 4000 spikes: the raster is cut, the totals are not
    expect((runRaw(fire, { seed: '3', n: '96', m: '4', duration_ms: '2000', drive_mv: '100', sources: '96', w_syn_mv: '20', bg_rate_hz: '200', bg_w_mv: '20' }).result as any).raster_truncated).to.equal(true);
    expect((runRaw(fire, { drive_mv: '20' }).result as any).theory).to.deep.equal({ root_isi_ms: null, root_first_spike_ms: null });
  });

  it('the root neuron spikes at τ·ln(V∞/(V∞−Vth)) and fires with ISI T = τ_ref + that, within dt, for several drives', () => {
    for (const drive of [21, 25, 30, 50, 100]) {
      const r = runRaw(fire, { drive_mv: String(drive), duration_ms: '800' }).result as any;
      const t = TAU * Math.log(drive / (drive - VTH));
      const root = r.raster.filter(([, id]: number[]) => id === 0).map(([ms]: number[]) => ms);
      expect(root[0]).to.be.within(t - 1e-9, t + 0.1 + 1e-9);
      for (let i = 1; i < root.length; i++) expect(root[i] - root[i - 1]).to.be.within(2 + t - 1e-9, 2 + t + 0.1 + 1e-9);
      expect(r.theory.root_isi_ms).to.be.closeTo(2 + t, 1e-12);
    }
  });

  it('is silent below threshold or without sources, and causal: no neuron fires before a presynaptic spike + 1.5 ms', () => {
    expect((runRaw(fire, { drive_mv: '19.9' }).result as any).totals.spikes).to.equal(0);
    expect((runRaw(fire, { sources: '0' }).result as any).totals.spikes).to.equal(0);
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(fire, { seed: String(seed) }).result as any;
      const g = runRaw(graph, { seed: String(seed) }).result as any;
      const first = r.neurons.map((x: { first_spike_ms: number | null }) => x.first_spike_ms);
      // synapse j -> t for every dependency edge t -> j
      for (let t = 4; t < g.counts.nodes; t++) {
        if (first[t] === null) continue;
        const pre = g.edges.filter(([src]: number[]) => src === t).map(([, dst]: number[]) => first[dst!]).filter((x: number | null) => x !== null);
        expect(pre.length, `neuron ${t} fired without input`).to.be.greaterThan(0);
        expect(first[t]).to.be.at.least(Math.min(...pre) + 1.5 - 1e-9);
      }
      // bookkeeping
      const total = r.neurons.reduce((s: number, x: { spikes: number }) => s + x.spikes, 0);
      expect(total).to.equal(r.totals.spikes).and.equal(r.raster.length);
      const events = r.neurons.reduce((s: number, x: { id: number; spikes: number }) => s + x.spikes * g.nodes[x.id].indeg, 0);
      expect(r.totals.synaptic_events).to.equal(events);
    }
  });

  it('propagation needs strong enough synapses (regression trend)', () => {
    const weak = (runRaw(fire, { w_syn_mv: '6' }).result as any).totals.active_neurons;
    const strong = (runRaw(fire, { w_syn_mv: '12' }).result as any).totals.active_neurons;
    expect(weak).to.be.at.most(4);
    expect(strong).to.be.greaterThan(weak);
  });

  it('background input is seeded: the same seed repeats a run, another seed changes it; sources ≤ n', () => {
    expect(runBody(fire, { seed: '5', bg_rate_hz: '50' })).to.equal(runBody(fire, { seed: '5', bg_rate_hz: '50' }));
    expect(runBody(fire, { seed: '5', bg_rate_hz: '50' })).to.not.equal(runBody(fire, { seed: '6', bg_rate_hz: '50' }));
    expect(rejects(fire, { n: '8', sources: '9' })).to.deep.equal(['sources:constraint']);
  });
});
