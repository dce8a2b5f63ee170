import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import git from '../../../workers/kernels/gitthoughts-tree.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const sha1Object = (type: string, body: Buffer): string => createHash('sha1').update(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body])).digest('hex');

/** Rebuilds the blob → tree → commit chain of a listed commit from its fields alone. */
function rebuild(c: any): { id: string; body: string } {
  const blob = sha1Object('blob', Buffer.from(`${c.thought}\n`));
  const tree = sha1Object('tree', Buffer.concat([Buffer.from('100644 thought.txt\0'), Buffer.from(blob, 'hex')]));
  const stamp = `tot <tot@svc.invalid> ${1700000000 + c.index} +0000`;
  const body = `tree ${tree}\n${c.parent ? `parent ${c.parent}\n` : ''}author ${stamp}\ncommitter ${stamp}\n\n${c.thought}\n`;
  return { id: sha1Object('commit', Buffer.from(body)), body };
}

/** Exact fractions on BigInt, independent of workers/lib/rational. */
type Frac = [bigint, bigint];
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));
const norm = ([p, q]: Frac): Frac => {
  if (q < 0n) [p, q] = [-p, -q];
  const g = gcd(p, q) || 1n;
  return [p / g, q / g];
};
const ops: Record<string, (a: Frac, b: Frac) => Frac | null> = {
  '+': (a, b) => norm([a[0] * b[1] + b[0] * a[1], a[1] * b[1]]),
  '-': (a, b) => norm([a[0] * b[1] - b[0] * a[1], a[1] * b[1]]),
  '*': (a, b) => norm([a[0] * b[0], a[1] * b[1]]),
  '/': (a, b) => (b[0] === 0n ? null : norm([a[0] * b[1], a[1] * b[0]])),
};

/** Evaluates a fully parenthesised expression; collects the integer leaves. */
function evaluate(expr: string, leaves: number[]): Frac {
  const tokens = expr.match(/\d+|[()+\-*/]/g)!;
  let pos = 0;
  const parse = (): Frac => {
    const t = tokens[pos++]!;
    if (t !== '(') {
      leaves.push(Number(t));
      return [BigInt(t), 1n];
    }
    const a = parse();
    const op = tokens[pos++]!;
    const b = parse();
    expect(tokens[pos++]).to.equal(')');
    return ops[op]!(a, b)!;
  };
  const v = parse();
  expect(pos).to.equal(tokens.length);
  return v;
}

/** Brute-force solvability of Game of 24 with exact fractions. */
function solvable(nums: Frac[]): boolean {
  if (nums.length === 1) return nums[0]![0] === 24n && nums[0]![1] === 1n;
  for (let i = 0; i < nums.length; i++) {
    for (let j = 0; j < nums.length; j++) {
      if (i === j) continue;
      const rest = nums.filter((_, k) => k !== i && k !== j);
      for (const op of Object.values(ops)) {
        const r = op(nums[i]!, nums[j]!);
        if (r && solvable([...rest, r])) return true;
      }
    }
  }
  return false;
}

/**
 * Exact completion count of a multiset: every unordered pair {i < j} gives a+b, a·b, a−b, b−a and the
 * quotients with a non-zero divisor; a leaf counts 1, a hit when it equals 24. Memoised by the sorted values.
 */
function completions(nums: Frac[], memo = new Map<string, [number, number]>()): [number, number] {
  if (nums.length === 1) return [nums[0]![0] === 24n && nums[0]![1] === 1n ? 1 : 0, 1];
  const key = nums.map(([p, q]) => `${p}/${q}`).sort().join(',');
  const hit = memo.get(key);
  if (hit) return hit;
  let hits = 0;
  let total = 0;
  for (let i = 0; i < nums.length; i++) for (let j = i + 1; j < nums.length; j++) {
    const rest = nums.filter((_, k) => k !== i && k !== j);
    const [a, b] = [nums[i]!, nums[j]!];
    for (const r of [ops['+']!(a, b), ops['*']!(a, b), ops['-']!(a, b), ops['-']!(b, a), ops['/']!(a, b), ops['/']!(b, a)]) {
      if (!r) continue;
      const [h, t] = completions([...rest, r], memo);
      hits += h;
      total += t;
    }
  }
  memo.set(key, [hits, total]);
  return [hits, total];
}
const parseFrac = (t: string): Frac => (t.includes('/') ? norm([BigInt(t.split('/')[0]!), BigInt(t.split('/')[1]!)]) : [BigInt(t), 1n]);

const fmt = ([p, q]: Frac): string => (q === 1n ? `${p}` : `${p}/${q}`);
const byVal = (a: Frac, b: Frac): number => (a[0] * b[1] < b[0] * a[1] ? -1 : a[0] * b[1] > b[0] * a[1] ? 1 : 0);

/**
 * The search replayed from the note (kernels-a §1.2) in exact mode: children of a state sorted by
 * value, per pair i < j in the order a+b, a·b, a−b, b−a, a/b, b/a; every depth ranked by exact value
 * descending, then text, then creation index; the top `beam` kept, depth-3 leaves equal to 24 solved.
 */
function referenceSearch(numbers: number[], beam: number, rollouts = 0, seed = 0) {
  type N = { index: number; parent: number | null; depth: number; thought: string; score: number; tag: string; state: Frac[] };
  const memo = new Map<string, [number, number]>();
  const exact = (st: Frac[]): number => {
    const [h, t] = completions(st, memo);
    return h / t;
  };
  // rollout mode: k playouts per scored state, in the order states are scored, each step a uniform
  // child (pairs i < j, then a+b, a·b, a−b, b−a, a/b, b/a, values sorted) drawn from stream `rollouts`
  const rs = new RngStreams(seed, 'gitthoughts/tree').stream('rollouts');
  const childStates = (st: Frac[]): Frac[][] => {
    const out: Frac[][] = [];
    for (let i = 0; i < st.length; i++)
      for (let j = i + 1; j < st.length; j++) {
        const [a, b] = [st[i]!, st[j]!];
        const rest = st.filter((_, k) => k !== i && k !== j);
        for (const r of [ops['+']!(a, b), ops['*']!(a, b), ops['-']!(a, b), ops['-']!(b, a), ops['/']!(a, b), ops['/']!(b, a)]) if (r) out.push([...rest, r].sort(byVal));
      }
    return out;
  };
  const is24 = (st: Frac[]): boolean => st[0]![0] === 24n && st[0]![1] === 1n;
  const rollout = (st: Frac[]): number => {
    if (st.length === 1) return is24(st) ? 1 : 0;
    let hits = 0;
    for (let r = 0; r < rollouts; r++) {
      let cur = st;
      while (cur.length > 1) {
        const cs = childStates(cur);
        cur = cs[Math.floor(rs.next() * cs.length)]!;
      }
      if (is24(cur)) hits++;
    }
    return hits / rollouts;
  };
  const value = rollouts > 0 ? rollout : exact;
  const rootState = numbers.map((n) => [BigInt(n), 1n] as Frac).sort(byVal);
  const nodes: N[] = [{ index: 0, parent: null, depth: 0, thought: `input: ${numbers.join(' ')}`, score: value(rootState), tag: 'root', state: rootState }];
  let frontier = [nodes[0]!];
  let ranked: N[] = [];
  for (let depth = 1; depth <= 3; depth++) {
    const created: N[] = [];
    for (const par of frontier) {
      const st = par.state;
      for (let i = 0; i < st.length; i++)
        for (let j = i + 1; j < st.length; j++) {
          const [a, b] = [st[i]!, st[j]!];
          const rest = st.filter((_, k) => k !== i && k !== j);
          for (const [x, op, y] of [[a, '+', b], [a, '*', b], [a, '-', b], [b, '-', a], [a, '/', b], [b, '/', a]] as const) {
            const r = ops[op]!(x, y);
            if (!r) continue;
            const next = [...rest, r].sort(byVal);
            const n: N = { index: nodes.length, parent: par.index, depth, thought: `${fmt(x)} ${op} ${fmt(y)} = ${fmt(r)} (left: ${next.map(fmt).join(' ')})`, score: value(next), tag: 'pruned', state: next };
            nodes.push(n);
            created.push(n);
          }
        }
    }
    ranked = [...created].sort((p, q) => q.score - p.score || (p.thought < q.thought ? -1 : p.thought > q.thought ? 1 : 0) || p.index - q.index);
    ranked.forEach((n, k) => (n.tag = k < beam ? 'kept' : 'pruned'));
    if (depth === 3) for (const n of ranked) if (n.state[0]![0] === 24n && n.state[0]![1] === 1n) n.tag = 'solved';
    frontier = ranked.slice(0, beam);
  }
  const solved = ranked.filter((n) => n.tag === 'solved');
  const head = solved[0] ?? ranked[0]!;
  const log: number[] = [];
  for (let n: N | undefined = head; n; n = n.parent === null ? undefined : nodes[n.parent]) log.push(n.index);
  return { nodes, head, log, solved };
}

describe('kernel gitthoughts/tree', () => {
  it('inputs from stream numbers; every score is the exact completion value of the state its thought leaves, recomputed', () => {
    const memo = new Map<string, [number, number]>();
    for (const q of [{ seed: 42 }, { seed: 7, beam: 2 }, { numbers: '4,7,8,8', beam: 3 }, { seed: 11, beam: 8 }]) {
      const r = runRaw(git, q).result as any;
      if (q.numbers === undefined) {
        const ns = new RngStreams(q.seed!, 'gitthoughts/tree').stream('numbers');
        expect(r.numbers).to.deep.equal(Array.from({ length: 4 }, () => 1 + Math.floor(ns.next() * 13)));
      }
      const root = completions(r.numbers.map((n: number) => [BigInt(n), 1n] as Frac), memo);
      expect(r.exact_root_value).to.deep.equal({ hits: root[0], completions: root[1] });
      expect(r.commits[0].score).to.be.closeTo(root[0] / root[1], 1e-15);
      for (const c of r.commits.slice(1)) {
        const left = /\(left: ([^)]*)\)$/.exec(c.thought)![1]!.split(' ').map(parseFrac);
        const [h, t] = completions(left, memo);
        expect(c.score, c.thought).to.be.closeTo(h / t, 1e-15);
      }
      // depth 1: 6 pairs × 6 operations of the root (inputs 1…13 are never 0, so every quotient is defined)
      expect(r.commits.filter((c: any) => c.depth === 1).length).to.equal(36);
      expect(r.counts.thoughts).to.equal(r.commits_total - 1);
    }
  });

  it('the whole commit list, tags, HEAD, log and counts equal an independent replay of the search (exact mode)', () => {
    for (const q of [{ seed: 42 }, { seed: 7, beam: 2 }, { numbers: '4,7,8,8', beam: 3 }, { seed: 11, beam: 8 }, { numbers: '1,1,1,1', beam: 1 }]) {
      const r = runRaw(git, q).result as any;
      const nums: number[] = q.numbers === undefined ? (() => {
        const ns = new RngStreams(q.seed!, 'gitthoughts/tree').stream('numbers');
        return Array.from({ length: 4 }, () => 1 + Math.floor(ns.next() * 13));
      })() : q.numbers.split(',').map(Number);
      const ref = referenceSearch(nums, q.beam ?? 5);
      expect(r.commits_total).to.equal(ref.nodes.length);
      expect(r.commits_truncated).to.equal(false);
      const idOf = r.commits.map((c: any) => c.id);
      expect(r.commits.map((c: any) => [c.index, c.parent === null ? null : idOf.indexOf(c.parent), c.depth, c.thought, c.tag])).to.deep.equal(ref.nodes.map((n) => [n.index, n.parent, n.depth, n.thought, n.tag]));
      r.commits.forEach((c: any, i: number) => expect(c.score).to.be.closeTo(ref.nodes[i]!.score, 1e-15));
      expect(r.refs.HEAD).to.equal(idOf[ref.head.index]);
      expect(r.refs.tags).to.deep.equal(Object.fromEntries(ref.solved.map((n, k) => [`solved-${k}`, idOf[n.index]])));
      expect(r.log).to.deep.equal(ref.log.map((i) => idOf[i]));
      const count = (tag: string) => ref.nodes.filter((n) => n.tag === tag).length;
      expect(r.counts).to.deep.equal({ thoughts: ref.nodes.length - 1, kept: count('kept'), pruned: count('pruned'), solved: count('solved') });
      expect(r.solved).to.equal(ref.solved.length > 0);
    }
  });

  it('every commit id is the git object id of its rebuilt body, and real git agrees', () => {
    // the body as sent: scores rounded to 12 significant digits, exactly as written into the notes
    const r = JSON.parse(runBody(git, { seed: 3 })).result;
    expect(r.commits_truncated).to.equal(false);
    expect(r.commits).to.have.length(r.commits_total);
    for (const c of r.commits) {
      expect(rebuild(c).id).to.equal(c.id);
      expect(sha1Object('blob', Buffer.from(`score ${c.score}\n`))).to.equal(c.note_blob);
    }
    for (const id of r.log) {
      const c = r.commits.find((x: any) => x.id === id);
      const out = execFileSync('git', ['hash-object', '--stdin', '-t', 'commit'], { input: rebuild(c).body }).toString().trim();
      expect(out).to.equal(id);
    }
    const blob = execFileSync('git', ['hash-object', '--stdin'], { input: `${r.commits[0].thought}\n` }).toString().trim();
    expect(sha1Object('blob', Buffer.from(`${r.commits[0].thought}\n`))).to.equal(blob);
  });

  it('forms a tree: parents come first, depth grows by one, log walks HEAD back to the root', () => {
    for (const q of [{ seed: 1 }, { seed: 2, beam: 1 }, { seed: 4, beam: 12, rollouts: 5 }]) {
      const r = runRaw(git, q).result as any;
      const seen = new Map<string, any>();
      r.commits.forEach((c: any, i: number) => {
        if (i === 0) {
          expect(c.parent).to.equal(null);
          expect(c.depth).to.equal(0);
          expect(c.thought).to.equal(`input: ${r.numbers.join(' ')}`);
        } else {
          expect(seen.has(c.parent)).to.equal(true);
          expect(c.depth).to.equal(seen.get(c.parent).depth + 1);
          expect(c.index).to.be.greaterThan(r.commits[i - 1].index);
        }
        seen.set(c.id, c);
      });
      const head = seen.get(r.refs.HEAD);
      expect(r.log).to.have.length(head.depth + 1);
      expect(r.log[0]).to.equal(r.refs.HEAD);
      for (let i = 1; i < r.log.length; i++) expect(seen.get(r.log[i - 1]).parent).to.equal(r.log[i]);
      expect(r.log[r.log.length - 1]).to.equal(r.commits[0].id);
    }
  });

  it('keeps at most beam thoughts per depth, each scoring at least every pruned one', () => {
    for (const beam of [1, 3, 5, 9]) {
      const r = runRaw(git, { beam, seed: 10 + beam }).result as any;
      for (let d = 1; d <= 3; d++) {
        const at = r.commits.filter((c: any) => c.depth === d);
        const kept = at.filter((c: any) => c.tag === 'kept' || (d < 3 && c.tag === 'solved'));
        const pruned = at.filter((c: any) => c.tag === 'pruned');
        expect(kept.length).to.be.at.most(beam);
        for (const k of kept) for (const p of pruned) expect(k.score).to.be.at.least(p.score);
        // every depth-d thought hangs off a thought kept at depth d − 1 (or the root)
        const parents = new Set(r.commits.filter((c: any) => c.depth === d - 1 && (c.tag === 'kept' || c.tag === 'root')).map((c: any) => c.id));
        for (const c of at) expect(parents.has(c.parent)).to.equal(true);
      }
      expect(r.counts.kept + r.counts.pruned + r.counts.solved).to.equal(r.counts.thoughts);
    }
  });

  it('exact mode solves exactly the solvable inputs (20 seeds, brute force here), and solutions evaluate to 24', () => {
    let solvedCount = 0;
    for (let seed = 0; seed < 20; seed++) {
      const r = runRaw(git, { seed }).result as any;
      const truth = solvable(r.numbers.map((n: number) => [BigInt(n), 1n] as Frac));
      expect(r.solvable).to.equal(truth);
      expect(r.solved).to.equal(truth);
      if (r.solved) {
        solvedCount++;
        const leaves: number[] = [];
        expect(evaluate(r.solution, leaves)).to.deep.equal([24n, 1n]);
        expect([...leaves].sort((a, b) => a - b)).to.deep.equal([...r.numbers].sort((a: number, b: number) => a - b));
        expect(r.commits.find((c: any) => c.id === r.refs.HEAD).tag).to.equal('solved');
        expect(Object.keys(r.refs.tags)).to.have.length(r.counts.solved);
      } else {
        expect(r.solution).to.equal(null);
      }
    }
    expect(solvedCount).to.be.greaterThan(10);
    const fixed = runRaw(git, { numbers: '4,7,8,8' }).result as any;
    expect(fixed.numbers).to.deep.equal([4, 7, 8, 8]);
    expect(fixed.exact_root_value.completions).to.be.at.most(36 * 18 * 6);
    const unsolvable = runRaw(git, { numbers: '1,1,1,1' }).result as any;
    expect(unsolvable).to.include({ solvable: false, solved: false, solution: null });
  });

  it('rollout mode: every score, the commit list, HEAD and log equal an independent replay with playouts redrawn from stream rollouts', () => {
    for (const [seed, beam, rollouts] of [[5, 5, 8], [7, 3, 4], [9, 2, 1], [12, 6, 16]] as const) {
      const r = runRaw(git, { seed, beam, rollouts }).result as any;
      const ns = new RngStreams(seed, 'gitthoughts/tree').stream('numbers');
      const nums = Array.from({ length: 4 }, () => 1 + Math.floor(ns.next() * 13));
      const ref = referenceSearch(nums, beam, rollouts, seed);
      expect(r.commits_total).to.equal(ref.nodes.length);
      const idOf = r.commits.map((c: any) => c.id);
      expect(r.commits.map((c: any) => [c.index, c.depth, c.thought, c.tag, c.score])).to.deep.equal(ref.nodes.slice(0, r.commits.length).map((n) => [n.index, n.depth, n.thought, n.tag, n.score]));
      expect(r.refs.HEAD).to.equal(idOf[ref.head.index]);
      expect(r.log).to.deep.equal(ref.log.map((i) => idOf[i]));
      expect(r.solved).to.equal(ref.solved.length > 0);
    }
  });

  it('checks: beam discipline and log length hold in every mode; solved iff solvable is checked in exact mode only', () => {
    for (const [beam, rollouts, seed] of [[1, 0, 3], [5, 0, 11], [9, 0, 12], [36, 0, 13], [5, 8, 5], [3, 4, 7], [2, 1, 9]] as const) {
      const out = runRaw(git, { beam, rollouts, seed });
      const r = out.result as any;
      const head = r.commits.find((c: any) => c.id === r.refs.HEAD);
      expect(r.log.length, 'the log walks HEAD back to the root').to.equal(head.depth + 1);
      expect(out.checks).to.deep.equal({ beam_discipline: true, log_length_is_head_depth_plus_one: true, solved_iff_solvable: rollouts > 0 ? null : true });
    }
  });

  it('rollout mode scores are multiples of 1/k, and a wide beam truncates the commit list consistently', () => {
    const r = runRaw(git, { rollouts: 8, seed: 5 }).result as any;
    expect(r.value_mode).to.equal('rollout:8');
    for (const c of r.commits) expect(Number.isInteger(c.score * 8) && c.score >= 0 && c.score <= 1).to.equal(true);
    const wide = runRaw(git, { beam: 36, numbers: '3,3,8,8' }).result as any;
    expect(wide.commits_total).to.be.greaterThan(256).and.at.most(1 + 36 + 36 * 18 + 36 * 6);
    expect(runRaw(git, { beam: 36, numbers: '1,2,4,8' }).result).to.have.property('commits_total', 901);
    expect(wide.commits_truncated).to.equal(true);
    expect(wide.commits).to.have.length(256);
    const ids = new Set(wide.commits.map((c: any) => c.id));
    for (const c of wide.commits) if (c.parent) expect(ids.has(c.parent)).to.equal(true);
    for (const id of wide.log) expect(ids.has(id)).to.equal(true);
    expect(wide.solution).to.be.a('string');
  });

  it('rollouts depend on the seed for the same numbers', () => {
    expect(runBody(git, { rollouts: 4, seed: 1 })).to.not.equal(runBody(git, { rollouts: 4, seed: 2, numbers: (runRaw(git, { seed: 1 }).result as any).numbers.join(',') }));
  });

  it('numbers must be four integers 1…13; blanks around them pass', () => {
    expect(rejects(git, { numbers: '1,2,3' })).to.deep.equal(['numbers:constraint']);
    expect(rejects(git, { numbers: '1,2,3,14' })).to.deep.equal(['numbers:constraint']);
    expect(rejects(git, { numbers: '0,2,3,4' })).to.deep.equal(['numbers:constraint']);
    expect(rejects(git, { numbers: 'a,b,c,d' })).to.deep.equal(['numbers:constraint']);
    expect(rejects(git, { numbers: '13, 1,2 ,3' })).to.deep.equal([]);
  });
});
