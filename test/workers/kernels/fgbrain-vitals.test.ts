import { expect } from 'chai';
import fire from '../../../workers/kernels/fgbrain-fire.js';
import vitals from '../../../workers/kernels/fgbrain-vitals.js';
import energy, { ATP_DEFAULTS } from '../../../workers/kernels/fgbrain-vitals-energy.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const fireAs = (q: Record<string, unknown>) => runRaw(fire, Object.fromEntries(Object.entries(q).map(([k, v]) => [k, String(v)]))).result as any;

describe('kernel fgbrain/vitals', () => {
  it('χ stays in [0, 1], the driven root is clock-like (CV 0), and totals equal /fgbrain/fire for the same keys', () => {
    for (let seed = 0; seed < 10; seed++) {
      const v = runRaw(vitals, { seed, bg_rate_hz: seed % 2 ? 40 : 0 }).result as any;
      expect(v.synchrony_chi).to.be.within(0, 1);
      if (seed % 2 === 0) expect(v.isi_cv.root).to.equal(0);
      const f = fireAs({ seed, bg_rate_hz: seed % 2 ? 40 : 0 });
      expect(v.spike_totals.spikes).to.equal(f.totals.spikes);
      expect(v.spike_totals.per_neuron).to.deep.equal(f.neurons.map((x: { spikes: number }) => x.spikes));
    }
  });

  it('Fano, rates and status recompute from the returned counts; silence gives nulls', () => {
    const v = runRaw(vitals, {}).result as any;
    const c = v.population_counts_10ms as number[];
    const mean = c.reduce((a, b) => a + b, 0) / c.length;
    const variance = c.reduce((a, b) => a + (b - mean) ** 2, 0) / c.length;
    expect(v.fano).to.be.closeTo(variance / mean, 1e-12);
    expect(c.reduce((a, b) => a + b, 0)).to.equal(v.spike_totals.spikes);
    expect(v.rates.mean_hz).to.be.closeTo(v.spike_totals.spikes / 48 / 0.5, 1e-12);
    expect(v.status).to.equal(v.rates.active_fraction >= 0.5 ? 'propagating' : 'partial');
    const silent = runRaw(vitals, { drive_mv: 19 }).result as any;
    expect(silent).to.include({ status: 'silent', fano: null, synchrony_chi: null, branching_ratio: null });
    expect((runRaw(vitals, { w_syn_mv: 2 }).result as any).status).to.equal('source-only');
  });

  it('is deterministic and validates its request keys', () => {
    expect(runBody(vitals, { seed: 3 })).to.equal(runBody(vitals, { seed: 3 }));
    expect(runBody(vitals, { seed: 3 })).to.not.equal(runBody(vitals, { seed: 4 }));
    expect(rejects(vitals, { n: 200 })).to.deep.equal(['n:number.max']);
    expect(rejects(vitals, { duration_ms: 100.5 })).to.deep.equal(['duration_ms:number.integer']);
  });
});

describe('kernel fgbrain/vitals/energy', () => {
  it('accounts exactly: totals are counts × coefficients, joules = ATP·j, shares sum to 1, counts equal /fgbrain/fire', () => {
    for (let seed = 0; seed < 5; seed++) {
      const e = runRaw(energy, { seed }).result as any;
      const f = fireAs({ seed });
      expect(e.counts.spikes).to.equal(f.totals.spikes);
      expect(e.counts.synaptic_events).to.equal(f.totals.synaptic_events);
      const c = e.coefficients;
      const total = e.counts.spikes * c.atp_per_spike + e.counts.synaptic_events * c.atp_per_synaptic_event + e.counts.neuron_seconds * c.atp_rest_per_neuron_s;
      expect(e.atp.total).to.be.closeTo(total, 1e-9 * total);
      expect(e.joules.total).to.be.closeTo(total * c.joule_per_atp, 1e-9 * total * c.joule_per_atp);
      expect(e.shares.spikes + e.shares.synaptic + e.shares.resting).to.be.closeTo(1, 1e-12);
    }
    expect(ATP_DEFAULTS.atp_per_spike).to.be.closeTo(3.87e8, 0.01e8);
  });

  it('silence leaves only the resting term, and doubling the duration doubles it exactly; coefficients are monotone', () => {
    const a = runRaw(energy, { drive_mv: 10, duration_ms: 300 }).result as any;
    const b = runRaw(energy, { drive_mv: 10, duration_ms: 600 }).result as any;
    expect([a.atp.spikes, a.atp.synaptic]).to.deep.equal([0, 0]);
    expect(b.atp.total).to.be.closeTo(2 * a.atp.total, 1e-6);
    const base = (runRaw(energy, {}).result as any).atp.total;
    expect((runRaw(energy, { atp_per_synaptic_event: 1e5 }).result as any).atp.total).to.be.greaterThan(base);
    expect(rejects(energy, { joule_per_atp: 1e-17 })).to.deep.equal(['joule_per_atp:number.max']);
  });
});
