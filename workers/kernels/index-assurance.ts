/** Assurance: confidential-computing attestation and the hash-chained energy receipt. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import ccAttestInfo from './cc-attest-info.js';
import ccAttestVerify from './cc-attest-verify.js';
import energyReceipt from './energy-receipt.js';

export const KERNELS: readonly KernelDef[] = [ccAttestInfo, ccAttestVerify, energyReceipt];
