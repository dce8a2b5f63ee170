import { expect } from 'chai';
import dla, { drawTokens, runDla, type DlaTokens } from '../../../workers/kernels/dla-attention.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const elu1 = (x: number): number => (x > 0 ? x + 1 : Math.exp(x));

function tokens(seed: number, T: number, d: number, switchProb = 0.08): DlaTokens {
  return drawTokens(new RngStreams(seed, 'dla/attention').stream('tokens'), T, d, switchProb);
}

/** The tokens drawn again without drawTokens (kernels-a 1.8 order): base; per token switch uniform, [new base], q, 0.3·noise, v. */
function tokensIndependently(seed: number, T: number, d: number, switchProb: number): DlaTokens {
  const r = new RngStreams(seed, 'dla/attention').stream('tokens');
  const z = () => Array.from({ length: d }, () => r.normal());
  let base = z();
  const q: number[] = [];
  const k: number[] = [];
  const v: number[] = [];
  const switches: number[] = [];
  for (let t = 0; t < T; t++) {
    if (r.next() < switchProb) {
      base = z();
      switches.push(t);
    }
    q.push(...z());
    k.push(...z().map((n, i) => base[i]! + 0.3 * n));
    v.push(...z());
  }
  return { T, d, q: Float64Array.from(q), k: Float64Array.from(k), v: Float64Array.from(v), switches };
}

/**
 * Independent DLA: each state keeps its token indices; a state's S, z and mean key are recomputed
 * from its tokens when needed (no running sums). Drift = 1 − cos(k_t, mean key of the newest state);
 * over capacity the state of least opening drift (not the first, earliest on ties) joins its predecessor.
 */
function dlaRef(tok: DlaTokens, capacity: number, tau: number) {
  const { T, d } = tok;
  const states: { tokens: number[]; info: number | null }[] = [];
  const out: number[][] = [];
  let opened = 0;
  let merged = 0;
  const vec = (a: Float64Array, t: number) => Array.from(a.subarray(t * d, (t + 1) * d));
  const meanKey = (ts: number[]) => Array.from({ length: d }, (_, i) => ts.reduce((s, t) => s + tok.k[t * d + i]!, 0) / ts.length);
  const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));
  for (let t = 0; t < T; t++) {
    const last = states.at(-1);
    const drift = last ? 1 - cos(vec(tok.k, t), meanKey(last.tokens)) : null;
    if (!last || drift! > tau) {
      states.push({ tokens: [], info: drift });
      opened++;
    }
    states.at(-1)!.tokens.push(t);
    while (states.length > capacity) {
      let best = 1;
      for (let c = 2; c < states.length; c++) if (states[c]!.info! < states[best]!.info!) best = c;
      states[best - 1]!.tokens.push(...states[best]!.tokens);
      states.splice(best, 1);
      merged++;
    }
    const q = vec(tok.q, t);
    const fq = q.map(elu1);
    const logits = states.map((st) => meanKey(st.tokens).reduce((s, m, i) => s + m * q[i]!, 0) / Math.sqrt(d) + Math.log(st.tokens.length));
    const mx = Math.max(...logits);
    const w = logits.map((l) => Math.exp(l - mx));
    const W = w.reduce((a, b) => a + b, 0);
    const o = new Array<number>(d).fill(0);
    states.forEach((st, si) => {
      let den = 0;
      const num = new Array<number>(d).fill(0);
      for (const j of st.tokens) {
        const kq = vec(tok.k, j).map(elu1).reduce((s, f, i) => s + f * fq[i]!, 0);
        den += kq;
        for (let c = 0; c < d; c++) addAt(num, c, kq * tok.v[j * d + c]!);
      }
      for (let c = 0; c < d; c++) addAt(o, c, ((w[si]! / W) * num[c]!) / den);
    });
    out.push(o);
  }
  return { out, states: states.map((st) => ({ start: st.tokens[0]!, end: st.tokens.at(-1)!, tokens: st.tokens.length, info: st.info })), opened, merged };
}

const row = (a: Float64Array, t: number, d: number): number[] => Array.from(a.subarray(t * d, (t + 1) * d));

/** Naive causal softmax attention, one row at a time. */
function softmaxRef(tok: DlaTokens): number[][] {
  const { T, d } = tok;
  return Array.from({ length: T }, (_, t) => {
    const q = row(tok.q, t, d);
    const s = Array.from({ length: t + 1 }, (_, j) => row(tok.k, j, d).reduce((a, k, i) => a + k * q[i]!, 0) / Math.sqrt(d));
    const m = Math.max(...s);
    const e = s.map((v) => Math.exp(v - m));
    const z = e.reduce((a, b) => a + b, 0);
    return Array.from({ length: d }, (_, c) => e.reduce((a, w, j) => a + (w / z) * tok.v[j * d + c]!, 0));
  });
}

/** Naive causal linear attention with φ = elu+1: sums recomputed from scratch for every t. */
function linearRef(tok: DlaTokens): number[][] {
  const { T, d } = tok;
  return Array.from({ length: T }, (_, t) => {
    const fq = row(tok.q, t, d).map(elu1);
    let den = 0;
    const num = new Array<number>(d).fill(0);
    for (let j = 0; j <= t; j++) {
      const fk = row(tok.k, j, d).map(elu1);
      const kq = fk.reduce((a, f, i) => a + f * fq[i]!, 0);
      den += kq;
      for (let c = 0; c < d; c++) num[c] = num[c]! + kq * tok.v[j * d + c]!;
    }
    return num.map((n) => n / den);
  });
}

const maxDiff = (a: number[][], b: number[][]): number => Math.max(...a.map((r, t) => Math.max(...r.map((v, i) => Math.abs(v - b[t]![i]!)))));

describe('kernel dla/attention', () => {
  it('between the limits every reported value recomputed by an independent DLA on tokens drawn without drawTokens', () => {
    const shapes: [number, number][] = [];
    for (const [seed, T, d, C, tau, p] of [[42, 64, 8, 8, 0.3, 0.08], [3, 40, 4, 3, 0.1, 0.2], [9, 100, 6, 4, 0.6, 0.05], [5, 30, 2, 5, -1, 0.5], [8, 50, 4, 16, 0.5, 0.1]] as const) {
      const r = runRaw(dla, { seed, seq_len: T, d, capacity: C, tau, switch_prob: p }).result as any;
      const tok = tokensIndependently(seed, T, d, p);
      const ref = dlaRef(tok, C, tau);
      expect(r.regime_switches).to.equal(tok.switches.length);
      expect(r.events).to.deep.equal({ opened: ref.opened, merged: ref.merged });
      expect(r.states.map((st: any) => [st.start, st.end, st.tokens])).to.deep.equal(ref.states.map((st) => [st.start, st.end, st.tokens]));
      r.states.forEach((st: any, k: number) => (ref.states[k]!.info === null ? expect(st.info).to.equal(null) : expect(st.info).to.be.closeTo(ref.states[k]!.info!, 1e-12)));
      expect(r.output_head.map((row: number[]) => row.length)).to.deep.equal(ref.out.slice(0, 8).map((row) => row.length));
      r.output_head.forEach((row: number[], t: number) => row.forEach((x, c) => expect(x).to.be.closeTo(ref.out[t]![c]!, 1e-10)));
      expect(r.error_vs_softmax).to.be.closeTo(maxDiff(ref.out, softmaxRef(tok)), 1e-10);
      expect(r.error_vs_linear).to.be.closeTo(maxDiff(ref.out, linearRef(tok)), 1e-10);
      expect(r.memory_floats).to.deep.equal({ dla: C * (d * d + 2 * d + 1), softmax_kv: 2 * T * d, held_at_end: ref.states.length * (d * d + 2 * d + 1) });
      shapes.push([ref.merged, C - ref.states.length]);
    }
    // preconditions: the capacity binds (merges) in the first four cases; the last ends below capacity
    expect(shapes.slice(0, 4).every(([m]) => m > 0)).to.equal(true);
    expect(shapes[4]![1]).to.be.above(0);
  });

  it('one state per token (capacity ≥ T, tau = −1) is exact causal softmax attention, over 10 seeds', () => {
    for (let seed = 0; seed < 10; seed++) {
      const T = 8 + 5 * seed;
      const d = 2 + (seed % 5);
      const r = runRaw(dla, { seed, seq_len: T, d, capacity: 64, tau: -1 }).result as any;
      const ref = softmaxRef(tokens(seed, T, d));
      expect(maxDiff(r.output_head, ref.slice(0, 8))).to.be.at.most(1e-12);
      expect(r.error_vs_softmax).to.be.at.most(1e-12);
      expect(r.states.length).to.equal(T);
      expect(r.events).to.deep.equal({ opened: T, merged: 0 });
    }
  });

  it('capacity 1 is exact causal linear attention (elu+1), over 10 seeds', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(dla, { seed, seq_len: 40, d: 6, capacity: 1 }).result as any;
      expect(maxDiff(r.output_head, linearRef(tokens(seed, 40, 6)).slice(0, 8))).to.be.at.most(1e-12);
      expect(r.error_vs_linear).to.be.at.most(1e-12);
      expect(r.states).to.have.length(1);
      expect(r.states[0]).to.include({ start: 0, end: 39, tokens: 40 });
    }
  });

  it('conserves the full linear-attention state and keeps a chronological partition within capacity', () => {
    for (let seed = 0; seed < 10; seed++) {
      const [T, d, C, tau] = [64 + 13 * seed, 4 + (seed % 4), 1 + 3 * seed, [0.3, 0.05, -1, 1][seed % 4]!];
      const tok = tokens(seed, T, d, 0.1);
      const run = runDla(tok, C, tau);
      const S = new Float64Array(d * d);
      const z = new Float64Array(d);
      for (let t = 0; t < T; t++) {
        for (let i = 0; i < d; i++) {
          z[i] = z[i]! + elu1(tok.k[t * d + i]!);
          for (let j = 0; j < d; j++) S[i * d + j] = S[i * d + j]! + elu1(tok.k[t * d + i]!) * tok.v[t * d + j]!;
        }
      }
      for (let i = 0; i < d * d; i++) expect(Math.abs(run.states.reduce((a, s) => a + s.S[i]!, 0) - S[i]!)).to.be.at.most(1e-10);
      for (let i = 0; i < d; i++) expect(Math.abs(run.states.reduce((a, s) => a + s.z[i]!, 0) - z[i]!)).to.be.at.most(1e-10);
      let next = 0;
      for (const s of run.states) {
        expect(s.start).to.equal(next);
        expect(s.count).to.equal(s.end - s.start + 1);
        next = s.end + 1;
      }
      expect(next).to.equal(T);
      expect(run.maxStates).to.be.at.most(C);
      expect(run.partitionOk).to.equal(true);
      expect(run.opened - run.merged).to.equal(run.states.length);
      run.states.slice(1).forEach((s) => expect(s.info!).to.be.greaterThan(tau));
      expect(run.states[0]!.info).to.equal(null);
    }
  });

  it('with tau = −1 the error to softmax falls as capacity grows (mean over 10 seeds); defaults sit between the limits', () => {
    const caps = [1, 4, 16, 64];
    const mean = caps.map((C) => {
      let s = 0;
      for (let seed = 0; seed < 10; seed++) s += (runRaw(dla, { seed, capacity: C, tau: -1 }).result as any).error_vs_softmax;
      return s / 10;
    });
    for (let i = 1; i < caps.length; i++) expect(mean[i]).to.be.lessThan(mean[i - 1]!);
    expect(mean[3]).to.be.at.most(1e-12);
    const r = runRaw(dla).result as any;
    expect(r.error_vs_softmax).to.be.greaterThan(0).and.lessThan(r.error_vs_linear);
    expect(r.memory_floats).to.deep.equal({ dla: 8 * (64 + 16 + 1), softmax_kv: 2 * 64 * 8, held_at_end: r.states.length * 81 });
  });
});
