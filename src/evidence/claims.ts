/**
 * Evidence claims: each claim the doctrine relies on, with a live check that re-derives it from the
 * running service (in-process responses, the worker pool, published component state) instead of
 * echoing a stored verdict.
 */
import { createHash, verify } from 'node:crypto';
import { BASIS_VOCABULARY } from '../core/doctrine.js';
import type { Observed } from '../introspection/observed.js';
import { SOURCES, type Source } from '../core/envelope.js';
import { API } from '../isomorphic/api.js';
import { dssePae, firstBadNode, hasRoute, inclusionVerifies, ledgerProbe, paeSpecVectorOk, publishedKey, signerProbe } from './probes.js';

export type ClaimStatus = 'verified' | 'failed' | 'not_applicable';

export interface ClaimCheck {
  status: ClaimStatus;
  reason: string;
  observations: Record<string, unknown>;
}

export interface Claim {
  claim_id: string;
  title: string;
  statement: string;
  method: string;
  sources: Source[];
  check(s: Observed): Promise<ClaimCheck>;
}

const internal = (leader: string, url: string): Source => ({ leader, kind: 'internal', url, data_kind: 'computed' });

/** How fresh the ADS-B snapshot must be to be called live: 10 s, the feed's default freshness. */
export const ADSB_FRESH_S = 10;

const fail = (reason: string, observations: Record<string, unknown> = {}): ClaimCheck => ({ status: 'failed', reason, observations });

interface ExportDoc {
  receipt_available: boolean;
  node_index: number;
  node_digest: string | null;
  khipu_root: string;
  keyid: string;
  ledger_size: number;
  limits: { code: string }[];
  dsse: { payloadType: string; payload: string; signatures: { sig: string; keyid: string }[] } | null;
  verification: { pae_sha256: string | null };
  inclusion_proof?: { leaf_index: number; tree_size: number; audit_path: string[] };
}

async function exportDoc(s: Observed): Promise<ExportDoc | null> {
  if (!hasRoute(s, `GET ${API}/receipt/export`)) return null;
  return (await s.inProcess.getJson<ExportDoc>(`${API}/receipt/export`)).body;
}

const receiptsVerifyOffline: Claim = {
  claim_id: 'receipts-verify-offline',
  title: 'Receipts verify offline',
  statement: 'The newest receipt verifies offline: ECDSA P-256 SHA-256 over the DSSE v1 PAE, with the key served at edge/pubkey.pem, whose keyid matches.',
  method: 'Fetch the newest receipt export and the public key PEM in-process; rebuild the PAE with an independent routine (checked against the DSSE spec vector); verify the DER signature with the key parsed from the served PEM bytes; compare the PAE digest and the keyid with the export.',
  sources: [internal('Receipt export (newest node)', `${API}/receipt/export`), internal('Published public key', `${API}/edge/pubkey.pem`), SOURCES.dsse, SOURCES.fips186],
  async check(s) {
    const vector = paeSpecVectorOk();
    if (!vector) return fail('the PAE routine does not reproduce the DSSE spec vector');
    const doc = await exportDoc(s);
    if (!doc) return fail('receipt export route not mounted or unreadable');
    if (!doc.receipt_available || !doc.dsse) return { status: 'not_applicable', reason: 'no receipt yet: the ledger is empty', observations: { ledger_size: doc.ledger_size, pae_spec_vector_ok: vector } };
    const key = await publishedKey(s);
    if ('error' in key) return fail(key.error);
    const payload = Buffer.from(doc.dsse.payload, 'base64');
    const pae = dssePae(doc.dsse.payloadType, payload);
    const paeSha = createHash('sha256').update(pae).digest('hex');
    const sig = Buffer.from(doc.dsse.signatures[0]?.sig ?? '', 'base64');
    let verified = false;
    try {
      verified = verify('sha256', pae, key.key, sig);
    } catch {
      verified = false;
    }
    const paeMatches = paeSha === doc.verification.pae_sha256;
    const keyidMatches = key.keyid === doc.keyid && doc.dsse.signatures[0]?.keyid === key.keyid;
    const observations = { node_index: doc.node_index, pae_sha256: paeSha, keyid: key.keyid, verified, pae_matches_export: paeMatches, keyid_matches: keyidMatches, pae_spec_vector_ok: vector };
    if (verified && paeMatches && keyidMatches) return { status: 'verified', reason: `receipt ${doc.node_index} verified over its PAE with the published key`, observations };
    return fail(`receipt ${doc.node_index}: signature ${verified ? 'verifies' : 'does NOT verify'}, PAE digest ${paeMatches ? 'matches' : 'differs'}, keyid ${keyidMatches ? 'matches' : 'differs'}`, observations);
  },
};

const ledgerHashChainIntact: Claim = {
  claim_id: 'ledger-hash-chain-intact',
  title: 'Ledger hash chain intact',
  statement: 'Every node digest and chain link recomputes from the stored receipts, the recomputed Merkle root equals the served khipu_root, and the newest node has a valid RFC 9162 inclusion proof under it.',
  method: 'Recompute the whole chain and Merkle root (full pass, not incremental); compare with the served root and the readiness integrity; verify the newest export node’s inclusion proof against its khipu_root with an RFC 9162 verifier written independently of the ledger’s Merkle code.',
  sources: [internal('Ledger readiness', `${API}/ledger/readiness`), internal('Receipt export (newest node)', `${API}/receipt/export`), SOURCES.rfc9162],
  async check(s) {
    const probe = ledgerProbe(s);
    const d = probe.details as { verified: boolean; nodes: number; recomputed_root: string | null; served_root: string | null; first_bad_node: number | null };
    const readiness = hasRoute(s, `GET ${API}/ledger/readiness`) ? (await s.inProcess.getJson<{ integrity: { verified: boolean; nodes: number; root: string } }>(`${API}/ledger/readiness`)).body : null;
    const doc = await exportDoc(s);
    let inclusion: boolean | null = null;
    if (doc?.receipt_available && doc.node_digest && doc.inclusion_proof) {
      const leaf = Buffer.from(doc.node_digest, 'hex');
      inclusion = inclusionVerifies(leaf, doc.inclusion_proof.leaf_index, doc.inclusion_proof.tree_size, doc.inclusion_proof.audit_path.map((h) => Buffer.from(h, 'hex')), Buffer.from(doc.khipu_root, 'hex'));
    }
    const nodes = d.nodes;
    const readinessAgrees = readiness !== null && readiness.integrity.verified === d.verified && readiness.integrity.nodes === nodes && (nodes === 0 || readiness.integrity.root === d.recomputed_root);
    const exportAgrees = doc !== null && (nodes === 0 ? !doc.receipt_available : doc.khipu_root === d.recomputed_root && doc.ledger_size === nodes);
    const observations = {
      nodes,
      root: d.recomputed_root,
      served_root: d.served_root,
      verified: d.verified,
      first_bad_node: d.first_bad_node ?? (d.verified ? null : firstBadNode(probe.output)),
      readiness_agrees: readinessAgrees,
      export_agrees: exportAgrees,
      newest_inclusion_verified: inclusion,
    };
    if (nodes === 0 && d.verified && readinessAgrees) return { status: 'verified', reason: 'empty ledger: nothing to recompute, readiness agrees', observations };
    if (probe.ok && readinessAgrees && exportAgrees && inclusion === true) return { status: 'verified', reason: `chain, digests and Merkle root recomputed for ${nodes} nodes; newest inclusion proof verifies`, observations };
    return fail(!d.verified ? probe.output : !probe.ok ? probe.output : !readinessAgrees ? 'readiness integrity disagrees with the recomputation' : !exportAgrees ? 'the export root or size disagrees with the recomputation' : 'newest node inclusion proof does not verify', observations);
  },
};

const signaturesRealEcdsa: Claim = {
  claim_id: 'signatures-real-ecdsa',
  title: 'Signatures are real ECDSA P-256',
  statement: 'The signing key in the worker pool makes real ECDSA P-256 SHA-256 signatures (ASN.1 DER) that the published key verifies, and a one-bit change does not.',
  method: 'Sign a fixed probe payload in a worker with the ledger key; verify it on the main thread with the key parsed from the served PEM; check DER encoding, the curve, the keyid and a negative control; the probe is not appended to the ledger (size compared before and after).',
  sources: [internal('Published public key', `${API}/edge/pubkey.pem`), SOURCES.fips186, SOURCES.dsse],
  async check(s) {
    const probe = await signerProbe(s);
    return { status: probe.ok ? 'verified' : 'failed', reason: probe.output, observations: { ...(probe.details ?? {}), latency_ms: probe.latency_ms } };
  },
};

const adsbNeverSynthetic: Claim = {
  claim_id: 'adsb-never-synthetic',
  title: 'ADS-B never synthetic',
  statement: 'Aircraft are served only from a successful upstream fetch: no aircraft without an upstream success, live=true only within the freshness window, and no snapshot means an empty set marked not live.',
  method: 'Read the ADS-B feed state the feature publishes and check its invariants: aircraft > 0 requires a provider with a recorded success; live requires a snapshot no older than the freshness window; no snapshot requires zero aircraft and live=false.',
  sources: [internal('ADS-B feed', `${API}/adsb`), SOURCES.adsbfi],
  async check(s) {
    const st = s.adsb();
    const succeeded = st.providers.filter((p) => p.lastOkAt !== null).map((p) => p.name);
    const problems: string[] = [];
    if (st.aircraft > 0 && succeeded.length === 0) problems.push(`${st.aircraft} aircraft served but no provider ever succeeded`);
    if (st.live && (st.snapshotAgeS === null || st.snapshotAgeS > ADSB_FRESH_S)) problems.push(`live=true with a snapshot aged ${st.snapshotAgeS} s`);
    if (st.snapshotAgeS === null && (st.aircraft !== 0 || st.live)) problems.push('no snapshot, yet aircraft or live reported');
    const observations = { live: st.live, aircraft: st.aircraft, snapshot_age_s: st.snapshotAgeS, providers_with_success: succeeded, fresh_window_s: ADSB_FRESH_S };
    return problems.length ? fail(problems.join('; '), observations) : { status: 'verified', reason: 'every served aircraft traces to a successful upstream fetch; live flag consistent with snapshot age', observations };
  },
};

const cotRoadmapUnwired: Claim = {
  claim_id: 'cot-roadmap-unwired',
  title: 'CoT roadmap unwired',
  statement: 'No UDP multicast emission, TAK server stream or client-certificate enrolment is wired: every roadmap entry is wired=false and the process holds no UDP socket.',
  method: 'Read the CoT status document in-process (every roadmap entry wired=false) and the process’s active resource types (no UDPWRAP handle).',
  sources: [internal('CoT status', `${API}/cot/status`), SOURCES.cotSchema],
  async check(s) {
    const resources = process.getActiveResourcesInfo();
    const udp = resources.filter((r) => /udp/i.test(r)).length;
    if (!hasRoute(s, `GET ${API}/cot/status`)) return fail('CoT status route not mounted: the roadmap flags cannot be read', { udp_handles: udp });
    const doc = (await s.inProcess.getJson<{ roadmap?: Record<string, { wired?: unknown }> }>(`${API}/cot/status`)).body;
    const roadmap = doc?.roadmap ?? null;
    const entries = roadmap ? Object.entries(roadmap) : [];
    const wired = entries.filter(([, v]) => v?.wired !== false).map(([k]) => k);
    const observations = { roadmap_entries: entries.map(([k, v]) => ({ id: k, wired: v?.wired ?? null })), udp_handles: udp, active_resource_types: [...new Set(resources)].sort() };
    if (!roadmap || entries.length === 0) return fail('CoT status has no roadmap', observations);
    if (wired.length || udp) return fail(`${wired.length ? `wired roadmap entries: ${wired.join(', ')}` : ''}${wired.length && udp ? '; ' : ''}${udp ? `${udp} UDP handle(s) open` : ''}`, observations);
    return { status: 'verified', reason: `${entries.length} roadmap entries wired=false; no UDP handle in the process`, observations };
  },
};

/** What readiness and exports must say in each ledger mode (honesty rule 4 as the mode makes it true). */
const DURABILITY_EXPECTED = {
  memory: { durability_state: 'EPHEMERAL', persistence_scope: 'PROCESS_MEMORY', limit: true },
  file: { durability_state: 'DURABLE', persistence_scope: 'LOCAL_FILE', limit: false },
  postgres: { durability_state: 'DURABLE', persistence_scope: 'POSTGRES', limit: false },
} as const;

const ledgerDurability: Claim = {
  claim_id: 'ledger-durability',
  title: 'Ledger durability is what the doctrine says',
  statement:
    'The ledger reports the durability of its configured mode: memory mode says EPHEMERAL, PROCESS_MEMORY and the EPHEMERAL_LEDGER limit; file and postgres modes say DURABLE with their persistence scope and carry no EPHEMERAL_LEDGER limit.',
  method: 'Read the configured ledger mode, the ledger readiness object and the receipt export in-process.',
  sources: [internal('Ledger readiness', `${API}/ledger/readiness`), internal('Receipt export', `${API}/receipt/export`)],
  async check(s) {
    if (!hasRoute(s, `GET ${API}/ledger/readiness`)) return fail('ledger readiness route not mounted');
    const mode = s.config.ledger.mode;
    const want = DURABILITY_EXPECTED[mode];
    const r = (await s.inProcess.getJson<{ durability_state?: string; persistence_scope?: string }>(`${API}/ledger/readiness`)).body;
    const doc = await exportDoc(s);
    const limit = doc?.limits?.some((l) => l.code === 'EPHEMERAL_LEDGER') ?? false;
    const observations = { mode, durability_state: r?.durability_state ?? null, persistence_scope: r?.persistence_scope ?? null, limit_present: limit };
    if (r?.durability_state === want.durability_state && r.persistence_scope === want.persistence_scope && limit === want.limit) {
      return { status: 'verified', reason: `${mode} mode: ${want.durability_state}, ${want.persistence_scope}, EPHEMERAL_LEDGER limit ${limit ? 'reported' : 'absent'}`, observations };
    }
    return fail(`durability, persistence or limit disagree with ${mode} mode`, observations);
  },
};

/** A cheap kernel: small sizes, fixed seed. */
export const DETERMINISM_PROBE = `${API}/ssm/scan?seq_len=16&state_dim=4&seed=7`;

const kernelsDeterministic: Claim = {
  claim_id: 'kernels-deterministic',
  title: 'Kernels are deterministic',
  statement: 'The same kernel parameters and seed give byte-identical bodies.',
  method: 'Call one cheap kernel twice in-process with the same seed and compare the bodies byte for byte.',
  sources: [internal('ssm/scan kernel', DETERMINISM_PROBE)],
  async check(s) {
    if (!hasRoute(s, `GET ${API}/ssm/scan`)) return fail('probe kernel route not mounted');
    const a = await s.inProcess.get(DETERMINISM_PROBE);
    const b = await s.inProcess.get(DETERMINISM_PROBE);
    const ha = createHash('sha256').update(a.body).digest('hex');
    const hb = createHash('sha256').update(b.body).digest('hex');
    const observations = { route: DETERMINISM_PROBE, status_codes: [a.status, b.status], sha256: [ha, hb], bytes: a.body.length };
    if (a.status === 200 && b.status === 200 && ha === hb) return { status: 'verified', reason: 'two runs byte-identical', observations };
    return fail(a.status !== 200 || b.status !== 200 ? `kernel answered ${a.status}/${b.status}` : 'bodies differ', observations);
  },
};

/** JSON paths of numeric leaves with no `basis` from the vocabulary on themselves or an ancestor object. */
export function unlabelledNumbers(value: unknown, path = '$', labelled = false): string[] {
  if (typeof value === 'number') return labelled ? [] : [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => unlabelledNumbers(v, `${path}[${i}]`, labelled));
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const here = labelled || (typeof o.basis === 'string' && (BASIS_VOCABULARY as readonly string[]).includes(o.basis));
    return Object.entries(o).flatMap(([k, v]) => unlabelledNumbers(v, `${path}.${k}`, here));
  }
  return [];
}

const energyFiguresLabelled: Claim = {
  claim_id: 'energy-figures-labelled',
  title: 'Energy figures are labelled',
  statement: 'Every numeric value in the energy views carries its basis (measured, computed, model, published, dataset, config or input).',
  method: 'Read every parameterless energy view in-process and walk its JSON: each number must sit in an object (or under one) whose basis is in the vocabulary.',
  sources: [internal('Energy views', `${API}/energy/sovereign`)],
  async check(s) {
    const views = s.routeTable().filter((r) => r.method === 'GET' && r.path.startsWith(`${API}/energy/`) && r.tag !== 'kernels' && !/[:*]/.test(r.path));
    if (!views.length) return { status: 'not_applicable', reason: 'no energy views mounted', observations: { views: 0 } };
    const unlabelled: string[] = [];
    const statuses: Record<string, number> = {};
    for (const v of views) {
      const res = await s.inProcess.getJson(v.path);
      statuses[v.path] = res.status;
      if (res.status !== 200 || res.body === null) unlabelled.push(`${v.path}: answered ${res.status}`);
      else unlabelled.push(...unlabelledNumbers(res.body).map((p) => `${v.path} ${p}`));
    }
    const observations = { views: views.length, statuses, unlabelled: unlabelled.slice(0, 20), unlabelled_total: unlabelled.length };
    return unlabelled.length ? fail(`${unlabelled.length} numeric values without a basis`, observations) : { status: 'verified', reason: `every number in ${views.length} energy views carries a basis`, observations };
  },
};

export const CLAIMS: readonly Claim[] = [
  receiptsVerifyOffline,
  ledgerHashChainIntact,
  signaturesRealEcdsa,
  adsbNeverSynthetic,
  cotRoadmapUnwired,
  ledgerDurability,
  kernelsDeterministic,
  energyFiguresLabelled,
];
