import { expect } from 'chai';
import keyless, { runKeyless, type KeylessModel } from '../../../workers/kernels/keyless-attention.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

type Mat = number[][];
const mat = (a: Float64Array, rows: number, cols: number): Mat => Array.from({ length: rows }, (_, r) => Array.from(a.subarray(r * cols, (r + 1) * cols)));
const mul = (a: Mat, b: Mat): Mat => a.map((row) => b[0]!.map((_, j) => row.reduce((s, v, k) => s + v * b[k]![j]!, 0)));
const transposeM = (a: Mat): Mat => a[0]!.map((_, j) => a.map((row) => row[j]!));

/** Naive standard causal attention with explicit Q, K, V (one head): returns outputs and weights. */
function standardAttention(Q: Mat, K: Mat, V: Mat): { out: Mat; A: Mat } {
  const d = Q[0]!.length;
  const T = Q.length;
  const A: Mat = [];
  const out: Mat = [];
  for (let t = 0; t < T; t++) {
    const s = K.map((k, j) => (j <= t ? Q[t]!.reduce((acc, q, i) => acc + q * k[i]!, 0) / Math.sqrt(d) : -Infinity));
    const m = Math.max(...s);
    const e = s.map((v) => (v === -Infinity ? 0 : Math.exp(v - m)));
    const z = e.reduce((a, b) => a + b, 0);
    A.push(e.map((v) => v / z));
    out.push(V[0]!.map((_, i) => A[t]!.reduce((acc, a, j) => acc + a * V[j]![i]!, 0)));
  }
  return { out, A };
}

/** Reference forward: per head, keys written out as k′_j = R·v_j, standard attention, concat, W_O. */
function referenceForward(m: KeylessModel, keysAreValues = false): { y: Mat; A0: Mat } {
  const X = mat(m.x, m.T, m.dModel);
  const concat: Mat = Array.from({ length: m.T }, () => []);
  let A0: Mat = [];
  m.heads.forEach((h, k) => {
    const Q = mul(X, mat(h.WQ, m.dModel, m.dHead));
    const V = mul(X, mat(h.WV, m.dModel, m.dHead));
    const K = keysAreValues ? V : transposeM(mul(mat(h.R, m.dHead, m.dHead), transposeM(V)));
    const { out, A } = standardAttention(Q, K, V);
    if (k === 0) A0 = A;
    out.forEach((row, t) => concat[t]!.push(...row));
  });
  return { y: mul(concat, mat(m.WO, m.heads.length * m.dHead, m.dModel)), A0 };
}

/**
 * The model drawn from the note's order without the kernel's drawModel: stream x gives T·d_model
 * normals; stream weights gives per head W_Q, W_V (z/√d_model), R (z/√d_head), then W_O (z/√(h·d_head)).
 */
function model(seed: number, T: number, dm: number, dh: number, h: number): KeylessModel {
  const rng = new RngStreams(seed, 'keyless/attention');
  const xs = rng.stream('x');
  const ws = rng.stream('weights');
  const z = (n: number, sd: number) => Float64Array.from({ length: n }, () => ws.normal() * sd);
  const x = Float64Array.from({ length: T * dm }, () => xs.normal());
  const heads = Array.from({ length: h }, () => {
    const WQ = z(dm * dh, 1 / Math.sqrt(dm));
    const WV = z(dm * dh, 1 / Math.sqrt(dm));
    return { WQ, WV, R: z(dh * dh, 1 / Math.sqrt(dh)) };
  });
  return { T, dModel: dm, dHead: dh, x, heads, WO: z(h * dh * dm, 1 / Math.sqrt(h * dh)) };
}

describe('kernel keyless/attention', () => {
  it('equals standard causal attention with explicit keys R·v (independent naive reference), over 10 seeds', () => {
    for (let seed = 0; seed < 10; seed++) {
      const [T, dm, dh, h] = [3 + seed, 8, 4 + (seed % 3), 1 + (seed % 3)];
      const r = runRaw(keyless, { seed, seq_len: T, d_model: dm, d_head: dh, heads: h }).result as any;
      const ref = referenceForward(model(seed, T, dm, dh, h));
      r.output_head.forEach((row: number[], t: number) => row.forEach((v, i) => expect(Math.abs(v - ref.y[t]![i]!)).to.be.at.most(1e-12)));
      r.attention_head0.forEach((row: number[], t: number) => row.forEach((v, j) => expect(Math.abs(v - ref.A0[t]![j]!)).to.be.at.most(1e-13)));
      expect(r.residuals.decode_vs_parallel).to.be.at.most(1e-12);
      expect(r.residuals.keyless_vs_reference).to.be.at.most(1e-12);
    }
  });

  it('with R = I and W_K = W_V it is standard attention with K = V', () => {
    const m = model(5, 12, 8, 8, 2);
    for (const h of m.heads) {
      h.R = new Float64Array(64);
      for (let i = 0; i < 8; i++) h.R[i * 8 + i] = 1;
    }
    const run = runKeyless(m);
    const ref = referenceForward(m, true);
    for (let t = 0; t < 12; t++) for (let i = 0; i < 8; i++) expect(Math.abs(run.parallel[t * 8 + i]! - ref.y[t]![i]!)).to.be.at.most(1e-12);
    expect(run.decodeVsParallel).to.be.at.most(1e-12);
  });

  it('attention is causal and row-stochastic; the value-only cache is exactly half of a KV cache', () => {
    for (const [T, dm, dh, h] of [[16, 16, 8, 2], [32, 12, 5, 3], [7, 4, 2, 1]] as const) {
      const r = runRaw(keyless, { seq_len: T, d_model: dm, d_head: dh, heads: h, seed: T }).result as any;
      const A: number[][] = r.attention_head0;
      expect(A.length).to.equal(T);
      A.forEach((row, t) => {
        expect(row.length).to.equal(T);
        row.forEach((a, j) => (j > t ? expect(a).to.equal(0) : expect(a).to.be.at.least(0)));
        expect(Math.abs(row.reduce((s, a) => s + a, 0) - 1)).to.be.at.most(1e-12);
      });
      expect(r.cache).to.deep.equal({ value_only_floats: T * h * dh, standard_kv_floats: 2 * T * h * dh, ratio: 0.5, decode_cache_floats: T * h * dh });
      expect(r.projection_params).to.deep.equal({ keyless: 2 * dm * dh + dh * dh, standard: 3 * dm * dh });
      expect(r.bilinear).to.deep.equal({ depth: 3, rank_bound: dh });
      expect(r.output_head.length).to.equal(Math.min(8, T));
    }
    const long = runRaw(keyless, { seq_len: 33 }).result as any;
    expect(long.attention_truncated).to.equal(true);
    expect(long).to.not.have.property('attention_head0');
  });

  it('d_head must not exceed d_model', () => {
    expect(rejects(keyless, { d_model: '8', d_head: '9' })).to.deep.equal(['d_head:constraint']);
    expect(rejects(keyless, { d_model: '8', d_head: '8' })).to.deep.equal([]);
  });
});
