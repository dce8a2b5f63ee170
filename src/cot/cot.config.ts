/**
 * Config of the CoT feature: export staleness, the ingest store and the XML limits sax does not
 * enforce itself (adsb-cot note 5). The body size cap is `http.xmlLimitBytes` (64 KiB, 413 above).
 * Composed into the one schema in src/config.
 */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';

export interface CotLimits {
  /** Element nesting, root = 1 (real events are 3–4 deep). */
  maxDepth: number;
  maxElements: number;
  maxAttrsPerElement: number;
  maxNameLen: number;
  maxAttrValueLen: number;
  /** Total character data of one document (remarks are the only long text in real events). */
  maxTextChars: number;
  maxUidLen: number;
}

export interface CotConfig {
  /** Exported sample events are valid for this long after their time (pytak's default 120 s). */
  staleS: number;
  /** Ingested events kept (one per uid); the least recently stored is evicted beyond it. */
  maxStoredTracks: number;
  /** Total bytes of stored (exported) events; the least recently stored are evicted beyond it. */
  maxStoredBytes: number;
  limits: CotLimits;
}

export const cotConfig: FeatureConfig = {
  key: 'cot',
  schema: Joi.object({
    staleS: Joi.number().integer().min(1).max(7 * 86_400).default(120),
    maxStoredTracks: Joi.number().integer().min(1).max(100_000).default(1000),
    maxStoredBytes: Joi.number()
      .integer()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .default(4 * 1024 * 1024),
    limits: Joi.object({
      maxDepth: Joi.number().integer().min(3).max(256).default(16),
      maxElements: Joi.number().integer().min(3).max(100_000).default(512),
      maxAttrsPerElement: Joi.number().integer().min(7).max(1024).default(64),
      maxNameLen: Joi.number().integer().min(8).max(4096).default(128),
      maxAttrValueLen: Joi.number().integer().min(64).max(1024 * 1024).default(8192),
      maxTextChars: Joi.number().integer().min(64).max(1024 * 1024).default(16_384),
      maxUidLen: Joi.number().integer().min(1).max(4096).default(256),
    }).default(),
  }).default(),
  env: { SVC_COT_STALE_S: 'staleS', SVC_COT_MAX_TRACKS: 'maxStoredTracks', SVC_COT_MAX_STORED_BYTES: 'maxStoredBytes' },
};
