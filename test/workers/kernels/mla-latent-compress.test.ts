import { expect } from 'chai';
import mla, { evaluatedRows, mlaModel, rope } from '../../../workers/kernels/mla-latent-compress.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

/** Standard (non-absorbed) attention of one head at query row i, written from the paper's equations. */
function naiveHead(p: { seq_len: number; n_heads: number; d_head: number; d_latent: number }, seed: number, head: number, i: number): number[] {
  return naiveHeadFull(p, seed, head, i).out;
}
function naiveHeadFull(p: { seq_len: number; n_heads: number; d_head: number; d_latent: number }, seed: number, head: number, i: number): { out: number[]; weights: number[] } {
  const m = mlaModel(p, new RngStreams(seed, 'mla/latent-compress'));
  const { d_head: dh, d_latent: dc } = p;
  const dr = dh / 2;
  const row = (M: Float64Array, r: number, cols: number) => Array.from(M.subarray(r * cols, (r + 1) * cols));
  const h = (t: number) => row(m.h, t, 32);
  const apply = (M: Float64Array, firstRow: number, nRows: number, cols: number, x: number[]) =>
    Array.from({ length: nRows }, (_, r) => row(M, firstRow + r, cols).reduce((s, w, c) => s + w * x[c]!, 0));
  // RoPE written out independently of the kernel's helper
  const rot = (x: number[], pos: number) => x.map((_, k) => {
    const mIdx = Math.floor(k / 2);
    const th = pos * Math.pow(10000, (-2 * mIdx) / x.length);
    return k % 2 === 0 ? x[k]! * Math.cos(th) - x[k + 1]! * Math.sin(th) : x[k - 1]! * Math.sin(th) + x[k]! * Math.cos(th);
  });
  const c = (t: number) => apply(m.wDKV, 0, dc, 32, h(t));
  const key = (t: number) => [...apply(m.wUK, head * dh, dh, dc, c(t)), ...rot(apply(m.wKR, 0, dr, 32, h(t)), t)];
  const val = (t: number) => apply(m.wUV, head * dh, dh, dc, c(t));
  const q = [...apply(m.wQC, head * dh, dh, 32, h(i)), ...rot(apply(m.wQR, head * dr, dr, 32, h(i)), i)];
  const logits = Array.from({ length: i + 1 }, (_, j) => key(j).reduce((s, k, d) => s + k * q[d]!, 0) / Math.sqrt(dh + dr));
  const mx = Math.max(...logits);
  const e = logits.map((l) => Math.exp(l - mx));
  const z = e.reduce((a, b) => a + b, 0);
  const out = new Array(dh).fill(0);
  e.forEach((w, j) => val(j).forEach((v, d) => (out[d] += (w / z) * v)));
  return { out, weights: e.map((w) => w / z) };
}

describe('kernel mla/latent-compress', () => {
  it('every reported value is recomputed: head 0 outputs, the attention entropy over every head (each with its own RoPE query), cache and FLOP accounting', () => {
    for (const [p, seed] of [[{ seq_len: 12, n_heads: 3, d_head: 8, d_latent: 6 }, 4], [{ seq_len: 5, n_heads: 4, d_head: 4, d_latent: 3 }, 8]] as const) {
      const out = runRaw(mla, { ...p, seed });
      const r = out.result as any;
      const { seq_len: L, n_heads: H, d_head: dh, d_latent: dc } = p;
      expect(out.checks).to.deep.equal({ absorbed_matches_naive: true });
      expect(out.constants).to.include({ d_model: 32, d_rope: dh / 2, queries: 4, causal: true });
      const dr = dh / 2;
      const rows = Array.from({ length: Math.min(4, L) }, (_, k) => Math.floor(((k + 1) * L) / Math.min(4, L)) - 1);
      expect(r.queries_evaluated).to.deep.equal(rows);
      let ent = 0;
      rows.forEach((i, qi) => {
        for (let head = 0; head < H; head++) {
          const { out, weights } = naiveHeadFull(p, seed, head, i);
          ent -= weights.reduce((acc, w) => acc + (w > 0 ? w * Math.log(w) : 0), 0);
          if (head === 0) r.output_sample[qi].forEach((v: number, d: number) => expect(v).to.be.closeTo(out[d]!, 1e-12));
        }
      });
      // every head enters the mean entropy, so a head with a wrong query projection moves it
      expect(r.attention_entropy_mean).to.be.closeTo(ent / (H * rows.length), 1e-12);
      expect(r.kv_cache_per_token).to.deep.equal({ mla: dc + dr, mha: 2 * H * dh, mqa: 2 * dh });
      expect(r.compression_vs_mha).to.be.closeTo((2 * H * dh) / (dc + dr), 1e-15);
      expect(r.compression_vs_mqa).to.be.closeTo((2 * dh) / (dc + dr), 1e-15);
      // MACs per decoded token, ×2: naive decompresses K^C and V for all L tokens, then scores and mixes;
      // absorbed folds W^UK into the query, scores and mixes latents, then applies W^UV once
      expect(r.flops_per_decoded_token).to.deep.equal({
        naive: 2 * (H * L * dc * dh * 2 + H * L * (dh + dr) + H * L * dh),
        absorbed: 2 * (H * dh * dc + H * L * (dc + dr) + H * L * dc + H * dc * dh),
        context: L,
      });
      expect(r.heads_checked).to.deep.equal(H > 1 ? [0, H - 1] : [0]);
      // informative: the kernel's own float gap between its two paths, bounded by a fixed tolerance
      expect(r.max_abs_diff_naive_vs_absorbed).to.be.at.least(0).and.at.most(1e-12);
    }
  });

  it('absorbed attention on the latent cache equals decompressed standard attention (head 0, every evaluated query)', () => {
    for (const [p, seed] of [[{ seq_len: 24, n_heads: 3, d_head: 8, d_latent: 12 }, 5], [{ seq_len: 7, n_heads: 2, d_head: 16, d_latent: 5 }, 9]] as const) {
      const r = runRaw(mla, { ...p, seed }).result as any;
      expect(r.queries_evaluated).to.deep.equal(evaluatedRows(p.seq_len));
      r.queries_evaluated.forEach((i: number, qi: number) => {
        const ref = naiveHead(p, seed, 0, i).slice(0, 8);
        r.output_sample[qi].forEach((v: number, d: number) => expect(v).to.be.closeTo(ref[d]!, 1e-12));
      });
      expect(r.max_abs_diff_naive_vs_absorbed).to.be.at.most(1e-12);
      expect(r.heads_checked).to.deep.equal([0, p.n_heads - 1]);
    }
  });

  it('is causal: a query row gives the same output whatever follows it in the sequence', () => {
    const a = runRaw(mla, { seq_len: 64, seed: 3 }).result as any; // rows 15, 31, 47, 63
    const b = runRaw(mla, { seq_len: 128, seed: 3 }).result as any; // rows 31, 63, 95, 127
    expect(a.queries_evaluated).to.deep.equal([15, 31, 47, 63]);
    expect(b.output_sample[0]).to.deep.equal(a.output_sample[1]);
    expect(b.output_sample[1]).to.deep.equal(a.output_sample[3]);
    // attention rows are distributions over j ≤ i: mean entropy is positive and below mean ln(i+1)
    const bound = b.queries_evaluated.reduce((s: number, i: number) => s + Math.log(i + 1), 0) / 4;
    expect(b.attention_entropy_mean).to.be.greaterThan(0).and.below(bound);
  });

  it('cache per token is d_latent + d_head/2 against 2·n_heads·d_head (defaults 160 vs 1024)', () => {
    const d = runRaw(mla).result as any;
    expect(d.kv_cache_per_token).to.deep.equal({ mla: 160, mha: 1024, mqa: 128 });
    expect(d.compression_vs_mha).to.equal(6.4);
    for (const p of [{ n_heads: 4, d_head: 16, d_latent: 32 }, { n_heads: 16, d_head: 64, d_latent: 256, seq_len: 8 }]) {
      const r = runRaw(mla, p).result as any;
      expect(r.kv_cache_per_token.mla).to.equal(p.d_latent + p.d_head / 2);
      expect(r.kv_cache_per_token.mha).to.equal(2 * p.n_heads * p.d_head);
      expect(r.flops_per_decoded_token.absorbed).to.be.below(r.flops_per_decoded_token.naive);
    }
  });

  it('RoPE preserves norms and the rotated dot product depends only on the position difference', () => {
    const rng = new Rng(11);
    for (let trial = 0; trial < 10; trial++) {
      const q = rng.normals(16);
      const k = rng.normals(16);
      const i = rng.int(500);
      const j = rng.int(500);
      const s = rng.int(1000);
      const dot = (a: Float64Array, b: Float64Array) => a.reduce((acc, v, n) => acc + v * b[n]!, 0);
      expect(dot(rope(q, i), rope(k, j))).to.be.closeTo(dot(rope(q, i + s), rope(k, j + s)), 1e-12);
      expect(Math.hypot(...rope(q, i))).to.be.closeTo(Math.hypot(...q), 1e-12);
    }
  });

  it('d_head must be a multiple of 4', () => {
    expect(rejects(mla, { d_head: '6' })).to.deep.equal(['d_head:constraint']);
    expect(rejects(mla, { d_head: '4', seq_len: '1', d_latent: '1' })).to.deep.equal([]);
  });
});
