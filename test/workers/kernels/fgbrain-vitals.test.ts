import { expect } from 'chai';
import fire from '../../../workers/kernels/fgbrain-fire.js';
import vitals from '../../../workers/kernels/fgbrain-vitals.js';
import energy, { ATP_DEFAULTS } from '../../../workers/kernels/fgbrain-vitals-energy.js';
import { eigenvaluesBelow, lif, priceDag } from '../../helpers/fgbrain-reference.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pvar = (xs: number[]) => {
  const mu = mean(xs);
  return mean(xs.map((x) => (x - mu) ** 2));
};
type Case = { seed: number; n: number; m: number; duration_ms: number; drive_mv: number; sources: number; w_syn_mv: number; bg_rate_hz: number; bg_w_mv: number };
const CASES: Case[] = [
  { seed: 42, n: 48, m: 2, duration_ms: 500, drive_mv: 25, sources: 4, w_syn_mv: 10, bg_rate_hz: 0, bg_w_mv: 4 },
  { seed: 7, n: 60, m: 2, duration_ms: 300, drive_mv: 35, sources: 2, w_syn_mv: 8, bg_rate_hz: 5, bg_w_mv: 7 },
  { seed: 5, n: 40, m: 1, duration_ms: 200, drive_mv: 22, sources: 3, w_syn_mv: 6, bg_rate_hz: 0, bg_w_mv: 4 },
];
const run = (c: Case) => lif(priceDag(c.seed, c.n, c.m), { durationMs: c.duration_ms, driveMv: c.drive_mv, sources: c.sources, wSynMv: c.w_syn_mv, bgRateHz: c.bg_rate_hz, bgWMv: c.bg_w_mv }, c.seed, true);
/** Spikes of step s (1-based) fall in bin ⌊(s − 1)/width⌋: step s covers ((s − 1)·dt, s·dt]. */
const bins = (spikes: number[][], steps: number, width: number) => {
  const out = new Array<number>(Math.ceil(steps / width)).fill(0);
  for (const l of spikes) for (const s of l) addAt(out, Math.floor((s - 1) / width));
  return out;
};

const fireAs = (q: Record<string, unknown>) => runRaw(fire, Object.fromEntries(Object.entries(q).map(([k, v]) => [k, String(v)]))).result as any;

describe('kernel fgbrain/vitals', () => {
  it('every reported value recomputed from an independent LIF run and its voltage trace', () => {
    for (const c of CASES) {
      const v = runRaw(vitals, c).result as any;
      const ref = run(c);
      const total = ref.spikes.reduce((a, l) => a + l.length, 0);
      const active = ref.spikes.filter((l) => l.length).length;
      expect(v.spike_totals).to.deep.equal({ spikes: total, per_neuron: ref.spikes.map((l) => l.length) });
      expect(v.rates.mean_hz).to.be.closeTo(total / c.n / (c.duration_ms / 1000), 1e-12);
      expect(v.rates.active_fraction).to.equal(active / c.n);
      const cvs = ref.spikes.map((l) => (l.length >= 3 ? Math.sqrt(pvar(l.slice(1).map((x, i) => x - l[i]!))) / mean(l.slice(1).map((x, i) => x - l[i]!)) : null));
      const defined = cvs.filter((x): x is number => x !== null);
      expect(v.isi_cv.mean).to.be.closeTo(mean(defined), 1e-12);
      expect(v.isi_cv.root).to.be.closeTo(cvs[0]!, 1e-12);
      const counts = bins(ref.spikes, ref.steps, 100);
      expect(v.population_counts_10ms).to.deep.equal(counts);
      expect(v.fano).to.be.closeTo(pvar(counts) / mean(counts), 1e-12);
      // χ² = Var_t(V̄) / mean_i Var_t(V_i), two-pass variances over the trace
      const vbar = ref.trace.map((row) => mean(row));
      const perNeuron = Array.from({ length: c.n }, (_, i) => pvar(ref.trace.map((row) => row[i]!)));
      expect(v.synchrony_chi).to.be.closeTo(Math.sqrt(pvar(vbar) / mean(perNeuron)), 1e-9);
      const av = bins(ref.spikes, ref.steps, 15);
      const ratios = av.slice(0, -1).flatMap((x, t) => (x > 0 ? [av[t + 1]! / x] : []));
      expect(v.branching_ratio).to.be.closeTo(mean(ratios), 1e-12);
      const onlySources = ref.spikes.every((l, i) => !l.length || i < c.sources);
      expect(v.status).to.equal(onlySources ? 'source-only' : active / c.n >= 0.5 ? 'propagating' : 'partial');
      // graph vitals: connected, λ2 an eigenvalue with exactly one (zero) eigenvalue below it
      const dag = priceDag(c.seed, c.n, c.m);
      const L = Array.from({ length: c.n }, (_, i) => Array.from({ length: c.n }, (_, j) => (i === j ? dag.deps[i]!.length + dag.indeg[i]! : dag.deps[i]!.includes(j) || dag.deps[j]!.includes(i) ? -1 : 0)));
      expect(v.graph.components).to.equal(1);
      expect(eigenvaluesBelow(L, v.graph.lambda2 - 1e-7)).to.equal(1);
      expect(eigenvaluesBelow(L, v.graph.lambda2 + 1e-7)).to.be.at.least(2);
    }
    // the three statuses other than silent are all exercised above
    expect(CASES.map((c) => (runRaw(vitals, c).result as any).status)).to.deep.equal(['propagating', 'partial', 'source-only']);
  });

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
});

describe('kernel fgbrain/vitals/energy', () => {
  it('every field recomputed from independent LIF counts and the coefficients sent (not the ones echoed)', () => {
    const coef = { atp_per_spike: 2.5e8, atp_per_synaptic_event: 7e4, atp_rest_per_neuron_s: 3e8, joule_per_atp: 8e-20 };
    for (const c of CASES) {
      for (const k of [coef, null]) {
        const e = runRaw(energy, { ...c, ...(k ?? {}) }).result as any;
        const a = k ?? { atp_per_spike: (0.47 * 3.29e9) / 4, atp_per_synaptic_event: 1.4e5 * 0.25, atp_rest_per_neuron_s: 0.13 * 3.29e9, joule_per_atp: 55e3 / 6.02214076e23 };
        const ref = run(c);
        const dag = priceDag(c.seed, c.n, c.m);
        const S = ref.spikes.reduce((s, l) => s + l.length, 0);
        const Y = ref.spikes.reduce((s, l, i) => s + l.length * dag.indeg[i]!, 0);
        const R = c.n * (c.duration_ms / 1000);
        expect(e.counts).to.deep.equal({ spikes: S, synaptic_events: Y, neuron_seconds: R });
        const parts = { spikes: S * a.atp_per_spike, synaptic: Y * a.atp_per_synaptic_event, resting: R * a.atp_rest_per_neuron_s };
        const total = parts.spikes + parts.synaptic + parts.resting;
        const rel = (x: number, y: number) => expect(x).to.be.closeTo(y, 1e-12 * Math.abs(y));
        for (const key of ['spikes', 'synaptic', 'resting'] as const) {
          rel(e.atp[key], parts[key]);
          rel(e.joules[key], parts[key] * a.joule_per_atp);
          expect(e.shares[key]).to.be.closeTo(parts[key] / total, 1e-12);
        }
        rel(e.atp.total, total);
        rel(e.joules.total, total * a.joule_per_atp);
        rel(e.power_w, (total * a.joule_per_atp) / (c.duration_ms / 1000));
        rel(e.joules_per_spike, (total * a.joule_per_atp) / S);
        expect(e.coefficients).to.deep.equal(a);
      }
    }
    expect((runRaw(energy, { drive_mv: 10 }).result as any).joules_per_spike).to.equal(null);
    expect((runRaw(energy, { drive_mv: 10, atp_rest_per_neuron_s: 0 }).result as any).shares).to.equal(null);
  });

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
  });
});
