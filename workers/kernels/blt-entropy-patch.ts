/**
 * Byte Latent Transformer entropy patching (Pagnoni et al. 2024, arXiv:2412.09871): a small
 * byte-level LM estimates the next-byte entropy H(x_i) and a new patch starts where H(x_i)
 * exceeds a global threshold θ, so the latent transformer spends its steps where bytes are hard
 * to predict. Here the byte LM is an order-2 n-gram with add-α smoothing trained on a separate
 * seeded corpus; `min_len` is our guard against 1-byte patches. Design: kernels-c §4.
 */
import { defineKernel } from '../kernel-def.js';
import { canonicalJson, sha256Hex } from '../../src/lib/numbers.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const ALPHA = 0.05;
const SYMBOLS = 256;
/** boundary symbol padding the start of a corpus (outside the byte range) */
const BOS = 256;
const CTX = 257;
const TRAIN_BYTES = 32768;
const VOCAB = 256;
const CONSONANTS = 'bcdfghjklmnprstvwz';
const VOWELS = 'aeiou';
const CODA_P = 0.3;
/** separator bytes and their probabilities */
export const SEPARATORS = [
  [0x20, 0.9],
  [0x2c, 0.04],
  [0x2e, 0.04],
  [0x0a, 0.02],
] as const;
const SEP_SET = new Set<number>(SEPARATORS.map(([b]) => b));
const HIST_CAP = 64;
const SHOW = 256;

export const isSeparator = (b: number): boolean => SEP_SET.has(b);

/** Draw order in `vocab`: per word, syllable count, then per syllable consonant and vowel, then the coda coin and (if any) its consonant. */
function drawVocab(r: Rng): number[][] {
  const words: number[][] = [];
  for (let w = 0; w < VOCAB; w++) {
    const syl = 1 + r.int(3);
    const bytes: number[] = [];
    for (let s = 0; s < syl; s++) {
      bytes.push(CONSONANTS.charCodeAt(r.int(CONSONANTS.length)));
      bytes.push(VOWELS.charCodeAt(r.int(VOWELS.length)));
    }
    if (r.next() < CODA_P) bytes.push(CONSONANTS.charCodeAt(r.int(CONSONANTS.length)));
    words.push(bytes);
  }
  return words;
}

/** Words by Zipf weights ∝ 1/rank (inverse CDF, binary search), one separator after each; truncated to n. Draw order: word uniform, separator uniform. */
function drawText(words: number[][], n: number, r: Rng): Uint8Array {
  const cdf = new Float64Array(VOCAB);
  let acc = 0;
  for (let k = 0; k < VOCAB; k++) cdf[k] = acc += 1 / (k + 1);
  const out = new Uint8Array(n);
  let pos = 0;
  while (pos < n) {
    const u = r.next() * acc;
    let lo = 0;
    let hi = VOCAB - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    for (const b of words[lo]!) if (pos < n) out[pos++] = b;
    let v = r.next();
    let sep: number = SEPARATORS[SEPARATORS.length - 1]![0];
    for (const [b, p] of SEPARATORS) {
      if (v < p) {
        sep = b;
        break;
      }
      v -= p;
    }
    if (pos < n) out[pos++] = sep;
  }
  return out;
}

const ctxOf = (x: Uint8Array, i: number): number => (i >= 2 ? x[i - 2]! : BOS) * CTX + (i >= 1 ? x[i - 1]! : BOS);

/** Order-2 byte model: counts per two-byte context (start padded with BOS). */
export class BigramContextModel {
  readonly totals = new Int32Array(CTX * CTX);
  readonly counts = new Map<number, number>();
  /** next-byte entropy (bits) of each context; unseen contexts are uniform, exactly 8 bits */
  readonly entropy = new Float64Array(CTX * CTX).fill(8);

  constructor(train: Uint8Array) {
    for (let i = 0; i < train.length; i++) {
      const c = ctxOf(train, i);
      this.totals[c]!++;
      const key = c * SYMBOLS + train[i]!;
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }
    // H = −Σ_observed p log2 p − (256 − m)·q log2 q with q = α/(n + 256α) for every unseen successor
    const acc = new Float64Array(CTX * CTX);
    const seen = new Int32Array(CTX * CTX);
    for (const [key, cnt] of this.counts) {
      const c = Math.floor(key / SYMBOLS);
      const p = (cnt + ALPHA) / (this.totals[c]! + SYMBOLS * ALPHA);
      acc[c] = acc[c]! - p * Math.log2(p);
      seen[c]!++;
    }
    for (let c = 0; c < CTX * CTX; c++) {
      if (this.totals[c] === 0) continue;
      const q = ALPHA / (this.totals[c]! + SYMBOLS * ALPHA);
      this.entropy[c] = acc[c]! - (SYMBOLS - seen[c]!) * q * Math.log2(q);
    }
  }

  prob(ctx: number, b: number): number {
    const n = this.totals[ctx]!;
    if (n === 0) return 1 / SYMBOLS;
    return ((this.counts.get(ctx * SYMBOLS + b) ?? 0) + ALPHA) / (n + SYMBOLS * ALPHA);
  }
}

/** Greedy patching: a boundary before byte i ≥ 1 iff H_i > θ and the current patch already has ≥ min_len bytes. */
export function entropyBoundaries(H: ArrayLike<number>, theta: number, minLen: number): number[] {
  const out: number[] = [];
  let start = 0;
  for (let i = 1; i < H.length; i++) {
    if (H[i]! > theta && i - start >= minLen) {
      out.push(i);
      start = i;
    }
  }
  return out;
}

export default defineKernel({
  id: 'blt/entropy-patch',
  version: 1,
  input: 'query',
  summary: 'BLT entropy patching: next-byte entropy from an order-2 byte model, global-threshold patch boundaries, against fixed-stride and space patching',
  technique: 'Byte Latent Transformer entropy-based patching (global threshold)',
  references: ['arXiv:2412.09871'],
  honesty: 'The n-gram entropy model, the thresholded patching and the baselines are real computations; the text is seeded pseudo-words with Zipf frequencies, and the entropy model is an n-gram, not BLT\u2019s trained byte transformer.',
  params: {
    n_bytes: int(16, 65536, 2048).description('bytes of synthetic text patched'),
    theta: num(0, 8, 2.4).description('global entropy threshold that starts a patch, bits'),
    min_len: int(1, 64, 2).description('shortest patch, bytes'),
  },
  worstCase: { n_bytes: 65536, theta: 0, min_len: 1 },
  run({ n_bytes: n, theta, min_len: minLen }, rng) {
    // streams: `vocab` (the pseudo-words), `train` (the model's corpus), `text` (the evaluated bytes)
    const words = drawVocab(rng.stream('vocab'));
    const model = new BigramContextModel(drawText(words, TRAIN_BYTES, rng.stream('train')));
    const x = drawText(words, n, rng.stream('text'));

    const H = new Float64Array(n);
    let hSum = 0;
    let bits = 0;
    for (let i = 0; i < n; i++) {
      const c = ctxOf(x, i);
      H[i] = model.entropy[c]!;
      hSum += H[i]!;
      bits -= Math.log2(model.prob(c, x[i]!));
    }

    const bounds = entropyBoundaries(H, theta, minLen);
    const starts = [0, ...bounds];
    const P = starts.length;
    const hist = new Array<number>(HIST_CAP + 1).fill(0);
    let maxLen = 0;
    let lenSum = 0;
    let shortPatches = 0; // patches other than the last that are shorter than min_len (must stay 0)
    for (let k = 0; k < P; k++) {
      const len = (k + 1 < P ? starts[k + 1]! : n) - starts[k]!;
      maxLen = Math.max(maxLen, len);
      lenSum += len;
      if (k + 1 < P && len < minLen) shortPatches++;
      hist[Math.min(len, HIST_CAP + 1) - 1]!++;
    }

    // a word starts at a non-separator byte that begins the text or follows a separator
    const wordStart = (i: number): boolean => !isSeparator(x[i]!) && (i === 0 || isSeparator(x[i - 1]!));
    const fraction = (s: number[]): number => s.filter(wordStart).length / s.length;
    const strideStarts = Array.from({ length: P }, (_, k) => Math.floor((k * n) / P));
    const spaceStarts = [0];
    for (let i = 1; i < n; i++) if (isSeparator(x[i - 1]!)) spaceStarts.push(i);

    return {
      constants: {
        model: 'order-2 byte n-gram, add-alpha smoothing over 256 symbols, start padded with a boundary symbol',
        alpha: ALPHA,
        train_bytes: TRAIN_BYTES,
        unseen_context_bits: 8,
        vocab_words: VOCAB,
        word_shape: '1-3 consonant-vowel syllables, optional consonant coda (p = 0.3)',
        word_weights: 'Zipf, 1/rank',
        separators: { space: 0.9, comma: 0.04, period: 0.04, newline: 0.02 },
        length_histogram: 'index k-1 counts patches of length k for k = 1..64; the last entry counts 65+',
      },
      result: {
        n_patches: P,
        mean_patch_len: n / P,
        max_patch_len: maxLen,
        length_histogram: hist,
        boundaries: bounds.slice(0, SHOW),
        boundaries_digest: sha256Hex(canonicalJson(bounds)),
        entropy_sample: Array.from(H.subarray(0, SHOW)),
        mean_entropy_bits: hSum / n,
        bits_per_byte: bits / n,
        word_start_fraction: { entropy: fraction(starts), fixed_stride: fraction(strideStarts), space: fraction(spaceStarts) },
        space_patches: spaceStarts.length,
        latent_steps_ratio: P / n,
        text_sample: String.fromCharCode(...x.subarray(0, 128)),
      },
      checks: {
        patch_length_sum: lenSum,
        short_patches_before_last: shortPatches,
      },
    };
  },
});
