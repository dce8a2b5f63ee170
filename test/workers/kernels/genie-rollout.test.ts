import { expect } from 'chai';
import { createHash } from 'node:crypto';
import genie, { rollout, solveLinear } from '../../../workers/kernels/genie-rollout.js';
import { gramSchmidt } from '../../../workers/lib/linalg.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { solveLinear as referenceSolve } from '../../helpers/linear-solve.js';
import { addAt, at } from '../../helpers/indexed.js';
import { sampledIndex, seriesDigest } from '../../helpers/series-digest.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

type Mat = number[][];
const mul = (a: Mat, b: Mat): Mat => a.map((row) => b[0]!.map((_, j) => row.reduce((s, v, k) => s + v * b[k]![j]!, 0)));
const apply = (a: Mat, v: number[]) => a.map((row) => row.reduce((s, x, k) => s + x * v[k]!, 0));
const eye = (n: number): Mat => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

/** z_t = (ρR)^t z_0 + Σ_{s<t} (ρR)^{t−1−s} e_{a_s}, with explicit matrix powers. */
function closedForm(z0: number[], M: Mat, E: number[][], actions: number[], t: number): number[] {
  const D = z0.length;
  const pow: Mat[] = [eye(D)];
  for (let k = 1; k <= t; k++) pow.push(mul(M, pow[k - 1]!));
  const z = apply(pow[t]!, z0);
  for (let s = 0; s < t; s++) {
    const term = apply(pow[t - 1 - s]!, E[actions[s]!]!);
    term.forEach((v, i) => (z[i] = z[i]! + v));
  }
  return z;
}

/** The documented inputs (kernels-c §12): rotation, codebook, z_0 and actions from their own streams. */
function regenerate(seed: number, D: number, A: number, H: number) {
  const rng = new RngStreams(seed, 'genie/rollout');
  const Rm = gramSchmidt({ rows: D, cols: D, data: rng.stream('rotation').normals(D * D) }).q;
  const R = Array.from({ length: D }, (_, i) => Array.from(Rm.data.subarray(i * D, i * D + D)));
  const cb = rng.stream('codebook');
  const E = Array.from({ length: A }, () => {
    const v = Array.from({ length: D }, () => cb.normal());
    const n = norm(v);
    return v.map((x) => x / n);
  });
  const z0 = Array.from(rng.stream('z0').normals(D));
  const ar = rng.stream('actions');
  const actions = Array.from({ length: H }, () => ar.int(A));
  return { R, E, z0, actions };
}

/**
 * The whole pipeline replayed: decoder G (2D×D, sd 1/√D, stream decoder), the world from regenerate,
 * frames tanh(G z_t) + 0.01·noise (stream frame_noise), the encoder ẑ = argmin ‖Gz − atanh(clip x)‖
 * by the normal equations, VQ action = nearest codeword to ẑ_{t+1} − ρRẑ_t, random actions (stream
 * random), PSNR (peak-to-peak 2) of the rollouts decoded from z_0, and the constant-action fixed point.
 */
function pipeline(seed: number, D: number, A: number, H: number, rho: number) {
  const rng = new RngStreams(seed, 'genie/rollout');
  const { R, E, z0, actions } = regenerate(seed, D, A, H);
  const gs = rng.stream('decoder');
  const G = Array.from({ length: 2 * D }, () => Array.from({ length: D }, () => gs.normal() / Math.sqrt(D)));
  const step = (z: number[], a: number) => apply(R, z).map((x, i) => rho * x + E[a]![i]!);
  const roll = (acts: number[]) => acts.reduce<number[][]>((zs, a) => [...zs, step(zs.at(-1)!, a)], [z0]);
  const Z = roll(actions);
  const fn = rng.stream('frame_noise');
  const frames = Z.map((z) => apply(G, z).map((x) => Math.tanh(x) + 0.01 * fn.normal()));
  const GtG = G[0]!.map((_, i) => G[0]!.map((__, j) => G.reduce((s, row) => s + row[i]! * row[j]!, 0)));
  const lim = 1 - 1e-6;
  const Zhat = frames.map((x) => {
    const y = x.map((v) => Math.atanh(Math.max(-lim, Math.min(lim, v))));
    return referenceSolve(GtG, G[0]!.map((_, j) => G.reduce((s, row, p) => s + row[j]! * y[p]!, 0)));
  });
  const inferred = actions.map((_, t) => {
    const res = apply(R, Zhat[t]!).map((x, i) => Zhat[t + 1]![i]! - rho * x);
    const d = E.map((e) => e.reduce((s, x, i) => s + (res[i]! - x) ** 2, 0));
    return d.indexOf(Math.min(...d));
  });
  const rr = rng.stream('random');
  const random = actions.map(() => Math.floor(rr.next() * A));
  const psnr = (acts: number[]) =>
    roll(acts)
      .slice(1)
      .map((z, t) => {
        const mse = apply(G, z).reduce((s, x, p) => s + (Math.tanh(x) - frames[t + 1]![p]!) ** 2, 0) / (2 * D);
        return 10 * Math.log10(4 / mse);
      });
  const a0 = actions[0]!;
  const zStar = referenceSolve(R.map((row, i) => row.map((x, j) => (i === j ? 1 : 0) - rho * x)), E[a0]!);
  const Zc = roll(actions.map(() => a0));
  return { Z, inferred, random, psnrInf: psnr(inferred), psnrRand: psnr(random), zStar, a0, dist: [norm(Zc[0]!.map((x, i) => x - zStar[i]!)), norm(Zc[H]!.map((x, i) => x - zStar[i]!))], actions };
}

describe('kernel genie/rollout', () => {
  it('the latent action model, PSNR series, confusion, fixed point and digests recomputed by an independent pipeline', () => {
    for (const [seed, D, A, H, rho] of [[42, 8, 6, 32, 0.85], [3, 4, 12, 20, 0.5], [9, 6, 3, 300, 0.95]] as const) {
      const r = runRaw(genie, q({ seed, dim: D, n_actions: A, horizon: H, rho })).result as any;
      const ref = pipeline(seed, D, A, H, rho);
      const sha = (xs: number[]) => createHash('sha256').update(JSON.stringify(xs)).digest('hex');
      expect(r.actions_digest).to.deep.equal({ true: sha(ref.actions), inferred: sha(ref.inferred) });
      // every sampled index is the documented one, not read back from the body
      expect([r.actions_index, r.psnr_index]).to.deep.equal([sampledIndex(H), sampledIndex(H).map((i) => i + 1)]);
      expect([r.state_norms_index, r.divergence_ratio_index]).to.deep.equal([sampledIndex(H + 1), sampledIndex(H + 1)]);
      const norms = ref.Z.map(norm);
      r.state_norms.forEach((x: number, k: number) => expect(x).to.be.closeTo(norms[r.state_norms_index[k]]!, 1e-9 * Math.max(1, norms[r.state_norms_index[k]]!)));
      expect(r.state_norms_digest).to.equal(seriesDigest(norms));
      expect(r.true_actions).to.deep.equal(r.actions_index.map((i: number) => ref.actions[i]));
      expect(r.inferred_actions).to.deep.equal(r.actions_index.map((i: number) => ref.inferred[i]));
      expect(r.action_accuracy).to.equal(ref.inferred.filter((a, t) => a === ref.actions[t]).length / H);
      const conf = Array.from({ length: A }, () => new Array<number>(A).fill(0));
      ref.actions.forEach((a, t) => addAt(at(conf, a), at(ref.inferred, t)));
      expect(r.confusion).to.deep.equal(conf);
      r.psnr_inferred.forEach((x: number, k: number) => expect(x).to.be.closeTo(ref.psnrInf[r.psnr_index[k] - 1]!, 1e-8));
      r.psnr_random.forEach((x: number, k: number) => expect(x).to.be.closeTo(ref.psnrRand[r.psnr_index[k] - 1]!, 1e-8));
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      expect(r.psnr_inferred_mean).to.be.closeTo(mean(ref.psnrInf), 1e-8);
      expect(r.psnr_random_mean).to.be.closeTo(mean(ref.psnrRand), 1e-8);
      expect(r.delta_psnr).to.be.closeTo(mean(ref.psnrInf) - mean(ref.psnrRand), 1e-8);
      expect(r.fixed_point.action).to.equal(ref.a0);
      Array.from(r.fixed_point.z_star as ArrayLike<number>).forEach((x, i) => expect(x).to.be.closeTo(ref.zStar[i]!, 1e-10));
      expect(r.fixed_point_distance.start).to.be.closeTo(ref.dist[0]!, 1e-10);
      expect(r.fixed_point_distance.end).to.be.closeTo(ref.dist[1]!, 1e-10);
      Array.from(r.z0 as ArrayLike<number>).forEach((x, i) => expect(x).to.be.closeTo(ref.Z[0]![i]!, 1e-15));
    }
  });

  it('module: the rollout equals the closed form (ρR)^t z_0 + Σ (ρR)^{t−1−s} e_{a_s} for any R', () => {
    const rng = new Rng(4);
    for (const [D, A, T, rho] of [[3, 4, 12, 0.7], [5, 2, 9, 0], [2, 6, 20, 0.999]]) {
      const R = rng.normals(D! * D!, 0.5);
      const E = rng.normals(A! * D!);
      const z0 = rng.normals(D!);
      const acts = Array.from({ length: T! }, () => rng.int(A!));
      const Z = rollout(z0, R, rho!, E, acts, D!);
      const M = Array.from({ length: D! }, (_, i) => Array.from({ length: D! }, (_, j) => rho! * R[i * D! + j]!));
      const Es = Array.from({ length: A! }, (_, k) => Array.from(E.subarray(k * D!, k * D! + D!)));
      for (let t = 0; t <= T!; t++) {
        const ref = closedForm(Array.from(z0), M, Es, acts, t);
        ref.forEach((v, i) => expect(Z[t * D! + i]).to.be.closeTo(v, 1e-10 * Math.max(1, Math.abs(v))));
      }
    }
    // the pivoted solver against a known system
    const x = solveLinear(Float64Array.from([0, 2, 1, 1, 1, 0, 3, 0, 1]), [5, 3, 4], 3);
    [1, 2, 1].forEach((v, i) => expect(x[i]).to.be.closeTo(v, 1e-14));
  });

  it('state norms match the closed-form rollout of the regenerated world and respect ‖z_t‖ ≤ ρ^t‖z_0‖ + (1 − ρ^t)/(1 − ρ)', () => {
    for (const [seed, D, A, H, rho] of [[1, 4, 3, 12, 0.85], [2, 8, 6, 32, 0.5], [3, 3, 20, 40, 0.999]]) {
      const r = runRaw(genie, q({ seed: seed!, dim: D!, n_actions: A!, horizon: H!, rho: rho! })).result as any;
      const { R, E, z0, actions } = regenerate(seed!, D!, A!, H!);
      expect(r.z0).to.have.length(D!);
      r.z0.forEach((v: number, i: number) => expect(v).to.equal(z0[i]));
      expect(r.true_actions).to.deep.equal(actions);
      const M = R.map((row) => row.map((v) => rho! * v));
      r.state_norms_index.forEach((t: number, k: number) => {
        const ref = norm(closedForm(z0, M, E, actions, t));
        expect(r.state_norms[k]).to.be.closeTo(ref, 1e-9 * Math.max(1, ref));
        expect(r.state_norms[k]).to.be.at.most(rho! ** t * norm(z0) + (1 - rho! ** t) / (1 - rho!) + 1e-9);
      });
      // fixed point of the constant action a_0: residual of z* − ρRz* − e_a with the regenerated R
      const a = actions[0]!;
      expect(r.fixed_point.action).to.equal(a);
      const zs = r.fixed_point.z_star as number[];
      const resid = apply(M, zs).map((v, i) => zs[i]! - v - E[a]![i]!);
      expect(norm(resid)).to.be.below(1e-9 * Math.max(1, norm(zs)));
    }
  });

  it('rho = 0 forgets the state: z_{t+1} = e_{a_t}, so every later norm is 1 and the divergence ratio is 0', () => {
    const r = runRaw(genie, q({ rho: 0, horizon: 50, seed: 3 })).result as any;
    r.state_norms_index.forEach((t: number, k: number) => {
      if (t >= 1) expect(r.state_norms[k]).to.be.closeTo(1, 1e-12);
    });
    expect(r.divergence_ratio[0]).to.be.closeTo(1, 1e-15);
    for (const v of r.divergence_ratio.slice(1)) expect(v).to.equal(0);
    expect(r.fixed_point_distance.end).to.be.closeTo(0, 1e-12);
  });

  it('closed forms: divergence ratio = ρ^t (orthogonal R) and the constant-action distance shrinks by exactly ρ^horizon', () => {
    for (const [seed, D, H, rho] of [[1, 8, 32, 0.85], [2, 32, 1024, 0.999], [3, 2, 300, 0.9], [4, 17, 7, 0.3]]) {
      const r = runRaw(genie, q({ seed: seed!, dim: D!, horizon: H!, rho: rho! })).result as any;
      expect(r.divergence_ratio_index.at(-1)).to.equal(H);
      r.divergence_ratio_index.forEach((t: number, k: number) => {
        const expected = rho! ** t;
        expect(Math.abs(r.divergence_ratio[k] - expected)).to.be.at.most(1e-10 * expected);
      });
      const { start, end } = r.fixed_point_distance;
      const zsNorm = norm(r.fixed_point.z_star);
      expect(start).to.be.greaterThan(0);
      expect(Math.abs(end - rho! ** H! * start)).to.be.at.most(1e-10 * Math.max(1, zsNorm) + 1e-10 * rho! ** H! * start);
    }
  });

  it('[trend] at defaults the latent actions are recovered (accuracy ≥ 0.9) and Δ PSNR > 0 (10 seeds)', () => {
    let good = 0;
    for (let seed = 300; seed < 310; seed++) {
      const r = runRaw(genie, { seed: String(seed) }).result as any;
      if (r.action_accuracy >= 0.9 && r.delta_psnr > 0) good++;
      // bookkeeping that a stub would not reproduce: confusion = counts of (true, inferred) pairs
      const conf = r.confusion as number[][];
      expect(conf.flat().reduce((a, b) => a + b, 0)).to.equal(32);
      expect(conf.reduce((s, row, i) => s + row[i]!, 0)).to.equal(Math.round(r.action_accuracy * 32));
      const agree = (r.true_actions as number[]).filter((a, t) => a === r.inferred_actions[t]).length;
      expect(agree / 32).to.be.closeTo(r.action_accuracy, 1e-15);
      expect(r.delta_psnr).to.be.closeTo(r.psnr_inferred_mean - r.psnr_random_mean, 1e-9);
      // with every action right the generated frames differ from the observed ones by the frame noise alone:
      // PSNR ≈ 10·log10(2² / 0.01²) ≈ 46 dB
      if (r.action_accuracy === 1) expect(r.psnr_inferred_mean).to.be.closeTo(10 * Math.log10(4 / 1e-4), 1);
    }
    expect(good).to.be.at.least(9);
  });

  it('caps long series at 256 and drops the confusion matrix above 16 actions', () => {
    const r = runRaw(genie, q({ horizon: 1024, n_actions: 17 })).result as any;
    expect(r.confusion).to.equal(null);
    expect(r.state_norms).to.have.length(256);
    expect(r.state_norms_index.at(-1)).to.equal(1024);
    expect(r.true_actions).to.have.length(256);
    expect(r.psnr_index.at(-1)).to.equal(1024);
  });
});
