import { expect } from 'chai';
import grpo, { grpoGradient } from '../../../workers/kernels/grpo-reward-dynamics.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt, at } from '../../helpers/indexed.js';

const softmax = (x: number[]): number[] => {
  const m = Math.max(...x);
  const e = x.map((v) => Math.exp(v - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
};

const klOf = (p: number[], q: number[]) => p.reduce((s, x, a) => s + (x > 0 ? x * Math.log(x / q[a]!) : 0), 0);
const H = (p: number[]) => -p.reduce((s, x) => s + (x > 0 ? x * Math.log(x) : 0), 0);

/**
 * Independent replay: logits (8 × 6 normals, row-major) then one correct answer int(6) per prompt
 * from stream init; per step and prompt G answers, each the first a with u·Σπ < cumsum_a, from
 * stream sample. The update is θ ← θ + 0.5·∇θ[(1/G)Σ Â_i ln π(a_i) − 0.02·KL(π‖π_ref)], the
 * gradient written per sample: Â_i(e_{a_i} − π)/G and π_a(ln π_a/π_ref,a − KL).
 */
function replay(seed: number, G: number, steps: number) {
  const rng = new RngStreams(seed, 'grpo/reward-dynamics');
  const init = rng.stream('init');
  const theta = Array.from({ length: 8 }, () => Array.from({ length: 6 }, () => init.normal()));
  const correct = Array.from({ length: 8 }, () => Math.floor(init.next() * 6));
  const logits0 = theta.map((r) => [...r]);
  const ref = theta.map(softmax);
  const sample = rng.stream('sample');
  const rows: Record<string, number>[] = [];
  const trace0: { prompt: number; answers: number[]; rewards: number[]; advantages: number[]; grad: number[] }[] = [];
  const stats = (pis: number[][]) => ({
    expected_reward: pis.reduce((s, pi, p) => s + pi[correct[p]!]!, 0) / 8,
    kl: pis.reduce((s, pi, p) => s + klOf(pi, ref[p]!), 0) / 8,
    entropy: pis.reduce((s, pi) => s + H(pi), 0) / 8,
    expected_zero_var_frac: pis.reduce((s, pi, p) => s + pi[correct[p]!]! ** G + (1 - pi[correct[p]!]!) ** G, 0) / 8,
  });
  for (let t = 0; t < steps; t++) {
    const pis = theta.map(softmax);
    let sampled = 0;
    let zero = 0;
    let gnorm = 0;
    pis.forEach((pi, p) => {
      const cum = pi.map((_, a) => pi.slice(0, a + 1).reduce((x, y) => x + y, 0));
      const ans = Array.from({ length: G }, () => {
        const u = sample.next() * cum[5]!;
        const a = cum.slice(0, 5).findIndex((c) => u < c);
        return a < 0 ? 5 : a;
      });
      const rew = ans.map((a): number => (a === correct[p] ? 1 : 0));
      const mean = rew.reduce((x, y) => x + y, 0) / G;
      const std = Math.sqrt(rew.reduce((x, r) => x + (r - mean) ** 2, 0) / G);
      const adv = rew.map((r) => (r - mean) / (std + 1e-6));
      if (std === 0) zero++;
      sampled += mean;
      const k = klOf(pi, ref[p]!);
      const g = pi.map((pa, a) => ans.reduce((acc, ai, i) => acc + (adv[i]! * ((ai === a ? 1 : 0) - pa)) / G, 0) - 0.02 * pa * (Math.log(pa / ref[p]![a]!) - k));
      if (t === 0) trace0.push({ prompt: p, answers: ans, rewards: rew, advantages: adv, grad: g });
      g.forEach((x, a) => addAt(at(theta, p), a, 0.5 * x));
      gnorm += Math.hypot(...g);
    });
    rows.push({ t, ...stats(pis), sampled_reward: sampled / 8, zero_var_frac: zero / 8, grad_norm: gnorm / 8 });
  }
  const fin = theta.map(softmax);
  return { logits0, correct, rows, fin, final: stats(fin), trace0 };
}

describe('kernel grpo/reward-dynamics', () => {
  it('the gradient is ∇θ of (1/G)Σ Â_i ln π(a_i) − β·KL(π‖π_ref), checked by central differences away from π = π_ref', () => {
    const theta = [0.3, -1.2, 0.8, 0.1, -0.4, 1.5];
    const refLogits = [0.9, 0.2, -0.3, 0.4, -1.1, 0.6];
    const answers = [2, 0, 2, 5, 3];
    const adv = [0.7, -1.3, 0.7, 0.2, -0.3];
    const J = (th: number[]) => {
      const pi = softmax(th);
      return answers.reduce((s, a, i) => s + (adv[i]! * Math.log(pi[a]!)) / answers.length, 0) - 0.05 * klOf(pi, softmax(refLogits));
    };
    const g = grpoGradient(Float64Array.from(softmax(theta)), Float64Array.from(softmax(refLogits)), answers, adv, 0.05);
    theta.forEach((_, a) => {
      const h = 1e-5;
      const up = theta.map((x, b) => (b === a ? x + h : x));
      const dn = theta.map((x, b) => (b === a ? x - h : x));
      expect(g[a]).to.be.closeTo((J(up) - J(dn)) / (2 * h), 1e-9);
    });
  });

  it('every reported value recomputed by an independent replay of draws, groups and updates', () => {
    for (const [seed, G, steps] of [[42, 8, 24], [3, 2, 40], [7, 33, 6]] as const) {
      const r = runRaw(grpo, { seed, group_size: G, steps }).result as any;
      const ref = replay(seed, G, steps);
      r.initial_logits.forEach((row: Float64Array, p: number) => row.forEach((x, a) => expect(x).to.be.closeTo(ref.logits0[p]![a]!, 1e-15)));
      expect(r.correct_answer).to.deep.equal(ref.correct);
      expect(r.steps.length).to.equal(steps);
      r.steps.forEach((row: Record<string, number>, t: number) => {
        for (const [k, v] of Object.entries(ref.rows[t]!)) expect(row[k], `step ${t} ${k}`).to.be.closeTo(v, 1e-10);
        expect(Object.keys(row)).to.deep.equal(Object.keys(ref.rows[t]!));
      });
      r.final_policy.forEach((row: Float64Array, p: number) => row.forEach((x, a) => expect(x).to.be.closeTo(ref.fin[p]![a]!, 1e-10)));
      expect(r.final.expected_reward).to.be.closeTo(ref.final.expected_reward, 1e-10);
      expect(r.final.kl).to.be.closeTo(ref.final.kl, 1e-10);
      expect(r.final.entropy).to.be.closeTo(ref.final.entropy, 1e-10);
      expect(r.hyper).to.deep.equal({ lr: 0.5, beta_kl: 0.02, eps: 1e-6, clip_active: false });
      // the step-0 trace: every prompt's sampled answers, rewards, advantages and gradient from the replay
      expect(r.trace_step0.map((tr: any) => [tr.prompt, tr.answers, tr.rewards])).to.deep.equal(ref.trace0.map((tr) => [tr.prompt, tr.answers, tr.rewards]));
      r.trace_step0.forEach((tr: any, p: number) => {
        expect([tr.advantages.length, tr.grad.length]).to.deep.equal([G, 6]);
        Array.from(tr.advantages as ArrayLike<number>).forEach((a, i) => expect(a).to.be.closeTo(ref.trace0[p]!.advantages[i]!, 1e-12));
        Array.from(tr.grad as ArrayLike<number>).forEach((g, a) => expect(g).to.be.closeTo(ref.trace0[p]!.grad[a]!, 1e-12));
      });
    }
  });

  it('group-relative advantages sum to 0 and have population std std/(std + ε)', () => {
    for (const [seed, G] of [[42, 8], [3, 2], [4, 33]] as const) {
      const r = runRaw(grpo, { seed, group_size: G, steps: 2 }).result as any;
      for (const tr of r.trace_step0) {
        const adv: number[] = Array.from(tr.advantages);
        expect(tr.rewards.every((x: number, i: number) => x === (tr.answers[i] === r.correct_answer[tr.prompt] ? 1 : 0))).to.equal(true);
        expect(adv.reduce((a, b) => a + b, 0)).to.be.closeTo(0, 1e-12);
        const mean = tr.rewards.reduce((a: number, b: number) => a + b, 0) / G;
        const std = Math.sqrt(tr.rewards.reduce((a: number, x: number) => a + (x - mean) ** 2, 0) / G);
        adv.forEach((a, i) => expect(a).to.be.closeTo((tr.rewards[i] - mean) / (std + 1e-6), 1e-12));
        const advStd = Math.sqrt(adv.reduce((a, x) => a + x * x, 0) / G);
        if (std > 0) expect(advStd).to.be.closeTo(std / (std + 1e-6), 1e-12);
        else expect(advStd).to.equal(0);
      }
    }
  });

  it('replays the first update from initial_logits and the sampled answers; zero-variance groups get no gradient', () => {
    let zeroGroups = 0;
    for (const seed of [42, 1, 2, 3]) {
      const r = runRaw(grpo, { seed, group_size: 4, steps: 1 }).result as any;
      for (const tr of r.trace_step0) {
        const pi = softmax(Array.from(r.initial_logits[tr.prompt]));
        const G = tr.answers.length;
        // naive per-sample sum; the KL term vanishes at step 0 since π = π_ref
        const g = pi.map((p, a) => tr.answers.reduce((acc: number, ans: number, i: number) => acc + (tr.advantages[i] * ((ans === a ? 1 : 0) - p)) / G, 0));
        g.forEach((v, a) => expect(tr.grad[a]).to.be.closeTo(v, 1e-12));
        if (tr.rewards.every((x: number) => x === tr.rewards[0])) {
          zeroGroups++;
          for (const v of tr.grad) expect(Math.abs(v)).to.be.at.most(1e-15);
        }
      }
    }
    expect(zeroGroups).to.be.greaterThan(0);
  });

  it('step 0 matches the closed forms: expected reward, zero-variance fraction mean_p(q^G + (1−q)^G), KL = 0; KL ≥ 0 after', () => {
    for (const [seed, G] of [[42, 8], [5, 3]] as const) {
      const r = runRaw(grpo, { seed, group_size: G, steps: 30 }).result as any;
      const q = r.initial_logits.map((row: Float64Array, p: number) => softmax(Array.from(row))[r.correct_answer[p]]!);
      const first = r.steps[0];
      expect(first.t).to.equal(0);
      expect(first.kl).to.equal(0);
      expect(first.expected_reward).to.be.closeTo(q.reduce((a: number, b: number) => a + b, 0) / 8, 1e-12);
      expect(first.expected_zero_var_frac).to.be.closeTo(q.reduce((a: number, x: number) => a + x ** G + (1 - x) ** G, 0) / 8, 1e-12);
      for (const row of r.steps) expect(row.kl).to.be.at.least(0);
      expect(r.final.kl).to.be.greaterThan(0);
      // final policy: softmax rows; expected reward recomputes
      const fin = r.final_policy.map((row: Float64Array, p: number) => row[r.correct_answer[p]]);
      expect(r.final.expected_reward).to.be.closeTo(fin.reduce((a: number, b: number) => a + b, 0) / 8, 1e-12);
    }
  });

  it('learns: final expected reward beats step 0 for seeds 0…9, and larger groups learn faster (G = 16 vs 2)', () => {
    let big = 0;
    let small = 0;
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(grpo, { seed }).result as any;
      expect(r.final.expected_reward).to.be.greaterThan(r.steps[0].expected_reward);
      big += (runRaw(grpo, { seed, group_size: 16 }).result as any).final.expected_reward;
      small += (runRaw(grpo, { seed, group_size: 2 }).result as any).final.expected_reward;
    }
    expect(big / 10).to.be.greaterThan(small / 10);
  });

  it('subsamples the per-step rows to 256 for long runs, always keeping the last', () => {
    const r = runRaw(grpo, { steps: 500, group_size: 2 }).result as any;
    expect(r.steps).to.have.length(256);
    expect(r.steps[255].t).to.equal(499);
  });
});
