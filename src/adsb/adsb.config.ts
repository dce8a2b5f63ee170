/**
 * Config of the ADS-B feed. Providers are tried in order, one at a time, so a snapshot never mixes
 * two providers; tests point `providers` at a fake upstream on 127.0.0.1. Composed into the one
 * schema in src/config.
 */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';

export interface AdsbProvider {
  name: string;
  url: string;
  /** Shown in every response; the licences require it (ODbL for adsb.lol, citation for adsb.fi). */
  attribution: string;
}

export interface AdsbConfig {
  /** false: no network calls at all; `/adsb` answers `[]` with `live=false, reason=disabled`. */
  enabled: boolean;
  providers: AdsbProvider[];
  /** A snapshot younger than this is served without an upstream call, with `live=true`. */
  freshMs: number;
  /** The last good snapshot is served (`live=false`) for this long after refreshes start failing. */
  staleMaxMs: number;
  /** How long a request waits for the shared refresh before answering from what it has. */
  waitBudgetMs: number;
  /** Per provider attempt: connect, headers and body. */
  timeoutMs: number;
  /** Least gap between two calls to the same provider (adsb.fi documents 1 req/s; 2 s tripped limits). */
  minIntervalMs: number;
  /** Body cap after decompression; a real `/v2/mil` answer is about 170 KB. */
  maxBodyBytes: number;
  breakerFailures: number;
  breakerBaseMs: number;
  breakerMaxMs: number;
  /** 429/420 without a usable Retry-After. */
  rateLimitDefaultMs: number;
  retryAfterMaxMs: number;
  /** 403 and other 4xx: gating or a configuration error, not transient. */
  blockedMs: number;
  /** Aircraft whose position is older than this upstream are dropped. */
  maxPositionAgeS: number;
  /** null: `drone-intel-svc/<version>`. */
  userAgent: string | null;
  /**
   * Who shares a refresh: `auto` = every replica on the ledger's database in postgres mode, this
   * process alone otherwise; `postgres` insists (needs the ledger's database URL); `local` never shares.
   */
  sharedRefresh: 'auto' | 'postgres' | 'local';
}

/** Attribution for the providers we know; any other name is credited by name. */
const ATTRIBUTION: Record<string, string> = {
  adsblol: 'Aircraft data: adsb.lol (ODbL 1.0)',
  adsbfi: 'adsb.fi open data (https://adsb.fi)',
  airplaneslive: 'Aircraft data: airplanes.live (https://airplanes.live)',
};

export const DEFAULT_PROVIDERS: AdsbProvider[] = [
  { name: 'adsblol', url: 'https://api.adsb.lol/v2/mil', attribution: ATTRIBUTION.adsblol! },
  { name: 'adsbfi', url: 'https://opendata.adsb.fi/api/v2/mil', attribution: ATTRIBUTION.adsbfi! },
  { name: 'airplaneslive', url: 'https://api.airplanes.live/v2/mil', attribution: ATTRIBUTION.airplaneslive! },
];

const NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

const provider = Joi.object({
  // metric label value: short and from a fixed alphabet keeps cardinality bounded
  name: Joi.string().pattern(NAME).required(),
  url: Joi.string().uri({ scheme: ['http', 'https'] }).required(),
  attribution: Joi.string().max(200),
}).custom((p: { name: string; attribution?: string }) => ({ ...p, attribution: p.attribution ?? ATTRIBUTION[p.name] ?? `Aircraft data: ${p.name}` }));

const providerList = Joi.array().items(provider).min(1).max(8).unique('name');

/** `SVC_ADSB_PROVIDERS=adsblol=https://…,adsbfi=https://…` (order kept). */
function parseProviderEnv(value: string, helpers: Joi.CustomHelpers): unknown {
  const list = value.split(',').map((item) => {
    const at = item.indexOf('=');
    return at > 0 ? { name: item.slice(0, at).trim(), url: item.slice(at + 1).trim() } : { name: item.trim(), url: '' };
  });
  const { value: parsed, error } = providerList.validate(list);
  if (error) return helpers.message({ custom: `must be name=url,… (${error.message})` });
  return parsed;
}

export const adsbConfig: FeatureConfig = {
  key: 'adsb',
  schema: Joi.object({
    enabled: Joi.boolean().default(true),
    providers: Joi.alternatives().try(providerList, Joi.string().custom(parseProviderEnv)).default(DEFAULT_PROVIDERS),
    freshMs: Joi.number().integer().min(100).max(600_000).default(10_000),
    staleMaxMs: Joi.number().integer().min(0).max(86_400_000).default(600_000),
    waitBudgetMs: Joi.number().integer().min(10).max(60_000).default(6_000),
    timeoutMs: Joi.number().integer().min(10).max(60_000).default(5_000),
    minIntervalMs: Joi.number().integer().min(0).max(600_000).default(5_000),
    maxBodyBytes: Joi.number().integer().min(1024).max(64 * 1024 * 1024).default(4 * 1024 * 1024),
    breakerFailures: Joi.number().integer().min(1).max(100).default(3),
    breakerBaseMs: Joi.number().integer().min(10).max(3_600_000).default(30_000),
    breakerMaxMs: Joi.number().integer().min(Joi.ref('breakerBaseMs')).max(86_400_000).default(600_000),
    rateLimitDefaultMs: Joi.number().integer().min(10).max(3_600_000).default(60_000),
    retryAfterMaxMs: Joi.number().integer().min(10).max(86_400_000).default(900_000),
    blockedMs: Joi.number().integer().min(10).max(86_400_000).default(900_000),
    maxPositionAgeS: Joi.number().min(0).max(3600).default(60),
    userAgent: Joi.string().max(200).allow(null).default(null),
    sharedRefresh: Joi.string().valid('auto', 'postgres', 'local').default('auto'),
  }).default(),
  env: {
    SVC_ADSB_ENABLED: 'enabled',
    SVC_ADSB_PROVIDERS: 'providers',
    SVC_ADSB_FRESH_MS: 'freshMs',
    SVC_ADSB_STALE_MAX_MS: 'staleMaxMs',
    SVC_ADSB_WAIT_BUDGET_MS: 'waitBudgetMs',
    SVC_ADSB_TIMEOUT_MS: 'timeoutMs',
    SVC_ADSB_MIN_INTERVAL_MS: 'minIntervalMs',
    SVC_ADSB_USER_AGENT: 'userAgent',
    SVC_ADSB_SHARED_REFRESH: 'sharedRefresh',
  },
};
