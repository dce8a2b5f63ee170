import { expect } from 'chai';
import ttt, { fastWeightPass } from '../../../workers/kernels/inplacettt-adapt.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt, at } from '../../helpers/indexed.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

/** The documented inputs (kernels-c §13) from their streams, and the frozen MLP written out naively. */
function regenerate(seed: number, d: number, V: number, N: number) {
  const rng = new RngStreams(seed, 'inplacettt/adapt');
  const E = rng.stream('embed').normals(V * V);
  const mlp = rng.stream('mlp');
  const Wg = mlp.normals(d * V, 1 / Math.sqrt(V));
  const Wu = mlp.normals(d * V, 1 / Math.sqrt(V));
  const W0 = Array.from(rng.stream('w0').normals(V * d, 0.1 / Math.sqrt(d)));
  const perm = rng.stream('perm').shuffle(Array.from({ length: V }, (_, i) => i));
  const tr = rng.stream('tokens');
  const tokens = [tr.int(V)];
  let follows = 0;
  for (let t = 1; t < N * 16 + 1; t++) {
    const f = tr.next() < 0.9;
    if (f) follows++;
    tokens.push(f ? perm[tokens[t - 1]!]! : tr.int(V));
  }
  const z = Array.from({ length: V }, (_, v) => {
    const x = Array.from(E.subarray(v * V, v * V + V));
    const h = Array.from({ length: d }, (_, j) => {
      const g = x.reduce((s, xi, k) => s + Wg[j * V + k]! * xi, 0);
      const u = x.reduce((s, xi, k) => s + Wu[j * V + k]! * xi, 0);
      return (g * u) / (1 + Math.exp(-g));
    });
    const m = h.reduce((a, b) => a + b, 0) / d;
    const rms = Math.sqrt(h.reduce((s, v2) => s + (v2 - m) ** 2, 0) / d);
    return h.map((v2) => (v2 - m) / rms);
  });
  return { W0, perm, tokens, z, follows };
}

/** Straightforward apply-then-update with W as nested arrays. */
function reference(W0: number[], z: number[][], tokens: number[], V: number, d: number, eta: number, N: number, target: 'ntp' | 'recon') {
  const W = Array.from({ length: V }, (_, k) => W0.slice(k * d, k * d + d));
  const acc: number[] = [];
  for (let c = 0; c < N; c++) {
    const before = W.map((row) => row.slice());
    let correct = 0;
    for (let t = c * 16; t < c * 16 + 16; t++) {
      const logits = before.map((row) => row.reduce((s, w, j) => s + w * z[tokens[t]!]![j]!, 0));
      const pred = logits.indexOf(Math.max(...logits));
      if (pred === tokens[t + 1]) correct++;
      const tgt = target === 'ntp' ? tokens[t + 1]! : tokens[t]!;
      z[tokens[t]!]!.forEach((zj, j) => (W[tgt]![j] = W[tgt]![j]! + eta * zj));
    }
    acc.push(correct / 16);
  }
  return { acc, W };
}

describe('kernel inplacettt/adapt', () => {
  it('matches an independent apply-then-update reference on the regenerated stream (ntp, recon, frozen)', () => {
    for (const [seed, d, V, N, eta] of [[1, 8, 4, 12, 0.05], [2, 5, 7, 6, 0.3], [3, 16, 3, 9, 1]]) {
      const r = runRaw(ttt, q({ seed: seed!, dim: d!, out_dim: V!, n_chunks: N!, eta: eta! })).result as any;
      const { W0, perm, tokens, z } = regenerate(seed!, d!, V!, N!);
      expect(r.permutation).to.deep.equal(perm);
      const ntp = reference(W0, z, tokens, V!, d!, eta!, N!, 'ntp');
      expect(r.accuracy_per_chunk.ntp).to.deep.equal(ntp.acc);
      expect(r.accuracy_per_chunk.recon).to.deep.equal(reference(W0, z, tokens, V!, d!, eta!, N!, 'recon').acc);
      expect(r.accuracy_per_chunk.frozen).to.deep.equal(reference(W0, z, tokens, V!, d!, 0, N!, 'ntp').acc);
      const wn = Math.sqrt(ntp.W.flat().reduce((s, w) => s + w * w, 0));
      expect(r.fast_weight_norm_final).to.be.closeTo(wn, 1e-10 * wn);
      expect(r.oracle_accuracy).to.be.closeTo(0.9 + 0.1 / V!, 1e-15);
      const { follows } = regenerate(seed!, d!, V!, N!);
      expect(r.empirical_follow_rate).to.equal(follows / (N! * 16));
      expect(r.fast_weight_norm_initial).to.be.closeTo(Math.hypot(...W0), 1e-12);
      // grad energy of chunk c: η·‖G‖²_F with G = Σ_t e_(next token) z(current)ᵀ over the chunk
      for (let c = 0; c < N!; c++) {
        const G = Array.from({ length: V! }, () => new Array<number>(d!).fill(0));
        for (let t = c * 16; t < c * 16 + 16; t++) z[tokens[t]!]!.forEach((zj, j) => addAt(at(G, tokens[t + 1]!), j, zj));
        const e = eta! * G.flat().reduce((a, x) => a + x * x, 0);
        expect(r.grad_energy[c], `chunk ${c}`).to.be.closeTo(e, 1e-9 * Math.max(1, e));
      }
      const q0 = Math.floor((3 * N!) / 4);
      const lq = (a: number[]) => a.slice(q0).reduce((x, y) => x + y, 0) / (N! - q0);
      expect(r.last_quarter_chunks).to.equal(N! - q0);
      expect(r.last_quarter_accuracy.ntp).to.be.closeTo(lq(ntp.acc), 1e-15);
      expect(r.last_quarter_accuracy.recon).to.be.closeTo(lq(r.accuracy_per_chunk.recon), 1e-15);
      expect(r.last_quarter_accuracy.frozen).to.be.closeTo(lq(r.accuracy_per_chunk.frozen), 1e-15);
    }
  });

  it('alignment_gain equals grad_energy ≥ 0 in every chunk, and the chunk-wise sum equals the one-shot update', () => {
    for (const [seed, eta, d, V] of [[1, 0.05, 8, 4], [2, 1, 64, 32], [3, 0, 8, 4], [4, 0.5, 2, 2]]) {
      const r = runRaw(ttt, q({ seed: seed!, eta: eta!, dim: d!, out_dim: V! })).result as any;
      expect(r.alignment_gain).to.have.length(48);
      r.alignment_gain.forEach((a: number, i: number) => {
        const e = r.grad_energy[i];
        expect(e).to.be.at.least(0);
        expect(Math.abs(a - e)).to.be.at.most(1e-9 * Math.max(1, e));
        if (eta! > 0) expect(e).to.be.greaterThan(0);
        else expect(e).to.equal(0);
      });
      expect(r.chunkwise_equivalence_error).to.be.below(1e-9 * Math.max(1, r.fast_weight_norm_final));
    }
  });

  it('module: the final fast weight does not depend on the chunk size (C = 1, 4, 16)', () => {
    const rng = new Rng(17);
    const [V, d, L] = [5, 6, 64];
    const Zv = rng.normals(V * d);
    const W0 = rng.normals(V * d, 0.1);
    const tokens = Array.from({ length: L + 1 }, () => rng.int(V));
    const finals = [1, 4, 16].map((C) => fastWeightPass(Zv, tokens, W0, V, d, 0.2, C, L / C, 'ntp').W);
    for (const W of finals.slice(1)) W.forEach((w, i) => expect(w).to.be.closeTo(finals[0]![i]!, 1e-12));
    // and equals W0 + η·Σ onehot(next)·zᵀ computed here
    const expected = Array.from(W0);
    for (let t = 0; t < L; t++) for (let j = 0; j < d; j++) addAt(expected, tokens[t + 1]! * d + j, 0.2 * Zv[tokens[t]! * d + j]!);
    finals[2]!.forEach((w, i) => expect(w).to.be.closeTo(expected[i]!, 1e-12));
  });

  it('eta = 0 makes the three curves identical; apply-then-update is causal (module)', () => {
    const r = runRaw(ttt, q({ eta: 0, seed: 9 })).result as any;
    expect(r.accuracy_per_chunk.ntp).to.deep.equal(r.accuracy_per_chunk.frozen);
    expect(r.accuracy_per_chunk.recon).to.deep.equal(r.accuracy_per_chunk.frozen);
    expect(r.fast_weight_norm_final).to.equal(r.fast_weight_norm_initial);
    const rng = new Rng(23);
    const [V, d, C, N] = [6, 8, 16, 10];
    const Zv = rng.normals(V * d);
    const W0 = rng.normals(V * d, 0.1);
    const tokens = Array.from({ length: N * C + 1 }, () => rng.int(V));
    const base = fastWeightPass(Zv, tokens, W0, V, d, 0.3, C, N, 'ntp').accuracy;
    for (const i of [0, 3, 7]) {
      const altered = tokens.slice();
      for (let t = (i + 1) * C + 1; t < altered.length; t++) altered[t] = (altered[t]! + 1 + rng.int(V - 1)) % V;
      const acc = fastWeightPass(Zv, altered, W0, V, d, 0.3, C, N, 'ntp').accuracy;
      expect(acc.slice(0, i + 1)).to.deep.equal(base.slice(0, i + 1));
      expect(acc.slice(i + 1)).to.not.deep.equal(base.slice(i + 1));
    }
  });

  it('[trend] last-quarter next-token accuracy beats frozen and reconstruction and stays below the oracle (12 seeds)', () => {
    let wins = 0;
    for (let seed = 500; seed < 512; seed++) {
      const r = runRaw(ttt, { seed: String(seed) }).result as any;
      const lq = r.last_quarter_accuracy;
      if (lq.ntp > lq.frozen && lq.ntp > lq.recon) wins++;
      const n = 16 * r.last_quarter_chunks;
      const p = r.oracle_accuracy;
      expect(lq.ntp).to.be.at.most(p + 4 * Math.sqrt((p * (1 - p)) / n));
      expect(Math.abs(r.empirical_follow_rate - 0.9)).to.be.below(4 * Math.sqrt(0.09 / (48 * 16)));
    }
    expect(wins).to.be.at.least(10);
  });

  it('a single chunk is its own last quarter', () => {
    const one = runRaw(ttt, q({ n_chunks: 1 })).result as any;
    expect(one.last_quarter_chunks).to.equal(1);
    expect(one.accuracy_per_chunk.ntp).to.have.length(1);
  });
});
