/**
 * Per-inference energy and carbon receipt (kernels-b §10): E = P·L·N with L the seconds per
 * generated token, CO₂ = E[kWh]·grid intensity (ML CO₂ Impact, arXiv:1910.09700; Green
 * Algorithms, doi:10.1002/advs.202100707; per-token inference energy, arXiv:2311.16863), plus a
 * seeded per-token metering trace committed to by its SHA-256. The receipt is canonicalised with
 * RFC 8785 (JCS), hashed with SHA-256 and linked to its predecessor by `prev_hash` into an
 * append-only chain (Haber & Stornetta 1991):
 *
 *     hash = hex(SHA-256(UTF-8(JCS(receipt))))     with receipt.prev_hash = previous hash
 *
 * (genesis: 64 zeros). Receipt numbers are rounded to the project's 12 significant digits before
 * hashing, so the `receipt` in the body is exactly the object that was hashed.
 */
import { createHash } from 'node:crypto';
import { endianness } from 'node:os';
import { defineKernel } from '../kernel-def.js';
import { canonicalJson, roundNumber, sha256Hex } from '../../src/lib/numbers.js';
import { int, Joi, num, typed } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { GENESIS, HASH_FORMULA, METHOD } from '../../src/lib/energy-receipt.js';

export { GENESIS, HASH_FORMULA, METHOD };

export const RECEIPT_SCHEMA = 'svc.energy-receipt/v1';
export const HASH_RE = /^[0-9a-f]{64}$/;
/** What `prev_hash` accepts: hex in either case, lowercased before use as the note asks (kernels-b §10). */
export const PREV_HASH_RE = /^[0-9a-fA-F]{64}$/;
export const PUE = 1.0;
const LITTLE_ENDIAN = endianness() === 'LE';
export const POWER_JITTER = 0.05;
export const LATENCY_JITTER = 0.1;

export interface Nominal {
  energy_j: number;
  energy_wh: number;
  energy_kwh: number;
  co2_g: number;
  j_per_token: number;
  tokens_per_s: number;
  co2_mg_per_token: number;
}

/** Nominal accounting, in the note's multiplication order. */
export function nominal(tokens: number, powerW: number, latencyS: number, grid: number): Nominal {
  const jPerToken = powerW * latencyS;
  const energyJ = jPerToken * tokens;
  const energyKwh = energyJ / 3.6e6;
  const co2 = energyKwh * grid;
  return {
    energy_j: energyJ,
    energy_wh: energyJ / 3600,
    energy_kwh: energyKwh,
    co2_g: co2,
    j_per_token: jPerToken,
    tokens_per_s: 1 / latencyS,
    co2_mg_per_token: (co2 * 1000) / tokens,
  };
}

/**
 * Metered trace. Draw order on `meter`: per token z (power), then z′ (latency), each one normal.
 * The digest is SHA-256 over the little-endian float64 bytes of [p_0, l_0, p_1, l_1, …].
 */
export function meter(rng: Rng, tokens: number, powerW: number, latencyS: number): { energy_j: number; duration_s: number; trace_digest: string } {
  const trace = new Float64Array(2 * tokens);
  let energy = 0;
  let duration = 0;
  for (let k = 0; k < tokens; k++) {
    const p = powerW * (1 + POWER_JITTER * rng.normal());
    const l = latencyS * Math.exp(LATENCY_JITTER * rng.normal() - LATENCY_JITTER ** 2 / 2);
    trace[2 * k] = p;
    trace[2 * k + 1] = l;
    energy += p * l;
    duration += l;
  }
  const bytes = Buffer.from(trace.buffer, trace.byteOffset, trace.byteLength);
  if (!LITTLE_ENDIAN) bytes.swap64(); // typed arrays use host order; the digest is over little-endian bytes
  return { energy_j: energy, duration_s: duration, trace_digest: createHash('sha256').update(bytes).digest('hex') };
}

export default defineKernel({
  id: 'energy/receipt',
  version: 1,
  input: 'query',
  summary: 'Per-inference energy and carbon receipt with a committed metering trace, JCS-canonicalised and SHA-256 hash-chained',
  technique: 'energy = power × time accounting, grid carbon intensity, RFC 8785 canonical JSON, SHA-256 hash chain',
  references: ['arXiv:1910.09700', 'arXiv:2311.16863', 'doi:10.1002/advs.202100707', 'RFC 8785', 'doi:10.1007/BF00196791'],
  honesty: 'The accounting, canonicalisation and hash chain are real; power and latency are the caller’s inputs and the per-token metering trace is a seeded simulation, not a hardware reading.',
  params: {
    tokens: int(1, 262144, 512).description('tokens of the inference'),
    power_w: num(0, 10000, 350).description('average power drawn during the inference, W (the caller’s input)'),
    latency_s: num(1e-6, 60, 0.02).description('duration of the inference, s'),
    grid_gco2_per_kwh: num(0, 2000, 480).description('carbon intensity of the grid, gCO2e/kWh'),
    prev_hash: typed<string | undefined>(Joi.string().pattern(PREV_HASH_RE).lowercase().messages({ 'string.pattern.base': 'must be 64 hex characters' })).description('hash of the previous receipt to chain onto (64 hex characters in either case, lowercased; absent: genesis)'),
  },
  worstCase: { tokens: 262144, power_w: 10000, latency_s: 60, grid_gco2_per_kwh: 2000, prev_hash: 'f'.repeat(64) },
  run({ tokens, power_w: P, latency_s: L, grid_gco2_per_kwh: G, prev_hash }, rng) {
    // draws: stream `meter` (2 normals per token)
    const nom = nominal(tokens, P, L, G);
    const met = meter(rng.stream('meter'), tokens, P, L);
    const prev = prev_hash ?? GENESIS;
    const r = (x: number): number => roundNumber(x);
    const receipt = {
      schema: RECEIPT_SCHEMA,
      seq: rng.seed >>> 0,
      tokens,
      power_w: r(P),
      latency_s: r(L),
      grid_gco2_per_kwh: r(G),
      pue: PUE,
      energy_j: r(nom.energy_j),
      energy_kwh: r(nom.energy_kwh),
      co2_g: r(nom.co2_g),
      metered_energy_j: r(met.energy_j),
      metered_duration_s: r(met.duration_s),
      trace_digest: met.trace_digest,
      method: METHOD,
      prev_hash: prev,
    };
    const canonical = canonicalJson(receipt);
    const hash = sha256Hex(canonical);
    const ratio = nom.energy_j > 0 ? met.energy_j / nom.energy_j : null;
    return {
      constants: { pue: PUE, power_jitter_sd: POWER_JITTER, latency_log_sd: LATENCY_JITTER, latency_unit: 'seconds per generated token' },
      result: {
        receipt,
        canonical,
        hash,
        prev_hash: prev,
        genesis: prev === GENESIS,
        hash_formula: HASH_FORMULA,
        nominal: nom,
        metered: {
          energy_j: met.energy_j,
          duration_s: met.duration_s,
          ratio_to_nominal: ratio,
          ...(ratio === null ? { ratio_reason: 'nominal energy is 0 (power_w = 0)' } : {}),
          trace_digest: met.trace_digest,
          trace_encoding: 'SHA-256 over little-endian float64 [p_0, l_0, p_1, l_1, ...]',
        },
      },
      checks: {
        canonical_reparses_to_receipt: canonicalJson(JSON.parse(canonical)) === canonical,
        metered_positive_when_powered: P === 0 || met.energy_j > 0,
      },
    };
  },
});
