/**
 * `/cc-attest/info`: the RATS Reference Value Provider (RFC 9334) of a simulated confidential VM
 * with a GPU. Publishes the stage catalogue, the golden measurements, the expected PCR-extend
 * chain, the nonce binding and the appraisal policy that `/cc-attest/verify` applies; both routes
 * share workers/lib/attestation.ts. Design: kernels-a §1.12.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import { attestationKey, HASH_ALG, INITIAL_REGISTER, POLICY, referenceValues, reportData, verifierNonce } from '../lib/attestation.js';

export default defineKernel({
  id: 'cc-attest/info',
  version: 1,
  input: 'query',
  summary: 'Confidential-computing attestation reference values: stage catalogue, golden measurements, PCR-extend chain and appraisal policy',
  technique: 'RATS reference value provider: measured boot by PCR extend (SHA-384), nonce-bound report data',
  references: ['RFC 9334', 'RFC 9711', 'TCG PC Client Platform Firmware Profile', 'RFC 8785'],
  honesty:
    'The measurement, extend and binding computations are real; there is no TEE or hardware key: measurements are digests of seeded synthetic component descriptors and the signature chain is simulated with Ed25519.',
  params: {
    stages: int(1, 16, 5).description('measured-boot stages in the reference catalogue'),
  },
  worstCase: { stages: 16 },
  run({ seed, stages }, rng) {
    // draws: stage i's descriptor from the shared stream `cc-attest/stage/<i>` (lib/attestation.ts)
    const ref = referenceValues(rng, stages);
    const nonce = verifierNonce(seed);
    const pcrFinal = ref.trace[stages]!;
    const key = attestationKey(seed);
    return {
      constants: { hash_alg: HASH_ALG, register_bytes: 48, pcr_initial: INITIAL_REGISTER, image_bytes: 64, max_catalogue_stages: 64 },
      result: {
        roles: {
          attester: 'simulated confidential VM with GPU (no hardware); its evidence is what /api/svc/v1/cc-attest/verify builds and appraises',
          verifier: '/api/svc/v1/cc-attest/verify',
          relying_party: 'the client that reads the attestation result of verify',
          reference_value_provider: '/api/svc/v1/cc-attest/info (this route)',
        },
        stages: ref.descriptors.map((d, i) => ({
          index: d.index,
          name: d.stage,
          component: d.component,
          version: d.version,
          image: d.image,
          measurement: ref.values[i]!.digest,
          pcr_after: ref.trace[i + 1]!,
        })),
        measurement_rule: 'measurement = SHA-384(JCS({component, image, index, stage, version}))',
        extend_rule: 'R_0 = 48 zero bytes; R_i = SHA-384(R_(i-1) || m_i) over raw bytes',
        pcr_final: pcrFinal,
        nonce,
        nonce_rule: 'SHA-256("svc-cc-attest-nonce:<seed>")',
        report_data: reportData(pcrFinal, nonce),
        report_data_rule: 'SHA-384(pcr_final || nonce)',
        endorsement: { alg: 'Ed25519 (stands in for the vendor ECDSA P-384 chain)', public_key_hex: key.publicKeyHex, device_id: key.deviceId },
        policy: POLICY.map((p) => ({ ...p })),
        formats: { evidence: 'event-log+quote (simulated, Ed25519-signed canonical JSON)', results: 'EAT claims (RFC 9711 shape): status affirming | contraindicated' },
        hardware: { present: false, note: 'no TEE, TPM or GPU is queried; every digest is computed from seeded component descriptors' },
      },
      checks: { chain_length: ref.trace.length === stages + 1 },
    };
  },
});
