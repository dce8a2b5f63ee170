import { expect } from 'chai';
import ctx, { drawModel, type CtxModel } from '../../../workers/kernels/ctxready-unroll.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

function model(seed: number, T: number, d: number, V: number, gain: number): CtxModel {
  const rng = new RngStreams(seed, 'ctxready/unroll');
  return drawModel(T, d, V, gain, rng.stream('weights'), rng.stream('tokens'));
}

/** x·W with W given row-major (n × m), plain arrays. */
const vecMat = (x: number[], W: Float64Array, m: number): number[] => Array.from({ length: m }, (_, j) => x.reduce((s, v, k) => s + v * W[k * m + j]!, 0));

/** Independent RNN-mode reference: returns every h_t and the perplexity of next-token prediction. */
function referenceSequential(m: CtxModel): { H: number[][]; ppl: number } {
  const { T, d, V } = m;
  const emb = (t: number): number[] => Array.from(m.E.subarray(m.tokens[t]! * d, (m.tokens[t]! + 1) * d));
  const xs: number[][] = [];
  const H: number[][] = [];
  for (let t = 0; t < T; t++) {
    const e = emb(t);
    const x = t === 0 ? e : vecMat([...H[t - 1]!, ...e], m.Wc, d).map((v, i) => e[i]! + Math.tanh(v));
    xs.push(x);
    const q = vecMat(x, m.Wq, d);
    const ks = xs.map((xj) => vecMat(xj, m.Wk, d));
    const vs = xs.map((xj) => vecMat(xj, m.Wv, d));
    const s = ks.map((k) => k.reduce((a, v, i) => a + v * q[i]!, 0) / Math.sqrt(d));
    const mx = Math.max(...s);
    const w = s.map((v) => Math.exp(v - mx));
    const z = w.reduce((a, b) => a + b, 0);
    const h = x.map((xi, i) => xi + vs.reduce((a, v, j) => a + (w[j]! / z) * v[i]!, 0));
    const f = vecMat(vecMat(h, m.W1, 2 * d).map(Math.tanh), m.W2, d);
    H.push(h.map((v, i) => v + f[i]!));
  }
  let nll = 0;
  for (let t = 0; t + 1 < T; t++) {
    const logits = vecMat(H[t]!, m.Wo, V);
    const mx = Math.max(...logits);
    nll += mx + Math.log(logits.reduce((a, l) => a + Math.exp(l - mx), 0)) - logits[m.tokens[t + 1]!]!;
  }
  return { H, ppl: Math.exp(nll / (T - 1)) };
}

/**
 * The model drawn again without drawModel (kernels-a 1.7 draw order): stream weights gives E (V×d, z),
 * W_q, W_k, W_v (d×d, z/√d), W₁ (d×2d, z/√d), W₂ (2d×d, z/√(2d)), W_c (2d×d, gain·z/√(2d)),
 * W_o (d×V, z/√d); stream tokens gives T draws of int(V).
 */
function drawIndependently(seed: number, T: number, d: number, V: number, gain: number): CtxModel {
  const rng = new RngStreams(seed, 'ctxready/unroll');
  const ws = rng.stream('weights');
  const z = (n: number, sd: number) => Float64Array.from({ length: n }, () => ws.normal() * sd);
  const E = z(V * d, 1);
  const Wq = z(d * d, 1 / Math.sqrt(d));
  const Wk = z(d * d, 1 / Math.sqrt(d));
  const Wv = z(d * d, 1 / Math.sqrt(d));
  const W1 = z(2 * d * d, 1 / Math.sqrt(d));
  const W2 = z(2 * d * d, 1 / Math.sqrt(2 * d));
  const Wc = z(2 * d * d, gain / Math.sqrt(2 * d));
  const Wo = z(d * V, 1 / Math.sqrt(d));
  const ts = rng.stream('tokens');
  return { T, d, V, E, Wq, Wk, Wv, W1, W2, Wc, Wo, tokens: Int32Array.from({ length: T }, () => Math.floor(ts.next() * V)) };
}

/** One block over all positions given the inputs X (rows), causal attention written out. */
function blockAll(m: CtxModel, X: number[][]): number[][] {
  const d = m.d;
  const ks = X.map((x) => vecMat(x, m.Wk, d));
  const vs = X.map((x) => vecMat(x, m.Wv, d));
  return X.map((x, t) => {
    const q = vecMat(x, m.Wq, d);
    const s = ks.slice(0, t + 1).map((k) => k.reduce((a, v, i) => a + v * q[i]!, 0) / Math.sqrt(d));
    const mx = Math.max(...s);
    const w = s.map((v) => Math.exp(v - mx));
    const zs = w.reduce((a, b) => a + b, 0);
    const h = x.map((xi, i) => xi + vs.slice(0, t + 1).reduce((a, v, j) => a + (w[j]! / zs) * v[i]!, 0));
    const f = vecMat(vecMat(h, m.W1, 2 * d).map(Math.tanh), m.W2, d);
    return h.map((v, i) => v + f[i]!);
  });
}

/** The parallel (Jacobi) unroll: X⁰ = embeddings, X^k_t = e_t + tanh([H^(k−1)_(t−1); e_t]·W_c), H^k = Block(X^k). */
function referenceUnroll(m: CtxModel, K: number): number[][][] {
  const emb = (t: number) => Array.from(m.E.subarray(m.tokens[t]! * m.d, (m.tokens[t]! + 1) * m.d));
  const out = [blockAll(m, Array.from({ length: m.T }, (_, t) => emb(t)))];
  for (let k = 1; k <= K; k++) {
    const prev = out[k - 1]!;
    const X = Array.from({ length: m.T }, (_, t) => (t === 0 ? emb(0) : vecMat([...prev[t - 1]!, ...emb(t)], m.Wc, m.d).map((v, i) => emb(t)[i]! + Math.tanh(v))));
    out.push(blockAll(m, X));
  }
  return out;
}

const pplOf = (m: CtxModel, H: number[][]): number => {
  let nll = 0;
  for (let t = 0; t + 1 < m.T; t++) {
    const logits = vecMat(H[t]!, m.Wo, m.V);
    const mx = Math.max(...logits);
    nll += mx + Math.log(logits.reduce((a, l) => a + Math.exp(l - mx), 0)) - logits[m.tokens[t + 1]!]!;
  }
  return Math.exp(nll / (m.T - 1));
};

describe('kernel ctxready/unroll', () => {
  it('every per-k value recomputed on a model drawn without drawModel: errors, exact prefixes, perplexities, contraction', () => {
    for (const [seed, T, d, V, K, gain] of [[42, 32, 16, 32, 8, 0.5], [3, 24, 5, 7, 6, 1.7], [8, 12, 8, 64, 4, 2]] as const) {
      const r = runRaw(ctx, { seed, seq_len: T, d_model: d, vocab: V, unroll: K, gain }).result as any;
      const m = drawIndependently(seed, T, d, V, gain);
      expect(Array.from(r.tokens)).to.deep.equal(Array.from(m.tokens));
      const seq = referenceSequential(m);
      expect(r.ppl_sequential).to.be.closeTo(seq.ppl, 1e-9 * seq.ppl);
      const Hs = referenceUnroll(m, K);
      const errs = Hs.map((H) => H.map((row, t) => Math.max(...row.map((v, i) => Math.abs(v - seq.H[t]![i]!)))));
      expect(r.per_k.length).to.equal(K + 1);
      r.per_k.forEach((row: any, k: number) => {
        const e = Math.max(...errs[k]!);
        expect(row.k).to.equal(k);
        expect(row.max_abs_error, `error ${k}`).to.be.closeTo(e, 1e-7 * e + 1e-12);
        // rows 0…k agree to rounding, the next row visibly differs (gain > 0): the exact prefix is k + 1
        expect(errs[k]!.slice(0, k + 1).every((x) => x < 1e-13)).to.equal(true);
        expect(errs[k]![k + 1]).to.be.above(1e-12);
        expect(row.exact_prefix).to.equal(k + 1);
        expect(row.ppl, `ppl ${k}`).to.be.closeTo(pplOf(m, Hs[k]!), 1e-9 * pplOf(m, Hs[k]!));
      });
      expect(r.first_exact_k).to.equal(null);
      const logs = errs.slice(1).map((e, k) => Math.log(Math.max(...e) / Math.max(...errs[k]!)));
      expect(r.contraction).to.be.closeTo(Math.exp(logs.reduce((a, b) => a + b, 0) / K), 1e-6);
    }
  });

  it('sequential perplexity matches an independent RNN-mode reference, and the full unroll reproduces it', () => {
    for (const [seed, T, d, V, gain] of [[42, 32, 16, 32, 0.5], [3, 9, 5, 7, 1.7], [8, 20, 8, 64, 2]] as const) {
      const out = runRaw(ctx, { seed, seq_len: T, d_model: d, vocab: V, unroll: T - 1, gain });
      const r = out.result as any;
      const ref = referenceSequential(model(seed, T, d, V, gain));
      expect(r.ppl_sequential).to.be.closeTo(ref.ppl, 1e-9 * ref.ppl);
      const last = r.per_k[T - 1];
      expect(last.max_abs_error).to.equal(0);
      expect(last.exact_prefix).to.equal(T);
      expect(last.ppl).to.equal(r.ppl_sequential);
      // first_exact_k is the first k whose error is bitwise 0: below T − 1 rounding decides it, so the exact
      // statement is the bound (after T − 1 unrolls every position is exact), and it is the first zero row
      expect(r.first_exact_k).to.be.a('number').and.at.most(T - 1);
      expect(r.first_exact_k).to.equal(r.per_k.findIndex((row: any) => row.max_abs_error === 0));
      expect(Array.from(r.tokens)).to.deep.equal(Array.from(model(seed, T, d, V, gain).tokens));
    }
  });

  it('after k unrolls the first k+1 positions are exact (10 seeds), and errors shrink with k', () => {
    for (let seed = 0; seed < 10; seed++) {
      const T = 6 + 5 * seed;
      const K = 4 + seed;
      const r = runRaw(ctx, { seed, seq_len: T, unroll: K, gain: 0.3 + 0.15 * seed }).result as any;
      expect(r.per_k).to.have.length(K + 1);
      r.per_k.forEach((row: any, k: number) => {
        expect(row.k).to.equal(k);
        expect(row.exact_prefix).to.be.at.least(Math.min(T, k + 1));
      });
      expect(r.per_k[K].max_abs_error).to.be.lessThan(r.per_k[0].max_abs_error);
    }
    const def = runRaw(ctx).result as any;
    expect(def.per_k[8].max_abs_error).to.be.lessThan(def.per_k[0].max_abs_error * 1e-2);
    expect(def.contraction).to.be.greaterThan(0).and.lessThan(1);
  });

  it('a zero-initialised correction (gain 0) is the plain transformer in both modes', () => {
    const r = runRaw(ctx, { gain: 0, seed: 5 }).result as any;
    expect(r.per_k[0].max_abs_error).to.equal(0);
    expect(r.first_exact_k).to.equal(0);
    r.per_k.forEach((row: any) => expect(row.ppl).to.equal(r.ppl_sequential));
    expect(r.contraction).to.equal(null);
  });
});
