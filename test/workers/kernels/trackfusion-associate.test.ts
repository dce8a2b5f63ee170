import { expect } from 'chai';
import track from '../../../workers/kernels/trackfusion-associate.js';
import { RngStreams, type Rng } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt, at } from '../../helpers/indexed.js';

/** OSPA (p = 2, c = 100) by trying every matching (n ≤ 6). */
function ospaBrute(a: number[][], b: number[][]): number {
  const n = a.length;
  let best = Infinity;
  const perm = (used: boolean[], k: number, acc: number): void => {
    if (k === n) return void (best = Math.min(best, acc));
    for (let j = 0; j < n; j++) if (!used[j]) {
      used[j] = true;
      perm(used, k + 1, acc + Math.min(100, Math.hypot(a[k]![0]! - b[j]![0]!, a[k]![1]! - b[j]![1]!)) ** 2);
      used[j] = false;
    }
  };
  perm(new Array<boolean>(n).fill(false), 0, 0);
  return Math.sqrt(best / n);
}

const GATE = 9.2103;
const PD = 0.9;
const PG = 0.99;

interface Pair {
  cost: number;
  weight: number;
  d2: number;
}

/** Independent gating from the returned positions. */
function pairs(pred: number[][], ms: { x: number; y: number }[], sigma: number, clutter: number): (Pair | null)[][] {
  const lambda = Math.max(clutter, 0.01) / 1e6;
  const S = 225 + sigma * sigma;
  return pred.map(([px, py]) =>
    ms.map((z) => {
      const d2 = ((z.x - px!) ** 2 + (z.y - py!) ** 2) / S;
      if (d2 > GATE) return null;
      const g = Math.exp(-d2 / 2) / (2 * Math.PI * S);
      return { cost: -Math.log((PD * g) / lambda), weight: (PD * g) / lambda, d2 };
    }),
  );
}

/** All feasible joint events (each track: one gated measurement or a miss, no reuse). */
function enumerate(p: (Pair | null)[][], m: number, visit: (choice: number[]) => void): void {
  const n = p.length;
  const choice = new Array<number>(n).fill(-1);
  const used = new Array<boolean>(m).fill(false);
  const rec = (i: number): void => {
    if (i === n) return visit(choice);
    choice[i] = -1;
    rec(i + 1);
    for (let j = 0; j < m; j++) {
      if (!p[i]![j] || used[j]) continue;
      used[j] = true;
      choice[i] = j;
      rec(i + 1);
      used[j] = false;
    }
    choice[i] = -1;
  };
  rec(0);
}

/** Poisson(λ) as the number of unit-rate arrivals in [0, λ]: gaps −ln u until their sum reaches λ (the kernel multiplies uniforms). */
function poissonArrivals(u: Rng, lambda: number): number {
  let t = -Math.log(u.next());
  let k = 0;
  while (t < lambda) {
    k++;
    t -= Math.log(u.next());
  }
  return k;
}

/**
 * Feasible joint events summed over gating clusters (connected components found by breadth-first
 * search over the gate graph), each counted by its own depth-first walk; a track gated to nothing
 * is a cluster with one event (the miss). Stops at cap + 1, where the kernel gives up.
 */
function jpdaEventCount(p: (Pair | null)[][], m: number, cap = 20000): number {
  const n = p.length;
  const seen = new Array<boolean>(n).fill(false);
  const used = new Array<boolean>(m).fill(false);
  let total = 0;
  const walk = (tracks: number[], k: number): void => {
    if (total > cap) return;
    if (k === tracks.length) return void total++;
    walk(tracks, k + 1);
    for (let j = 0; j < m; j++) {
      if (!p[tracks[k]!]![j] || used[j]) continue;
      used[j] = true;
      walk(tracks, k + 1);
      used[j] = false;
    }
  };
  for (let start = 0; start < n; start++) {
    if (seen[start]) continue;
    const tracks = [start];
    seen[start] = true;
    for (let h = 0; h < tracks.length; h++) {
      for (let j = 0; j < m; j++) {
        if (!p[tracks[h]!]![j]) continue;
        for (let i = 0; i < n; i++) {
          if (seen[i] || !p[i]![j]) continue;
          seen[i] = true;
          tracks.push(i);
        }
      }
    }
    walk(tracks, 0);
  }
  return total;
}

describe('kernel trackfusion/associate', () => {
  it('every scan redrawn whole: detections, Poisson clutter count and positions over the region, shuffle order; jpda_events counted per cluster', () => {
    let clutterSeen = 0;
    let outsideBox = 0;
    for (const [seed, nt, ns, clutter] of [[42, 5, 4, 6], [3, 6, 2, 30], [9, 3, 6, 0], [1, 4, 3, 80], [17, 8, 3, 12]] as const) {
      const r = runRaw(track, { seed, n_tracks: nt, n_sensors: ns, clutter }).result as any;
      const rng = new RngStreams(seed, 'trackfusion/associate');
      const truths: number[][] = r.truths;
      r.sensors.forEach((sen: any, s: number) => {
        const st = rng.stream(`sensor/${s}`);
        const sigma = 10 + 10 * (s % 4);
        const list: { x: number; y: number; origin: number }[] = [];
        truths.forEach(([x, y], i) => {
          const d = st.next() < 0.9;
          const nx = st.normal();
          const ny = st.normal();
          if (d) list.push({ x: x! + sigma * nx, y: y! + sigma * ny, origin: i });
        });
        const count = poissonArrivals(st, clutter);
        for (let c = 0; c < count; c++) {
          const x = 1000 * st.next();
          const y = 1000 * st.next();
          list.push({ x, y, origin: -1 });
          if (x < 100 || x > 900 || y < 100 || y > 900) outsideBox++;
        }
        // Fisher–Yates from the last index down, one uniform per swap
        for (let i = list.length - 1; i > 0; i--) {
          const j = Math.floor(st.next() * (i + 1));
          [list[i], list[j]] = [list[j]!, list[i]!];
        }
        expect(sen.n_clutter).to.equal(count);
        expect(sen.measurements).to.deep.equal(list);
        clutterSeen += count;
        const p = pairs(r.predicted, list, sigma, clutter);
        expect(sen.jpda_truncated).to.equal(false);
        expect(sen.jpda_events).to.equal(jpdaEventCount(p, list.length));
      });
    }
    expect(clutterSeen, 'precondition: clutter was drawn').to.be.above(100);
    expect(outsideBox, 'precondition: some clutter fell outside the target box').to.be.above(10);
  });

  it('jpda_events at the largest scenes: the per-cluster count, or the cap with jpda null once the count passes 20 000', () => {
    const seen = new Set<boolean>();
    for (const [seed, nt] of [[1, 40], [2, 40], [3, 12]] as const) {
      const r = runRaw(track, { seed, n_tracks: nt, n_sensors: 3, clutter: 100 }).result as any;
      for (const s of r.sensors) {
        const count = jpdaEventCount(pairs(r.predicted, s.measurements, s.sigma_m, 100), s.measurements.length);
        const truncated = count > 20000;
        seen.add(truncated);
        expect([s.jpda_events, s.jpda_truncated, s.jpda === null]).to.deep.equal([truncated ? 20000 : count, truncated, truncated]);
      }
    }
    expect([...seen].sort(), 'precondition: both branches reached').to.deep.equal([false, true]);
  });

  it('scene and scans redrawn from their streams; accuracy, detected pairs, RMSE and OSPA (brute-force matching) recomputed', () => {
    for (const [seed, nt, ns, clutter] of [[42, 5, 4, 6], [3, 6, 2, 30], [9, 3, 6, 0], [1, 4, 3, 80]] as const) {
      const r = runRaw(track, { seed: String(seed), n_tracks: String(nt), n_sensors: String(ns), clutter: String(clutter) }).result as any;
      const rng = new RngStreams(seed, 'trackfusion/associate');
      const sc = rng.stream('scene');
      const truths: number[][] = [];
      const pred: number[][] = [];
      for (let i = 0; i < nt; i++) {
        const x = 100 + 800 * sc.next();
        const y = 100 + 800 * sc.next();
        truths.push([x, y]);
        pred.push([x + 15 * sc.normal(), y + 15 * sc.normal()]);
      }
      r.truths.forEach((t: number[], i: number) => t.forEach((v, k) => expect(v).to.be.closeTo(truths[i]![k]!, 1e-12)));
      r.predicted.forEach((t: number[], i: number) => t.forEach((v, k) => expect(v).to.be.closeTo(pred[i]![k]!, 1e-12)));
      let detected = 0;
      let correct = 0;
      r.sensors.forEach((sen: any, s: number) => {
        // the scan: per target a detection uniform (p 0.9) and two noise normals, then Poisson clutter, then a shuffle
        const st = rng.stream(`sensor/${s}`);
        const sigma = 10 + 10 * (s % 4);
        expect(sen.sigma_m).to.equal(sigma);
        const dets = truths.map(([x, y], i) => {
          const d = st.next() < 0.9;
          const nx = st.normal();
          const ny = st.normal();
          return d ? { x: x! + sigma * nx, y: y! + sigma * ny, origin: i } : null;
        });
        const real = dets.filter((d): d is { x: number; y: number; origin: number } => d !== null);
        expect(sen.measurements.filter((z: any) => z.origin >= 0).sort((a: any, b: any) => a.origin - b.origin).map((z: any) => [z.origin, z.x, z.y])).to.deep.equal(real.map((z) => [z.origin, z.x, z.y]));
        expect(sen.n_clutter).to.equal(sen.measurements.length - real.length);
        detected += real.length;
        correct += sen.gnn.assignment.filter((j: number, i: number) => j >= 0 && sen.measurements[j].origin === i).length;
      });
      expect(r.detected_pairs).to.equal(detected);
      expect(r.association_accuracy).to.equal(detected ? correct / detected : null);
      const fused = r.fused.map((f: any) => [f.x, f.y]);
      const rmse = (est: number[][]) => Math.sqrt(est.reduce((a, e, i) => a + (e[0]! - truths[i]![0]!) ** 2 + (e[1]! - truths[i]![1]!) ** 2, 0) / nt);
      expect(r.rmse_predicted_m).to.be.closeTo(rmse(pred), 1e-9);
      expect(r.rmse_fused_m).to.be.closeTo(rmse(fused), 1e-9);
      expect(r.ospa_predicted_m).to.be.closeTo(ospaBrute(pred, truths), 1e-9);
      expect(r.ospa_fused_m).to.be.closeTo(ospaBrute(fused, truths), 1e-9);
    }
  });

  it('GNN equals the brute-force minimum-cost joint event, which is also the most probable JPDA event', () => {
    let instances = 0;
    for (let seed = 0; seed < 25; seed++) {
      const r = runRaw(track, { seed, n_tracks: 4, n_sensors: 3, clutter: 30 }).result as any;
      for (const s of r.sensors) {
        const p = pairs(r.predicted, s.measurements, s.sigma_m, 30);
        const m = s.measurements.length;
        const gatedCount = new Set(p.flatMap((row) => row.map((x, j) => (x ? j : -1)).filter((j) => j >= 0))).size;
        if (gatedCount > 8) continue;
        const miss = -Math.log(1 - PD * PG);
        let best = Infinity;
        let bestChoice: number[] = [];
        let maxW = -Infinity;
        let maxWChoice: number[] = [];
        enumerate(p, m, (c) => {
          const cost = c.reduce((acc, j, i) => acc + (j < 0 ? miss : p[i]![j]!.cost), 0);
          if (cost < best - 1e-12) {
            best = cost;
            bestChoice = c.slice();
          }
          const w = c.reduce((acc, j, i) => acc * (j < 0 ? 1 - PD * PG : p[i]![j]!.weight), 1);
          if (w > maxW * (1 + 1e-12)) {
            maxW = w;
            maxWChoice = c.slice();
          }
        });
        expect(maxWChoice).to.deep.equal(bestChoice);
        expect(s.gnn.total_cost).to.be.closeTo(best, 1e-9);
        expect(s.gnn.assignment).to.deep.equal(bestChoice);
        instances++;
      }
    }
    expect(instances).to.be.greaterThan(40);
  });

  it('JPDA marginals equal brute-force enumeration over all tracks; rows sum to 1, columns ≤ 1, zero outside the gate', () => {
    let checked = 0;
    for (let seed = 0; seed < 15; seed++) {
      const r = runRaw(track, { seed, n_tracks: 5, n_sensors: 2, clutter: 20 }).result as any;
      for (const s of r.sensors) {
        expect(s.jpda_truncated).to.equal(false);
        const m = s.measurements.length;
        const p = pairs(r.predicted, s.measurements, s.sigma_m, 20);
        const beta = p.map(() => new Array<number>(m + 1).fill(0));
        let total = 0;
        enumerate(p, m, (c) => {
          const w = c.reduce((acc, j, i) => acc * (j < 0 ? 1 - PD * PG : p[i]![j]!.weight), 1);
          total += w;
          c.forEach((j, i) => addAt(at(beta, i), j < 0 ? m : j, w));
        });
        const colSum = new Array<number>(m).fill(0);
        s.jpda.beta.forEach((row: any, i: number) => {
          expect(row.miss).to.be.closeTo(beta[i]![m]! / total, 1e-12);
          let sum = row.miss;
          const listed = new Set<number>();
          for (const [j, b] of row.gated) {
            expect(p[i]![j]).to.not.equal(null);
            expect(b).to.be.closeTo(beta[i]![j]! / total, 1e-12);
            sum += b;
            colSum[j] += b;
            listed.add(j);
          }
          // every gated pair is listed; unlisted pairs have β = 0
          p[i]!.forEach((x, j) => expect(listed.has(j)).to.equal(x !== null));
          expect(sum).to.be.closeTo(1, 1e-12);
        });
        for (const c of colSum) expect(c).to.be.at.most(1 + 1e-12);
        checked++;
      }
    }
    expect(checked).to.equal(30);
  });

  it('assignments are feasible: no measurement twice per sensor, every pair inside the gate; counts add up', () => {
    for (const seed of [1, 2, 3]) {
      const r = runRaw(track, { seed, n_tracks: 30, n_sensors: 6, clutter: 60 }).result as any;
      for (const s of r.sensors) {
        const used = s.gnn.assignment.filter((j: number) => j >= 0);
        expect(new Set(used).size).to.equal(used.length);
        const p = pairs(r.predicted, s.measurements, s.sigma_m, 60);
        s.gnn.assignment.forEach((j: number, i: number) => {
          if (j >= 0) expect(p[i]![j]!.d2).to.be.at.most(GATE);
        });
        const correct = s.gnn.assignment.filter((j: number, i: number) => j >= 0 && s.measurements[j].origin === i).length;
        expect(s.counts).to.deep.equal({ assigned: used.length, correct, false: used.length - correct, missed: s.counts.missed });
        const detected = new Set(s.measurements.filter((z: any) => z.origin >= 0).map((z: any) => z.origin));
        const missed = [...detected].filter((i) => s.gnn.assignment[i as number] < 0).length;
        expect(s.counts.missed).to.equal(missed);
        expect(s.measurements.filter((z: any) => z.origin < 0).length).to.equal(s.n_clutter);
      }
    }
  });

  it('fused variance = 1/(1/15² + Σ_assigned 1/σ_s²), the fused mean equals sequential updates in reverse order', () => {
    const r = runRaw(track, { seed: 8, n_tracks: 10, n_sensors: 8, clutter: 10 }).result as any;
    r.fused.forEach((f: any, i: number) => {
      let info = 1 / 225;
      for (const s of r.sensors) if (s.gnn.assignment[i] >= 0) info += 1 / s.sigma_m ** 2;
      expect(f.var_x).to.equal(1 / info);
      expect(f.var_y).to.equal(1 / info);
      expect(f.var_x).to.be.at.most(225);
      for (const s of r.sensors) if (s.gnn.assignment[i] >= 0) expect(f.var_x).to.be.at.most(1 / (1 / 225 + 1 / s.sigma_m ** 2) + 1e-12);
      // a Kalman filter over the sensors in reverse order
      let [x, y] = r.predicted[i];
      let P = 225;
      for (const s of [...r.sensors].reverse()) {
        const j = s.gnn.assignment[i];
        if (j < 0) continue;
        const K = P / (P + s.sigma_m ** 2);
        x += K * (s.measurements[j].x - x);
        y += K * (s.measurements[j].y - y);
        P *= 1 - K;
      }
      expect(f.x).to.be.closeTo(x, 1e-9);
      expect(f.y).to.be.closeTo(y, 1e-9);
      expect(f.var_x).to.be.closeTo(P, 1e-9);
    });
  });

  it('checks: the sequential filter in sensor order matches the information form to the reported gap; gate and JPDA rows hold', () => {
    for (const [seed, n_tracks, n_sensors, clutter] of [[8, 10, 8, 10], [3, 40, 12, 100], [1, 1, 1, 0]]) {
      const out = runRaw(track, { seed, n_tracks, n_sensors, clutter });
      const r = out.result as any;
      let gap = 0;
      r.fused.forEach((f: any, i: number) => {
        let [x, y] = r.predicted[i];
        let P = 225;
        for (const s of r.sensors) {
          const j = s.gnn.assignment[i];
          if (j < 0) continue;
          const K = P / (P + s.sigma_m ** 2);
          x += K * (s.measurements[j].x - x);
          y += K * (s.measurements[j].y - y);
          P = (1 - K) * P;
        }
        gap = Math.max(gap, Math.abs(f.x - x), Math.abs(f.y - y), Math.abs(f.var_x - P));
      });
      const checks = out.checks as Record<string, unknown>;
      expect(checks.sequential_gap).to.be.closeTo(gap, 1e-12);
      expect(checks).to.deep.equal({ sequential_kalman_matches_information_form: gap <= 1e-9, sequential_gap: checks.sequential_gap, assigned_pairs_inside_gate: true, jpda_rows_sum_to_one: true });
    }
  });

  it('association_accuracy is null, with its reason, exactly when no target was detected', () => {
    let seen = 0;
    for (let seed = 0; seed < 200 && seen < 2; seed++) {
      const r = runRaw(track, { seed, n_tracks: 1, n_sensors: 1, clutter: 0 }).result as any;
      const detected = r.sensors[0].measurements.length > 0;
      if (!detected) seen++;
      expect(r.association_accuracy === null).to.equal(!detected);
      expect('association_accuracy_reason' in r).to.equal(!detected);
    }
    expect(seen, 'seeds with the single target missed').to.equal(2);
  });

  it('trends over seeds 0…29: clutter hurts accuracy, fusion beats prediction, clean accuracy ≥ 0.9', () => {
    let acc0 = 0;
    let acc50 = 0;
    let rf = 0;
    let rp = 0;
    for (let seed = 0; seed < 30; seed++) {
      const clean = runRaw(track, { seed, clutter: 0 }).result as any;
      const busy = runRaw(track, { seed, clutter: 50 }).result as any;
      acc0 += clean.association_accuracy / 30;
      acc50 += busy.association_accuracy / 30;
      rf += clean.rmse_fused_m / 30;
      rp += clean.rmse_predicted_m / 30;
      // OSPA with cut-off 100 ≤ RMSE-style bound and ≤ c
      expect(clean.ospa_fused_m).to.be.at.most(Math.min(100, clean.rmse_fused_m) + 1e-9);
    }
    expect(acc0).to.be.at.least(0.9);
    expect(acc0).to.be.at.least(acc50);
    expect(rf).to.be.below(rp);
  });
});
