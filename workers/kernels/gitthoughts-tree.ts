/**
 * GitOfThoughts (arXiv:2606.14470): an agent's reasoning tree stored as a git repository, every
 * scored thought a commit, scores in notes, outcomes in tags, retrieval by `git log`. The tree is a
 * Tree-of-Thoughts breadth-first search (Yao et al., arXiv:2305.10601) on Game of 24 with breadth
 * `beam`; the LLM value prompt is replaced by the exact fraction of completions that reach 24 (or a
 * Monte-Carlo estimate from random completions). Thoughts are real git objects: blob, one-entry
 * tree and commit, hashed exactly as `git hash-object` does (SHA-1 over "<type> <len>\0<body>").
 * Arithmetic is exact over the rationals. Design: kernels-a §1.2.
 */
import { createHash } from 'node:crypto';
import { defineKernel } from '../kernel-def.js';
import { int, str } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { roundNumber } from '../../src/lib/numbers.js';
import { add, compare, div, equals, format, mul, rat, sub, type Rational } from '../lib/rational.js';

export const TARGET = rat(24);
export const COMMIT_CAP = 256;
export const EPOCH = 1700000000;
export const AUTHOR = 'tot <tot@svc.invalid>';
const NUMBERS_RE = /^\s*(\d{1,2})\s*,\s*(\d{1,2})\s*,\s*(\d{1,2})\s*,\s*(\d{1,2})\s*$/;
/** What `constraints` accepts as one pattern (blank, or four integers 1…13 as NUMBERS_RE spells them), for the docs. */
const N13 = '(?:0?[1-9]|1[0-3])';
const NUMBERS_PATTERN = `^\\s*(?:${N13}\\s*,\\s*${N13}\\s*,\\s*${N13}\\s*,\\s*${N13}\\s*)?$`;

export interface Item {
  v: Rational;
  /** Fully parenthesised expression that produced v from the inputs. */
  e: string;
}

export interface Child {
  state: Item[];
  /** `a op b = r (left: x y z)`. */
  text: string;
}

const byValue = (a: Item, b: Item): number => compare(a.v, b.v);

/** The state's numbers, ascending, as printed in thoughts and used as the memo key. */
export const stateKey = (s: readonly Item[]): string => s.map((i) => format(i.v)).join(' ');

/**
 * Children of a state (kept ascending by value): for each pair i < j of positions, a+b, a·b, a−b,
 * b−a, then a/b and b/a when the divisor is not zero (36, 18, 6 children for 4, 3, 2 numbers).
 */
export function children(state: readonly Item[]): Child[] {
  const out: Child[] = [];
  for (let i = 0; i < state.length; i++) {
    for (let j = i + 1; j < state.length; j++) {
      const a = state[i]!;
      const b = state[j]!;
      const rest = state.filter((_, k) => k !== i && k !== j);
      const push = (x: Item, op: string, y: Item, r: Rational | null): void => {
        if (!r) return;
        const next = [...rest, { v: r, e: `(${x.e} ${op} ${y.e})` }].sort(byValue);
        out.push({ state: next, text: `${format(x.v)} ${op} ${format(y.v)} = ${format(r)} (left: ${stateKey(next)})` });
      };
      push(a, '+', b, add(a.v, b.v));
      push(a, '*', b, mul(a.v, b.v));
      push(a, '-', b, sub(a.v, b.v));
      push(b, '-', a, sub(b.v, a.v));
      push(a, '/', b, div(a.v, b.v));
      push(b, '/', a, div(b.v, a.v));
    }
  }
  return out;
}

/** Values only (no text), same order as `children`: for rollouts and the exhaustive count. */
function childValues(vals: readonly Rational[]): Rational[][] {
  const out: Rational[][] = [];
  for (let i = 0; i < vals.length; i++) {
    for (let j = i + 1; j < vals.length; j++) {
      const a = vals[i]!;
      const b = vals[j]!;
      const rest = vals.filter((_, k) => k !== i && k !== j);
      for (const r of [add(a, b), mul(a, b), sub(a, b), sub(b, a), div(a, b), div(b, a)]) if (r) out.push([...rest, r].sort(compare));
    }
  }
  return out;
}

/** Exact completion counts: hits = leaves equal to 24, total = all leaves, memoised by multiset. */
export class ExactValue {
  private readonly memo = new Map<string, { hits: number; total: number }>();

  count(vals: readonly Rational[]): { hits: number; total: number } {
    if (vals.length === 1) return { hits: equals(vals[0]!, TARGET) ? 1 : 0, total: 1 };
    const key = vals.map(format).join(',');
    const hit = this.memo.get(key);
    if (hit) return hit;
    let hits = 0;
    let total = 0;
    for (const c of childValues(vals)) {
      const r = this.count(c);
      hits += r.hits;
      total += r.total;
    }
    const res = { hits, total };
    this.memo.set(key, res);
    return res;
  }
}

/** v̂ = hits/k over k completions that pick a uniform child at every step (one int draw per step). */
export function rolloutValue(vals: readonly Rational[], k: number, rng: Rng): number {
  if (vals.length === 1) return equals(vals[0]!, TARGET) ? 1 : 0;
  let hits = 0;
  for (let r = 0; r < k; r++) {
    let cur: readonly Rational[] = vals;
    while (cur.length > 1) {
      const cs = childValues(cur);
      cur = cs[rng.int(cs.length)]!;
    }
    if (equals(cur[0]!, TARGET)) hits++;
  }
  return hits / k;
}

const sha1 = (...parts: (string | Uint8Array)[]): string => {
  const h = createHash('sha1');
  for (const p of parts) h.update(p);
  return h.digest('hex');
};

/** git object id: SHA-1 over "<type> <byte length>\0<body>". */
export function gitObjectId(type: 'blob' | 'tree' | 'commit', body: Uint8Array | string): string {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return sha1(`${type} ${bytes.length}\0`, bytes);
}

/** Tree with the one entry `100644 thought.txt` → blob. */
export function treeBody(blobId: string): Buffer {
  return Buffer.concat([Buffer.from('100644 thought.txt\0', 'utf8'), Buffer.from(blobId, 'hex')]);
}

export function commitBody(treeId: string, parent: string | null, index: number, thought: string): string {
  const stamp = `${AUTHOR} ${EPOCH + index} +0000`;
  return `tree ${treeId}\n${parent ? `parent ${parent}\n` : ''}author ${stamp}\ncommitter ${stamp}\n\n${thought}\n`;
}

export type Tag = 'root' | 'kept' | 'pruned' | 'solved';

export interface Commit {
  index: number;
  id: string;
  parent: string | null;
  depth: number;
  thought: string;
  score: number;
  note_blob: string;
  tag: Tag;
}

interface Node {
  commit: Commit;
  state: Item[];
}

function makeCommit(index: number, parent: string | null, depth: number, thought: string, score: number): Commit {
  const blob = gitObjectId('blob', `${thought}\n`);
  const tree = gitObjectId('tree', treeBody(blob));
  const id = gitObjectId('commit', commitBody(tree, parent, index, thought));
  // the note holds the score exactly as the body reports it (12 significant digits)
  const note = gitObjectId('blob', `score ${roundNumber(score)}\n`);
  return { index, id, parent, depth, thought, score, note_blob: note, tag: 'kept' };
}

/** Parses the `numbers` override; null when absent (empty), else the four integers. */
export function parseNumbers(text: string): number[] | null {
  if (text.trim() === '') return null;
  const m = NUMBERS_RE.exec(text);
  return m ? m.slice(1, 5).map(Number) : null;
}

export interface SearchResult {
  nodes: Node[];
  head: Node;
  log: string[];
  solvedNodes: Node[];
  rootCount: { hits: number; total: number };
}

/** ToT BFS over depths 1…3; `score` is called in search order (root first, then children as created). */
export function search(numbers: readonly number[], beam: number, score: (vals: readonly Rational[]) => number, exact: ExactValue): SearchResult {
  const nodes: Node[] = [];
  const rootState = numbers.map((n) => ({ v: rat(n), e: String(n) })).sort(byValue);
  const root: Node = { commit: makeCommit(0, null, 0, `input: ${numbers.join(' ')}`, score(rootState.map((i) => i.v))), state: rootState };
  root.commit.tag = 'root';
  nodes.push(root);
  let frontier = [root];
  let lastRanked: Node[] = [];
  for (let depth = 1; depth <= 3; depth++) {
    const created: Node[] = [];
    for (const parent of frontier) {
      for (const c of children(parent.state)) {
        const node = { commit: makeCommit(nodes.length, parent.commit.id, depth, c.text, score(c.state.map((i) => i.v))), state: c.state };
        nodes.push(node);
        created.push(node);
      }
    }
    // rank: score descending, then thought text ascending, then creation index
    const ranked = [...created].sort(
      (a, b) => b.commit.score - a.commit.score || (a.commit.thought < b.commit.thought ? -1 : a.commit.thought > b.commit.thought ? 1 : 0) || a.commit.index - b.commit.index,
    );
    ranked.forEach((n, r) => (n.commit.tag = r < beam ? 'kept' : 'pruned'));
    if (depth === 3) for (const n of ranked) if (equals(n.state[0]!.v, TARGET)) n.commit.tag = 'solved';
    frontier = ranked.slice(0, beam);
    lastRanked = ranked;
  }
  const solvedNodes = lastRanked.filter((n) => n.commit.tag === 'solved');
  const head = solvedNodes[0] ?? lastRanked[0]!;
  const byId = new Map(nodes.map((n) => [n.commit.id, n]));
  const log: string[] = [];
  for (let n: Node | undefined = head; n; n = n.commit.parent ? byId.get(n.commit.parent) : undefined) log.push(n.commit.id);
  return { nodes, head, log, solvedNodes, rootCount: exact.count(rootState.map((i) => i.v)) };
}

/**
 * At most COMMIT_CAP commits in the body, chosen by priority (root, the HEAD path, kept, solved,
 * then pruned, each by creation index) and listed by creation index. Every listed commit's parent is
 * the root or a kept commit, so it is listed too.
 */
export function selectCommits(res: SearchResult): { commits: Commit[]; truncated: boolean } {
  const all = res.nodes.map((n) => n.commit);
  if (all.length <= COMMIT_CAP) return { commits: all, truncated: false };
  const onLog = new Set(res.log);
  const rank = (c: Commit): number => (c.tag === 'root' ? 0 : onLog.has(c.id) ? 1 : c.tag === 'kept' ? 2 : c.tag === 'solved' ? 3 : 4);
  const chosen = [...all].sort((a, b) => rank(a) - rank(b) || a.index - b.index).slice(0, COMMIT_CAP);
  return { commits: chosen.sort((a, b) => a.index - b.index), truncated: true };
}

export default defineKernel({
  id: 'gitthoughts/tree',
  version: 1,
  input: 'query',
  summary: 'GitOfThoughts: a Tree-of-Thoughts BFS on Game of 24 written as real git commits, notes and tags',
  technique: 'Tree-of-Thoughts breadth-first search with a version-controlled (git object) thought store',
  references: ['arXiv:2606.14470', 'arXiv:2305.10601'],
  honesty: 'The search, exact rational arithmetic and git object ids are real; the value function is exact enumeration or seeded random rollouts standing in for an LLM, and the inputs are seeded.',
  params: {
    beam: int(1, 36, 5).description('beam width of the breadth-first Tree-of-Thoughts search'),
    rollouts: int(0, 64, 0).description('random rollouts per scored state (0: exact enumeration as the value function)'),
    numbers: str(40, '')
      .description('the Game of 24 numbers: four comma-separated integers 1…13 (empty: drawn from the seed)')
      .meta({ jsonSchema: { pattern: NUMBERS_PATTERN } }),
  },
  rules: ['numbers must be four comma-separated integers 1…13, e.g. 4,7,8,8'],
  constraints: (p) => {
    if (p.numbers.trim() === '') return [];
    const nums = parseNumbers(p.numbers);
    if (!nums || nums.some((n) => n < 1 || n > 13)) return [{ param: 'numbers', msg: 'numbers must be four comma-separated integers 1…13, e.g. 4,7,8,8' }];
    return [];
  },
  worstCase: { beam: 36, rollouts: 64, numbers: '1,2,4,8' }, // 901 commits (no zero ever appears), 64 rollouts per scored state
  run({ beam, rollouts: k, numbers: override }, rng) {
    // draws: stream `numbers` (four int(13)+1, only without an override); stream `rollouts`
    // (rollout mode: k completions per scored state in search order, one int per step)
    const given = parseNumbers(override);
    const ns = rng.stream('numbers');
    const numbers = given ?? Array.from({ length: 4 }, () => 1 + ns.int(13));
    const exact = new ExactValue();
    const rs = rng.stream('rollouts');
    const score =
      k > 0
        ? (vals: readonly Rational[]) => rolloutValue(vals, k, rs)
        : (vals: readonly Rational[]) => {
            const c = exact.count(vals);
            return c.hits / c.total;
          };
    const res = search(numbers, beam, score, exact);
    const { commits, truncated } = selectCommits(res);
    const all = res.nodes.map((n) => n.commit);
    const tags: Record<string, string> = {};
    res.solvedNodes.forEach((n, i) => (tags[`solved-${i}`] = n.commit.id));
    const solved = res.solvedNodes.length > 0;
    const countTag = (t: Tag): number => all.filter((c) => c.tag === t).length;
    // kept-vs-pruned discipline per depth
    let beamOk = true;
    for (let d = 1; d <= 3; d++) {
      const at = all.filter((c) => c.depth === d);
      const kept = at.filter((c) => c.tag !== 'pruned' && !(d === 3 && c.tag === 'solved'));
      const pruned = at.filter((c) => c.tag === 'pruned');
      if (kept.length > beam) beamOk = false;
      const minKept = Math.min(...kept.map((c) => c.score));
      if (pruned.some((c) => c.score > minKept)) beamOk = false;
    }
    return {
      constants: { target: 24, commit_cap: COMMIT_CAP, author: AUTHOR, epoch: EPOCH, tree_entry: '100644 thought.txt', max_depth: 3 },
      result: {
        numbers,
        solvable: res.rootCount.hits > 0,
        exact_root_value: { hits: res.rootCount.hits, completions: res.rootCount.total },
        solved,
        solution: solved ? res.head.state[0]!.e : null,
        commits,
        commits_truncated: truncated,
        commits_total: all.length,
        refs: { HEAD: res.head.commit.id, tags },
        log: res.log,
        counts: { thoughts: all.length - 1, kept: countTag('kept'), pruned: countTag('pruned'), solved: countTag('solved') },
        value_mode: k > 0 ? `rollout:${k}` : 'exact',
      },
      checks: {
        beam_discipline: beamOk,
        log_length_is_head_depth_plus_one: res.log.length === res.head.commit.depth + 1,
        solved_iff_solvable: k > 0 ? null : solved === res.rootCount.hits > 0,
      },
    };
  },
});
