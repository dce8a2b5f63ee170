/**
 * SpecExec (Svirschevski et al., NeurIPS 2024, arXiv:2406.02532): the draft model grows a
 * best-first tree of its B most probable continuations (modified Dijkstra on cumulative draft
 * log-probability, depth ≤ D); generation samples from the *target* and follows the tree while the
 * sampled tokens are in it, so the output distribution is exactly the target's. The expected number
 * of accepted tokens is Σ over tree nodes of the target probability of the node's path; a
 * Monte-Carlo run of target sampling must agree. Toy models: an order-2 Markov target over V tokens
 * with seeded logits, draft = target logits + Gaussian noise. Design: kernels-a §1.10.
 */
import { defineKernel } from '../kernel-def.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export interface MarkovModels {
  V: number;
  /** log p(t | a, b) at [(a·V + b)·V + t]. */
  targetLogp: Float64Array;
  targetP: Float64Array;
  /** log q(t | a, b), same layout. */
  draftLogp: Float64Array;
  prompt: [number, number];
}

function logSoftmaxRow(logits: Float64Array, out: Float64Array, offset: number): void {
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  let s = 0;
  for (const v of logits) s += Math.exp(v - max);
  const lse = max + Math.log(s);
  for (let t = 0; t < logits.length; t++) out[offset + t] = logits[t]! - lse;
}

/**
 * Draw order on `rng`: for each context c = a·V + b ascending, V target normals (×sharpness), then
 * V noise normals (draft = target + draft_noise·z); then the prompt as two int(V).
 */
export function makeModels(rng: Rng, V: number, sharpness: number, draftNoise: number): MarkovModels {
  const targetLogp = new Float64Array(V * V * V);
  const draftLogp = new Float64Array(V * V * V);
  for (let c = 0; c < V * V; c++) {
    const tl = rng.normals(V, sharpness);
    const nz = rng.normals(V);
    logSoftmaxRow(tl, targetLogp, c * V);
    logSoftmaxRow(tl.map((v, t) => v + draftNoise * nz[t]!), draftLogp, c * V);
  }
  const prompt: [number, number] = [rng.int(V), rng.int(V)];
  return { V, targetLogp, targetP: targetLogp.map(Math.exp), draftLogp, prompt };
}

export interface TreeNode {
  id: number;
  /** −1 for a child of the root (the prompt context). */
  parent: number;
  token: number;
  depth: number;
  draft_logp: number;
  target_logp: number;
}

interface Candidate extends Omit<TreeNode, 'id'> {
  /** Context (a, b) the candidate's children condition on is (prev, token). */
  prev: number;
}

/** Higher cumulative draft log-probability first; ties: smaller parent id, then smaller token. */
function before(x: Candidate, y: Candidate): boolean {
  if (x.draft_logp !== y.draft_logp) return x.draft_logp > y.draft_logp;
  if (x.parent !== y.parent) return x.parent < y.parent;
  return x.token < y.token;
}

class Heap {
  private items: Candidate[] = [];
  get size(): number {
    return this.items.length;
  }
  push(c: Candidate): void {
    const a = this.items;
    a.push(c);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Candidate {
    const a = this.items;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && before(a[l]!, a[m]!)) m = l;
        if (r < a.length && before(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** Best-first draft tree of at most B nodes and depth ≤ D, in creation order. */
export function buildTree(m: MarkovModels, B: number, D: number): TreeNode[] {
  const { V } = m;
  const heap = new Heap();
  const pushChildren = (parent: number, a: number, b: number, depth: number, dlp: number, tlp: number): void => {
    const row = (a * V + b) * V;
    for (let t = 0; t < V; t++) heap.push({ parent, token: t, depth: depth + 1, draft_logp: dlp + m.draftLogp[row + t]!, target_logp: tlp + m.targetLogp[row + t]!, prev: b });
  };
  pushChildren(-1, m.prompt[0], m.prompt[1], 0, 0, 0);
  const tree: TreeNode[] = [];
  while (tree.length < B && heap.size) {
    const c = heap.pop();
    const id = tree.length;
    tree.push({ id, parent: c.parent, token: c.token, depth: c.depth, draft_logp: c.draft_logp, target_logp: c.target_logp });
    if (c.depth < D) pushChildren(id, c.prev, c.token, c.depth, c.draft_logp, c.target_logp);
  }
  return tree;
}

/** Accepted tokens of one target-sampled walk through the tree (one uniform per sampled token). */
export function acceptanceTrials(m: MarkovModels, tree: readonly TreeNode[], trials: number, rng: Rng): number[] {
  const { V } = m;
  const child = new Int32Array((tree.length + 1) * V).fill(-1);
  for (const n of tree) child[(n.parent + 1) * V + n.token] = n.id;
  const out: number[] = [];
  for (let k = 0; k < trials; k++) {
    let node = -1;
    let [a, b] = m.prompt;
    let accepted = 0;
    for (;;) {
      const row = (a * V + b) * V;
      const tok = rng.categorical(m.targetP.subarray(row, row + V));
      const next = child[(node + 1) * V + tok]!;
      if (next < 0) break;
      accepted++;
      node = next;
      [a, b] = [b, tok];
    }
    out.push(accepted);
  }
  return out;
}

export default defineKernel({
  id: 'specexec/tree',
  version: 1,
  input: 'query',
  summary: 'SpecExec draft tree (best-first on draft probability) with exact expected acceptance under target sampling, checked by Monte Carlo',
  technique: 'SpecExec best-first draft tree + target-sampled tree verification',
  references: ['arXiv:2406.02532', 'arXiv:2211.17192'],
  honesty: 'The tree search and the acceptance computation are real; target and draft are seeded order-2 Markov toy models, not language models.',
  params: {
    vocab: int(2, 32, 16).description('vocabulary size'),
    budget: int(1, 256, 32).description('draft tree size (tokens)'),
    max_depth: int(1, 16, 8).description('deepest level of the draft tree'),
    trials: int(1, 2048, 256).description('Monte Carlo trials checking the expected acceptance'),
    draft_noise: num(0, 4, 1).description('how far the draft model departs from the target'),
    sharpness: num(0, 6, 2).description('sharpness (inverse temperature) of the target distribution'),
  },
  worstCase: { vocab: 32, budget: 256, max_depth: 16, trials: 2048, sharpness: 6 },
  run({ vocab: V, budget: B, max_depth: D, trials, draft_noise, sharpness }, rng) {
    // draws: stream `models` (logits per context, then prompt); stream `trials` (one uniform per sampled token)
    const models = makeModels(rng.stream('models'), V, sharpness, draft_noise);
    const tree = buildTree(models, B, D);
    let expected = 0;
    let draftMass = 0;
    let depthReached = 0;
    let monotone = true;
    for (const n of tree) {
      expected += Math.exp(n.target_logp);
      draftMass += Math.exp(n.draft_logp);
      depthReached = Math.max(depthReached, n.depth);
      if (n.parent >= 0 && n.target_logp > tree[n.parent]!.target_logp) monotone = false;
    }
    const acc = acceptanceTrials(models, tree, trials, rng.stream('trials'));
    const histogram = new Array<number>(depthReached + 1).fill(0);
    let sum = 0;
    for (const a of acc) {
      histogram[a]!++;
      sum += a;
    }
    const mean = sum / trials;
    let ss = 0;
    for (const a of acc) ss += (a - mean) ** 2;
    const stderr = trials > 1 ? Math.sqrt(ss / (trials - 1) / trials) : null;
    return {
      constants: { target: 'order-2 Markov, logits = sharpness·z', draft: 'target logits + draft_noise·z', tie_break: 'higher draft logp, then smaller parent id, then smaller token' },
      result: {
        prompt: models.prompt,
        tree,
        tree_size: tree.length,
        expected_accepted: expected,
        tokens_per_target_call: 1 + expected,
        mc: { mean, stderr, ...(stderr === null ? { stderr_reason: 'one trial' } : {}), histogram },
        draft_mass: draftMass,
        depth_reached: depthReached,
      },
      checks: {
        mc_within_5_stderr: stderr === null ? null : Math.abs(mean - expected) <= 5 * stderr + 1e-12,
        expected_le_min_budget_depth: expected <= Math.min(B, depthReached) + 1e-12,
        path_probability_monotone: monotone,
      },
    };
  },
});
