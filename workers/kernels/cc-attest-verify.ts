/**
 * `/cc-attest/verify`: the RATS Verifier (RFC 9334). The simulated Attester measures its stages
 * into a SHA-384 extend register, signs a nonce-bound quote (Ed25519 standing in for ECDSA P-384),
 * and the Verifier appraises the evidence against the reference values `/cc-attest/info`
 * publishes (shared module workers/lib/attestation.ts). Five attack scenarios are appraised in the
 * same call, each designed to fail exactly one policy check. Design: kernels-b §3.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import { appraise, attestationKey, buildEvidence, HASH_ALG, POLICY, referenceValues, verifierNonce, type EvidenceOptions } from '../lib/attestation.js';

export interface Scenario {
  name: string;
  expected_failure: string | null;
  options: EvidenceOptions;
}

/** The scenarios with the stage j (1-based) an attacker tampers with. */
export function scenarios(j: number): Scenario[] {
  return [
    { name: 'honest', expected_failure: null, options: {} },
    { name: 'tampered_component', expected_failure: 'measurements-match-reference', options: { tamperStage: j } },
    { name: 'log_forgery', expected_failure: 'event-log-replays-to-quote', options: { tamperStage: j, forgeLog: true } },
    { name: 'replayed_quote', expected_failure: 'nonce-fresh', options: { staleNonce: true } },
    { name: 'forged_signature', expected_failure: 'signature-chain', options: { wrongKey: true } },
    // report_data binds R_(n−1) (≠ R_n, since R_0 is all zeros and SHA-384 outputs are distinct)
    { name: 'unbound_report_data', expected_failure: 'report-data-binds-nonce', options: { unboundReportData: true } },
  ];
}

export default defineKernel({
  id: 'cc-attest/verify',
  version: 1,
  input: 'query',
  summary: 'Confidential-computing attestation: measured-boot chain, signed nonce-bound quote and appraisal against reference values, with attack scenarios',
  technique: 'RATS verifier: PCR-extend event-log replay (SHA-384), Ed25519-signed quote, nonce freshness, reference-value appraisal',
  references: ['RFC 9334', 'RFC 8032', 'DMTF DSP0274 (SPDM)', 'TCG TPM 2.0 Library Part 1', 'RFC 9711'],
  honesty:
    'The extend chain, signature and appraisal logic are real; there is no TEE: component images are seeded synthetic bytes and Ed25519 stands in for the hardware ECDSA P-384 key.',
  params: {
    stages: int(1, 64, 5).description('measured-boot stages of the chain'),
  },
  worstCase: { stages: 64 },
  run({ seed, stages }, rng) {
    const ref = referenceValues(rng, stages);
    const key = attestationKey(seed);
    const nonce = verifierNonce(seed);
    // draw: one uniform from stream `attack` picks the tampered stage j = 1 + floor(u·n)
    const j = 1 + rng.stream('attack').int(stages);
    const verifier = { expectedNonce: nonce, reference: ref.values, trustedKey: key.publicKey };
    const honest = buildEvidence(rng, stages);
    const results = scenarios(j).map((s) => {
      const ev = s.name === 'honest' ? honest : buildEvidence(rng, stages, s.options);
      const a = appraise(ev, verifier);
      const asExpected = a.failed_check === s.expected_failure && (s.name !== 'tampered_component' || a.failed_stage === j);
      return { name: s.name, expected_failure: s.expected_failure, status: a.status, failed_check: a.failed_check, failed_stage: a.failed_stage, checks: a.results, as_expected: asExpected };
    });
    return {
      constants: { hash_alg: HASH_ALG, register_bytes: 48, nonce_bytes: 32, signature: 'Ed25519 (RFC 8032)', policy_order: POLICY.map((p) => p.id) },
      result: {
        stages,
        stage_names: ref.values.map((v) => v.stage),
        device_id: key.deviceId,
        public_key_hex: key.publicKeyHex,
        nonce_hex: nonce,
        reference_values: ref.values,
        event_log: honest.event_log,
        register_trace: honest.trace,
        final_register: honest.trace[stages],
        quote: honest.quote,
        signature_b64: honest.signature_b64,
        tampered_stage: j,
        scenarios: results.map(({ as_expected: _a, ...r }) => r),
        all_scenarios_as_expected: results.every((r) => r.as_expected),
        reference_provider: '/api/svc/v1/cc-attest/info',
      },
      checks: {
        honest_affirming: results[0]!.status === 'affirming',
        honest_trace_equals_reference: honest.trace.every((r, i) => r === ref.trace[i]),
        scenarios_as_expected: results.map((r) => r.as_expected),
      },
    };
  },
});
