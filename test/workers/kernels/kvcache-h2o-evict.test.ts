import { expect } from 'chai';
import h2o from '../../../workers/kernels/kvcache-h2o-evict.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { canonicalJson, roundNumber, sha256Hex } from '../../../src/lib/numbers.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

/** Plain-array H2O written from the paper's description: inputs regenerated from the note's streams. */
function reference(seed: number, L: number, budget: number, recent: number, nHeavy: number) {
  const d = 8;
  const rng = new RngStreams(seed, 'kvcache/h2o-evict');
  const rows = (label: string) => {
    const s = rng.stream(label);
    return Array.from({ length: L }, () => Array.from({ length: d }, () => s.normal()));
  };
  const Q = rows('q');
  const K = rows('k');
  const V = rows('v');
  const us = rng.stream('u');
  const raw = Array.from({ length: d }, () => us.normal());
  const len = Math.sqrt(raw.reduce((a, x) => a + x * x, 0));
  const u = raw.map((x) => x / len);
  const heavy = new Set(rng.stream('heavy').sample(L, nHeavy));
  Q.forEach((row) => row.forEach((_, c) => (row[c]! += 2 * u[c]!)));
  K.forEach((row, j) => { if (heavy.has(j)) row.forEach((_, c) => (row[c]! += 4 * u[c]!)); });
  const score = (t: number, j: number) => Q[t]!.reduce((a, x, c) => a + x * K[j]![c]!, 0) / Math.sqrt(d);
  const softmax = (xs: number[]) => {
    const m = Math.max(...xs);
    const e = xs.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / z);
  };
  let cache: number[] = [];
  const acc = new Map<number, number>();
  const trace: number[] = [];
  const E = Math.min(L, 128);
  const evalAt = new Set(Array.from({ length: E }, (_, k) => Math.floor(((k + 1) * L) / E) - 1));
  const massH: number[] = [];
  const massL: number[] = [];
  const errH: number[] = [];
  const errL: number[] = [];
  const traceScores: number[] = [];
  // output over a subset of positions with the full softmax weights renormalised
  const out = (w: number[], js: number[]) => {
    const z = js.reduce((a, j) => a + w[j]!, 0);
    return Array.from({ length: d }, (_, c) => js.reduce((a, j) => a + w[j]! * V[j]![c]!, 0) / z);
  };
  for (let t = 0; t < L; t++) {
    cache.push(t);
    const w = softmax(cache.map((j) => score(t, j)));
    cache.forEach((j, m) => acc.set(j, (acc.get(j) ?? 0) + w[m]!));
    if (cache.length > budget) {
      const cands = cache.filter((j) => j <= t - recent);
      const victim = cands.reduce((b, j) => (acc.get(j)! < acc.get(b)! ? j : b), cands[0]!);
      trace.push(victim);
      traceScores.push(acc.get(victim)!);
      cache = cache.filter((j) => j !== victim);
    }
    if (evalAt.has(t)) {
      const full = softmax(Array.from({ length: t + 1 }, (_, j) => score(t, j)));
      massH.push(cache.reduce((a, j) => a + full[j]!, 0));
      massL.push(full.slice(Math.max(0, t + 1 - budget)).reduce((a, b) => a + b, 0));
      const oStar = out(full, Array.from({ length: t + 1 }, (_, j) => j));
      const o = out(full, cache);
      errH.push(Math.hypot(...o.map((x, c) => x - oStar[c]!)) / Math.hypot(...oStar));
      const oL = out(full, Array.from({ length: Math.min(budget, t + 1) }, (_, i) => t + 1 - Math.min(budget, t + 1) + i));
      errL.push(Math.hypot(...oL.map((x, c) => x - oStar[c]!)) / Math.hypot(...oStar));
    }
  }
  const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
  return { cache, trace, traceScores, massH: mean(massH), massL: mean(massL), errH: mean(errH), errL: mean(errL), curveH: massH, curveL: massL, heavy: [...heavy].sort((a, b) => a - b) };
}

describe('kernel kvcache/h2o-evict', () => {
  it('matches an independent plain-array H2O: final cache, eviction order and retained mass', () => {
    for (const [seed, L, budget, recent, nHeavy] of [[1, 200, 40, 10, 12], [7, 300, 64, 0, 20], [3, 120, 30, 30, 5]] as const) {
      const r = runRaw(h2o, q({ seed, seq_len: L, budget, recent, n_heavy: nHeavy })).result as any;
      const ref = reference(seed, L, budget, recent, nHeavy);
      expect(r.final_cache).to.deep.equal(ref.cache);
      expect(r.heavy_positions).to.deep.equal(ref.heavy);
      expect(r.eviction_trace.map((e: any) => e.evicted)).to.deep.equal(ref.trace.slice(0, 64));
      expect(r.mass_retained.h2o).to.be.closeTo(ref.massH, 1e-9);
      expect(r.mass_retained.local).to.be.closeTo(ref.massL, 1e-9);
      expect(r.rel_error.h2o).to.be.closeTo(ref.errH, 1e-9);
      const held = ref.heavy.filter((h) => ref.cache.includes(h)).length;
      expect(r.heavy_recall.h2o).to.equal(held / nHeavy);
      expect(r.heavy_recall.local).to.equal(ref.heavy.filter((h) => h >= L - budget).length / nHeavy);
      expect(r.rel_error.local).to.be.closeTo(ref.errL, 1e-9);
      // the evaluated steps: ⌊(k+1)·L/E⌋ − 1 for E = min(L, 128), the same steps the reference evaluates
      const E = Math.min(L, 128);
      expect(Array.from(r.mass_curve.step as ArrayLike<number>)).to.deep.equal(Array.from({ length: E }, (_, k) => Math.floor(((k + 1) * L) / E) - 1));
      expect([r.mass_curve.h2o.length, r.mass_curve.local.length]).to.deep.equal([ref.curveH.length, ref.curveL.length]);
      Array.from(r.mass_curve.h2o as ArrayLike<number>).forEach((m, k) => expect(m).to.be.closeTo(ref.curveH[k]!, 1e-12));
      Array.from(r.mass_curve.local as ArrayLike<number>).forEach((m, k) => expect(m).to.be.closeTo(ref.curveL[k]!, 1e-12));
      r.eviction_trace.forEach((e: any, k: number) => expect(e.evicted_score).to.be.closeTo(ref.traceScores[k]!, 1e-12));
    }
  });

  it('cache size, eviction count and the recent window are exact; evictions take the minimum candidate', () => {
    for (const [L, budget, recent] of [[1024, 256, 64], [100, 100, 0], [50, 200, 20], [700, 512, 512], [16, 2, 1]] as const) {
      const r = runRaw(h2o, q({ seed: L + budget, seq_len: L, budget, recent, n_heavy: 8 })).result as any;
      expect(r.max_cache_size).to.equal(Math.min(budget, L));
      expect(r.evictions).to.equal(Math.max(0, L - budget));
      expect(r.final_cache_size).to.equal(Math.min(budget, L));
      expect(r.eval_steps).to.equal(Math.min(L, 128));
      // the recent window is cached: listed entries at cache index i ≥ size − tail hold position L − size + i
      // (the listing is sampled above 256 entries, so this reads it through its index)
      const tail = Math.min(recent, L);
      const size = r.final_cache_size;
      const inTail = r.final_cache_index.map((i: number, k: number) => [i, r.final_cache[k]]).filter(([i]: number[]) => i! >= size - tail);
      expect(inTail.length).to.be.above(tail > 0 ? 0 : -1);
      for (const [i, pos] of inTail) expect(pos).to.equal(L - size + i);
      for (const e of r.eviction_trace) {
        expect(e.evicted_score).to.equal(e.min_candidate_score);
        expect(e.step - e.evicted).to.be.at.least(recent);
      }
      for (const m of [...r.mass_curve.h2o, ...r.mass_curve.local]) expect(m).to.be.within(0, 1 + 1e-15);
    }
  });

  it('the sampled final cache carries the digest of the whole cache', () => {
    const r = runRaw(h2o, q({ seq_len: 1024, budget: 400, recent: 100 })).result as any;
    expect(r.final_cache_size).to.equal(400);
    expect(r.final_cache.length).to.equal(256);
    const ref = reference(42, 1024, 400, 100, 32);
    expect(r.final_cache_digest).to.equal(sha256Hex(canonicalJson(ref.cache.map((x) => roundNumber(x)))));
  });

  it('a budget holding the whole sequence retains all the mass with zero error, exactly', () => {
    const body = JSON.parse(runBody(h2o, q({ seq_len: 300, budget: 300, recent: 10 }))).result;
    expect(body.mass_retained).to.deep.equal({ h2o: 1, local: 1 });
    expect(body.rel_error).to.deep.equal({ h2o: 0, local: 0 });
    expect(body.evictions).to.equal(0);
    expect(body.eviction_trace).to.deep.equal([]);
    const raw = runRaw(h2o, q({ seq_len: 300, budget: 512, recent: 10 })).result as any;
    expect(raw.mass_retained).to.deep.equal({ h2o: 1, local: 1 });
    expect(raw.rel_error).to.deep.equal({ h2o: 0, local: 0 });
  });

  it('[trend] H2O keeps more attention mass and more planted heavy hitters than the local window (10 seeds)', () => {
    let massWins = 0;
    let recallWins = 0;
    let errWins = 0;
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(h2o, q({ seed, seq_len: 512, budget: 128, recent: 32 })).result as any;
      if (r.mass_retained.h2o > r.mass_retained.local) massWins++;
      if (r.heavy_recall.h2o > r.heavy_recall.local) recallWins++;
      if (r.rel_error.h2o < r.rel_error.local) errWins++;
    }
    expect(massWins).to.be.at.least(9);
    expect(recallWins).to.be.at.least(9);
    expect(errWins).to.be.at.least(8);
  });

  it('[trend] retained mass grows with the budget (10 seeds)', () => {
    let monotone = 0;
    for (let seed = 0; seed < 10; seed++) {
      const m = [32, 64, 128, 256].map((budget) => (runRaw(h2o, q({ seed, seq_len: 512, budget, recent: 16 })).result as any).mass_retained.h2o as number);
      if (m.every((x, i) => i === 0 || x > m[i - 1]!)) monotone++;
    }
    expect(monotone).to.be.at.least(9);
  });

  it('without heavy hitters heavy_recall is null, with a reason', () => {
    const none = runRaw(h2o, q({ n_heavy: 0 })).result as any;
    expect(none.heavy_recall).to.equal(null);
    expect(none.heavy_recall_reason).to.be.a('string');
  });

  it('recent ≤ budget and n_heavy ≤ seq_len', () => {
    expect(rejects(h2o, { budget: '32', recent: '33' })).to.deep.equal(['recent:constraint']);
    expect(rejects(h2o, { seq_len: '16', n_heavy: '17' })).to.deep.equal(['n_heavy:constraint']);
    expect(rejects(h2o, { budget: '32', recent: '32' })).to.deep.equal([]);
  });
});
