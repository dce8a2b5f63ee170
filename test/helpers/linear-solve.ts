/**
 * A reference linear solver for kernel tests: M x = b by Gauss–Jordan elimination with partial
 * pivoting on nested arrays. Deliberately not the kernels' own routines (they use Cholesky and
 * friends), so a test that recomputes through it is independent of them.
 */
export function solveLinear(M: readonly (readonly number[])[], b: readonly number[]): number[] {
  const n = b.length;
  const a = M.map((row, i) => [...row, b[i]!]);
  for (let k = 0; k < n; k++) {
    let p = k;
    for (let i = k + 1; i < n; i++) if (Math.abs(a[i]![k]!) > Math.abs(a[p]![k]!)) p = i;
    [a[k], a[p]] = [a[p]!, a[k]!];
    for (let i = 0; i < n; i++) {
      if (i === k) continue;
      const f = a[i]![k]! / a[k]![k]!;
      for (let j = k; j <= n; j++) a[i]![j] = a[i]![j]! - f * a[k]![j]!;
    }
  }
  return a.map((row, i) => row[n]! / a[i]![i]!);
}
