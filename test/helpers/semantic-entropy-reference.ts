/**
 * Independent redraw of the semantic-entropy experiment (kernels-a 1.13, kernels-b 4), written from
 * the note and not from workers/lib/semantic-entropy.ts: stream `meanings` gives C unit prototypes
 * (16 normals each), C logits z (π = softmax(1.5·z)), then C × 3 paraphrase noises (16 normals each,
 * c-major), embedding = unit(μ_c + 0.15·ξ); stream `samples` gives K uniforms, each an inverse-CDF
 * draw over q_{c,v} = π_c·(3, 2, 1)_v/6. Purity and the adjusted Rand index by pair counting.
 */
import { RngStreams } from '../../src/lib/prng.js';

const unitVec = (v: number[]): number[] => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

export function redraw(kernelId: string, seed: number, K: number, C: number) {
  const rng = new RngStreams(seed, kernelId);
  const m = rng.stream('meanings');
  const normals = (n: number) => Array.from({ length: n }, () => m.normal());
  const protos = Array.from({ length: C }, () => unitVec(normals(16)));
  const z = normals(C);
  const ez = z.map((x) => Math.exp(1.5 * x));
  const pi = ez.map((x) => x / ez.reduce((a, b) => a + b, 0));
  const emb: number[][] = [];
  const q: number[] = [];
  for (let c = 0; c < C; c++) for (let v = 0; v < 3; v++) {
    const xi = normals(16);
    emb.push(unitVec(protos[c]!.map((x, d) => x + 0.15 * xi[d]!)));
    q.push((pi[c]! * [3, 2, 1][v]!) / 6);
  }
  const s = rng.stream('samples');
  const total = q.reduce((a, b) => a + b, 0);
  const samples = Array.from({ length: K }, () => {
    let u = s.next() * total;
    let k = q.findIndex((x) => (u -= x) < 0);
    if (k < 0) k = q.length - 1;
    const c = Math.floor(k / 3);
    return { meaning: c, paraphrase: k % 3, string: `c${c}-v${k % 3}`, loglik: Math.log(q[k]!), embedding: emb[k]! };
  });
  return { pi, samples };
}

/** Fraction of items whose cluster's majority meaning is theirs. */
export function purityOf(clusters: number[][], truth: number[]): number {
  let hit = 0;
  for (const c of clusters) {
    const counts = new Map<number, number>();
    for (const i of c) counts.set(truth[i]!, (counts.get(truth[i]!) ?? 0) + 1);
    hit += Math.max(...counts.values());
  }
  return hit / truth.length;
}

/** Adjusted Rand index from the four pair counts (same/different in each partition). */
export function ariByPairs(a: number[], b: number[]): number {
  const n = a.length;
  let both = 0;
  let onlyA = 0;
  let onlyB = 0;
  let neither = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) {
    const sa = a[i] === a[j];
    const sb = b[i] === b[j];
    if (sa && sb) both++;
    else if (sa) onlyA++;
    else if (sb) onlyB++;
    else neither++;
  }
  const total = both + onlyA + onlyB + neither;
  const pa = both + onlyA;
  const pb = both + onlyB;
  const expected = (pa * pb) / total;
  const max = (pa + pb) / 2;
  if (max === expected) return both === max ? 1 : 0;
  return (both - expected) / (max - expected);
}
