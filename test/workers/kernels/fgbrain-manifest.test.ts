import { expect } from 'chai';
import { createHash } from 'node:crypto';
import manifest from '../../../workers/kernels/fgbrain-manifest.js';
import graph from '../../../workers/kernels/fgbrain-graph.js';
import fire from '../../../workers/kernels/fgbrain-fire.js';
import { KERNELS as FGBRAIN } from '../../../workers/kernels/index-fgbrain.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { eigenvaluesBelow, lif, priceDag } from '../../helpers/fgbrain-reference.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

/** JCS for the ASCII-keyed finite data here: sorted keys, no whitespace (written independently). */
function jcs(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  return `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}`;
}
const sha = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();
const node = (l: Buffer, r: Buffer): Buffer => sha(Buffer.concat([Buffer.from([1]), l, r]));

/** RFC 9162 §2.1.3.2 inclusion verification, written independently of src/lib/merkle. */
function verify(leaf: Buffer, index: number, size: number, path: Buffer[], root: Buffer): boolean {
  let fn = index;
  let sn = size - 1;
  let r = sha(Buffer.concat([Buffer.from([0]), leaf]));
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = node(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else r = node(r, p);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(root);
}

describe('kernel fgbrain/manifest', () => {
  it('every subject digest, the statement digest and every inclusion proof recompute independently', () => {
    for (let seed = 0; seed < 5; seed++) {
      const r = runRaw(manifest, { seed }).result as any;
      for (const sub of r.statement.subject) expect(sha(jcs(r.artifacts[sub.name])).toString('hex')).to.equal(sub.digest.sha256);
      expect(sha(jcs(r.statement)).toString('hex')).to.equal(r.statement_sha256);
      const root = Buffer.from(r.merkle.root, 'hex');
      for (const pr of r.merkle.proofs) {
        const leaf = Buffer.from(r.statement.subject[pr.leaf_index].digest.sha256, 'hex');
        expect(verify(leaf, pr.leaf_index, r.merkle.size, pr.audit_path.map((h: string) => Buffer.from(h, 'hex')), root)).to.equal(true);
      }
      expect(r.statement).to.include({ _type: 'https://in-toto.io/Statement/v1', predicateType: 'urn:svc:fgbrain-manifest:v1' });
    }
  });

  it('cross-route: graph edges equal /fgbrain/graph and fire counts equal /fgbrain/fire; kernels digest is seed-independent', () => {
    const a = runRaw(manifest, { seed: 7 }).result as any;
    const b = runRaw(manifest, { seed: 8 }).result as any;
    expect(a.artifacts['fgbrain/graph.json'].edges).to.deep.equal((runRaw(graph, { seed: '7' }).result as any).edges);
    expect(a.artifacts['fgbrain/fire.json'].counts).to.deep.equal((runRaw(fire, { seed: '7' }).result as any).neurons.map((x: { spikes: number }) => x.spikes));
    const digest = (r: any, name: string) => r.statement.subject.find((s: { name: string }) => s.name === name).digest.sha256;
    expect(digest(a, 'fgbrain/kernels.json')).to.equal(digest(b, 'fgbrain/kernels.json'));
    expect(digest(a, 'fgbrain/graph.json')).to.not.equal(digest(b, 'fgbrain/graph.json'));
    expect(a.merkle.root).to.not.equal(b.merkle.root);
  });

  it('the kernels artifact lists the whole fgbrain family with the versions the registry serves', () => {
    const r = runRaw(manifest, { include: ['kernels'] }).result as any;
    expect(r.artifacts['fgbrain/kernels.json']).to.deep.equal(FGBRAIN.map((def) => ({ kernel: def.id, version: def.version })));
  });

  it('every artifact recomputed independently: params, Price graph, spectrum (inertia, 10 digits), default fire run, memory patterns', () => {
    for (const [seed, n, m] of [[42, 48, 2], [5, 12, 3]] as const) {
      const r = runRaw(manifest, { seed, n, m }).result as any;
      const a = r.artifacts;
      expect(Object.keys(a)).to.deep.equal(['params', 'graph', 'spectrum', 'fire', 'memory', 'kernels'].map((x) => `fgbrain/${x}.json`));
      expect(a['fgbrain/params.json']).to.deep.equal({ seed, n, m, include: ['params', 'graph', 'spectrum', 'fire', 'memory', 'kernels'] });
      const dag = priceDag(seed, n, m);
      const edges = dag.deps.flatMap((list, t) => list.map((j) => [t, j]));
      expect(a['fgbrain/graph.json']).to.deep.equal({ n, m, edges });
      const L = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? dag.deps[i]!.length + dag.indeg[i]! : dag.deps[i]!.includes(j) || dag.deps[j]!.includes(i) ? -1 : 0)));
      const ev = a['fgbrain/spectrum.json'].eigenvalues as number[];
      expect(ev.length).to.equal(n);
      ev.forEach((lam, k) => {
        expect(Number(lam.toPrecision(10)), `10 significant digits ${k}`).to.equal(lam);
        // rounded to 10 digits: the true value lies within 1e-9 relative (or is 0); k eigenvalues lie below, counting repeats
        const eps = 1e-8 * Math.max(1, Math.abs(lam));
        const first = ev.findIndex((x) => Math.abs(x - lam) <= eps);
        expect(eigenvaluesBelow(L, lam - eps), `eigenvalue ${k}`).to.equal(first);
        expect(eigenvaluesBelow(L, lam + eps), `eigenvalue ${k}`).to.be.above(k);
      });
      expect(a['fgbrain/spectrum.json'].lambda2).to.equal(ev[1]);
      const f = lif(dag, { durationMs: 500, driveMv: 25, sources: 4, wSynMv: 10, bgRateHz: 0, bgWMv: 4 }, seed);
      expect(a['fgbrain/fire.json']).to.deep.equal({ counts: f.spikes.map((l) => l.length), first_spike_step: f.spikes.map((l) => l[0] ?? null) });
      const mem = new RngStreams(seed, 'x').shared('fgbrain/memory');
      const pats = Array.from({ length: 4 }, () => Array.from({ length: 64 }, () => (mem.next() < 0.5 ? '-' : '+')).join(''));
      expect(a['fgbrain/memory.json']).to.deep.equal({ neurons: 64, patterns: pats });
      expect(r.statement.predicate).to.deep.equal({ seed, n, m, merkle_root: r.merkle.root, leaf_count: 6 });
      expect(r.merkle.size).to.equal(6);
      expect(r.merkle.proofs.map((p: any) => [p.name, p.leaf_index])).to.deep.equal(r.statement.subject.map((s: any, i: number) => [s.name, i]));
      expect(r.statement.subject.map((s: any) => s.name)).to.deep.equal(['fire', 'graph', 'kernels', 'memory', 'params', 'spectrum'].map((x) => `fgbrain/${x}.json`));
    }
  });

  it('include selects artifacts; bad includes are refused', () => {
    const r = runRaw(manifest, { include: ['graph', 'kernels'] }).result as any;
    expect(r.statement.subject.map((s: { name: string }) => s.name)).to.deep.equal(['fgbrain/graph.json', 'fgbrain/kernels.json']);
    expect(Object.keys(r.artifacts)).to.deep.equal(['fgbrain/graph.json', 'fgbrain/kernels.json']);
    // two leaves: the root is the node hash of the two leaf hashes, and the counts say 2
    const leaves = r.statement.subject.map((s: any) => sha(Buffer.concat([Buffer.from([0]), Buffer.from(s.digest.sha256, 'hex')])));
    expect(r.merkle.root).to.equal(node(leaves[0], leaves[1]).toString('hex'));
    expect([r.merkle.size, r.statement.predicate.leaf_count]).to.deep.equal([2, 2]);
    expect(rejects(manifest, { include: ['graph', 'nope'] })).to.deep.equal(['include.1:any.only']);
    expect(rejects(manifest, { include: [] })).to.deep.equal(['include:array.min']);
  });
});
