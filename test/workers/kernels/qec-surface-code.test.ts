import { expect } from 'chai';
import qec, { buildLayout, UnionFindDecoder } from '../../../workers/kernels/qec-surface-code.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

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

describe('kernel qec/surface-code', () => {
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
      fails[w] += r.logical;
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
        const sd = Math.sqrt((P * (1 - P)) / r.direct_mc.shots + r.std_error ** 2);
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

  it('is deterministic and seed-sensitive; refuses bad parameters', () => {
    expect(runBody(qec, { seed: 6 })).to.equal(runBody(qec, { seed: 6 }));
    expect(runBody(qec, { seed: 1 })).to.not.equal(runBody(qec, { seed: 2 }));
    expect(rejects(qec, { distance: '1', p: '-0.01' })).to.deep.equal(['distance:number.min', 'p:number.min']);
    expect(rejects(qec, { distance: '11', p: '0.31' })).to.deep.equal(['distance:number.max', 'p:number.max']);
    expect(rejects(qec, { distance: '6' })).to.deep.equal(['distance:constraint']);
    expect(rejects(qec, { distance: 'five', p: '1/2' })).to.deep.equal(['distance:qint.parse', 'p:qnum.parse']);
    expect(rejects(qec, { distance: '9', p: '0.3' })).to.deep.equal([]);
  });
});
