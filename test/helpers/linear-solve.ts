/**
 * A reference linear solver for kernel tests: M X = B by Gauss–Jordan elimination with partial
 * pivoting on nested arrays. Deliberately not the kernels' own routines (they use Cholesky and
 * friends), so a test that recomputes through it is independent of them. One copy for every test.
 */

/** M X = B for every column of B at once (B is n rows of right-hand-side values). */
export function solveLinearColumns(M: readonly (readonly number[])[], B: readonly (readonly number[])[]): number[][] {
  const n = M.length;
  const a = M.map((row, i) => [...row, ...B[i]!]);
  const width = a[0]?.length ?? 0;
  for (let k = 0; k < n; k++) {
    let p = k;
    for (let i = k + 1; i < n; i++) if (Math.abs(a[i]![k]!) > Math.abs(a[p]![k]!)) p = i;
    [a[k], a[p]] = [a[p]!, a[k]!];
    for (let i = 0; i < n; i++) {
      if (i === k) continue;
      const f = a[i]![k]! / a[k]![k]!;
      for (let j = k; j < width; j++) a[i]![j] = a[i]![j]! - f * a[k]![j]!;
    }
  }
  return a.map((row, i) => row.slice(n).map((x) => x / a[i]![i]!));
}

/** M x = b. */
export function solveLinear(M: readonly (readonly number[])[], b: readonly number[]): number[] {
  return solveLinearColumns(
    M,
    b.map((v) => [v]),
  ).map((row) => row[0]!);
}
