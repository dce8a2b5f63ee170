import { expect } from 'chai';
import fire from '../../../workers/kernels/fgbrain-fire.js';
import graph from '../../../workers/kernels/fgbrain-graph.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const TAU = 20;
const VTH = 20;

describe('kernel fgbrain/fire', () => {
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

  it('is deterministic, seed-sensitive with background input, and bounded', () => {
    expect(runBody(fire, { seed: '5', bg_rate_hz: '50' })).to.equal(runBody(fire, { seed: '5', bg_rate_hz: '50' }));
    expect(runBody(fire, { seed: '5', bg_rate_hz: '50' })).to.not.equal(runBody(fire, { seed: '6', bg_rate_hz: '50' }));
    expect(rejects(fire, { duration_ms: '49' })).to.deep.equal(['duration_ms:number.min']);
    expect(rejects(fire, { drive_mv: '101', w_syn_mv: 'x' })).to.deep.equal(['drive_mv:number.max', 'w_syn_mv:qnum.parse']);
    expect(rejects(fire, { n: '8', sources: '9' })).to.deep.equal(['sources:constraint']);
  });
});
