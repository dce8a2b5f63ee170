import { expect } from 'chai';
import blt, { BigramContextModel } from '../../../workers/kernels/blt-entropy-patch.js';
import { canonicalJson, sha256Hex } from '../../../src/lib/numbers.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { runBody, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
const SEPS = new Set([' ', ',', '.', '\n']);

/** Reference greedy patching, written from the note: boundary before i iff H_i > θ and i − start ≥ min_len. */
function greedy(H: number[], theta: number, minLen: number): number[] {
  const b: number[] = [];
  let last = 0;
  H.forEach((h, i) => {
    if (i > 0 && h > theta && i - last >= minLen) b.push((last = i));
  });
  return b;
}

/**
 * The three byte streams redrawn from the note: stream vocab gives 256 pseudo-words (syllables
 * 1 + int(3), each consonant then vowel, a coda consonant with p = 0.3); streams train (32 768 bytes)
 * and text draw words by Zipf 1/rank (one uniform, inverse CDF) and a separator after each
 * (space .9, comma .04, period .04, newline .02).
 */
function streams(seed: number, n: number) {
  const rng = new RngStreams(seed, 'blt/entropy-patch');
  const v = rng.stream('vocab');
  const C = 'bcdfghjklmnprstvwz';
  const V = 'aeiou';
  const words = Array.from({ length: 256 }, () => {
    const syl = 1 + Math.floor(v.next() * 3);
    let w = '';
    for (let k = 0; k < syl; k++) w += C[Math.floor(v.next() * C.length)]! + V[Math.floor(v.next() * V.length)]!;
    if (v.next() < 0.3) w += C[Math.floor(v.next() * C.length)]!;
    return w;
  });
  const Z = words.reduce((s, _, k) => s + 1 / (k + 1), 0);
  const text = (r: ReturnType<typeof rng.stream>, len: number): string => {
    let out = '';
    while (out.length < len) {
      let u = r.next() * Z;
      let k = 0;
      while (k < 255 && u >= 1 / (k + 1)) u -= 1 / (k++ + 1);
      out += words[k]!;
      let s = r.next();
      let sep = '\n';
      for (const [ch, p] of [[' ', 0.9], [',', 0.04], ['.', 0.04]] as const) {
        if (s < p) {
          sep = ch;
          break;
        }
        s -= p;
      }
      out += sep;
    }
    return out.slice(0, len);
  };
  return { train: text(rng.stream('train'), 32768), text: text(rng.stream('text'), n) };
}

describe('kernel blt/entropy-patch', () => {
  it('text, per-byte entropies, mean entropy and bits per byte recomputed from independently redrawn corpora and a Map of counts', () => {
    for (const [seed, n] of [[42, 256], [3, 2048], [9, 40]] as const) {
      const r = runRaw(blt, q({ seed, n_bytes: n })).result as any;
      const { train, text } = streams(seed, n);
      expect(r.text_sample).to.equal(text.slice(0, 128));
      const ctx = (t: string, i: number) => `${i >= 2 ? t.charCodeAt(i - 2) : 'BOS'},${i >= 1 ? t.charCodeAt(i - 1) : 'BOS'}`;
      const counts = new Map<string, Map<number, number>>();
      for (let i = 0; i < train.length; i++) {
        const row = counts.get(ctx(train, i)) ?? new Map<number, number>();
        row.set(train.charCodeAt(i), (row.get(train.charCodeAt(i)) ?? 0) + 1);
        counts.set(ctx(train, i), row);
      }
      const prob = (c: string, b: number) => {
        const row = counts.get(c);
        if (!row) return 1 / 256;
        const tot = [...row.values()].reduce((a, x) => a + x, 0);
        return ((row.get(b) ?? 0) + 0.05) / (tot + 256 * 0.05);
      };
      const H = Array.from({ length: n }, (_, i) => {
        let h = 0;
        for (let b = 0; b < 256; b++) h -= prob(ctx(text, i), b) * Math.log2(prob(ctx(text, i), b));
        return h;
      });
      (r.entropy_sample as number[]).forEach((h, i) => expect(h, `H ${i}`).to.be.closeTo(H[i]!, 1e-9));
      expect(r.entropy_sample.length).to.equal(Math.min(n, 256));
      expect(r.mean_entropy_bits).to.be.closeTo(H.reduce((a, b) => a + b, 0) / n, 1e-9);
      let bits = 0;
      for (let i = 0; i < n; i++) bits -= Math.log2(prob(ctx(text, i), text.charCodeAt(i)));
      expect(r.bits_per_byte).to.be.closeTo(bits / n, 1e-9);
      const full = greedy(H, 2.4, 2);
      expect(r.boundaries).to.deep.equal(full.slice(0, 256));
      expect(r.boundaries_digest).to.equal(sha256Hex(canonicalJson(full)));
    }
  });

  it('the n-gram entropy equals an explicit sum over all 256 next bytes (independent counts); unseen contexts give 8 bits', () => {
    const rng = new Rng(5);
    const alphabet = 'abcab ,.\nzzq';
    const corpus = Uint8Array.from({ length: 3000 }, () => alphabet.charCodeAt(rng.int(alphabet.length)));
    const model = new BigramContextModel(corpus);
    const counts = new Map<string, number[]>();
    for (let i = 0; i < corpus.length; i++) {
      const key = `${i >= 2 ? corpus[i - 2] : 256},${i >= 1 ? corpus[i - 1] : 256}`;
      if (!counts.has(key)) counts.set(key, new Array<number>(256).fill(0));
      counts.get(key)![corpus[i]!]!++;
    }
    for (const [key, row] of counts) {
      const [a, b] = key.split(',').map(Number) as [number, number];
      const n = row.reduce((s, c) => s + c, 0);
      let h = 0;
      let mass = 0;
      for (let s = 0; s < 256; s++) {
        const p = (row[s]! + 0.05) / (n + 256 * 0.05);
        h -= p * Math.log2(p);
        mass += model.prob(a * 257 + b, s);
      }
      expect(model.entropy[a * 257 + b]).to.be.closeTo(h, 1e-12);
      expect(model.entropy[a * 257 + b]).to.be.within(0, 8);
      expect(mass).to.be.closeTo(1, 1e-12);
    }
    const unseen = 'x'.charCodeAt(0) * 257 + 'y'.charCodeAt(0);
    expect(model.entropy[unseen]).to.equal(8);
    expect(model.prob(unseen, 7)).to.equal(1 / 256);
  });

  it('boundaries are the greedy thresholded positions of entropy_sample; lengths sum to n_bytes, all but the last ≥ min_len', () => {
    for (const [seed, n, theta, minLen] of [[42, 256, 2.4, 2], [1, 200, 1.5, 1], [2, 256, 3, 4], [3, 100, 0, 3], [4, 64, 0.7, 64], [5, 16, 8, 1]] as const) {
      const out = runRaw(blt, q({ seed, n_bytes: n, theta, min_len: minLen }));
      const r = out.result as any;
      const H = r.entropy_sample as number[];
      expect(H.length).to.equal(n);
      for (const h of H) expect(h).to.be.within(0, 8);
      const ref = greedy(H, theta, minLen);
      expect(r.boundaries).to.deep.equal(ref);
      expect(r.boundaries_digest).to.equal(sha256Hex(canonicalJson(ref)));
      if (minLen === 1) expect(r.boundaries).to.deep.equal(H.flatMap((h, i) => (i >= 1 && h > theta ? [i] : [])));
      const starts = [0, ...ref];
      const lens = starts.map((s, k) => (starts[k + 1] ?? n) - s);
      expect(lens.reduce((a, b) => a + b, 0)).to.equal(n);
      lens.slice(0, -1).forEach((l) => expect(l).to.be.at.least(minLen));
      const hist = new Array<number>(65).fill(0);
      for (const l of lens) addAt(hist, Math.min(l, 65) - 1);
      expect(r.length_histogram).to.deep.equal(hist);
      expect(r.n_patches).to.equal(starts.length);
      expect(r.max_patch_len).to.equal(Math.max(...lens));
      expect(r.mean_patch_len).to.be.closeTo(n / starts.length, 1e-12);
      expect(r.latent_steps_ratio).to.be.closeTo(starts.length / n, 1e-12);
      expect(out.checks!.patch_length_sum).to.equal(n);
    }
  });

  it('word-start fractions recompute from text_sample for the three patchings', () => {
    for (const seed of [0, 1, 2, 3]) {
      const r = runRaw(blt, q({ seed, n_bytes: 128 })).result as any;
      const t = r.text_sample as string;
      expect(t.length).to.equal(128);
      const isWordStart = (i: number) => !SEPS.has(t[i]!) && (i === 0 || SEPS.has(t[i - 1]!));
      const frac = (s: number[]) => s.filter(isWordStart).length / s.length;
      const starts = [0, ...r.boundaries];
      const P = starts.length;
      expect(r.word_start_fraction.entropy).to.be.closeTo(frac(starts), 1e-12);
      expect(r.word_start_fraction.fixed_stride).to.be.closeTo(frac(Array.from({ length: P }, (_, k) => Math.floor((k * 128) / P))), 1e-12);
      const space = [0, ...Array.from({ length: 127 }, (_, i) => i + 1).filter((i) => SEPS.has(t[i - 1]!))];
      expect(r.space_patches).to.equal(space.length);
      expect(r.word_start_fraction.space).to.be.closeTo(frac(space), 1e-12);
    }
  });

  it('n_patches is non-increasing in theta and in min_len (same seed); theta = 8 gives one patch', () => {
    for (const seed of [42, 7, 9]) {
      let prev = Infinity;
      for (const theta of [0, 0.5, 1, 1.5, 2, 2.4, 3, 4, 6, 7.9, 8]) {
        const r = runRaw(blt, q({ seed, theta, min_len: 1 })).result as any;
        expect(r.n_patches).to.be.at.most(prev);
        prev = r.n_patches;
      }
      expect(prev).to.equal(1);
      prev = Infinity;
      for (const minLen of [1, 2, 3, 4, 6, 8, 16, 64]) {
        const r = runRaw(blt, q({ seed, min_len: minLen })).result as any;
        expect(r.n_patches).to.be.at.most(prev);
        prev = r.n_patches;
      }
    }
    // smoothing keeps every H_i > 0, so theta = 0 with min_len = 1 cuts before every byte
    const all = runRaw(blt, q({ n_bytes: 300, theta: 0, min_len: 1 })).result as any;
    expect(all.n_patches).to.equal(300);
  });

  it('[trend] entropy patches start at word starts far more often than fixed-stride patches (10 seeds)', () => {
    let wins = 0;
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(blt, { seed: String(seed) }).result as any;
      if (r.word_start_fraction.entropy > 1.5 * r.word_start_fraction.fixed_stride) wins++;
      expect(r.bits_per_byte).to.be.within(0, 8);
    }
    expect(wins).to.be.at.least(9);
  });

  it('another seed draws another text and other boundaries', () => {
    const a = JSON.parse(runBody(blt, { seed: '1' }));
    const b = JSON.parse(runBody(blt, { seed: '2' }));
    expect(a.result.text_sample).to.not.equal(b.result.text_sample);
    expect(a.result.boundaries_digest).to.not.equal(b.result.boundaries_digest);
  });
});
