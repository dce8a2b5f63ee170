import { expect } from 'chai';
import tda from '../../../workers/kernels/quant-tda-fracture.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';
import { xorAt } from '../../helpers/indexed.js';

const N = 14;
const W = 40;

/** Independent correlation distances of a window, from the returned series. */
function distances(series: number[][], start: number): number[][] {
  const cols = Array.from({ length: N }, (_, v) => series.slice(start, start + W).map((row) => row[v]!));
  const mean = cols.map((c) => c.reduce((s, x) => s + x, 0) / W);
  const sd = cols.map((c, v) => Math.sqrt(c.reduce((s, x) => s + (x - mean[v]!) ** 2, 0) / (W - 1)));
  return cols.map((a, i) =>
    cols.map((b, j) => {
      if (i === j) return 0;
      let s = 0;
      for (let t = 0; t < W; t++) s += (a[t]! - mean[i]!) * (b[t]! - mean[j]!);
      const rho = Math.max(-1, Math.min(1, s / (W - 1) / (sd[i]! * sd[j]!)));
      return Math.sqrt(2 * (1 - rho));
    }),
  );
}

/** Prim's MST edge lengths, sorted. */
function primLengths(d: number[][]): number[] {
  const inTree = [true, ...new Array<boolean>(N - 1).fill(false)];
  const best = d[0]!.slice();
  const out: number[] = [];
  for (let step = 1; step < N; step++) {
    let k = -1;
    for (let v = 0; v < N; v++) if (!inTree[v] && (k < 0 || best[v]! < best[k]!)) k = v;
    out.push(best[k]!);
    inTree[k] = true;
    for (let v = 0; v < N; v++) if (!inTree[v]) best[v] = Math.min(best[v]!, d[k]![v]!);
  }
  return out.sort((a, b) => a - b);
}

/** Rank over GF(2) of a list of bit-rows (as arrays of set column indices). */
function gf2Rank(rows: number[][], ncols: number): number {
  const mat = rows.map((r) => {
    const bits = new Array<number>(ncols).fill(0);
    for (const c of r) xorAt(bits, c, 1);
    return bits;
  });
  let rank = 0;
  for (let c = 0; c < ncols && rank < mat.length; c++) {
    const p = mat.findIndex((row, i) => i >= rank && row[c] === 1);
    if (p < 0) continue;
    [mat[rank], mat[p]] = [mat[p]!, mat[rank]!];
    for (let i = 0; i < mat.length; i++) if (i !== rank && mat[i]![c] === 1) for (let k = 0; k < ncols; k++) mat[i]![k]! ^= mat[rank]![k]!;
    rank++;
  }
  return rank;
}

/** β1 of the Rips 2-skeleton at scale r: dim Z1 − rank ∂2 = (E − (N − β0)) − rank ∂2. */
function betti1At(d: number[][], r: number): number {
  const edgeId = new Map<string, number>();
  for (let i = 0; i < N; i++) for (let j = i + 1; j < N; j++) if (d[i]![j]! <= r) edgeId.set(`${i},${j}`, edgeId.size);
  const E = edgeId.size;
  const boundary1 = [...edgeId.keys()].map((k) => k.split(',').map(Number));
  const rank1 = gf2Rank(boundary1, N);
  const tris: number[][] = [];
  for (let i = 0; i < N; i++)
    for (let j = i + 1; j < N; j++)
      for (let k = j + 1; k < N; k++) {
        const e = [`${i},${j}`, `${i},${k}`, `${j},${k}`].map((key) => edgeId.get(key));
        if (e.every((x) => x !== undefined)) tris.push(e as number[]);
      }
  return E - rank1 - gf2Rank(tris, E);
}

/** The lanes and series redrawn from stream series (the note's order): lane int(3) per vessel, then per step 3 lane shocks, 14 idiosyncratic, one common. */
function redraw(seed: number, anomaly: boolean): { lanes: number[]; series: number[][] } {
  const st = new RngStreams(seed, 'quant/tda-fracture').stream('series');
  const lanes = Array.from({ length: N }, () => Math.floor(st.next() * 3));
  const series = Array.from({ length: 160 }, (_, t) => {
    const lane = [0, 1, 2].map(() => 0.02 * st.normal());
    const idio = Array.from({ length: N }, () => 0.015 * st.normal());
    const common = 0.06 * st.normal();
    return idio.map((x, v) => lane[lanes[v]!]! + x + (anomaly && t >= 80 ? common : 0));
  });
  return { lanes, series };
}

describe('kernel quant/tda-fracture', () => {
  it('the series and lanes are redrawn from stream series: lane int(3) per vessel, then per step 3 lane shocks (0.02), 14 idiosyncratic (0.015), one common (0.06, from T/2 with the anomaly)', () => {
    for (const [seed, anomaly] of [[42, true], [7, false], [3, true]] as const) {
      const r = runRaw(tda, { seed, anomaly }).result as any;
      const { lanes, series } = redraw(seed, anomaly);
      expect(r.vessel_lanes).to.deep.equal(lanes);
      expect(r.series.map((row: number[]) => row.length)).to.deep.equal(series.map((row) => row.length));
      series.forEach((row, t) => row.forEach((x, v) => expect(r.series[t][v], `t ${t} v ${v}`).to.be.closeTo(x, 1e-15)));
      expect(r).to.include({ n_vessels: 14, n_obs: 160, window: 40, stride: 4, threshold: 0.7, anomaly_injected_at: anomaly ? 80 : null });
    }
  });

  it('H0 deaths are the MST edge lengths (Prim, independently) and tree_length is their mean', () => {
    for (const [seed, anomaly] of [[3, false], [4, true]] as const) {
      const r = runRaw(tda, { seed, anomaly }).result as any;
      const { series } = redraw(seed, anomaly);
      expect(r.windows.length).to.equal(31);
      r.windows.forEach((w: any, k: number) => {
        expect([w.start, w.end, w.h0_deaths.length]).to.deep.equal([4 * k, 4 * k + 40, N - 1]);
        const ref = primLengths(distances(series, 4 * k));
        const got = [...w.h0_deaths].sort((a: number, b: number) => a - b);
        got.forEach((x: number, i: number) => expect(x).to.be.closeTo(ref[i]!, 1e-12));
        expect(w.tree_length).to.be.closeTo(ref.reduce((s, x) => s + x, 0) / (N - 1), 1e-12);
      });
    }
  });

  it('the number of H1 bars alive at every edge length equals dim Z1 − rank ∂2 (GF(2) elimination)', () => {
    const r = runRaw(tda, { seed: 7, anomaly: true }).result as any;
    const { series } = redraw(7, true);
    let nonzero = 0;
    for (const k of [0, 15, 30]) {
      const d = distances(series, 4 * k);
      const bars: [number, number][] = r.windows[k].h1_bars;
      const lengths = new Set<number>();
      for (let i = 0; i < N; i++) for (let j = i + 1; j < N; j++) lengths.add(d[i]![j]!);
      // the Rips complex only changes at edge lengths: check them all (the tiny tolerance absorbs recomputation ulps)
      for (const len of lengths) {
        const alive = bars.filter(([b, dd]) => b <= len + 1e-12 && len + 1e-12 < dd).length;
        const b1 = betti1At(d, len + 1e-12);
        expect(alive).to.equal(b1);
        if (b1 > 0) nonzero++;
      }
    }
    expect(nonzero).to.be.greaterThan(0);
  });

  it('landscape norms match their closed forms and a numerical integration of the k-th landscapes', () => {
    const r = runRaw(tda, { seed: 11 }).result as any;
    let withBars = 0;
    for (const w of r.windows) {
      const bars: [number, number][] = w.h1_bars;
      expect(w.h1_count).to.equal(bars.length);
      expect(w.h1_total_persistence).to.be.closeTo(bars.reduce((s, [b, d]) => s + d - b, 0), 1e-12);
      if (!bars.length) {
        expect(w.landscape_l1).to.equal(0);
        continue;
      }
      withBars++;
      const lo = Math.min(...bars.map((b) => b[0]));
      const hi = Math.max(...bars.map((b) => b[1]));
      const steps = 20000;
      const h = (hi - lo) / steps;
      let i1 = 0;
      let i2 = 0;
      let sup = 0;
      for (let s = 0; s <= steps; s++) {
        const x = lo + s * h;
        // λ_k(x): the k-th largest tent value; the sum over k of λ_k^p is what the norms integrate
        const tents = bars.map(([b, d]) => Math.max(0, Math.min(x - b, d - x))).sort((a, c) => c - a);
        const wgt = s === 0 || s === steps ? 0.5 : 1;
        for (const v of tents) {
          i1 += wgt * v * h;
          i2 += wgt * v * v * h;
        }
        sup = Math.max(sup, tents[0]!);
      }
      expect(w.landscape_l1).to.be.closeTo(i1, 1e-3 * i1);
      expect(w.landscape_l2 ** 2).to.be.closeTo(i2, 1e-3 * i2);
      expect(w.landscape_sup).to.be.closeTo(sup, h); // the grid can miss an apex by h/2
    }
    expect(withBars).to.be.greaterThan(5);
  });

  it('common random numbers: windows ending at or before T/2 are identical with and without the anomaly', () => {
    const a = runRaw(tda, { seed: 5, anomaly: false }).result as any;
    const b = runRaw(tda, { seed: 5, anomaly: true }).result as any;
    expect(b.series.slice(0, 80)).to.deep.equal(a.series.slice(0, 80));
    expect(b.series.slice(80)).to.not.deep.equal(a.series.slice(80));
    for (let k = 0; k < 11; k++) expect(b.windows[k]).to.deep.equal(a.windows[k]);
    expect(b.reference_tree_length).to.equal(a.reference_tree_length);
    expect(a.anomaly_injected_at).to.equal(null);
    expect(b.anomaly_injected_at).to.equal(80);
  });

  it('tree lengths, shrink ratios, the verdict, its onset and the post-anomaly minimum recomputed from the redrawn series (seeds 0…5)', () => {
    for (let seed = 0; seed < 6; seed++) {
      for (const anomaly of [true, false]) {
        const r = runRaw(tda, { seed, anomaly }).result as any;
        const { series } = redraw(seed, anomaly);
        const tree = Array.from({ length: 31 }, (_, k) => primLengths(distances(series, 4 * k)).reduce((s, x) => s + x, 0) / (N - 1));
        // the reference is the mean tree length of the 11 windows that end at or before T/2 = 80
        const ref = tree.slice(0, 11).reduce((s, x) => s + x, 0) / 11;
        expect(r.reference_tree_length).to.be.closeTo(ref, 1e-12);
        r.windows.forEach((w: any, k: number) => {
          expect(w.tree_length).to.be.closeTo(tree[k]!, 1e-12);
          expect(w.shrink_ratio).to.be.closeTo(tree[k]! / ref, 1e-12);
        });
        const post = tree.map((t, k) => ({ k, ratio: t / ref })).filter(({ k }) => 4 * k + 40 > 80);
        const onset = post.find((x) => x.ratio < 0.7);
        expect(r.fracture_detected, `seed ${seed}`).to.equal(onset !== undefined);
        expect(r.onset_window).to.equal(onset ? onset.k : null);
        expect(r.min_shrink_ratio_post).to.be.closeTo(Math.min(...post.map((x) => x.ratio)), 1e-12);
      }
    }
  });

  it('verdict separates the two regimes for seeds 0…49 (κ = 0.70)', () => {
    for (let seed = 0; seed < 50; seed++) {
      expect((runRaw(tda, { seed, anomaly: true }).result as any).fracture_detected, `seed ${seed}`).to.equal(true);
      const off = runRaw(tda, { seed, anomaly: false }).result as any;
      expect(off.fracture_detected, `seed ${seed}`).to.equal(false);
      expect(off.onset_window).to.equal(null);
    }
  });

  it('fracture_score is the L1 distance between consecutive Betti curves (independently recomputed)', () => {
    const r = runRaw(tda, { seed: 2, anomaly: true }).result as any;
    const curve = (w: any): number[][] =>
      Array.from({ length: 201 }, (_, g) => {
        const x = (2 * g) / 200;
        return [1 + w.h0_deaths.filter((d: number) => x < d).length, w.h1_bars.filter(([b, d]: number[]) => b! <= x && x < d!).length];
      });
    expect(r.windows[0].fracture_score).to.equal(0);
    for (let k = 1; k < r.windows.length; k++) {
      const a = curve(r.windows[k - 1]);
      const b = curve(r.windows[k]);
      let s = 0;
      for (let g = 0; g <= 200; g++) s += (Math.abs(a[g]![0]! - b[g]![0]!) + Math.abs(a[g]![1]! - b[g]![1]!)) * 0.01;
      expect(r.windows[k].fracture_score).to.be.closeTo(s, 1e-9);
    }
  });

  it('distances are a metric in [0, 2] (triangle inequality)', () => {
    const { series } = redraw(9, true);
    for (const k of [0, 20, 30]) {
      const d = distances(series, 4 * k);
      for (let i = 0; i < N; i++)
        for (let j = 0; j < N; j++) {
          expect(d[i]![j]!).to.be.within(0, 2);
          for (let l = 0; l < N; l++) expect(d[i]![j]!).to.be.at.most(d[i]![l]! + d[l]![j]! + 1e-12);
        }
    }
  });

  it('anomaly takes the boolean words (yes)', () => {
    expect(rejects(tda, { anomaly: 'yes' })).to.deep.equal([]);
  });
});
