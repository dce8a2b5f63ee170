import { expect } from 'chai';
import nsa from '../../../workers/kernels/nsa-simulate.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const run = (o: Record<string, number>) => runRaw(nsa, Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]))).result as any;

interface P { seq_len: number; dim: number; block: number; top_n: number; window: number }

/** Plain softmax attention of q over (keys[j], vals[j]); returns output and weights. */
function attend(q: number[], keys: number[][], vals: number[][]): { out: number[]; w: number[] } {
  if (keys.length === 0) return { out: q.map(() => 0), w: [] };
  const s = keys.map((k) => k.reduce((a, x, i) => a + x * q[i]!, 0) / Math.sqrt(q.length));
  const m = Math.max(...s);
  const e = s.map((x) => Math.exp(x - m));
  const z = e.reduce((a, b) => a + b, 0);
  const w = e.map((x) => x / z);
  return { out: q.map((_, i) => w.reduce((a, wj, j) => a + wj * vals[j]![i]!, 0)), w };
}

/** NSA written from the note, with nested arrays, from the documented draw order. */
function reference(seed: number, p: P) {
  const { seq_len: L, dim: d, block: B, top_n: n, window: W } = p;
  const rng = new RngStreams(seed, 'nsa/simulate');
  const rows = (label: string, r: number, sc = 1) => {
    const s = rng.stream(label);
    return Array.from({ length: r }, () => Array.from(s.normals(d, sc)));
  };
  const Q = rows('q', L);
  const K = rows('k', L);
  const V = rows('v', L);
  const G = rows('gates', 3, 1 / Math.sqrt(d));
  const meanOf = (M: number[][], b: number) => Array.from({ length: d }, (_, i) => M.slice(b * B, (b + 1) * B).reduce((a, r) => a + r[i]!, 0) / B);
  const nq = Math.min(L, 64);
  const out = { coverage: [] as number[], tokens: [] as number[], cmp: [] as number[], sel: [] as number[], rows: [] as number[], density: 0, fullSel: 0, gates: [0, 0, 0], lastSel: [] as number[], num: 0, den: 0 };
  for (let k = 0; k < nq; k++) {
    const t = Math.floor(((k + 1) * L) / nq) - 1;
    const q = Q[t]!;
    const g = G.map((w) => 1 / (1 + Math.exp(-w.reduce((a, x, i) => a + x * q[i]!, 0))));
    const nC = Math.floor((t + 1) / B);
    const blocks = Array.from({ length: nC }, (_, b) => b);
    const c = attend(q, blocks.map((b) => meanOf(K, b)), blocks.map((b) => meanOf(V, b)));
    const cur = Math.floor(t / B);
    const forced = [...new Set([cur, cur - 1, 0].filter((b) => b >= 0))];
    const others = Array.from({ length: cur + 1 }, (_, b) => b).filter((b) => !forced.includes(b));
    others.sort((a, b) => c.w[b]! - c.w[a]! || a - b);
    const sel = [...forced, ...others].slice(0, n);
    const selTok = Array.from({ length: t + 1 }, (_, j) => j).filter((j) => sel.includes(Math.floor(j / B)));
    const winTok = Array.from({ length: t + 1 }, (_, j) => j).filter((j) => j > t - W);
    const s = attend(q, selTok.map((j) => K[j]!), selTok.map((j) => V[j]!));
    const w = attend(q, winTok.map((j) => K[j]!), winTok.map((j) => V[j]!));
    const f = attend(q, K.slice(0, t + 1), V.slice(0, t + 1));
    out.coverage.push(f.w.reduce((a, wj, j) => a + (selTok.includes(j) || winTok.includes(j) ? wj : 0), 0));
    out.tokens.push(nC + selTok.length + winTok.length);
    out.cmp.push(nC);
    out.sel.push(selTok.length);
    out.rows.push(t);
    out.density += (nC + selTok.length + winTok.length) / (t + 1) / nq;
    if (sel.length === cur + 1) out.fullSel++;
    g.forEach((x, i) => addAt(out.gates, i, x / nq));
    for (let i = 0; i < d; i++) {
      out.num += (g[0]! * c.out[i]! + g[1]! * s.out[i]! + g[2]! * w.out[i]! - f.out[i]!) ** 2;
      out.den += f.out[i]! ** 2;
    }
    out.lastSel = sel;
  }
  return out;
}

describe('kernel nsa/simulate', () => {
  it('matches an independent NSA (nested arrays, explicit sets) on 10 seeds and shapes', () => {
    const shapes: P[] = [
      { seq_len: 64, dim: 4, block: 8, top_n: 3, window: 8 },
      { seq_len: 100, dim: 6, block: 7, top_n: 4, window: 20 },
      { seq_len: 16, dim: 2, block: 2, top_n: 1, window: 1 },
      { seq_len: 90, dim: 5, block: 128, top_n: 2, window: 5 },
      { seq_len: 130, dim: 8, block: 3, top_n: 10, window: 13 },
    ];
    for (let seed = 0; seed < 10; seed++) {
      const p = shapes[seed % shapes.length]!;
      const r = run({ ...p, seed });
      const ref = reference(seed, p);
      expect(r.queries_evaluated).to.equal(Math.min(p.seq_len, 64));
      r.coverage.forEach((c: number, k: number) => expect(c).to.be.closeTo(ref.coverage[k]!, 1e-12));
      expect(r.tokens_attended).to.deep.equal(ref.tokens);
      expect(r.selected_blocks_last_query).to.deep.equal(ref.lastSel);
      expect(r.gates_mean.cmp).to.be.closeTo(ref.gates[0]!, 1e-12);
      expect(r.gates_mean.slc).to.be.closeTo(ref.gates[1]!, 1e-12);
      expect(r.gates_mean.win).to.be.closeTo(ref.gates[2]!, 1e-12);
      expect(r.output_rel_error).to.be.closeTo(Math.sqrt(ref.num / ref.den), 1e-9);
      expect(r.query_indices).to.deep.equal(ref.rows);
      expect(r.compressed_tokens).to.deep.equal(ref.cmp);
      expect(r.selected_tokens).to.deep.equal(ref.sel);
      expect(r.mean_coverage).to.be.closeTo(ref.coverage.reduce((a, b) => a + b, 0) / ref.coverage.length, 1e-12);
      expect(r.tokens_attended_mean).to.be.closeTo(ref.tokens.reduce((a, b) => a + b, 0) / ref.tokens.length, 1e-12);
      expect(r.density).to.be.closeTo(ref.density, 1e-12);
      expect(r.queries_with_full_selection).to.equal(ref.fullSel);
    }
  });

  it('coverage is non-decreasing in top_n and reaches 1 once top_n·block covers the sequence (10 seeds)', () => {
    for (let seed = 0; seed < 10; seed++) {
      let prev: number[] | null = null;
      for (const top_n of [1, 2, 4, 8, 16, 32]) {
        const r = run({ seq_len: 512, block: 16, window: 8, top_n, seed });
        if (prev) r.coverage.forEach((c: number, k: number) => expect(c).to.be.at.least(prev![k]!));
        prev = r.coverage;
      }
      for (const c of prev!) expect(c).to.be.closeTo(1, 1e-12);
    }
    const m = [4, 8, 16, 32].map((top_n) => run({ top_n, window: 1 }).mean_coverage as number);
    for (let i = 1; i < m.length; i++) expect(m[i]).to.be.above(m[i - 1]!);
  });

  it('window ≥ seq_len gives coverage 1; a selection covering all past blocks equals full attention exactly', () => {
    for (const c of run({ seq_len: 200, window: 200, top_n: 1 }).coverage) expect(c).to.be.closeTo(1, 1e-12);
    const r = run({ seq_len: 256, block: 8, top_n: 32, window: 4, seed: 3 });
    expect(r.queries_with_full_selection).to.equal(64);
    expect(r.max_abs_diff_full_selection).to.equal(0);
    const partial = run({ seq_len: 512, block: 16, top_n: 4 });
    // only the early queries (t + 1 ≤ 4·16) have every past block selected
    expect(partial.queries_with_full_selection).to.equal(partial.query_indices.filter((t: number) => Math.floor(t / 16) + 1 <= 4).length);
    expect(partial.max_abs_diff_full_selection).to.equal(0);
  });

  it('compressed tokens are floor((t+1)/block) and tokens attended obey the closed-form bound; gates ∈ (0,1), coverage ∈ [0,1]', () => {
    for (const [block, top_n, window] of [[16, 8, 32], [5, 3, 100], [128, 1, 1], [2, 64, 1024]]) {
      const r = run({ seq_len: 700, block: block!, top_n: top_n!, window: window!, seed: block! });
      r.query_indices.forEach((t: number, k: number) => {
        expect(r.compressed_tokens[k]).to.equal(Math.floor((t + 1) / block!));
        expect(r.tokens_attended[k]).to.be.at.most(Math.floor((t + 1) / block!) + Math.min(top_n! * block!, t + 1) + Math.min(window!, t + 1));
        expect(r.coverage[k]).to.be.within(0, 1 + 1e-12);
      });
      expect(r.density).to.be.closeTo(r.tokens_attended.reduce((a: number, n: number, k: number) => a + n / (r.query_indices[k] + 1), 0) / 64, 1e-12);
      for (const g of Object.values(r.gates_mean) as number[]) expect(g).to.be.within(0, 1).and.not.equal(0).and.not.equal(1);
      expect(r.query_indices.at(-1)).to.equal(699);
    }
  });
});
