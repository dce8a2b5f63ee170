/**
 * Config of the CoT feature: export staleness, the ingest store and the XML limits sax does not
 * enforce itself (depth, counts and lengths). The body size cap is `http.xmlLimitBytes` (64 KiB,
 * 413 above). Composed into the one schema in src/config.
 */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';
import type { CotLimits } from '../lib/cot/xml.js';

export type { CotLimits };


export interface CotConfig {
  /** Exported sample events are valid for this long after their time (pytak's default 120 s). */
  staleS: number;
  /** Ingested events kept (one per uid); the least recently stored is evicted beyond it. */
  maxStoredTracks: number;
  /** Total bytes of stored (exported) events; the least recently stored are evicted beyond it. */
  maxStoredBytes: number;
  /** An ingested `time` or `start` may be at most this far ahead of the service's clock. */
  maxFutureSkewS: number;
  /** An ingested `stale` may be at most this far ahead of the service's clock. */
  maxStaleAheadS: number;
  limits: CotLimits;
}

// defaults that keep one event at every limit at once under 10 ms of main-thread CPU (test/cot/parse-cost.test.ts)
const ELEMENTS = 256;
const ATTRIBUTES = 512;
const DETAIL_CHILDREN = 128;
const NAME = 64;
const NAME_CHARS = 16_384;
const ATTR_CHARS = 16_384;
const REFERENCES = 1024;

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
    maxFutureSkewS: Joi.number().integer().min(0).max(86_400).default(60),
    maxStaleAheadS: Joi.number().integer().min(60).max(10 * 366 * 86_400).default(366 * 86_400),
    limits: Joi.object({
      maxDepth: Joi.number().integer().min(3).max(256).default(16),
      maxElements: Joi.number().integer().min(3).max(100_000).default(ELEMENTS),
      maxAttrsPerElement: Joi.number().integer().min(7).max(1024).default(64),
      maxAttributes: Joi.number().integer().min(12).max(100_000).default(ATTRIBUTES),
      maxDetailChildren: Joi.number().integer().min(1).max(100_000).default(DETAIL_CHILDREN),
      maxNameLen: Joi.number().integer().min(8).max(4096).default(NAME),
      maxAttrValueLen: Joi.number().integer().min(64).max(1024 * 1024).default(8192),
      maxNameChars: Joi.number().integer().min(256).max(1024 * 1024).default(NAME_CHARS),
      maxAttrChars: Joi.number().integer().min(256).max(1024 * 1024).default(ATTR_CHARS),
      maxReferences: Joi.number().integer().min(0).max(1024 * 1024).default(REFERENCES),
      maxTextChars: Joi.number().integer().min(64).max(1024 * 1024).default(16_384),
      maxUidLen: Joi.number().integer().min(1).max(4096).default(256),
    }).default(),
  }).default(),
  env: { SVC_COT_STALE_S: 'staleS', SVC_COT_MAX_TRACKS: 'maxStoredTracks', SVC_COT_MAX_STORED_BYTES: 'maxStoredBytes' },
};
