/**
 * A content-addressed manifest of the fgbrain (kernels-a 2.7): each artifact serialised as JCS
 * (RFC 8785) and named by its SHA-256, listed as the subjects of an in-toto Statement v1, and
 * committed to by an RFC 9162 Merkle tree with per-artifact inclusion proofs.
 */
import { defineKernel } from '../kernel-def.js';
import { buildSubstrate, simulateFire, undirected } from '../lib/fgbrain.js';
import { jacobiEigen, zeros } from '../lib/linalg.js';
import { inclusionProof, leafHash, merkleRoot } from '../../src/lib/merkle.js';
import { canonicalJson, sha256Hex } from '../../src/lib/numbers.js';
import { Joi, int, typed } from '../../src/lib/params.js';
import { GRAPH_DOC } from './fgbrain-graph.js';
import { drawPatterns } from './fgbrain-memory.js';

export const ARTIFACTS = ['params', 'graph', 'spectrum', 'fire', 'memory', 'kernels'] as const;
type Artifact = (typeof ARTIFACTS)[number];

/** The included artifacts by file name, each as serialised (JCS) and hashed. */
interface ArtifactFiles {
  /** the request's effective parameters */
  'fgbrain/params.json'?: { seed: number; n: number; m: number; include: Artifact[] };
  /** the substrate /fgbrain/graph builds: each edge [t, j] says node t depends on the earlier node j */
  'fgbrain/graph.json'?: { n: number; m: number; edges: number[][] };
  /** the undirected graph's Laplacian eigenvalues, ascending, to 10 significant digits */
  'fgbrain/spectrum.json'?: { lambda2: number; eigenvalues: number[] };
  /** /fgbrain/fire at its default knobs: spikes per neuron and the step of each one's first (null: none) */
  'fgbrain/fire.json'?: { counts: number[]; first_spike_step: (number | null)[] };
  /** the patterns /fgbrain/memory stores at its defaults, one '+'/'-' string per pattern */
  'fgbrain/memory.json'?: { neurons: number; patterns: string[] };
  /** the fgbrain kernels and their versions */
  'fgbrain/kernels.json'?: typeof FGBRAIN_KERNELS;
}

/** What each artifact holds, by artifact name. */
type ArtifactContents = { [A in Artifact]: NonNullable<ArtifactFiles[`fgbrain/${A}.json`]> };

/** The fgbrain family as listed in the `kernels` artifact (seed-independent), in note order. */
export const FGBRAIN_KERNELS = [
  { kernel: 'fgbrain/graph', version: 1 },
  { kernel: 'fgbrain/fire', version: 1 },
  { kernel: 'fgbrain/repair', version: 1 },
  { kernel: 'fgbrain/plasticity', version: 1 },
  { kernel: 'fgbrain/memory', version: 1 },
  { kernel: 'fgbrain/vitals', version: 1 },
  { kernel: 'fgbrain/vitals/energy', version: 1 },
  { kernel: 'fgbrain/evolve', version: 1 },
  { kernel: 'fgbrain/manifest', version: 2 },
];

const round10 = (x: number): number => {
  const r = Number(x.toPrecision(10));
  return r === 0 ? 0 : r;
};

export default defineKernel({
  id: 'fgbrain/manifest',
  // 2: the kernels artifact lists fgbrain/repair and fgbrain/plasticity (version 1 left them out)
  version: 2,
  input: 'request',
  summary: 'Content-addressed manifest of the fgbrain artifacts: JCS + SHA-256 subjects of an in-toto Statement with an RFC 9162 Merkle root and proofs',
  technique: 'in-toto Statement v1 subjects, RFC 8785 canonical JSON, RFC 9162 Merkle tree',
  references: ['in-toto Statement v1', 'RFC 8785', 'RFC 9162'],
  honesty: 'Digests, statement and proofs are real and recomputable; the artifacts they name are the seeded synthetic fgbrain computations.',
  params: {
    n: int(8, 96, 48).description(GRAPH_DOC.n),
    m: int(1, 4, 2).description(GRAPH_DOC.m),
    include: typed<Artifact[]>(Joi.array().items(Joi.string().valid(...ARTIFACTS)).unique().min(1).max(ARTIFACTS.length).default([...ARTIFACTS])).description('artifacts to include in the manifest: any of params, graph, spectrum, fire, memory, kernels'),
  },
  worstCase: { n: 96, m: 4 },
  run(p, rng) {
    const s = buildSubstrate(p.n, p.m, rng.shared('fgbrain/graph'));
    const want = new Set(p.include);
    const artifacts: Partial<ArtifactContents> = {};
    if (want.has('params')) artifacts.params = { seed: p.seed, n: p.n, m: p.m, include: p.include };
    if (want.has('graph')) artifacts.graph = { n: p.n, m: p.m, edges: s.deps.flatMap((list, t) => list.map((j) => [t, j])) };
    if (want.has('spectrum')) {
      const adj = undirected(s);
      const L = zeros(p.n, p.n);
      adj.forEach((list, i) => {
        L.data[i * p.n + i] = list.length;
        for (const j of list) L.data[i * p.n + j] = L.data[i * p.n + j]! - 1;
      });
      const values = Array.from(jacobiEigen(L).values, round10);
      artifacts.spectrum = { lambda2: values[1] ?? 0, eigenvalues: values };
    }
    if (want.has('fire')) {
      // /fgbrain/fire at its default knobs
      const { spikes } = simulateFire(s, { durationMs: 500, driveMv: 25, sources: 4, wSynMv: 10, bgRateHz: 0, bgWMv: 4 }, rng.shared('fgbrain/fire#background'));
      artifacts.fire = { counts: spikes.map((l) => l.length), first_spike_step: spikes.map((l) => l[0] ?? null) };
    }
    if (want.has('memory')) {
      // the patterns /fgbrain/memory stores at its defaults (N = 64, P = 4)
      artifacts.memory = { neurons: 64, patterns: drawPatterns(rng.shared('fgbrain/memory'), 4, 64).map((xi) => Array.from(xi).map((x) => (x > 0 ? '+' : '-')).join('')) };
    }
    if (want.has('kernels')) artifacts.kernels = FGBRAIN_KERNELS;

    const subjects = (Object.keys(artifacts) as Artifact[])
      .map((name) => ({ name: `fgbrain/${name}.json`, digest: { sha256: sha256Hex(canonicalJson(artifacts[name])) } }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    const leaves = subjects.map((sub) => Buffer.from(sub.digest.sha256, 'hex'));
    const root = merkleRoot(leaves).toString('hex');
    const leafHashes = leaves.map(leafHash);
    const statement = {
      _type: 'https://in-toto.io/Statement/v1',
      subject: subjects,
      predicateType: 'urn:svc:fgbrain-manifest:v1',
      predicate: { seed: p.seed, n: p.n, m: p.m, merkle_root: root, leaf_count: leaves.length },
    };
    return {
      result: {
        artifacts: Object.fromEntries(Object.entries(artifacts).map(([k, v]) => [`fgbrain/${k}.json`, v])) as ArtifactFiles,
        statement,
        statement_sha256: sha256Hex(canonicalJson(statement)),
        merkle: { root, size: leaves.length, proofs: subjects.map((sub, i) => ({ name: sub.name, leaf_index: i, audit_path: inclusionProof(leafHashes, i).map((h) => h.toString('hex')) })) },
      },
    };
  },
});
