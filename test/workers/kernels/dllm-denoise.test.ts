import { expect } from 'chai';
import dllm, { chainMarginals } from '../../../workers/kernels/dllm-denoise.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';
import { addAt, at } from '../../helpers/indexed.js';

const V = 16;
const run = (o: Record<string, number>) => runRaw(dllm, Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]))).result as any;
const flatT = (r: any): number[] => (r.transition as number[][]).flat();

/** The transition redrawn from stream `chain` (kernels note: row a = softmax(2·z), 16 normals per row), never read from the body. */
function drawChain(seed: number): number[] {
  const cs = new RngStreams(seed, 'dllm/denoise').stream('chain');
  return Array.from({ length: V }, () => {
    const z = Array.from({ length: V }, () => 2 * cs.normal());
    const m = Math.max(...z);
    const e = z.map((v) => Math.exp(v - m));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / sum);
  }).flat();
}

/** The most likely sequence by max-product dynamic programming in the log domain, and its log-probability. */
function viterbi(T: number[], L: number): { tokens: number[]; logp: number } {
  let score = new Array<number>(V).fill(-Math.log(V));
  const back: number[][] = [];
  for (let i = 1; i < L; i++) {
    const prev = score;
    const arg = new Array<number>(V).fill(0);
    score = Array.from({ length: V }, (_, b) => {
      let best = -Infinity;
      for (let a = 0; a < V; a++) {
        const v = prev[a]! + Math.log(T[a * V + b]!);
        if (v > best) [best, arg[b]] = [v, a];
      }
      return best;
    });
    back.push(arg);
  }
  let last = score.indexOf(Math.max(...score));
  const tokens = [last];
  for (let i = back.length - 1; i >= 0; i--) tokens.unshift((last = back[i]![last]!));
  return { tokens, logp: Math.max(...score) };
}

/** E[log p(X)] = −log V + Σ_i Σ_a π_{i−1}(a) Σ_b T_ab log T_ab, with π_0 uniform and π_i = π_{i−1}T (the unconditioned chain). */
function expectedLogp(T: number[], L: number): number {
  let pi = new Array<number>(V).fill(1 / V);
  let s = -Math.log(V);
  for (let i = 1; i < L; i++) {
    for (let a = 0; a < V; a++) for (let b = 0; b < V; b++) s += pi[a]! * T[a * V + b]! * Math.log(T[a * V + b]!);
    pi = Array.from({ length: V }, (_, b) => pi.reduce((acc, p, a) => acc + p * T[a * V + b]!, 0));
  }
  return s;
}

/** log p(x) for a whole sequence under a uniform start and transition T. */
function logp(T: number[], xs: ArrayLike<number>): number {
  let s = -Math.log(V);
  for (let i = 1; i < xs.length; i++) s += Math.log(T[xs[i - 1]! * V + xs[i]!]!);
  return s;
}

/** Every sequence of length L over V tokens (V^L of them), as a callback. */
function enumerate(L: number, v: number, f: (xs: number[]) => void): void {
  const xs = new Array<number>(L).fill(0);
  for (let code = 0; code < v ** L; code++) {
    let c = code;
    for (let i = L - 1; i >= 0; i--) {
      xs[i] = c % v;
      c = Math.floor(c / v);
    }
    f(xs);
  }
}

/** Marginals by log-domain forward–backward (logsumexp), a different route from the kernel's scaled recursion. */
function logMarginals(T: number[], obs: number[]): number[][] {
  const L = obs.length;
  const lse = (xs: number[]) => {
    const m = Math.max(...xs);
    return m === -Infinity ? m : m + Math.log(xs.reduce((s, x) => s + Math.exp(x - m), 0));
  };
  const ok = (i: number, x: number) => (obs[i]! < 0 || obs[i] === x ? 0 : -Infinity);
  const la: number[][] = [Array.from({ length: V }, (_, x) => -Math.log(V) + ok(0, x))];
  for (let i = 1; i < L; i++) la.push(Array.from({ length: V }, (_, b) => ok(i, b) + lse(la[i - 1]!.map((a, x) => a + Math.log(T[x * V + b]!)))));
  const lb: number[][] = new Array(L);
  lb[L - 1] = new Array(V).fill(0);
  // with nothing observed after i the backward message is exactly log 1 = 0 (an empty condition)
  for (let i = L - 2; i >= 0; i--) lb[i] = obs.slice(i + 1).every((o) => o < 0) ? new Array(V).fill(0) : Array.from({ length: V }, (_, a) => lse(lb[i + 1]!.map((b, y) => b + ok(i + 1, y) + Math.log(T[a * V + y]!))));
  return la.map((row, i) => {
    const s = row.map((x, k) => x + lb[i]![k]!);
    const z = lse(s);
    return s.map((x) => Math.exp(x - z));
  });
}

/**
 * Independent sampler: linear schedule, argmax, then either commit the k most confident (ties →
 * lower position) or, with `remask`, k masked positions by a partial Fisher–Yates of the masked list.
 */
function referenceDecode(T: number[], L: number, steps: number, remask?: Rng) {
  const tokens = new Array<number>(L).fill(-1);
  const step = new Array<number>(L).fill(-1);
  const meanConf: number[] = [];
  const minCommitted: number[] = [];
  const maxLeft: (number | null)[] = [];
  for (let s = 1; s <= steps; s++) {
    const k = Math.round((L * s) / steps) - Math.round((L * (s - 1)) / steps);
    const m = logMarginals(T, tokens);
    const cands: { i: number; best: number; conf: number }[] = [];
    for (let i = 0; i < L; i++) {
      if (tokens[i]! >= 0) continue;
      const p = m[i]!;
      const best = p.indexOf(Math.max(...p));
      cands.push({ i, best, conf: p[best]! });
    }
    let chosen: typeof cands;
    if (remask) {
      const idx = cands.map((_, j) => j);
      for (let j = 0; j < k; j++) {
        const x = j + Math.floor(remask.next() * (idx.length - j));
        [idx[j], idx[x]] = [idx[x]!, idx[j]!];
      }
      chosen = idx.slice(0, k).map((j) => cands[j]!);
    } else chosen = cands.slice().sort((a, b) => b.conf - a.conf || a.i - b.i).slice(0, k);
    for (const c of chosen) {
      tokens[c.i] = c.best;
      step[c.i] = s;
    }
    meanConf.push(chosen.reduce((a, c) => a + c.conf, 0) / k);
    minCommitted.push(Math.min(...chosen.map((c) => c.conf)));
    const left = cands.filter((c) => !chosen.includes(c)).map((c) => c.conf);
    maxLeft.push(left.length ? Math.max(...left) : null);
  }
  return { tokens, step, meanConf, minCommitted, maxLeft };
}

describe('kernel dllm/denoise', () => {
  it('forward–backward marginals equal brute-force enumeration for L ≤ 4, and each sums to 1', () => {
    const rng = new Rng(7);
    for (const L of [1, 2, 3, 4]) {
      for (let trial = 0; trial < 3; trial++) {
        const T: number[] = [];
        for (let a = 0; a < V; a++) {
          const w = Array.from({ length: V }, () => Math.exp(2 * rng.normal()));
          const z = w.reduce((s, x) => s + x, 0);
          T.push(...w.map((x) => x / z));
        }
        const obs = Array.from({ length: L }, () => (rng.next() < 0.4 ? rng.int(V) : -1));
        const brute = Array.from({ length: L }, () => new Array<number>(V).fill(0));
        let Z = 0;
        enumerate(L, V, (xs) => {
          if (xs.some((x, i) => obs[i]! >= 0 && obs[i] !== x)) return;
          const p = Math.exp(logp(T, xs));
          Z += p;
          xs.forEach((x, i) => addAt(at(brute, i), x, p));
        });
        const pi0 = new Array(V).fill(1 / V);
        const m = chainMarginals(pi0, T, V, obs);
        for (let i = 0; i < L; i++) {
          let sum = 0;
          for (let x = 0; x < V; x++) {
            expect(m[i * V + x]).to.be.closeTo(brute[i]![x]! / Z, 1e-12);
            sum += m[i * V + x]!;
          }
          expect(sum).to.be.closeTo(1, 1e-12);
        }
      }
    }
  });

  it('marginals with token 0 observed (first position, and after masked ones) and on a 256-token chain match the log-domain reference', () => {
    const rng = new Rng(21);
    const T: number[] = [];
    for (let a = 0; a < V; a++) {
      const w = Array.from({ length: V }, () => Math.exp(2 * rng.normal()));
      const z = w.reduce((s, x) => s + x, 0);
      T.push(...w.map((x) => x / z));
    }
    const pi0 = new Array(V).fill(1 / V);
    const long = Array.from({ length: 256 }, (_, i) => (i % 17 === 5 ? -1 : (i * 7) % V)); // mostly observed: unscaled messages would underflow
    for (const obs of [[0, -1, -1], [-1, 0], [-1, -1, 0, -1], [0, -1, 0, -1], [-1, 3, -1, 0], long]) {
      const m = chainMarginals(pi0, T, V, obs);
      logMarginals(T, obs).forEach((row, i) => row.forEach((p, x) => expect(m[i * V + x], `obs ${obs.length} i ${i} x ${x}`).to.be.closeTo(p, 1e-9)));
    }
  });

  it('the unmasking schedule is exactly L − round(L·s/steps); committed tokens are set once and counted per step', () => {
    for (const [L, steps] of [[64, 16], [37, 5], [10, 10], [256, 128], [1, 1], [100, 7]] as const) {
      const raw = runRaw(dllm, { seq_len: String(L), steps: String(steps), seed: String(L + steps) });
      const r = raw.result as any;
      const masked = r.masked_after_step as number[];
      expect(masked).to.have.length(steps);
      masked.forEach((m, s) => expect(m).to.equal(L - Math.round((L * (s + 1)) / steps)));
      expect(masked.at(-1)).to.equal(0);
      const cps = r.committed_per_step as number[];
      expect(cps.reduce((a, b) => a + b, 0)).to.equal(L);
      const step = r.commit_step as number[];
      const hist = new Array(steps).fill(0);
      for (const s of step) hist[s - 1]++;
      expect(hist).to.deep.equal(cps);
      expect(r.final_tokens).to.have.length(L);
      for (const t of r.final_tokens) expect(t).to.be.within(0, V - 1);
      let adj = 0;
      for (let i = 1; i < L; i++) if (step[i] === step[i - 1]) adj++;
      expect(r.parallel_conflicts.low_confidence).to.equal(adj);
      // the confidence trace keeps the first 64 steps, as the constants say
      expect(r.confidence_trace.min_committed).to.have.length(Math.min(steps, 64));
      expect(r.confidence_trace.max_left_masked).to.have.length(Math.min(steps, 64));
      expect(raw.constants).to.deep.include({ vocab: V, trace_steps: Math.min(steps, 64) });
    }
  });

  it('reproduces an independent low-confidence sampler (log-domain marginals) token for token and step for step (10 seeds)', () => {
    for (let seed = 0; seed < 10; seed++) {
      const L = 12 + seed;
      const steps = 1 + (seed % 5);
      const r = run({ seq_len: L, steps, seed });
      const T = drawChain(seed);
      flatT(r).forEach((p, i) => expect(p).to.be.closeTo(T[i]!, 1e-15));
      const ref = referenceDecode(T, L, steps);
      expect(r.final_tokens).to.deep.equal(ref.tokens);
      expect(r.commit_step).to.deep.equal(ref.step);
      const schedule = Array.from({ length: steps }, (_, s) => Math.round((L * (s + 1)) / steps) - Math.round((L * s) / steps));
      expect(r.committed_per_step).to.deep.equal(schedule);
      expect(r.masked_after_step).to.deep.equal(schedule.map((_, s) => L - Math.round((L * (s + 1)) / steps)));
      let adjLc = 0;
      for (let i = 1; i < L; i++) if (ref.step[i] === ref.step[i - 1]) adjLc++;
      expect(r.parallel_conflicts.low_confidence).to.equal(adjLc);
      ref.meanConf.forEach((c, s) => expect(r.mean_confidence_per_step[s]).to.be.closeTo(c, 1e-9));
      ref.minCommitted.forEach((c, s) => expect(r.confidence_trace.min_committed[s]).to.be.closeTo(c, 1e-9));
      ref.maxLeft.forEach((c, s) => (c === null ? expect(r.confidence_trace.max_left_masked[s]).to.equal(null) : expect(r.confidence_trace.max_left_masked[s]).to.be.closeTo(c, 1e-9)));
      // the random-remasking baseline: the same denoiser, positions from stream `remask`
      const rnd = referenceDecode(T, L, steps, new RngStreams(seed, 'dllm/denoise').stream('remask'));
      expect(r.random_final_tokens).to.deep.equal(rnd.tokens);
      let adj = 0;
      for (let i = 1; i < L; i++) if (rnd.step[i] === rnd.step[i - 1]) adj++;
      expect(r.parallel_conflicts.random).to.equal(adj);
      // every step commits predictions at least as confident as every one left masked
      const tr = r.confidence_trace;
      tr.min_committed.forEach((m: number, s: number) => {
        if (tr.max_left_masked[s] !== null) expect(m).to.be.at.least(tr.max_left_masked[s]);
      });
      expect(tr.max_left_masked.at(-1)).to.equal(null);
    }
  });

  it('log-likelihoods of the reference decodes, an independent Viterbi path and E[log p] recomputed from the redrawn chain', () => {
    for (let seed = 0; seed < 3; seed++) {
      const r = run({ seq_len: 48, steps: 12, seed });
      const T = drawChain(seed);
      const lc = referenceDecode(T, 48, 12);
      const rnd = referenceDecode(T, 48, 12, new RngStreams(seed, 'dllm/denoise').stream('remask'));
      const best = viterbi(T, 48);
      expect(r.viterbi_tokens).to.deep.equal(best.tokens);
      expect(r.viterbi_loglik_per_token).to.be.closeTo(best.logp / 48, 1e-12);
      expect(r.loglik_per_token.low_confidence).to.be.closeTo(logp(T, lc.tokens) / 48, 1e-12);
      expect(r.loglik_per_token.random).to.be.closeTo(logp(T, rnd.tokens) / 48, 1e-12);
      expect(r.expected_loglik_per_token).to.be.closeTo(expectedLogp(T, 48) / 48, 1e-12);
      expect(r.loglik_per_token.low_confidence).to.be.at.most(r.viterbi_loglik_per_token + 1e-12);
    }
    const r = run({ seq_len: 4, steps: 2, seed: 3 });
    const T = drawChain(3);
    let best = -Infinity;
    let negH = 0;
    enumerate(4, V, (xs) => {
      const l = logp(T, xs);
      best = Math.max(best, l);
      negH += Math.exp(l) * l;
    });
    expect(r.viterbi_loglik_per_token).to.be.closeTo(best / 4, 1e-12);
    expect(r.expected_loglik_per_token).to.be.closeTo(negH / 4, 1e-12);
    expect(expectedLogp(T, 4)).to.be.closeTo(negH, 1e-12);
  });

  it('[trend] one step per token beats decoding everything at once (10 seeds)', () => {
    let wins = 0;
    for (let seed = 0; seed < 10; seed++) {
      const many = run({ seq_len: 32, steps: 32, seed }).loglik_per_token.low_confidence;
      const one = run({ seq_len: 32, steps: 1, seed }).loglik_per_token.low_confidence;
      if (many > one) wins++;
    }
    expect(wins).to.be.at.least(8);
  });

  it('the chain does not depend on seq_len or steps', () => {
    const T = drawChain(5);
    run({ seq_len: 8, steps: 2, seed: 5 }).transition.forEach((row: number[], a: number) => row.forEach((p, b) => expect(p).to.be.closeTo(T[a * V + b]!, 1e-15)));
    expect(run({ seq_len: 8, steps: 2, seed: 5 }).transition).to.deep.equal(run({ seq_len: 200, steps: 100, seed: 5 }).transition);
    expect(runRaw(dllm, { seed: '4', seq_len: '40', steps: '8' }).checks).to.deep.equal({ every_token_committed: true, committed_never_less_confident_than_masked: true, viterbi_dominates: true });
  });

  it('steps > seq_len is refused; steps = seq_len passes', () => {
    expect(rejects(dllm, { seq_len: '8', steps: '9' })).to.deep.equal(['steps:constraint']);
    expect(rejects(dllm, { seq_len: '8', steps: '8' })).to.deep.equal([]);
  });
});
