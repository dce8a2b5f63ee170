/**
 * The energy receipt's chain rule, shared by the /energy/receipt kernel and the energy feature's
 * snapshot chain (both link receipts the same way): RFC 8785 canonical JSON, SHA-256, genesis = 64
 * zeros.
 */
export const GENESIS = '0'.repeat(64);
export const HASH_FORMULA = 'hash = hex(SHA-256(UTF-8(JCS(receipt)))), JCS = RFC 8785 canonical JSON; receipt.prev_hash links to the previous receipt (genesis = 64 zeros)';
export const METHOD = 'E = power_w * latency_s * tokens (latency_s per generated token), PUE 1.0, CO2 = E[kWh] * grid; metered: per-token P(1 + 0.05 z), L exp(0.1 z\' - 0.005)';
