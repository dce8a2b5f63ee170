import { expect } from 'chai';
import { createHash } from 'node:crypto';
import manifest from '../../../workers/kernels/fgbrain-manifest.js';
import graph from '../../../workers/kernels/fgbrain-graph.js';
import fire from '../../../workers/kernels/fgbrain-fire.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

/** JCS for the ASCII-keyed finite data here: sorted keys, no whitespace (written independently). */
function jcs(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  return `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}`;
}
const sha = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();
const node = (l: Buffer, r: Buffer): Buffer => sha(Buffer.concat([Buffer.from([1]), l, r]));

/** RFC 9162 §2.1.3.2 inclusion verification, written independently of workers/lib/merkle. */
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

  it('include selects artifacts; bad includes are refused', () => {
    const r = runRaw(manifest, { include: ['graph', 'kernels'] }).result as any;
    expect(r.statement.subject.map((s: { name: string }) => s.name)).to.deep.equal(['fgbrain/graph.json', 'fgbrain/kernels.json']);
    expect(runBody(manifest, { seed: 1 })).to.equal(runBody(manifest, { seed: 1 }));
    expect(rejects(manifest, { include: ['graph', 'nope'] })).to.deep.equal(['include.1:any.only']);
    expect(rejects(manifest, { include: [] })).to.deep.equal(['include:array.min']);
  });
});
