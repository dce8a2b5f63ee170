import { expect } from 'chai';
import grpo from '../../../workers/kernels/grpo-reward-dynamics.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const softmax = (x: number[]): number[] => {
  const m = Math.max(...x);
  const e = x.map((v) => Math.exp(v - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
};

describe('kernel grpo/reward-dynamics', () => {
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

  it('is deterministic in seed and sensitive to it', () => {
    expect(runBody(grpo, { seed: 18 })).to.equal(runBody(grpo, { seed: 18 }));
    expect(runBody(grpo, { seed: 18 })).to.not.equal(runBody(grpo, { seed: 19 }));
  });

  it('refuses out-of-range and malformed parameters', () => {
    expect(rejects(grpo, { group_size: '1', steps: '0' })).to.deep.equal(['group_size:number.min', 'steps:number.min']);
    expect(rejects(grpo, { group_size: '257', steps: '501' })).to.deep.equal(['group_size:number.max', 'steps:number.max']);
    expect(rejects(grpo, { steps: '-' })).to.deep.equal(['steps:qint.parse']);
    expect(rejects(grpo, { group_size: '256', steps: '500' })).to.deep.equal([]);
  });
});
