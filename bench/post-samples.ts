/**
 * POST bodies at the limits, for the main-thread budget: for each write route a valid body of the
 * largest accepted shape, and the most expensive bodies a client can send inside every size limit
 * (thousands of unknown keys, deep nesting). `npm run bench:blocks` and the hostile-client tests
 * hold each to the same budget.
 */
import { MAX_JSON_MEMBERS } from '../src/http/body.js';

export interface PostSample {
  name: string;
  path: string;
  contentType: string;
  body: string;
  /** The status a correct service answers. */
  status: number;
}

/** Main-thread CPU one request inside every limit may cost. */
export const POST_BUDGET_MS = 10;

export const SAMPLE_FRAME = { track_id: 'p1', source: 'ADS-B', lat: 36.2, lon: -115.16, alt_m: 80, speed_mps: 10, rssi_dbm: -50, id_authenticated: true, n_observations: 500 };

const keys = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1]));
const json = (name: string, path: string, body: unknown, status: number): PostSample => ({ name, path, contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body), status });

export const POST_SAMPLES: readonly PostSample[] = [
  json('a valid verdict', '/api/svc/v1/verdict', SAMPLE_FRAME, 200),
  json('a verdict with 20,938 unknown keys (256 KB)', '/api/svc/v1/verdict', { ...SAMPLE_FRAME, ...keys(20_938) }, 422),
  json(`a verdict with ${MAX_JSON_MEMBERS - 96} unknown keys (under the member bound)`, '/api/svc/v1/verdict', { ...SAMPLE_FRAME, ...keys(MAX_JSON_MEMBERS - 96) }, 422),
  json('a verdict nested 64 deep', '/api/svc/v1/verdict', `{"x":${'['.repeat(63)}${']'.repeat(63)}}`, 422),
  json('64 valid edge frames', '/api/svc/v1/edge/3d', { frames: Array(64).fill(SAMPLE_FRAME) }, 200),
  json('64 edge frames of 62 unknown keys each', '/api/svc/v1/edge/3d', { frames: Array(64).fill({ ...SAMPLE_FRAME, ...keys(62) }) }, 422),
  json('a khipu verify body of 4,000 keys', '/khipu/verify', keys(4_000), 422),
];
