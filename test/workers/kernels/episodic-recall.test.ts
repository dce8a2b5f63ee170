import { expect } from 'chai';
import epi from '../../../workers/kernels/episodic-recall.js';
import { createHash } from 'node:crypto';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

/** The memory stream redrawn from stream episodes: per episode template int(3), two slot words int(8), gap −6·ln(1−u) hours, importance 1 + int(10). */
function drawEpisodes(seed: number, n: number) {
  const r = new RngStreams(seed, 'episodic/recall').stream('episodes');
  const slots: Record<string, string[]> = {
    topic: ['battery', 'weather', 'routing', 'firmware', 'telemetry', 'airspace', 'payload', 'permits'],
    object: ['report', 'drone', 'mission', 'schedule', 'camera', 'sensor', 'map', 'checklist'],
    verb: ['review', 'update', 'archive', 'inspect', 'calibrate', 'summarise', 'export', 'schedule'],
    event: ['a landing', 'signal loss', 'an intrusion', 'a hard landing', 'high wind', 'a geofence breach', 'a low battery', 'a lost link'],
    place: ['the depot', 'the river', 'the stadium', 'the north gate', 'the harbour', 'the airfield', 'the bridge', 'the school'],
  };
  const templates: [(a: string, b: string) => string, string, string][] = [
    [(a, b) => `asked about ${a} for ${b}`, 'topic', 'object'],
    [(a, b) => `asked you to ${a} the ${b}`, 'verb', 'object'],
    [(a, b) => `reported ${a} near ${b}`, 'event', 'place'],
  ];
  let hours = 0;
  return Array.from({ length: n }, (_, id) => {
    const [fill, s0, s1] = templates[Math.floor(r.next() * 3)]!;
    const a = slots[s0]![Math.floor(r.next() * 8)]!;
    const b = slots[s1]![Math.floor(r.next() * 8)]!;
    hours += -6 * Math.log(1 - r.next());
    return { id, text: fill(a, b), hours_ago: hours, importance: 1 + Math.floor(r.next() * 10) };
  });
}

/** RFC 8785 for this ASCII-keyed finite data. */
const jcs = (v: unknown): string =>
  v === null || typeof v !== 'object' ? JSON.stringify(v) : Array.isArray(v) ? `[${v.map(jcs).join(',')}]` : `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}`;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
/** The body's rounding: 12 significant digits, integers as they are, −0 as 0. */
const round12 = (x: number): number => (Number.isInteger(x) ? x : Number(x.toPrecision(12))) || 0;

const STOP = new Set(['a', 'an', 'the', 'i', 'you', 'me', 'my', 'did', 'do', 'does', 'what', 'about', 'to', 'of', 'for', 'on', 'in', 'and', 'is', 'was', 'it', 'earlier']);

/** Test-side FNV-1a 32 over bytes. */
function fnv(s: string): number {
  let h = 2166136261;
  for (const b of new TextEncoder().encode(s)) {
    h ^= b;
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h >>> 0;
}

/** Independent vectoriser written from the note. */
function vec(text: string): number[] {
  const toks = (text.toLowerCase().match(/[a-z0-9]+/g) ?? [])
    .map((t) => (t.length >= 5 ? t.replace(/(ing|ed|s)$/, '') : t))
    .filter((t) => !STOP.has(t));
  const feats = [...toks, ...toks.slice(1).map((t, i) => `${toks[i]} ${t}`)];
  const v = new Array<number>(256).fill(0);
  for (const f of feats) addAt(v, fnv(f) % 256, fnv(f + '#') >= 2 ** 31 ? -1 : 1);
  const n = Math.hypot(...v);
  return n > 0 ? v.map((x) => x / n) : v;
}

const cos = (a: number[], b: number[]): number => a.reduce((s, x, i) => s + x * b[i]!, 0);
const minMax = (xs: number[]): number[] => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return xs.map((x) => (hi > lo ? (x - lo) / (hi - lo) : 0));
};

describe('kernel episodic/recall', () => {
  it('the store is redrawn from stream episodes; every component, the ranking and both digests recomputed', () => {
    for (const [seed, n, k, query] of [[42, 12, 3, 'What did I ask you about earlier?'], [7, 60, 9, 'battery report near the depot'], [3, 5, 5, 'zzz']] as const) {
      const r = JSON.parse(runBody(epi, { seed, n_episodes: n, k, query })).result;
      const eps = drawEpisodes(seed, n);
      expect(r.episodes.map((e: any) => [e.id, e.text, e.importance])).to.deep.equal(eps.map((e) => [e.id, e.text, e.importance]));
      r.episodes.forEach((e: any, i: number) => expect(e.hours_ago).to.be.closeTo(eps[i]!.hours_ago, 1e-9));
      const q = vec(query);
      const rec = eps.map((e) => 0.995 ** e.hours_ago);
      const imp = eps.map((e) => e.importance / 10);
      const rel = eps.map((e) => (q.every((x) => x === 0) ? 0 : cos(q, vec(e.text))));
      const [nr, ni, nl] = [minMax(rec), minMax(imp), minMax(rel)];
      r.episodes.forEach((e: any, i: number) => {
        expect(e.norm.recency).to.be.closeTo(nr[i]!, 1e-11);
        expect(e.norm.importance).to.be.closeTo(ni[i]!, 1e-11);
        expect(e.norm.relevance).to.be.closeTo(nl[i]!, 1e-11);
      });
      const ranking = eps.map((e, i) => ({ ...e, score: nr[i]! + ni[i]! + nl[i]! })).sort((a, b) => b.score - a.score || a.hours_ago - b.hours_ago || a.id - b.id).map((e) => e.id);
      expect(r.top_k).to.deep.equal(ranking.slice(0, k));
      expect([r.top_k_listed, r.episodes_listed, r.n_episodes, r.k]).to.deep.equal([k, n, n, k]);
      expect(r.ranking_sha256).to.equal(sha(JSON.stringify(ranking)));
      // all n episodes are listed (n ≤ 256), rounded as hashed: the digest is the JCS of that list
      expect(r.store_sha256).to.equal(sha(jcs(r.episodes)));
    }
  });

  it('scores are the sum of min–max normalised components, recomputed from the store; top_k is the stable sort', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(epi, { seed, n_episodes: 40, k: 7 }).result as any;
      const eps = r.episodes;
      const q = vec(r.query);
      const rec = eps.map((e: any) => 0.995 ** e.hours_ago);
      const imp = eps.map((e: any) => e.importance / 10);
      const rel = eps.map((e: any) => cos(q, vec(e.text)));
      const [nr, ni, nl] = [minMax(rec), minMax(imp), minMax(rel)];
      eps.forEach((e: any, i: number) => {
        expect(e.id).to.equal(i);
        expect(e.recency).to.be.closeTo(rec[i], 1e-12);
        expect(e.relevance).to.be.closeTo(rel[i], 1e-12);
        expect(e.score).to.be.closeTo(nr[i]! + ni[i]! + nl[i]!, 1e-12);
        if (i > 0) expect(e.hours_ago).to.be.greaterThan(eps[i - 1].hours_ago);
        expect(e.importance).to.be.within(1, 10);
      });
      const order = eps
        .map((e: any) => e)
        .sort((a: any, b: any) => b.score - a.score || a.hours_ago - b.hours_ago || a.id - b.id)
        .map((e: any) => e.id);
      expect(r.top_k).to.deep.equal(order.slice(0, 7));
    }
  });

  it('querying with an episode’s own text gives it relevance 1 and normalised relevance 1', () => {
    for (let seed = 0; seed < 10; seed++) {
      const first = runRaw(epi, { seed, n_episodes: 20 }).result as any;
      const j = seed % 20;
      const again = runRaw(epi, { seed, n_episodes: 20, query: first.episodes[j].text }).result as any;
      expect(again.episodes[j].relevance).to.be.closeTo(1, 1e-12);
      expect(again.episodes[j].norm.relevance).to.be.closeTo(1, 1e-12);
      // the store is unchanged by the query (one stream for episodes)
      expect(again.episodes.map((e: any) => e.text)).to.deep.equal(first.episodes.map((e: any) => e.text));
    }
  });

  it('a query with no overlap makes relevance 0 and ranks by normalised recency + importance', () => {
    // a query whose hashed features share no bucket with any template word or bigram
    const store = runRaw(epi, { seed: 3, n_episodes: 50 }).result as any;
    const query = ['zzzz qqqq', 'xylo quux', 'zebra yak', 'kiwi mango', 'ufo jazz'].find((qq) => store.episodes.every((e: any) => vec(e.text).every((x, i) => x === 0 || vec(qq)[i] === 0)))!;
    expect(query).to.be.a('string');
    const r = runRaw(epi, { seed: 3, n_episodes: 50, k: 50, query }).result as any;
    expect(r.query_tokens).to.deep.equal(query.split(' '));
    for (const e of r.episodes) expect(e.relevance).to.equal(0);
    const nr = minMax(r.episodes.map((e: any) => e.recency));
    const ni = minMax(r.episodes.map((e: any) => e.importance));
    const order = r.episodes
      .map((e: any, i: number) => ({ id: e.id, s: nr[i]! + ni[i]!, h: e.hours_ago }))
      .sort((a: any, b: any) => b.s - a.s || a.h - b.h || a.id - b.id)
      .map((e: any) => e.id);
    expect(r.top_k).to.deep.equal(order);
    const empty = runRaw(epi, { seed: 3, query: '' }).result as any;
    expect(empty.query_tokens).to.deep.equal([]);
    for (const e of empty.episodes) expect(e.relevance).to.equal(0);
  });

  it('tokenizer stems before stop-words and the embeddings are unit vectors', () => {
    const r = runRaw(epi, { query: 'Asked about the BATTERIES, routing; pinged things was earlier' }).result as any;
    expect(r.query_tokens).to.deep.equal(['ask', 'batterie', 'rout', 'ping', 'thing']);
    const q = vec(r.query);
    expect(Math.hypot(...q)).to.be.closeTo(1, 1e-12);
    for (const e of r.episodes) expect(Math.hypot(...vec(e.text))).to.be.closeTo(1, 1e-12);
  });

  it('recency: with equal importance and relevance the more recent episode ranks higher (over 10 seeds)', () => {
    let pairs = 0;
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(epi, { seed, n_episodes: 120, k: 120 }).result as any;
      const rank = new Map<number, number>(r.top_k.map((id: number, i: number) => [id, i]));
      for (const a of r.episodes)
        for (const b of r.episodes) {
          if (a.id >= b.id || a.importance !== b.importance || a.relevance !== b.relevance) continue;
          // a is more recent (smaller id ⇒ fewer hours ago)
          expect(rank.get(a.id)!).to.be.below(rank.get(b.id)!);
          pairs++;
        }
    }
    expect(pairs).to.be.greaterThan(100);
  });

  it('at exactly 256 episodes and k = 256 everything is listed; the stop-words and the checks are reported', () => {
    const out = runRaw(epi, { n_episodes: 256, k: 256 });
    const r = out.result as any;
    expect([r.episodes.length, r.top_k.length, r.episodes_listed, r.top_k_listed]).to.deep.equal([256, 256, 256, 256]);
    expect(r.embedding.stopwords).to.deep.equal([...STOP]);
    expect(out.checks).to.deep.equal({ score_is_sum_of_normalised_components: true, top_k_length: true });
  });

  it('both digests recomputed from an independently built full store at every size, 256 listed beyond that', () => {
    for (const [seed, n, k, query] of [[42, 1, 1, 'What did I ask you about earlier?'], [5, 255, 10, 'battery drone'], [6, 256, 256, 'reported signal loss'], [7, 257, 257, 'asked about permits'], [42, 500, 300, 'What did I ask you about earlier?'], [9, 499, 1, '']] as const) {
      const r = JSON.parse(runBody(epi, { seed, n_episodes: n, k, query })).result;
      const eps = drawEpisodes(seed, n);
      const q = vec(query);
      const qZero = q.every((x) => x === 0);
      const rec = eps.map((e) => 0.995 ** e.hours_ago);
      const imp = eps.map((e) => e.importance / 10);
      const rel = eps.map((e) => (qZero ? 0 : cos(q, vec(e.text))));
      const [nr, ni, nl] = [minMax(rec), minMax(imp), minMax(rel)];
      const store = eps.map((e, i) => ({
        ...e,
        recency: round12(rec[i]!),
        relevance: round12(rel[i]!),
        hours_ago: round12(e.hours_ago),
        norm: { recency: round12(nr[i]!), importance: round12(ni[i]!), relevance: round12(nl[i]!) },
        score: round12(nr[i]! + ni[i]! + nl[i]!),
      }));
      const ranking = eps.map((e, i) => ({ ...e, score: nr[i]! + ni[i]! + nl[i]! })).sort((a, b) => b.score - a.score || a.hours_ago - b.hours_ago || a.id - b.id).map((e) => e.id);
      expect(r.store_sha256, `store n=${n}`).to.equal(sha(jcs(store)));
      expect(r.ranking_sha256, `ranking n=${n}`).to.equal(sha(JSON.stringify(ranking)));
      const listed = Math.min(n, 256);
      expect([r.episodes.length, r.episodes_listed, r.top_k_listed]).to.deep.equal([listed, listed, Math.min(k, 256)]);
      expect(r.episodes).to.deep.equal(store.slice(0, 256));
      expect(r.top_k).to.deep.equal(ranking.slice(0, Math.min(k, 256)));
    }
  });

  it('k must not exceed n_episodes; k = n_episodes = 500 with a 512-character query passes', () => {
    expect(rejects(epi, { k: '13', n_episodes: '12' })).to.deep.equal(['k:constraint']);
    expect(rejects(epi, { k: '500', n_episodes: '500', query: 'q'.repeat(512) })).to.deep.equal([]);
  });

  it('a query over 512 code points is truncated to its first 512 and reported; up to 4096 UTF-16 units are accepted, more is 422', () => {
    // 40 astral characters (two UTF-16 units each) then ASCII: 600 code points, 640 units
    const long = '🛰'.repeat(40) + ' battery report near the depot'.repeat(19).slice(0, 560);
    const points = Array.from(long);
    expect([points.length, long.length]).to.deep.equal([600, 640]);
    const kept = points.slice(0, 512).join('');
    const cut = JSON.parse(runBody(epi, { seed: 4, query: long })).result;
    const direct = JSON.parse(runBody(epi, { seed: 4, query: kept })).result;
    expect([cut.query, cut.query_truncated, cut.query_code_points_received]).to.deep.equal([kept, true, 600]);
    expect([direct.query_truncated, 'query_code_points_received' in direct]).to.deep.equal([false, false]);
    const { query_truncated: _a, query_code_points_received: _b, ...rest } = cut;
    const { query_truncated: _c, ...restDirect } = direct;
    expect(rest).to.deep.equal(restDirect);
    // exactly 512 code points in 552 units is used whole
    const full = points.slice(0, 512).join('');
    expect(full.length).to.equal(552);
    expect(JSON.parse(runBody(epi, { query: full })).result).to.include({ query: full, query_truncated: false });
    expect(rejects(epi, { query: 'q'.repeat(4096) })).to.deep.equal([]);
    expect(rejects(epi, { query: 'q'.repeat(4097) })).to.deep.equal(['query:string.max']);
  });
});
