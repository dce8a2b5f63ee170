/**
 * Rectangular minimum-cost assignment by the Hungarian method in its shortest-augmenting-path
 * form with potentials (Kuhn 1955; Munkres 1957; Jonker & Volgenant 1987; kernels-b 0.4):
 * rows are inserted one at a time and each is matched along a Dijkstra-like shortest path in the
 * reduced costs c_ij − u_i − v_j, so the cost is O(n²·m) for n rows and m ≥ n columns.
 *
 * Costs are a row-major n×m array. A non-finite entry (+Infinity) marks a forbidden pair. When
 * n > m the problem is solved on the transpose, so every column is matched and n − m rows stay
 * unassigned (−1). The returned potentials certify optimality: u_i + v_j ≤ c_ij for every allowed
 * pair, with equality on matched pairs, and Σu + Σv equals the total cost (LP duality).
 */
import { ServiceError } from '../../src/lib/service-error.js';

export interface Assignment {
  /** Column matched to each row, or −1. */
  rowToCol: Int32Array;
  /** Row matched to each column, or −1. */
  colToRow: Int32Array;
  /** Sum of the matched costs. */
  cost: number;
  /** Dual potentials of rows (length n) and columns (length m). */
  u: Float64Array;
  v: Float64Array;
}

export class InfeasibleAssignmentError extends ServiceError {
  readonly code = 'SVC_INFEASIBLE_ASSIGNMENT';

  constructor(readonly row: number) {
    super(`assignment: row ${row} has no allowed column left`);
  }
}

/** Min-cost assignment of an n×m cost matrix given row-major; throws when no complete matching exists. */
export function solveAssignment(cost: ArrayLike<number>, n: number, m: number): Assignment {
  if (cost.length !== n * m) throw new RangeError(`assignment: expected ${n * m} costs, got ${cost.length}`);
  if (n <= m) return solveTall(cost, n, m);
  // transpose: columns become rows
  const t = new Float64Array(n * m);
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) t[j * n + i] = cost[i * m + j]!;
  const r = solveTall(t, m, n);
  return { rowToCol: r.colToRow, colToRow: r.rowToCol, cost: r.cost, u: r.v, v: r.u };
}

/** Convenience for nested arrays. */
export function solveAssignmentRows(rows: readonly (readonly number[])[]): Assignment {
  const n = rows.length;
  const m = n ? rows[0]!.length : 0;
  const flat = new Float64Array(n * m);
  rows.forEach((row, i) => {
    if (row.length !== m) throw new RangeError('assignment: ragged cost matrix');
    flat.set(row, i * m);
  });
  return solveAssignment(flat, n, m);
}

/** n ≤ m. Internal indices are 1-based, column 0 is the virtual start of each augmenting path. */
function solveTall(a: ArrayLike<number>, n: number, m: number): Assignment {
  const u = new Float64Array(n + 1);
  const v = new Float64Array(m + 1);
  const p = new Int32Array(m + 1); // p[j]: row matched to column j (0 = none)
  const way = new Int32Array(m + 1); // previous column on the shortest path
  const minv = new Float64Array(m + 1);
  const used = new Uint8Array(m + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    minv.fill(Infinity);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = p[j0]!;
      const base = (i0 - 1) * m - 1;
      const ui = u[i0]!;
      let delta = Infinity;
      let j1 = -1;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const c = a[base + j]!;
        if (c === Infinity || Number.isNaN(c)) {
          // forbidden: never improves minv, but the column may still be the argmin below
        } else {
          const cur = c - ui - v[j]!;
          if (cur < minv[j]!) {
            minv[j] = cur;
            way[j] = j0;
          }
        }
        if (minv[j]! < delta) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      if (j1 < 0 || delta === Infinity) throw new InfeasibleAssignmentError(i - 1);
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          u[p[j]!] = u[p[j]!]! + delta;
          v[j] = v[j]! - delta;
        } else {
          minv[j] = minv[j]! - delta;
        }
      }
      j0 = j1;
    } while (p[j0] !== 0);
    // augment along the path back to the virtual column 0
    do {
      const j1 = way[j0]!;
      p[j0] = p[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }
  const rowToCol = new Int32Array(n).fill(-1);
  const colToRow = new Int32Array(m).fill(-1);
  let total = 0;
  for (let j = 1; j <= m; j++) {
    if (p[j]! > 0) {
      rowToCol[p[j]! - 1] = j - 1;
      colToRow[j - 1] = p[j]! - 1;
      total += a[(p[j]! - 1) * m + j - 1]!;
    }
  }
  return { rowToCol, colToRow, cost: total, u: u.slice(1), v: v.slice(1) };
}
