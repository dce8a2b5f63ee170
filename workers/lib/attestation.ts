/**
 * Simulated confidential-computing attestation (IETF RATS, RFC 9334), shared by
 * `/cc-attest/info` (the Reference Value Provider) and `/cc-attest/verify` (the Verifier), so the
 * Verifier appraises evidence against exactly the values `info` publishes (kernels-a 1.12,
 * kernels-b 3, reconciled here):
 *
 * - one stage catalogue (`rot, firmware, kernel, gpu, workload`, then `extension-<index>`);
 * - each stage's component descriptor is drawn from the shared stream `cc-attest/stage/<index>`
 *   (so adding stages never changes earlier ones, and both routes see the same components);
 *   measurement m_i = SHA-384(JCS(descriptor_i));
 * - one extend function, R_i = SHA-384(R_{i−1} ‖ m_i) over raw bytes, R_0 = 48 zero bytes
 *   (TPM 2.0 PCR-extend semantics on a SHA-384 bank, as TDX RTMRs and SPDM use);
 * - nonce = SHA-256("svc-cc-attest-nonce:<seed>"), report_data = SHA-384(R_n ‖ nonce);
 * - an Ed25519 attestation key (RFC 8032, deterministic) stands in for the vendor's ECDSA P-384
 *   key: seed of the key = SHA-256("svc/cc-attest/ak/<seed>");
 * - one appraisal policy, checked in order, stopping at the first failure.
 *
 * No TEE or hardware key is involved: every digest is computed from seeded descriptors.
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../../src/lib/numbers.js';
import type { RngStreams } from '../../src/lib/prng.js';

export const HASH_ALG = 'sha384';
export const REGISTER_BYTES = 48;
export const IMAGE_WORDS = 16;

export interface StageEntry {
  name: string;
  component: string;
}

/** The first five stages of a confidential VM with a GPU, in boot order. */
export const STAGE_CATALOGUE: readonly StageEntry[] = [
  { name: 'rot', component: 'CPU security processor / TDX module firmware (root of trust)' },
  { name: 'firmware', component: 'guest UEFI (OVMF) in the launch measurement' },
  { name: 'kernel', component: 'guest kernel, initrd and command line' },
  { name: 'gpu', component: 'GPU firmware and VBIOS, SPDM measurement report with CC mode on' },
  { name: 'workload', component: 'container image and model-weights digest with the runtime policy' },
];

/** Catalogue entry of stage `index` (1-based); beyond the catalogue, `extension-<index>`. */
export function stageEntry(index: number): StageEntry {
  if (!Number.isInteger(index) || index < 1) throw new RangeError(`stage index ${index} must be >= 1`);
  return STAGE_CATALOGUE[index - 1] ?? { name: `extension-${index}`, component: `further configuration component ${index}` };
}

export interface StageDescriptor {
  index: number;
  stage: string;
  component: string;
  version: string;
  /** 64 bytes of the (synthetic) component image, hex. */
  image: string;
}

/**
 * The seeded descriptor of stage `index`. Draw order on the shared stream `cc-attest/stage/<index>`:
 * version major int(10), minor int(50), patch int(100); then 16 uint32 image words (little-endian).
 */
export function stageDescriptor(rng: RngStreams, index: number): StageDescriptor {
  const { name, component } = stageEntry(index);
  const s = rng.shared(`cc-attest/stage/${index}`);
  const version = `v${s.int(10)}.${s.int(50)}.${s.int(100)}`;
  const image = Buffer.alloc(IMAGE_WORDS * 4);
  for (let w = 0; w < IMAGE_WORDS; w++) image.writeUInt32LE(Math.floor(s.next() * 4294967296), 4 * w);
  return { index, stage: name, component, version, image: image.toString('hex') };
}

/** The same descriptor with the last byte of its image flipped (a tampered component). */
export function tamperDescriptor(d: StageDescriptor): StageDescriptor {
  const image = Buffer.from(d.image, 'hex');
  image[image.length - 1] = image[image.length - 1]! ^ 0xff;
  return { ...d, image: image.toString('hex') };
}

export function hash(alg: 'sha256' | 'sha384', ...parts: (Uint8Array | string)[]): Buffer {
  const h = createHash(alg);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** m_i = SHA-384(JCS(descriptor)), hex. */
export function measure(d: StageDescriptor): string {
  return hash(HASH_ALG, canonicalJson(d)).toString('hex');
}

/** PCR extend: R_new = SHA-384(R_old ‖ m) over raw bytes. */
export function extend(register: Uint8Array, measurement: Uint8Array): Buffer {
  return hash(HASH_ALG, register, measurement);
}

export const INITIAL_REGISTER = Buffer.alloc(REGISTER_BYTES).toString('hex');

/** Replays an event log: hex R_0 … R_n. */
export function replay(measurementsHex: readonly string[]): string[] {
  const trace = [INITIAL_REGISTER];
  let reg: Buffer = Buffer.from(INITIAL_REGISTER, 'hex');
  for (const m of measurementsHex) {
    reg = extend(reg, Buffer.from(m, 'hex'));
    trace.push(reg.toString('hex'));
  }
  return trace;
}

/** The verifier's challenge for a seed (32 bytes, hex); `stale` is the nonce of an earlier session. */
export function verifierNonce(seed: number, stale = false): string {
  return hash('sha256', `svc-cc-attest-nonce:${seed}${stale ? ':previous-session' : ''}`).toString('hex');
}

/** report_data = SHA-384(register ‖ nonce), binding the nonce into the quote as SEV-SNP/TDX reports do. */
export function reportData(registerHex: string, nonceHex: string): string {
  return hash(HASH_ALG, Buffer.from(registerHex, 'hex'), Buffer.from(nonceHex, 'hex')).toString('hex');
}

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface AttestationKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Raw 32-byte public key, hex. */
  publicKeyHex: string;
  /** SHA-384 of the raw public key, hex. */
  deviceId: string;
}

/** Ed25519 key derived from the seed (reduced to uint32): key seed = SHA-256("svc/cc-attest/ak/<seed>"). */
export function attestationKey(seed: number): AttestationKey {
  const keySeed = hash('sha256', `svc/cc-attest/ak/${seed >>> 0}`);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, keySeed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKey, publicKeyHex: raw.toString('hex'), deviceId: hash(HASH_ALG, raw).toString('hex') };
}

/** Public key object from its raw 32-byte hex form. */
export function publicKeyFromHex(hex: string): KeyObject {
  return createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}

export interface ReferenceValue {
  index: number;
  stage: string;
  digest: string;
}

export interface Reference {
  descriptors: StageDescriptor[];
  values: ReferenceValue[];
  /** R_0 … R_n of the golden chain. */
  trace: string[];
}

/** Golden measurements of the first `stages` stages and their expected register chain. */
export function referenceValues(rng: RngStreams, stages: number): Reference {
  const descriptors = Array.from({ length: stages }, (_, i) => stageDescriptor(rng, i + 1));
  const values = descriptors.map((d) => ({ index: d.index, stage: d.stage, digest: measure(d) }));
  return { descriptors, values, trace: replay(values.map((v) => v.digest)) };
}

export interface Quote {
  alg: string;
  device_id: string;
  nonce: string;
  register: string;
  report_data: string;
  stages: number;
}

export interface Evidence {
  /** Canonical JSON of the quote, exactly the signed bytes. */
  quote: string;
  signature_b64: string;
  event_log: ReferenceValue[];
}

export interface EvidenceOptions {
  /** 1-based stage whose image is tampered (its bad digest is extended). */
  tamperStage?: number;
  /** With tamperStage: the log claims the golden digest while the register holds the bad one. */
  forgeLog?: boolean;
  /** Quote over the nonce of an earlier session. */
  staleNonce?: boolean;
  /** Sign with the key derived for seed + 1. */
  wrongKey?: boolean;
  /** report_data computed over R_{n−1} (a register that is not the quoted one). */
  unboundReportData?: boolean;
}

/** The Attester: measures its stages, extends the register, and signs a quote over it and the nonce. */
export function buildEvidence(rng: RngStreams, stages: number, opts: EvidenceOptions = {}): Evidence & { trace: string[] } {
  const seed = rng.seed >>> 0;
  const actual: string[] = [];
  const logged: ReferenceValue[] = [];
  for (let i = 1; i <= stages; i++) {
    const golden = stageDescriptor(rng, i);
    const d = opts.tamperStage === i ? tamperDescriptor(golden) : golden;
    const m = measure(d);
    actual.push(m);
    logged.push({ index: i, stage: d.stage, digest: opts.forgeLog && opts.tamperStage === i ? measure(golden) : m });
  }
  const trace = replay(actual);
  const register = trace[stages]!;
  const key = attestationKey(seed);
  const nonce = verifierNonce(seed, opts.staleNonce);
  const quote: Quote = {
    alg: HASH_ALG,
    device_id: key.deviceId,
    nonce,
    register,
    report_data: reportData(opts.unboundReportData ? trace[stages - 1]! : register, nonce),
    stages,
  };
  const bytes = canonicalJson(quote);
  const signer = opts.wrongKey ? attestationKey((seed + 1) >>> 0) : key;
  const signature = sign(null, Buffer.from(bytes), signer.privateKey);
  return { quote: bytes, signature_b64: signature.toString('base64'), event_log: logged, trace };
}

export interface PolicyCheck {
  id: string;
  description: string;
  simulated: boolean;
}

/** The appraisal policy, in the order the Verifier applies it. */
export const POLICY: readonly PolicyCheck[] = [
  { id: 'signature-chain', description: 'the quote verifies under the endorsed attestation key (Ed25519 stands in for the vendor certificate chain)', simulated: true },
  { id: 'nonce-fresh', description: "the quote's nonce equals the verifier's challenge for this session", simulated: false },
  { id: 'report-data-binds-nonce', description: 'report_data = SHA-384(quoted register ‖ nonce)', simulated: false },
  { id: 'event-log-replays-to-quote', description: 'folding the extend over the event log reproduces the quoted register', simulated: false },
  { id: 'measurements-match-reference', description: 'every logged digest equals the reference value of its stage', simulated: false },
];

export interface Appraisal {
  status: 'affirming' | 'contraindicated';
  failed_check: string | null;
  /** 1-based stage of the first reference mismatch, else null. */
  failed_stage: number | null;
  /** Every policy check in order: true, false, or null when not reached. */
  results: { id: string; passed: boolean | null }[];
}

export interface Appraiser {
  expectedNonce: string;
  reference: readonly ReferenceValue[];
  trustedKey: KeyObject;
}

/** The Verifier: a pure function of evidence, expected nonce, reference values and trusted key. */
export function appraise(ev: Evidence, { expectedNonce, reference, trustedKey }: Appraiser): Appraisal {
  let quote: Quote | null = null;
  try {
    quote = JSON.parse(ev.quote) as Quote;
  } catch {
    quote = null;
  }
  let failedStage: number | null = null;
  const tests: Record<string, () => boolean> = {
    'signature-chain': () => quote !== null && verify(null, Buffer.from(ev.quote), trustedKey, Buffer.from(ev.signature_b64, 'base64')),
    'nonce-fresh': () => quote!.nonce === expectedNonce,
    'report-data-binds-nonce': () => quote!.report_data === reportData(quote!.register, expectedNonce),
    'event-log-replays-to-quote': () => ev.event_log.length === quote!.stages && replay(ev.event_log.map((e) => e.digest))[ev.event_log.length] === quote!.register,
    'measurements-match-reference': () => {
      for (const e of ev.event_log) {
        const ref = reference.find((r) => r.index === e.index);
        if (!ref || ref.stage !== e.stage || ref.digest !== e.digest) {
          failedStage = e.index;
          return false;
        }
      }
      return true;
    },
  };
  const results: Appraisal['results'] = [];
  let failed: string | null = null;
  for (const { id } of POLICY) {
    if (failed) {
      results.push({ id, passed: null });
      continue;
    }
    const ok = tests[id]!();
    results.push({ id, passed: ok });
    if (!ok) failed = id;
  }
  return { status: failed ? 'contraindicated' : 'affirming', failed_check: failed, failed_stage: failedStage, results };
}
