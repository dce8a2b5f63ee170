import { expect } from 'chai';
import qec, { buildLayout, UnionFindDecoder } from '../../../workers/kernels/qec-surface-code.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

/** Test-side Z stabilisers of the rotated code: bulk Z plaquettes plus weight-2 Z plaquettes on the left/right edges. */
function zChecks(d: number): number[][] {
  const out: number[][] = [];
  for (let r = -1; r < d; r++)
    for (let c = -1; c < d; c++) {
      if (Math.abs(r + c) % 2 === 1) continue;
      const qs: number[] = [];
      for (const [rr, cc] of [[r, c], [r, c + 1], [r + 1, c], [r + 1, c + 1]] as const) if (rr >= 0 && rr < d && cc >= 0 && cc < d) qs.push(rr * d + cc);
      const inBulk = qs.length === 4;
      const leftRight = qs.length === 2 && (c === -1 || c === d - 1);
      if (inBulk || leftRight) out.push(qs);
    }
  return out;
}

/** Is error ⊕ correction harmless: zero syndrome and even parity on row 0 (a logical Z representative)? */
function corrected(d: number, checks: number[][], error: Uint8Array, corr: Uint8Array): { zero: boolean; logical: number } {
  const res = error.map((x, i) => x ^ corr[i]!);
  const zero = checks.every((qs) => qs.reduce((s, q) => s ^ res[q]!, 0) === 0);
  let logical = 0;
  for (let c = 0; c < d; c++) logical ^= res[c]!;
  return { zero, logical };
}

function* subsets(n: number, maxW: number, start = 0, acc: number[] = []): Generator<number[]> {
  yield acc;
  if (acc.length === maxW) return;
  for (let i = start; i < n; i++) yield* subsets(n, maxW, i + 1, [...acc, i]);
}

const binom = (n: number, k: number): number => {
  let c = 1;
  for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
  return c;
};

/** The estimator rebuilt from kernels-a's description with the test's stabilisers and logical. */
function recompute(seed: number, d: number, p: number) {
  const n = d * d;
  const t = (d - 1) / 2;
  const dec = new UnionFindDecoder(buildLayout(d));
  const checks = zChecks(d);
  let decodes = 0;
  const fails = (err: Uint8Array): boolean => {
    decodes++;
    const r = corrected(d, checks, err, dec.decodeSyndrome(dec.computeSyndrome(err)));
    expect(r.zero).to.equal(true);
    return r.logical === 1;
  };
  const pmf = Array.from({ length: n + 1 }, (_, w) => binom(n, w) * p ** w * (1 - p) ** (n - w));
  const above = (w: number): number => pmf.slice(w + 1).reduce((a, b) => a + b, 0); // P(W > w)
  const target = Math.max(1e-15, 1e-6 * pmf[t + 1]!);
  let wMax = t + 1;
  while (wMax < n && above(wMax) > target) wMax++;
  const sampledMass = pmf.slice(t + 1, wMax + 1).filter((_, i) => binom(n, t + 1 + i) > 2500).reduce((a, b) => a + b, 0);
  const rngs = new RngStreams(seed, 'qec/surface-code');
  const strata: { w: number; binom_weight: number; mode: string; trials: number; failures: number; f: number }[] = [];
  for (let w = t + 1; w <= wMax; w++) {
    let trials = 0;
    let failures = 0;
    if (binom(n, w) <= 2500) {
      for (const s of subsets(n, w)) {
        if (s.length !== w) continue;
        const err = new Uint8Array(n);
        for (const q of s) err[q] = 1;
        trials++;
        if (fails(err)) failures++;
      }
    } else {
      trials = Math.max(32, Math.round((2048 * pmf[w]!) / sampledMass));
      const rng = rngs.stream(`stratum/${w}`);
      for (let k = 0; k < trials; k++) {
        // partial Fisher–Yates from the front: w distinct qubits
        const idx = Array.from({ length: n }, (_, i) => i);
        for (let i = 0; i < w; i++) {
          const j = i + Math.floor(rng.next() * (n - i));
          [idx[i], idx[j]] = [idx[j]!, idx[i]!];
        }
        const err = new Uint8Array(n);
        for (const q of idx.slice(0, w)) err[q] = 1;
        if (fails(err)) failures++;
      }
    }
    strata.push({ w, binom_weight: pmf[w]!, mode: binom(n, w) <= 2500 ? 'exact' : 'sampled', trials, failures, f: failures / trials });
  }
  const mc = rngs.stream('mc');
  let mcFails = 0;
  for (let k = 0; k < 1024; k++) {
    const err = new Uint8Array(n);
    for (let q = 0; q < n; q++) err[q] = mc.next() < p ? 1 : 0;
    if (fails(err)) mcFails++;
  }
  let low = 0;
  for (let w = 0; w <= t; w++) low += binom(n, w);
  if (low <= 2500) decodes += low; // the exhaustive low-weight self-check decodes these too
  return {
    strata,
    pl: strata.reduce((a, s) => a + s.binom_weight * s.f, 0),
    se: Math.sqrt(strata.filter((s) => s.mode === 'sampled').reduce((a, s) => a + (s.binom_weight ** 2 * s.f * (1 - s.f)) / s.trials, 0)),
    truncation: above(wMax),
    mcFails,
    decodes,
  };
}

describe('kernel qec/surface-code', () => {
  it('every reported value is recomputed: strata (exact and sampled), P_L, its standard error, truncation, leading order, direct MC, decodes', () => {
    for (const [seed, d, p] of [[3, 5, 0.08], [1, 7, 0.003], [2, 3, 0.2]] as const) {
      const r = runRaw(qec, { seed, distance: d, p }).result as any;
      const ref = recompute(seed, d, p);
      expect(r).to.include({ distance: d, n_data: d * d, n_z_checks: (d * d - 1) / 2, t: (d - 1) / 2 });
      expect(r.strata.map((s: any) => [s.w, s.mode, s.trials, s.failures])).to.deep.equal(ref.strata.map((s) => [s.w, s.mode, s.trials, s.failures]));
      r.strata.forEach((s: any, i: number) => {
        expect(s.binom_weight).to.be.closeTo(ref.strata[i]!.binom_weight, 1e-10 * ref.strata[i]!.binom_weight);
        expect(s.f).to.equal(ref.strata[i]!.f);
      });
      expect(r.logical_error_rate).to.be.closeTo(ref.pl, 1e-10 * ref.pl);
      expect(r.std_error).to.be.closeTo(ref.se, 1e-10 * ref.se + 1e-300);
      expect(r.truncation_bound).to.be.closeTo(ref.truncation, 1e-9 * ref.truncation + 1e-18);
      const first = ref.strata[0]!;
      expect(r.leading_order.w).to.equal(first.w);
      expect(r.leading_order.coefficient).to.be.closeTo(binom(d * d, first.w) * first.f, 1e-9);
      expect(r.leading_order.value).to.be.closeTo(binom(d * d, first.w) * first.f * p ** first.w, 1e-12 * r.leading_order.value);
      expect(r.direct_mc).to.deep.equal({ shots: 1024, failures: ref.mcFails, rate: ref.mcFails / 1024 });
      expect(r.decodes).to.equal(ref.decodes);
    }
  });

  it('layout: (d²−1)/2 Z checks, each meeting every column in an even number of qubits (the column X logical commutes)', () => {
    for (const d of [3, 5, 7, 9]) {
      const L = buildLayout(d);
      const ref = zChecks(d);
      expect(L.nChecks).to.equal((d * d - 1) / 2);
      expect(L.checks.map((c) => [...c.qubits].sort((a, b) => a - b))).to.have.deep.members(ref.map((q) => [...q].sort((a, b) => a - b)));
      for (const qs of ref) {
        for (let col = 0; col < d; col++) expect(qs.filter((q) => q % d === col).length % 2).to.equal(0);
      }
    }
  });

  it('decoder guarantee, exhaustively: every error of weight ≤ t is corrected at d = 3, 5 and 7', () => {
    for (const d of [3, 5, 7]) {
      const t = (d - 1) / 2;
      const dec = new UnionFindDecoder(buildLayout(d));
      const checks = zChecks(d);
      let count = 0;
      for (const s of subsets(d * d, t)) {
        const err = new Uint8Array(d * d);
        for (const q of s) err[q] = 1;
        const corr = dec.decodeSyndrome(dec.computeSyndrome(err));
        const r = corrected(d, checks, err, corr);
        expect(r.zero).to.equal(true);
        expect(r.logical, `d=${d} error ${s}`).to.equal(0);
        count++;
      }
      let expected = 0;
      for (let w = 0; w <= t; w++) expected += binom(d * d, w);
      expect(count).to.equal(expected);
    }
  });

  it('residual syndrome is zero for arbitrary (heavy) errors, checked with the test’s own stabilisers', () => {
    const d = 9;
    const dec = new UnionFindDecoder(buildLayout(d));
    const checks = zChecks(d);
    let x = 12345;
    for (let k = 0; k < 300; k++) {
      const err = new Uint8Array(d * d).map(() => {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        return x % 100 < 25 ? 1 : 0;
      });
      expect(corrected(d, checks, err, dec.decodeSyndrome(dec.computeSyndrome(err))).zero).to.equal(true);
    }
  });

  it('d = 3 is exact: P_L = Σ C(9,w)p^w(1−p)^{9−w}·f_w with f_w from a test-side loop over all 512 errors, and ≥ 9p²(1−p)⁷', () => {
    const dec = new UnionFindDecoder(buildLayout(3));
    const checks = zChecks(3);
    const fails = new Array<number>(10).fill(0);
    for (let mask = 0; mask < 512; mask++) {
      const err = new Uint8Array(9).map((_, i) => (mask >> i) & 1);
      const w = err.reduce((s, b) => s + b, 0);
      const r = corrected(3, checks, err, dec.decodeSyndrome(dec.computeSyndrome(err)));
      expect(r.zero).to.equal(true);
      addAt(fails, w, r.logical);
    }
    expect(fails[0]).to.equal(0);
    expect(fails[1]).to.equal(0);
    for (const p of [0.001, 0.01, 0.08, 0.2, 0.3]) {
      const out = runRaw(qec, { distance: 3, p }).result as any;
      let pl = 0;
      for (let w = 2; w <= 9; w++) pl += binom(9, w) * p ** w * (1 - p) ** (9 - w) * (fails[w]! / binom(9, w));
      const upTo = out.strata[out.strata.length - 1].w;
      let neglected = 0;
      for (let w = upTo + 1; w <= 9; w++) neglected += binom(9, w) * p ** w * (1 - p) ** (9 - w);
      expect(out.logical_error_rate).to.be.closeTo(pl, 1e-15 + neglected);
      expect(out.truncation_bound).to.be.closeTo(neglected, 1e-15);
      expect(out.std_error).to.equal(0);
      for (const s of out.strata) expect(s.mode).to.equal('exact');
      expect(out.logical_error_rate).to.be.at.least(9 * p * p * (1 - p) ** 7 * (1 - 1e-12));
    }
  });

  it('universal lower bound on the first failing stratum: f_{t+1} ≥ d·C(d,t+1)/C(n,t+1) at d = 3 and 5', () => {
    const r3 = runRaw(qec, { distance: 3 }).result as any;
    const r5 = runRaw(qec, { distance: 5 }).result as any;
    expect(r3.strata[0]).to.include({ w: 2, mode: 'exact', trials: 36 });
    expect(r3.strata[0].failures).to.be.at.least(9);
    expect(r5.strata[0]).to.include({ w: 3, mode: 'exact', trials: 2300 });
    expect(r5.strata[0].failures).to.be.at.least(50);
    expect(r5.leading_order.coefficient).to.equal(r5.strata[0].failures);
    expect(r5.leading_order.value).to.be.closeTo(r5.strata[0].failures * 0.003 ** 3, 1e-18);
  });

  it('below threshold P_L falls with distance; above it (p = 0.15) d = 9 is worse than d = 3', () => {
    for (const p of [0.001, 0.003, 0.01]) {
      const pl = [3, 5, 7, 9].map((d) => (runRaw(qec, { distance: d, p }).result as any).logical_error_rate);
      for (let i = 1; i < 4; i++) expect(pl[i]).to.be.below(pl[i - 1]);
    }
    const low = (runRaw(qec, { distance: 3, p: 0.15 }).result as any).logical_error_rate;
    const high = (runRaw(qec, { distance: 9, p: 0.15 }).result as any).logical_error_rate;
    expect(high).to.be.greaterThan(low);
  });

  it('direct Monte Carlo agrees with the stratified estimate within 4σ at p = 0.08 (10 seeds, d = 3 and 5)', () => {
    for (let seed = 0; seed < 10; seed++) {
      for (const d of [3, 5]) {
        const r = runRaw(qec, { seed, distance: d, p: 0.08 }).result as any;
        const P = r.logical_error_rate;
        // the stratified variance from the strata themselves, not the kernel's reported std_error
        const strat = r.strata.filter((s: any) => s.mode === 'sampled').reduce((a: number, s: any) => a + (s.binom_weight ** 2 * s.f * (1 - s.f)) / s.trials, 0);
        const sd = Math.sqrt((P * (1 - P)) / 1024 + strat);
        expect(r.direct_mc.shots).to.equal(1024);
        expect(Math.abs(r.direct_mc.rate - P)).to.be.at.most(4 * sd);
        // P̂_L is the binomially weighted sum of the strata's failure fractions
        expect(P).to.be.closeTo(r.strata.reduce((s: number, x: any) => s + x.binom_weight * x.f, 0), 1e-15);
        for (const s of r.strata) expect(s.f).to.equal(s.failures / s.trials);
      }
    }
  });

  it('edges and self-checks: p = 0 gives exactly 0; every decode leaves a zero syndrome', () => {
    for (const d of [3, 9]) {
      const out = runRaw(qec, { distance: d, p: 0 });
      const r = out.result as any;
      expect(r.logical_error_rate).to.equal(0);
      expect(r.direct_mc.failures).to.equal(0);
      expect(r.leading_order.value).to.equal(0);
      expect(out.checks).to.include({ residual_syndrome_zero: true, rows_agree: true });
    }
    const c = runRaw(qec, { distance: 5, p: 0.3 }).checks as any;
    expect(c).to.include({ residual_syndrome_zero: true, rows_agree: true, low_weight_all_corrected: true });
  });

  it('distance must be odd', () => {
    expect(rejects(qec, { distance: '6' })).to.deep.equal(['distance:constraint']);
    expect(rejects(qec, { distance: '9', p: '0.3' })).to.deep.equal([]);
  });
});
