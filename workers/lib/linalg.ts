/**
 * Dense linear algebra on row-major Float64Arrays, written once for every kernel (kernels-a 0.8,
 * kernels-b 0.4). Matrices are `{rows, cols, data}`; vectors are Float64Array.
 */

export interface Matrix {
  rows: number;
  cols: number;
  data: Float64Array;
}

export function zeros(rows: number, cols: number): Matrix {
  return { rows, cols, data: new Float64Array(rows * cols) };
}

export function identity(n: number): Matrix {
  const m = zeros(n, n);
  for (let i = 0; i < n; i++) m.data[i * n + i] = 1;
  return m;
}

export function get(m: Matrix, i: number, j: number): number {
  return m.data[i * m.cols + j]!;
}

export function transpose(m: Matrix): Matrix {
  const t = zeros(m.cols, m.rows);
  for (let i = 0; i < m.rows; i++) for (let j = 0; j < m.cols; j++) t.data[j * m.rows + i] = m.data[i * m.cols + j]!;
  return t;
}

export function matmul(a: Matrix, b: Matrix): Matrix {
  if (a.cols !== b.rows) throw new Error(`matmul shape mismatch ${a.rows}x${a.cols} · ${b.rows}x${b.cols}`);
  const out = zeros(a.rows, b.cols);
  for (let i = 0; i < a.rows; i++) {
    for (let k = 0; k < a.cols; k++) {
      const aik = a.data[i * a.cols + k]!;
      if (aik === 0) continue;
      const bRow = k * b.cols;
      const oRow = i * b.cols;
      for (let j = 0; j < b.cols; j++) out.data[oRow + j] = out.data[oRow + j]! + aik * b.data[bRow + j]!;
    }
  }
  return out;
}

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export function norm(a: ArrayLike<number>): number {
  return Math.sqrt(dot(a, a));
}

export function frobenius(m: Matrix): number {
  return norm(m.data);
}

/** The vector scaled to unit length (a zero vector is returned unchanged). */
export function unit(v: Float64Array): Float64Array {
  const n = norm(v);
  return n > 0 ? v.map((x) => x / n) : v;
}

/** Cosine similarity clamped to [-1, 1]; 0 when either vector is zero. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const na = norm(a);
  const nb = norm(b);
  if (na === 0 || nb === 0) return 0;
  return Math.max(-1, Math.min(1, dot(a, b) / (na * nb)));
}

export function logSumExp(xs: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < xs.length; i++) max = Math.max(max, xs[i]!);
  if (max === -Infinity) return -Infinity;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += Math.exp(xs[i]! - max);
  return max + Math.log(s);
}

/** Logistic sigmoid; for very negative z, exp(−z) overflows to Infinity and the result is exactly 0, never NaN. */
export function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/** Softmax with the maximum subtracted first. */
export function softmax(xs: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < xs.length; i++) max = Math.max(max, xs[i]!);
  const out = new Float64Array(xs.length);
  let s = 0;
  for (let i = 0; i < xs.length; i++) {
    out[i] = Math.exp(xs[i]! - max);
    s += out[i]!;
  }
  for (let i = 0; i < xs.length; i++) out[i] = out[i]! / s;
  return out;
}

/** Shannon entropy in nats with 0·ln 0 = 0 (input need not be normalised). */
export function entropy(p: ArrayLike<number>): number {
  let total = 0;
  for (let i = 0; i < p.length; i++) total += p[i]!;
  if (total <= 0) return 0;
  let h = 0;
  for (let i = 0; i < p.length; i++) {
    const q = p[i]! / total;
    if (q > 0) h -= q * Math.log(q);
  }
  return h;
}

/** ln C(n, k) by summed logs. */
export function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) return -Infinity;
  const kk = Math.min(k, n - k);
  let s = 0;
  for (let i = 1; i <= kk; i++) s += Math.log(n - kk + i) - Math.log(i);
  return s;
}

export interface Eigen {
  /** Ascending. */
  values: Float64Array;
  /** Column j of this row-major matrix is the eigenvector of values[j]. */
  vectors: Matrix;
}

/**
 * Cyclic Jacobi for a symmetric matrix: rotations in (p, q) row order, stop when the off-diagonal
 * Frobenius² < 1e-22·‖A‖²_F or after 100 sweeps. Eigenvalues ascending; each eigenvector is
 * sign-normalised so its largest-magnitude entry is positive (deterministic bodies).
 */
export function jacobiEigen(input: Matrix): Eigen {
  const n = input.rows;
  if (n !== input.cols) throw new Error('jacobiEigen needs a square matrix');
  const a = Float64Array.from(input.data);
  const v = identity(n).data;
  const total = dot(a, a);
  const offNorm2 = (): number => {
    let s = 0;
    for (let p = 0; p < n; p++) for (let q = 0; q < n; q++) if (p !== q) s += a[p * n + q]! ** 2;
    return s;
  };
  for (let sweep = 0; sweep < 100 && offNorm2() >= 1e-22 * total && total > 0; sweep++) {
    for (let p = 0; p < n - 1; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q]!;
        if (apq === 0) continue;
        const app = a[p * n + p]!;
        const aqq = a[q * n + q]!;
        const theta = (aqq - app) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p]!;
          const akq = a[k * n + q]!;
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k]!;
          const aqk = a[q * n + k]!;
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p]!;
          const vkq = v[k * n + q]!;
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => a[i * n + i]! - a[j * n + j]! || i - j);
  const values = Float64Array.from(order, (i) => a[i * n + i]!);
  const vectors = zeros(n, n);
  order.forEach((src, dst) => {
    let big = 0;
    for (let k = 0; k < n; k++) if (Math.abs(v[k * n + src]!) > Math.abs(big)) big = v[k * n + src]!;
    const sign = big < 0 ? -1 : 1;
    for (let k = 0; k < n; k++) vectors.data[k * n + dst] = sign * v[k * n + src]!;
  });
  return { values, vectors };
}

/** Lower-triangular L with A = L·Lᵀ; throws when A is not positive definite. */
export function cholesky(a: Matrix): Matrix {
  const n = a.rows;
  const l = zeros(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a.data[i * n + j]!;
      for (let k = 0; k < j; k++) s -= l.data[i * n + k]! * l.data[j * n + k]!;
      if (i === j) {
        if (s <= 0) throw new Error('cholesky: matrix is not positive definite');
        l.data[i * n + i] = Math.sqrt(s);
      } else {
        l.data[i * n + j] = s / l.data[j * n + j]!;
      }
    }
  }
  return l;
}

/** Solves A x = b given the Cholesky factor L of A. */
export function choleskySolve(l: Matrix, b: ArrayLike<number>): Float64Array {
  const n = l.rows;
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= l.data[i * n + k]! * y[k]!;
    y[i] = s / l.data[i * n + i]!;
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i]!;
    for (let k = i + 1; k < n; k++) s -= l.data[k * n + i]! * x[k]!;
    x[i] = s / l.data[i * n + i]!;
  }
  return x;
}

/** Modified Gram–Schmidt on the columns of A: Q (orthonormal columns) and R with diag(R) > 0. */
export function gramSchmidt(a: Matrix): { q: Matrix; r: Matrix } {
  const { rows: m, cols: n } = a;
  const q = { rows: m, cols: n, data: Float64Array.from(a.data) };
  const r = zeros(n, n);
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < j; i++) {
      let s = 0;
      for (let k = 0; k < m; k++) s += q.data[k * n + i]! * q.data[k * n + j]!;
      r.data[i * n + j] = s;
      for (let k = 0; k < m; k++) q.data[k * n + j] = q.data[k * n + j]! - s * q.data[k * n + i]!;
    }
    let nn = 0;
    for (let k = 0; k < m; k++) nn += q.data[k * n + j]! ** 2;
    const len = Math.sqrt(nn);
    r.data[j * n + j] = len;
    if (len > 0) for (let k = 0; k < m; k++) q.data[k * n + j] = q.data[k * n + j]! / len;
  }
  return { q, r };
}

/**
 * Eigen-decomposition of a symmetric n×n row-major matrix by Householder tridiagonalisation and
 * implicit QL (O(n³), for sizes where `jacobiEigen` is too slow, e.g. n = 128). Returns eigenvalues in DESCENDING order
 * and the eigenvectors as columns of a row-major n×n array (column j ↔ values[j]), each vector
 * sign-normalised so its largest-magnitude entry is positive.
 */
export function symmetricEigen(a: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const A = Float64Array.from(a);
  // Qᵀ (stored by rows, so every update below walks contiguous memory) accumulates the Householder
  // reflections, then the QL rotations: A = Q·T·Qᵀ.
  const QT = new Float64Array(n * n);
  for (let i = 0; i < n; i++) QT[i * n + i] = 1;
  const v = new Float64Array(n);
  const p = new Float64Array(n);
  const w = new Float64Array(n);
  // 1. Householder: zero column k below the subdiagonal with H = I − 2vvᵀ (‖v‖ = 1) on both sides.
  for (let k = 0; k < n - 2; k++) {
    let sigma = 0;
    for (let i = k + 1; i < n; i++) sigma += A[i * n + k]! ** 2;
    const norm = Math.sqrt(sigma);
    if (norm === 0) continue;
    const x0 = A[(k + 1) * n + k]!;
    const alpha = x0 > 0 ? -norm : norm; // opposite sign to x0 avoids cancellation in v0
    v.fill(0);
    v[k + 1] = x0 - alpha;
    for (let i = k + 2; i < n; i++) v[i] = A[i * n + k]!;
    let vn = 0;
    for (let i = k + 1; i < n; i++) vn += v[i]! ** 2;
    vn = Math.sqrt(vn);
    if (vn === 0) continue;
    for (let i = k + 1; i < n; i++) v[i] = v[i]! / vn;
    // HAH = A − 2vwᵀ − 2wvᵀ with p = Av, w = p − (vᵀp)v (rows/cols ≥ k; column k is handled too)
    let vp = 0;
    for (let i = k; i < n; i++) {
      let s = 0;
      for (let j = k + 1; j < n; j++) s += A[i * n + j]! * v[j]!;
      p[i] = s;
      vp += v[i]! * s;
    }
    for (let i = k; i < n; i++) p[i] = p[i]! - vp * v[i]!;
    for (let i = k; i < n; i++) {
      const vi = v[i]!;
      const wi = p[i]!;
      for (let j = k; j < n; j++) A[i * n + j] = A[i * n + j]! - 2 * (vi * p[j]! + wi * v[j]!);
    }
    // Qᵀ ← H·Qᵀ = Qᵀ − 2v(vᵀQᵀ)
    w.fill(0);
    for (let j = k + 1; j < n; j++) {
      const vj = v[j]!;
      for (let c = 0; c < n; c++) w[c] = w[c]! + vj * QT[j * n + c]!;
    }
    for (let j = k + 1; j < n; j++) {
      const vj2 = 2 * v[j]!;
      for (let c = 0; c < n; c++) QT[j * n + c] = QT[j * n + c]! - vj2 * w[c]!;
    }
  }
  const d = new Float64Array(n);
  const e = new Float64Array(n); // e[i] couples i and i+1
  for (let i = 0; i < n; i++) d[i] = A[i * n + i]!;
  for (let i = 0; i < n - 1; i++) e[i] = A[(i + 1) * n + i]!;

  // 2. Implicit QL on the tridiagonal (d, e), deflating from the top.
  for (let l = 0; l < n; l++) {
    for (let iter = 0; iter < 60; iter++) {
      let m = l;
      while (m < n - 1) {
        const dd = Math.abs(d[m]!) + Math.abs(d[m + 1]!);
        if (Math.abs(e[m]!) <= Number.EPSILON * dd) break;
        m++;
      }
      if (m === l) break;
      // shift from the leading 2×2 block, folded into the first rotation
      let g = (d[l + 1]! - d[l]!) / (2 * e[l]!);
      let r = Math.hypot(g, 1);
      g = d[m]! - d[l]! + e[l]! / (g + (g >= 0 ? r : -r));
      let s = 1;
      let c = 1;
      let shift = 0;
      let i = m - 1;
      let underflow = false;
      for (; i >= l; i--) {
        const f = s * e[i]!;
        const b = c * e[i]!;
        r = Math.hypot(f, g);
        e[i + 1] = r;
        if (r === 0) {
          d[i + 1] = d[i + 1]! - shift;
          e[m] = 0;
          underflow = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1]! - shift;
        const t = (d[i]! - g) * s + 2 * c * b;
        shift = s * t;
        d[i + 1] = g + shift;
        g = c * t - b;
        const r0 = i * n;
        const r1 = r0 + n;
        for (let k = 0; k < n; k++) {
          const q1 = QT[r1 + k]!;
          const q0 = QT[r0 + k]!;
          QT[r1 + k] = s * q0 + c * q1;
          QT[r0 + k] = c * q0 - s * q1;
        }
      }
      if (underflow) continue;
      d[l] = d[l]! - shift;
      e[l] = g;
      e[m] = 0;
    }
  }

  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => d[y]! - d[x]! || x - y);
  const values = Float64Array.from(order, (i) => d[i]!);
  const vectors = new Float64Array(n * n);
  order.forEach((src, dst) => {
    let big = 0;
    for (let k = 0; k < n; k++) if (Math.abs(QT[src * n + k]!) > Math.abs(big)) big = QT[src * n + k]!;
    const sign = big < 0 ? -1 : 1;
    for (let k = 0; k < n; k++) vectors[k * n + dst] = sign * QT[src * n + k]!;
  });
  return { values, vectors };
}
