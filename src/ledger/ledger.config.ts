/** Config of the ledger, signing and verdict evaluation. */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';

export interface NoFlyZone {
  id: string;
  name: string;
  /** Closed or open ring of [lat, lon] vertices (WGS-84 degrees). */
  polygon: [number, number][];
}

export interface LedgerConfig {
  /** Appends beyond this are refused with 503; nothing is ever evicted. */
  maxNodes: number;
  /** PKCS#8 PEM of a P-256 key; null generates an ephemeral key at start. */
  signingKeyFile: string | null;
  /** Receipts signed in one worker round trip at most. */
  signBatchMax: number;
  noFlyZones: NoFlyZone[];
}

const latLon = Joi.array().ordered(Joi.number().min(-90).max(90).required(), Joi.number().min(-180).max(180).required()).length(2);

export const ledgerConfig: FeatureConfig = {
  key: 'ledger',
  schema: Joi.object({
    maxNodes: Joi.number().integer().min(1).max(10_000_000).default(100_000),
    signingKeyFile: Joi.string().allow(null).default(null),
    signBatchMax: Joi.number().integer().min(1).max(4096).default(64),
    noFlyZones: Joi.array()
      .items(Joi.object({ id: Joi.string().pattern(/^[a-z0-9-]{1,64}$/).required(), name: Joi.string().max(128).required(), polygon: Joi.array().items(latLon).min(3).max(1000).required() }))
      .max(100)
      .default([]),
  }).default(),
  env: { SVC_LEDGER_MAX_NODES: 'maxNodes', SVC_SIGNING_KEY_FILE: 'signingKeyFile' },
};
