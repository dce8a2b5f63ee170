/**
 * Episodic memory retrieval with the memory-stream score of Generative Agents (Park et al., UIST
 * 2023, arXiv:2304.03442): score = recency + importance + relevance, each min–max normalised over
 * the store, recency = 0.995^(hours since last access), relevance = cosine similarity of query and
 * memory embeddings (episodic memory for agents: arXiv:2502.06975). Embeddings come from a
 * self-contained signed feature-hashing vectoriser (Weinberger et al., ICML 2009,
 * arXiv:0902.2206), so no model weights are needed. Design: kernels-b §8.
 */
import { defineKernel } from '../kernel-def.js';
import { canonicalJson, roundDeep, sha256Hex } from '../../src/lib/numbers.js';
import { int, str } from '../../src/lib/params.js';
import { fnv1a32, type Rng } from '../../src/lib/prng.js';

export const DEFAULT_QUERY = 'What did I ask you about earlier?';
/** Code points of the query that are used (the note truncates longer queries). */
export const QUERY_MAX = 512;
/** Longest query accepted at all, in UTF-16 units: beyond it the request is refused to bound the work. */
export const QUERY_INPUT_MAX = 4096;
export const EMBED_DIM = 256;
export const DECAY = 0.995;
export const MEAN_GAP_H = 6;
export const MAX_LISTED = 256;
export const STOPWORDS: ReadonlySet<string> = new Set('a an the i you me my did do does what about to of for on in and is was it earlier'.split(' '));

export const SLOTS = {
  topic: ['battery', 'weather', 'routing', 'firmware', 'telemetry', 'airspace', 'payload', 'permits'],
  object: ['report', 'drone', 'mission', 'schedule', 'camera', 'sensor', 'map', 'checklist'],
  verb: ['review', 'update', 'archive', 'inspect', 'calibrate', 'summarise', 'export', 'schedule'],
  event: ['a landing', 'signal loss', 'an intrusion', 'a hard landing', 'high wind', 'a geofence breach', 'a low battery', 'a lost link'],
  place: ['the depot', 'the river', 'the stadium', 'the north gate', 'the harbour', 'the airfield', 'the bridge', 'the school'],
} as const;

export const TEMPLATES: readonly { text: string; slots: readonly (keyof typeof SLOTS)[] }[] = [
  { text: 'asked about {0} for {1}', slots: ['topic', 'object'] },
  { text: 'asked you to {0} the {1}', slots: ['verb', 'object'] },
  { text: 'reported {0} near {1}', slots: ['event', 'place'] },
];

/** Lowercase alphanumeric runs; one suffix rule (≥ 5 chars: ing | ed | s, first match); stop-words removed. */
export function tokenize(text: string): string[] {
  const runs = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  const out: string[] = [];
  for (let t of runs) {
    if (t.length >= 5) {
      for (const suf of ['ing', 'ed', 's']) {
        if (t.endsWith(suf)) {
          t = t.slice(0, -suf.length);
          break;
        }
      }
    }
    if (!STOPWORDS.has(t)) out.push(t);
  }
  return out;
}

/** Unigrams then bigrams ("a b") of the content tokens. */
export function features(tokens: readonly string[]): string[] {
  const out = [...tokens];
  for (let i = 0; i + 1 < tokens.length; i++) out.push(`${tokens[i]} ${tokens[i + 1]}`);
  return out;
}

/** Signed hashing: bucket FNV-1a(f) mod D, sign − when bit 31 of FNV-1a(f + "#") is set; TF weights; L2 normalised. */
export function embed(text: string): Float64Array {
  const v = new Float64Array(EMBED_DIM);
  for (const f of features(tokenize(text))) {
    const bucket = fnv1a32(f) % EMBED_DIM;
    const sign = fnv1a32(`${f}#`) & 0x80000000 ? -1 : 1;
    v[bucket] = v[bucket]! + sign;
  }
  let n = 0;
  for (const x of v) n += x * x;
  if (n > 0) {
    n = Math.sqrt(n);
    for (let i = 0; i < EMBED_DIM; i++) v[i] = v[i]! / n;
  }
  return v;
}

export interface Episode {
  id: number;
  text: string;
  hours_ago: number;
  importance: number;
}

/**
 * Draw order on `episodes`, per episode: template (int 3), slot word 1 (int 8), slot word 2 (int 8),
 * age gap (exponential, mean 6 h, by inversion), importance (1 + int 10).
 */
export function drawEpisodes(rng: Rng, n: number): Episode[] {
  const out: Episode[] = [];
  let hours = 0;
  for (let id = 0; id < n; id++) {
    const tpl = TEMPLATES[rng.int(TEMPLATES.length)]!;
    const w0 = SLOTS[tpl.slots[0]!][rng.int(8)]!;
    const w1 = SLOTS[tpl.slots[1]!][rng.int(8)]!;
    hours += -MEAN_GAP_H * Math.log(1 - rng.next());
    const importance = 1 + rng.int(10);
    out.push({ id, text: tpl.text.replace('{0}', w0).replace('{1}', w1), hours_ago: hours, importance });
  }
  return out;
}

/** Min–max normalisation; a zero range gives all zeros. */
export function minMax(xs: readonly number[]): number[] {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 0));
}

export interface Scored extends Episode {
  recency: number;
  relevance: number;
  norm: { recency: number; importance: number; relevance: number };
  score: number;
}

export function recall(episodes: readonly Episode[], query: string): { scored: Scored[]; ranking: number[] } {
  const q = embed(query);
  const qZero = q.every((x) => x === 0);
  const rec = episodes.map((e) => DECAY ** e.hours_ago);
  const imp = episodes.map((e) => e.importance / 10);
  const rel = episodes.map((e) => {
    if (qZero) return 0;
    const v = embed(e.text);
    let s = 0;
    for (let i = 0; i < EMBED_DIM; i++) s += q[i]! * v[i]!;
    return Math.max(-1, Math.min(1, s));
  });
  const nRec = minMax(rec);
  const nImp = minMax(imp);
  const nRel = minMax(rel);
  const scored = episodes.map((e, i) => ({
    ...e,
    recency: rec[i]!,
    relevance: rel[i]!,
    norm: { recency: nRec[i]!, importance: nImp[i]!, relevance: nRel[i]! },
    score: nRec[i]! + nImp[i]! + nRel[i]!,
  }));
  const ranking = scored
    .map((e) => e)
    .sort((a, b) => b.score - a.score || a.hours_ago - b.hours_ago || a.id - b.id)
    .map((e) => e.id);
  return { scored, ranking };
}

export default defineKernel({
  id: 'episodic/recall',
  version: 2,
  input: 'query',
  summary: 'Agent episodic memory: Generative-Agents retrieval (recency + importance + relevance) over a seeded memory stream',
  technique: 'memory-stream retrieval with min–max normalised recency, importance and cosine relevance; signed feature-hashing embeddings',
  references: ['arXiv:2304.03442', 'arXiv:2502.06975', 'arXiv:0902.2206'],
  honesty: 'The retrieval score, ranking and hashing vectoriser are real; the stored episodes (texts, ages, importances) are seeded synthetic memories.',
  params: {
    query: str(QUERY_INPUT_MAX, DEFAULT_QUERY).description('the question retrieved against the memory stream (the first 512 code points are used; longer ones are truncated and reported)'),
    k: int(1, 500, 3).description('memories retrieved (at most n_episodes)'),
    n_episodes: int(1, 500, 12).description('memories in the stream'),
  },
  rules: ['k must not exceed n_episodes'],
  constraints: (p) => (p.k > p.n_episodes ? [{ param: 'k', msg: 'k must not exceed n_episodes' }] : []),
  worstCase: { query: Array.from({ length: 800 }, (_, i) => `w${i}`).join(' '), k: 500, n_episodes: 500 },
  run({ query: asked, k, n_episodes: n }, rng) {
    // draws: stream `episodes` only (see drawEpisodes)
    const points = [...asked];
    const query = points.length > QUERY_MAX ? points.slice(0, QUERY_MAX).join('') : asked;
    const episodes = drawEpisodes(rng.stream('episodes'), n);
    const { scored, ranking } = recall(episodes, query);
    const full = roundDeep(scored);
    const top = ranking.slice(0, k);
    const listed = top.length <= MAX_LISTED ? top : top.slice(0, MAX_LISTED);
    let scoreOk = true;
    for (const e of scored) if (Math.abs(e.score - (e.norm.recency + e.norm.importance + e.norm.relevance)) > 1e-12) scoreOk = false;
    return {
      constants: { decay_per_hour: DECAY, mean_gap_hours: MEAN_GAP_H, importance_range: [1, 10], templates: TEMPLATES.map((t) => t.text) },
      result: {
        query,
        query_truncated: query !== asked,
        ...(query !== asked ? { query_code_points_received: points.length } : {}),
        query_tokens: tokenize(query),
        n_episodes: n,
        k,
        episodes: n <= MAX_LISTED ? scored : scored.slice(0, MAX_LISTED),
        episodes_listed: Math.min(n, MAX_LISTED),
        store_sha256: sha256Hex(canonicalJson(full)),
        top_k: listed,
        top_k_listed: listed.length,
        ranking_sha256: sha256Hex(canonicalJson(ranking)),
        weights: { recency: 1, importance: 1, relevance: 1 },
        embedding: {
          dim: EMBED_DIM,
          hashing: 'signed feature hashing: bucket = FNV-1a32(UTF-8 feature) mod 256, sign = -1 iff bit 31 of FNV-1a32(feature + "#"); unigrams and bigrams ("a b"); term frequency; L2 normalised',
          tokenizer: 'lowercase [a-z0-9]+ runs; tokens of >= 5 chars lose a trailing ing | ed | s (first match); then stop-words removed',
          stopwords: [...STOPWORDS],
        },
        ranking_order: 'score descending, then hours_ago ascending, then id ascending',
      },
      checks: { score_is_sum_of_normalised_components: scoreOk, top_k_length: top.length === k },
    };
  },
});
