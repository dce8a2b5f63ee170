import { expect } from 'chai';
import elf, { posteriorWeights } from '../../../workers/kernels/elf-flow.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { at } from '../../helpers/indexed.js';

const shannon = (p: number[]): number => -p.reduce((s, q) => s + (q > 0 ? q * Math.log(q) : 0), 0);

/** Independent Euler integration with the posterior written directly as π_v·N(z; t e_v, (1−t)²I). */
function referenceFlow(E: number[][], pi: number[], z0: number[], steps: number): { z1: number[]; w: number[]; entropies: number[]; path: number } {
  let z = z0.slice();
  let w: number[] = [];
  const entropies: number[] = [];
  let path = 0;
  for (let k = 0; k < steps; k++) {
    const t = k / steps;
    const logs = E.map((e, v) => Math.log(pi[v]!) - e.reduce((s, ei, i) => s + (z[i]! - t * ei) ** 2, 0) / (2 * (1 - t) ** 2));
    const mx = Math.max(...logs);
    const un = logs.map((l) => Math.exp(l - mx));
    const tot = un.reduce((a, b) => a + b, 0);
    w = un.map((u) => u / tot);
    entropies.push(shannon(w));
    const xhat = z.map((_, i) => E.reduce((s, e, v) => s + w[v]! * e[i]!, 0));
    const next = z.map((zi, i) => zi + ((1 / steps) * (xhat[i]! - zi)) / (1 - t));
    path += Math.hypot(...next.map((x, i) => x - z[i]!));
    z = next;
  }
  return { z1: z, w, entropies, path };
}

/** The vocabulary and noise redrawn (stream vocab: V × dim normals scaled to norm √dim, then V prior logits; stream noise: dim normals per particle). */
function draws(seed: number, dim: number, V: number, P: number) {
  const rng = new RngStreams(seed, 'elf/flow');
  const vs = rng.stream('vocab');
  const E = Array.from({ length: V }, () => {
    const g = Array.from({ length: dim }, () => vs.normal());
    const norm = Math.hypot(...g);
    return g.map((x) => (x * Math.sqrt(dim)) / norm);
  });
  const logits = Array.from({ length: V }, () => vs.normal());
  const Z = logits.reduce((a, l) => a + Math.exp(l), 0);
  const pi = logits.map((l) => Math.exp(l) / Z);
  const ns = rng.stream('noise');
  const z0 = Array.from({ length: P }, () => Array.from({ length: dim }, () => ns.normal()));
  return { E, pi, z0 };
}

describe('kernel elf/flow', () => {
  it('every reported value recomputed from the vocabulary and noise redrawn from their streams', () => {
    for (const [seed, dim, V, P, steps] of [[42, 6, 4, 32, 8], [5, 3, 11, 60, 5], [9, 12, 7, 20, 1]] as const) {
      const r = runRaw(elf, { seed, dim, targets: V, particles: P, steps }).result as any;
      const { E, pi, z0 } = draws(seed, dim, V, P);
      const close = (a: number, b: number, what: string, tol = 1e-9) => expect(a, what).to.be.closeTo(b, tol);
      // lengths first: an element-wise loop over a short list would check nothing past its end
      expect([r.embeddings.length, r.embeddings[0].length, r.pi.length, r.entropy_by_step.length, r.one_step_point.length]).to.deep.equal([V, dim, V, referenceFlow(E, pi, z0[0]!, steps).entropies.length, dim]);
      r.particles.forEach((q: any) => expect([q.z0.length, q.final_weights.length]).to.deep.equal([dim, V]));
      r.embeddings.forEach((e: Float64Array, v: number) => e.forEach((x, i) => close(x, E[v]![i]!, `e ${v},${i}`, 1e-12)));
      r.pi.forEach((x: number, v: number) => close(x, pi[v]!, `π ${v}`, 1e-12));
      close(r.prior_entropy, shannon(pi), 'prior entropy', 1e-12);
      const runs = z0.map((z) => referenceFlow(E, pi, z, steps));
      const decoded = runs.map(({ z1 }) => {
        const d = E.map((e) => Math.hypot(...e.map((x, i) => z1[i]! - x)));
        return { token: d.indexOf(Math.min(...d)), dist: Math.min(...d) };
      });
      expect(r.tokens).to.deep.equal(decoded.map((d) => d.token));
      expect(r.final_distances.length).to.equal(P);
      r.final_distances.forEach((x: number, p: number) => close(x, decoded[p]!.dist, `dist ${p}`));
      expect(r.token_counts).to.deep.equal(E.map((_, v) => decoded.filter((d) => d.token === v).length));
      expect(r.particles.length).to.equal(Math.min(P, 48));
      r.particles.forEach((q: any, p: number) => {
        Array.from(q.z0 as Float64Array).forEach((x, i) => close(x, z0[p]![i]!, `z0 ${p}`, 1e-15));
        Array.from(q.final_weights as Float64Array).forEach((x, v) => close(x, runs[p]!.w[v]!, `w ${p},${v}`));
      });
      r.entropy_by_step.forEach((h: number, k: number) => close(h, runs.reduce((a, x) => a + x.entropies[k]!, 0) / P, `entropy ${k}`));
      close(r.mean_final_distance, decoded.reduce((a, d) => a + d.dist, 0) / P, 'mean distance');
      const straight = runs.map((x, p) => (x.path > 0 ? Math.hypot(...x.z1.map((v, i) => v - z0[p]![i]!)) / x.path : 1));
      close(r.straightness_mean, straight.reduce((a, b) => a + b, 0) / P, 'straightness');
      r.one_step_point.forEach((x: number, i: number) => close(x, E.reduce((a, e, v) => a + pi[v]! * e[i]!, 0), `one step ${i}`, 1e-12));
    }
  });

  it('the kernel checks hold, and posteriorWeights is softmax(ln π − ‖z − t·e‖²/(2(1 − t)²)) written out', () => {
    const out = runRaw(elf, { seed: 8, particles: 40 });
    expect(out.checks).to.deep.equal({ start_entropy_equals_prior: true, counts_sum: true });
    const { E, pi } = draws(8, 6, 4, 1);
    const voc = { V: 4, dim: 6, e: Float64Array.from(E.flat()), eT: new Float64Array(24), pi: Float64Array.from(pi), logPi: Float64Array.from(pi, Math.log) };
    for (const [t, z] of [[0, [1, 0, 0, 0, 0, 0]], [0.5, [0.3, -1.2, 0.8, 0.1, 2, -0.4]], [0.9, E[2]!.map((x) => 0.9 * x + 0.05)]] as const) {
      const logits = E.map((e, v) => Math.log(pi[v]!) - e.reduce((a, ei, i) => a + (z[i]! - t * ei) ** 2, 0) / (2 * (1 - t) ** 2));
      const mx = Math.max(...logits);
      const w = logits.map((l) => Math.exp(l - mx));
      const Z = w.reduce((a, b) => a + b, 0);
      Array.from(posteriorWeights(voc, z, t)).forEach((x, v) => expect(x).to.be.closeTo(w[v]! / Z, 1e-12));
    }
  });

  it('one Euler step collapses every particle to the prior mean Σ π_v e_v', () => {
    const r = runRaw(elf, { steps: 1, seed: 3 }).result as any;
    const mean = r.embeddings[0].map((_: number, i: number) => r.embeddings.reduce((s: number, e: number[], v: number) => s + r.pi[v] * at(e, i), 0));
    for (const p of r.particles) p.z1.forEach((x: number, i: number) => expect(x).to.be.closeTo(mean[i], 1e-12));
    r.one_step_point.forEach((x: number, i: number) => expect(x).to.be.closeTo(mean[i], 1e-12));
  });

  it('the last step lands on the posterior mean of final_weights; an independent integration reproduces z1 and the token', () => {
    for (const [seed, steps, dim, targets] of [[42, 8, 6, 4], [7, 5, 10, 9], [11, 16, 3, 20]] as const) {
      const r = runRaw(elf, { seed, steps, dim, targets, particles: 12 }).result as any;
      const E: number[][] = r.embeddings.map((e: Float64Array) => Array.from(e));
      E.forEach((e) => expect(Math.hypot(...e)).to.be.closeTo(Math.sqrt(dim), 1e-12));
      expect(r.pi.reduce((a: number, b: number) => a + b, 0)).to.be.closeTo(1, 1e-12);
      for (const p of r.particles) {
        const w = Array.from(p.final_weights as Float64Array);
        expect(w.every((x) => x >= 0)).to.equal(true);
        expect(w.reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-12);
        p.z1.forEach((x: number, i: number) => expect(x).to.be.closeTo(E.reduce((s, e, v) => s + w[v]! * e[i]!, 0), 1e-12));
        const ref = referenceFlow(E, Array.from(r.pi), Array.from(p.z0), steps);
        ref.z1.forEach((x, i) => expect(p.z1[i]).to.be.closeTo(x, 1e-9));
        const dists = E.map((e) => Math.hypot(...e.map((ei, i) => ref.z1[i]! - ei)));
        const tok = dists.indexOf(Math.min(...dists));
        expect(p.token).to.equal(tok);
        expect(p.dist).to.be.closeTo(dists[tok]!, 1e-9);
      }
      expect(r.token_counts.reduce((a: number, b: number) => a + b, 0)).to.equal(12);
    }
  });

  it('starts with the prior entropy: at t = 0 the posterior is π whatever z is', () => {
    for (const seed of [1, 2, 3]) {
      const r = runRaw(elf, { seed, targets: 12 }).result as any;
      expect(r.entropy_by_step[0]).to.be.closeTo(shannon(Array.from(r.pi)), 1e-12);
      expect(r.entropy_by_step[r.entropy_by_step.length - 1]).to.be.below(r.entropy_by_step[0]);
    }
  });

  it('mean final distance is non-increasing in steps (seeds 0…9, same noise)', () => {
    for (let seed = 0; seed < 10; seed++) {
      const d = [1, 2, 4, 8, 16, 32].map((steps) => (runRaw(elf, { seed, steps }).result as any).mean_final_distance);
      for (let i = 1; i < d.length; i++) expect(d[i]).to.be.at.most(d[i - 1] + 1e-12);
      expect(d[5]).to.be.below(0.01);
    }
  });

  it('decoded tokens follow the prior: TV ≤ 0.15 at 256 particles and 32 steps (seeds 0…9); TV and χ² recompute', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(elf, { seed, particles: 256, steps: 32 }).result as any;
      const counts = new Array(r.pi.length).fill(0);
      for (const t of r.tokens) counts[t]++;
      expect(r.token_counts).to.deep.equal(counts);
      const tv = counts.reduce((s: number, c: number, v: number) => s + Math.abs(c / 256 - r.pi[v]), 0) / 2;
      expect(r.tv_vs_prior).to.be.closeTo(tv, 1e-12);
      expect(r.chi2).to.be.closeTo(counts.reduce((s: number, c: number, v: number) => s + (c - 256 * r.pi[v]) ** 2 / (256 * r.pi[v]), 0), 1e-9);
      expect(tv).to.be.at.most(0.15);
    }
  });
});
