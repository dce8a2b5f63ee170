/** Ranking helpers shared by kernels: top-k selection and the Mann–Whitney AUROC. */

/**
 * Indices of the k largest values of `a` in descending order (ties → lower index), by an insertion
 * buffer of size k: O(m) when most values miss the buffer, never a full sort of m values.
 */
export function topK(a: ArrayLike<number>, k: number): number[] {
  const idx: number[] = [];
  if (k <= 0) return idx;
  for (let j = 0; j < a.length; j++) {
    const v = a[j]!;
    if (idx.length === k && v <= a[idx[k - 1]!]!) continue; // equal values keep the earlier index
    let p = idx.length === k ? k - 1 : idx.length;
    if (idx.length < k) idx.push(j);
    while (p > 0 && a[idx[p - 1]!]! < v) {
      idx[p] = idx[p - 1]!;
      p--;
    }
    idx[p] = j;
  }
  return idx;
}

/** Mann–Whitney AUROC of `scores` for label 1 against label 0 (ties count ½); null without both classes. */
export function auroc(scores: ArrayLike<number>, labels: ArrayLike<number>): number | null {
  let pairs = 0;
  let wins = 0;
  for (let i = 0; i < scores.length; i++) {
    if (labels[i] !== 1) continue;
    for (let j = 0; j < scores.length; j++) {
      if (labels[j] !== 0) continue;
      pairs++;
      if (scores[i]! > scores[j]!) wins += 1;
      else if (scores[i] === scores[j]) wins += 0.5;
    }
  }
  return pairs ? wins / pairs : null;
}
