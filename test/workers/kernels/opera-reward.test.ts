import { expect } from 'chai';
import opera from '../../../workers/kernels/opera-reward.js';
import { Rng, RngStreams, fnv1a32 } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

function softmaxRef(z: number[], beta: number): number[] {
  const m = Math.max(...z.map((v) => beta * v));
  const e = z.map((v) => Math.exp(beta * v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}
const H = (p: number[]): number => -p.reduce((a, q) => a + (q > 0 ? q * Math.log(q) : 0), 0);

/** Independent emitter: same streams and draw order, written with plain arrays. */
function referenceRollout(seed: number, g: number, z: number[], T: number, rho: number, w: number, gain: number, rng: Rng = new RngStreams(seed, 'opera/reward').stream(`rollout/${g}`)) {
  const p0 = softmaxRef(z, 1);
  const pg = softmaxRef(z, 1 + gain);
  const nll: number[] = [];
  const markers: number[] = [];
  let post = 0;
  let run = 0;
  for (let t = 0; t < T; t++) {
    let sharp = post > 0;
    if (!sharp && run >= w && t + w <= T) {
      if (rng.next() < rho) {
        markers.push(t);
        post = w;
        sharp = true;
      }
    }
    const p = sharp ? pg : p0;
    let u = rng.next();
    let tok = p.length - 1;
    for (let i = 0; i < p.length - 1; i++) {
      u -= p[i]!;
      if (u < 0) {
        tok = i;
        break;
      }
    }
    nll.push(-Math.log(p[tok]!));
    if (sharp) {
      post--;
      run = 0;
    } else run++;
  }
  const lnPpl = (a: number, b: number): number => nll.slice(a, b).reduce((s, v) => s + v, 0) / (b - a);
  const rewards = markers.map((r) => lnPpl(r - w, r) - lnPpl(r, r + w));
  return { markers, rewards, reward: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0, ppl: Math.exp(lnPpl(0, T)) };
}

describe('kernel opera/reward', () => {
  it('the note’s regression values come from its prototype’s generator: one stream seed XOR fnv1a32("opera/reward") without the fmix32 finaliser, z then every rollout in turn', () => {
    const rng = new Rng((42 ^ fnv1a32('opera/reward')) >>> 0);
    const z = Array.from({ length: 32 }, () => 1.5 * rng.normal());
    expect(H(softmaxRef(z, 1))).to.be.closeTo(2.609, 5e-4);
    expect(H(softmaxRef(z, 2))).to.be.closeTo(1.044, 5e-4);
    const note = [0, 0.83, 1.565, 2.309, 2.583];
    [0, 0.5, 1, 2, 4].forEach((gain, i) => expect(H(softmaxRef(z, 1)) - H(softmaxRef(z, 1 + gain)), `γ = ${gain}`).to.be.closeTo(note[i]!, 5e-4));
    const states = Array.from({ length: 8 }, (_, g) => referenceRollout(42, g, z, 128, 0.05, 8, 1, rng).rewards).flat();
    const mean = states.reduce((a, b) => a + b, 0) / states.length;
    const ss = states.reduce((a, r) => a + (r - mean) ** 2, 0);
    // the note's ± 0.109 is the population sd over √29; the kernel reports the sample sd (0.111 here)
    expect([states.length, +mean.toFixed(3), +(Math.sqrt(ss / states.length) / Math.sqrt(states.length)).toFixed(3), +(Math.sqrt(ss / (states.length - 1)) / Math.sqrt(states.length)).toFixed(3)]).to.deep.equal([29, 1.339, 0.109, 0.111]);
  });

  it('ours, pinned: streams fmix32(seed XOR fnv1a32("opera/reward/<label>")), logits then rollout/<g>, give these values at the defaults', () => {
    const r = runRaw(opera, {}).result as any;
    expect([r.entropy.base, r.entropy.sharpened].map((x: number) => +x.toFixed(3))).to.deep.equal([2.022, 0.437]);
    expect([0, 0.5, 1, 2, 4].map((gain) => +(runRaw(opera, { gain }).result as any).expected_reward_per_state.toFixed(3))).to.deep.equal([0, 1.009, 1.584, 1.948, 2.019]);
    expect([r.mc.states, +r.mc.mean_state_reward.toFixed(3), +r.mc.stderr.toFixed(3)]).to.deep.equal([29, 1.653, 0.113]);
  });

  it('rollouts, state rewards and perplexities match an independent emitter', () => {
    for (const q of [{ seed: 1 }, { seed: 2, reflect_rate: 0.3, window: 3, gain: 2.5, vocab: 7, length: 60, group: 5 }, { seed: 3, window: 1, reflect_rate: 0.5 }]) {
      const out = runRaw(opera, q);
      const r = out.result as any;
      const p = out.params;
      const z: number[] = Array.from(r.logits);
      r.rollouts.forEach((ro: any, g: number) => {
        const ref = referenceRollout(p.seed, g, z, p.length, p.reflect_rate, p.window, p.gain);
        expect(ro.reflective_positions).to.deep.equal(ref.markers);
        ro.state_rewards.forEach((v: number, i: number) => expect(v).to.be.closeTo(ref.rewards[i]!, 1e-12));
        expect(ro.reward).to.be.closeTo(ref.reward, 1e-12);
        expect(ro.ppl).to.be.closeTo(ref.ppl, 1e-9 * ref.ppl);
        expect(ro.ppl).to.be.at.least(1);
      });
    }
  });

  it('GRPO advantages sum to 0 with unit population sd; selection is the lowest-perplexity rollout', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(opera, { seed, reflect_rate: 0.1 }).result as any;
      const A: number[] = r.rollouts.map((x: any) => x.advantage);
      const R: number[] = r.rollouts.map((x: any) => x.reward);
      const mu = R.reduce((a, b) => a + b, 0) / R.length;
      const sd = Math.sqrt(R.reduce((a, v) => a + (v - mu) ** 2, 0) / R.length);
      expect(Math.abs(A.reduce((a, b) => a + b, 0))).to.be.at.most(1e-12);
      // precondition, not a guard: at reflect_rate 0.1 the group's rewards differ for every seed
      expect(sd, `seed ${seed}: rewards not all equal`).to.be.above(1e-12);
      expect(Math.sqrt(A.reduce((a, v) => a + v * v, 0) / A.length)).to.be.closeTo(1, 1e-12);
      A.forEach((a, g) => expect(a).to.be.closeTo((R[g]! - mu) / sd, 1e-12));
      expect(r.reward_stats.mean).to.be.closeTo(mu, 1e-15);
      expect(r.reward_stats.std).to.be.closeTo(sd, 1e-15);
      expect(r.advantage_stats.mean).to.be.closeTo(A.reduce((a, b) => a + b, 0) / A.length, 1e-15);
      expect(r.advantage_stats.std).to.be.closeTo(Math.sqrt(A.reduce((a, v) => a + v * v, 0) / A.length), 1e-12);
      const ppl: number[] = r.rollouts.map((x: any) => x.ppl);
      expect(ppl[r.selected]).to.equal(Math.min(...ppl));
    }
  });

  it('no reflection gives no reward; gain 0 gives expected reward 0; expected reward is H(p0) − H(p_γ), non-decreasing in γ', () => {
    const none = runRaw(opera, { reflect_rate: 0 }).result as any;
    none.rollouts.forEach((x: any) => {
      expect(x.reward).to.equal(0);
      expect(x.advantage).to.equal(0);
      expect(x.reflective_positions).to.deep.equal([]);
    });
    expect(none.mc).to.deep.equal({ mean_state_reward: null, stderr: null, states: 0 });
    let prev = -Infinity;
    for (const gain of [0, 0.5, 1, 2, 4, 8]) {
      const r = runRaw(opera, { gain }).result as any;
      const z: number[] = Array.from(r.logits);
      const expected = H(softmaxRef(z, 1)) - H(softmaxRef(z, 1 + gain));
      expect(r.expected_reward_per_state).to.be.closeTo(expected, 1e-12);
      expect(r.entropy.base).to.be.closeTo(H(softmaxRef(z, 1)), 1e-12);
      if (gain === 0) expect(Math.abs(r.expected_reward_per_state)).to.be.at.most(1e-15);
      expect(r.expected_reward_per_state).to.be.at.least(prev - 1e-15);
      prev = r.expected_reward_per_state;
    }
  });

  it('the Monte-Carlo mean state reward matches the closed form within 5 standard errors (G = 32, T = 512, 20 seeds)', () => {
    let zsum = 0;
    for (let seed = 0; seed < 20; seed++) {
      const r = runRaw(opera, { seed, group: 32, length: 512 }).result as any;
      const all: number[] = r.rollouts.flatMap((x: any) => x.state_rewards);
      expect(r.mc.states).to.equal(all.length);
      const mean = all.reduce((a, b) => a + b, 0) / all.length;
      const se = Math.sqrt(all.reduce((a, v) => a + (v - mean) ** 2, 0) / (all.length - 1) / all.length);
      expect(r.mc.mean_state_reward).to.be.closeTo(mean, 1e-12);
      expect(r.mc.stderr).to.be.closeTo(se, 1e-12);
      const z = (mean - r.expected_reward_per_state) / se;
      expect(r.mc_z_score).to.be.closeTo(z, 1e-9);
      // logits from stream `logits` (×1.5) and both entropies
      const ls = new RngStreams(seed, 'opera/reward').stream('logits');
      const logits = Array.from({ length: r.logits.length }, () => 1.5 * ls.normal());
      Array.from(r.logits as Float64Array).forEach((v, i) => expect(v).to.be.closeTo(logits[i]!, 1e-15));
      expect(r.entropy.base).to.be.closeTo(H(softmaxRef(logits, 1)), 1e-12);
      expect(r.entropy.sharpened).to.be.closeTo(H(softmaxRef(logits, 2)), 1e-12); // default gain 1: β = 1 + gain
      expect(Math.abs(z)).to.be.at.most(5);
      zsum += z;
    }
    expect(Math.abs(zsum / Math.sqrt(20))).to.be.at.most(5);
  });
});
