/**
 * RAUQ, recurrent attention-based uncertainty quantification (Vazhentsev et al. 2025,
 * arXiv:2505.20045). In some heads the attention of token i to token i−1 drops when the model
 * generates a wrong token. Per layer, RAUQ picks the head with the largest mean previous-token
 * attention, runs c_1 = p_1, c_i = α·p_i + (1−α)·a_{i,i−1}·c_{i−1}, scores the layer by
 * u_l = −mean log c_i and takes the maximum over the middle third of the layers (α = 0.2, the
 * value of the authors' LM-Polygraph implementation for base models). Design: kernels-c §2.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { auroc } from '../lib/ranking.js';

const N_SEQ = 16;
const N_LAYERS = 6;
/** middle third of 6 layers: floor(6/3) … ceil(2·6/3) */
export const SCORED_LAYERS = [2, 3, 4] as const;
export const ALPHA = 0.2;
const PLANTED_BIAS = 3.0;
const OTHER_BIAS_MAX = 2.0;
const ERROR_PENALTY = 2.5;
const MU_CORRECT = 2.2;
const MU_ERROR = 1.6;
const SHOW = 256;

/** RAUQ confidence recurrence; a[i] is the attention of token i to i−1 (a[0] unused). */
export function rauqConfidence(p: ArrayLike<number>, a: ArrayLike<number>, alpha: number): { c: Float64Array; u: number } {
  const L = p.length;
  const c = new Float64Array(L);
  let logSum = 0;
  for (let i = 0; i < L; i++) {
    c[i] = i === 0 ? p[0]! : alpha * p[i]! + (1 - alpha) * a[i]! * c[i - 1]!;
    logSum += Math.log(c[i]!);
  }
  return { c, u: -logSum / L };
}

/**
 * Previous-token attention of one head over a sequence, by the closed form of the causal softmax
 * whose logits are β_j (+ b for key j = i−1): a_i = e^{β_{i−1}+b} / (S_i + e^{β_{i−1}}(e^b − 1)),
 * S_i = Σ_{j≤i} e^{β_j}. Dividing by e^{β_{i−1}} gives a_i = e^b / (e^b + R_i) with
 * R_i = (S_{i−2} + e^{β_i}) / e^{β_{i−1}}, shared by every head of the layer (one division per
 * head and token). The bias of query i is b, or b − penalty where `penalised[i]`.
 * Writes a_i into `out` when given; returns the mean over i = 1..L−1.
 */
function prevAttention(R: Float64Array, b: number, penalised: Uint8Array | null, penalty: number, out: Float64Array | null): number {
  const L = R.length;
  const eb = Math.exp(b);
  let sum = 0;
  if (penalised === null && out === null) {
    for (let i = 1; i < L; i++) sum += eb / (eb + R[i]!);
    return sum / (L - 1);
  }
  const ebp = Math.exp(b - penalty);
  for (let i = 1; i < L; i++) {
    const e = penalised !== null && penalised[i] ? ebp : eb;
    const v = e / (e + R[i]!);
    if (out !== null) out[i] = v;
    sum += v;
  }
  return sum / (L - 1);
}

interface Sequence {
  label: 0 | 1;
  errStart: number | null;
  errLen: number;
  p: Float64Array;
  /** β per scored layer */
  beta: Float64Array[];
  erroneous: Uint8Array;
}

/** One sequence's label, scores and selected heads. */
interface ScoredSequence {
  /** 1 for a hallucinated sequence (odd index), 0 for a correct one */
  label: 0 | 1;
  /** the RAUQ score: the largest layer score u_l over the scored layers */
  rauq: number;
  /** the baseline: minus the mean log-probability of the tokens */
  msp: number;
  /** the head selected in each scored layer */
  selected_heads: number[];
  /** the first erroneous token, or null for a correct sequence */
  error_start: number | null;
  error_len: number;
}

/** One scored layer of the example sequence, over its first tokens. */
interface ExampleLayer {
  layer: (typeof SCORED_LAYERS)[number];
  /** the mean previous-token attention of every head */
  head_means: number[];
  selected_head: number;
  /** the attention logits β_j of the keys */
  key_salience: number[];
  /** the selected head's attention of token i to token i−1 (null for the first token) */
  prev_attention: (number | null)[];
  /** the recurrent confidence c_i */
  confidence: number[];
  /** the layer score u_l = −mean log c_i, over the whole sequence */
  u_layer: number;
}

/** The second sequence (a hallucinated one) in detail, its token lists cut at the first tokens. */
interface ExampleSequence {
  sequence: number;
  error_start: number | null;
  error_len: number;
  /** the token probabilities */
  p: number[];
  layers: ExampleLayer[];
}

/** Draw order in stream `seq/<q>`: error start (hallucinated only), L normals for p, then L normals β per scored layer. */
function drawSequence(q: number, L: number, s: Rng): Sequence {
  const label = (q % 2) as 0 | 1;
  const errLen = label ? Math.max(1, Math.floor(L / 4)) : 0;
  const errStart = label ? s.int(L - errLen + 1) : null;
  const erroneous = new Uint8Array(L);
  if (errStart !== null) erroneous.fill(1, errStart, errStart + errLen);
  const z = s.normals(L);
  const p = new Float64Array(L);
  for (let i = 0; i < L; i++) p[i] = 1 / (1 + Math.exp(-(z[i]! + (erroneous[i] ? MU_ERROR : MU_CORRECT))));
  const beta = SCORED_LAYERS.map(() => s.normals(L));
  return { label, errStart, errLen, p, beta, erroneous };
}

export default defineKernel({
  id: 'rauq/score',
  version: 1,
  input: 'query',
  summary: 'RAUQ: recurrent confidence from the previous-token attention of the selected head per layer, with AUROC against a mean-log-probability baseline',
  technique: 'RAUQ (attention-based unsupervised uncertainty quantification)',
  references: ['arXiv:2505.20045'],
  honesty: 'The head selection, the confidence recurrence, the exact causal-softmax previous-token weights and the AUROC are real; the token probabilities and attention logits are a seeded synthetic model with one planted uncertainty-aware head per layer, not a real LLM.',
  params: {
    seq_len: int(2, 2048, 32).description('generated tokens scored'),
    num_heads: int(1, 64, 8).description('attention heads per layer (one is selected)'),
  },
  worstCase: { seq_len: 2048, num_heads: 64 },
  run({ seq_len: L, num_heads: H }, rng) {
    // draw order in `heads`: per layer, the planted head, then H uniforms (the planted one's unused)
    const hs = rng.stream('heads');
    const planted: number[] = [];
    const bias: number[][] = [];
    for (let l = 0; l < N_LAYERS; l++) {
      const eta = hs.int(H);
      planted.push(eta);
      bias.push(Array.from({ length: H }, (_, h) => {
        const u = hs.next();
        return h === eta ? PLANTED_BIAS : OTHER_BIAS_MAX * u;
      }));
    }

    const E = new Float64Array(L);
    const R = new Float64Array(L);
    const rauq: number[] = [];
    const msp: number[] = [];
    const labels: number[] = [];
    const sequences: ScoredSequence[] = [];
    let correctSelections = 0;
    let example: ExampleSequence | null = null;
    let closedFormDiff = 0;
    for (let q = 0; q < N_SEQ; q++) {
      const seq = drawSequence(q, L, rng.stream(`seq/${q}`));
      const layers: { headMeans: Float64Array; selected: number; a: Float64Array; c: Float64Array; u: number; beta: Float64Array }[] = [];
      SCORED_LAYERS.forEach((l, li) => {
        const beta = seq.beta[li]!;
        for (let j = 0; j < L; j++) E[j] = Math.exp(beta[j]!);
        let before = 0; // S_{i−2}
        for (let i = 1; i < L; i++) {
          R[i] = (before + E[i]!) / E[i - 1]!;
          before += E[i - 1]!;
        }
        const headMeans = new Float64Array(H);
        let selected = 0;
        for (let h = 0; h < H; h++) {
          headMeans[h] = prevAttention(R, bias[l]![h]!, h === planted[l] ? seq.erroneous : null, ERROR_PENALTY, null);
          if (headMeans[h]! > headMeans[selected]!) selected = h;
        }
        const aSel = new Float64Array(L);
        prevAttention(R, bias[l]![selected]!, selected === planted[l] ? seq.erroneous : null, ERROR_PENALTY, aSel);
        const { c, u } = rauqConfidence(seq.p, aSel, ALPHA);
        if (selected === planted[l]) correctSelections++;
        layers.push({ headMeans, selected, a: aSel, c, u, beta });
        if (q === 1) {
          // self-check of the closed form against the explicit softmax row, at 8 evenly spaced rows
          for (let k = 0; k < 8; k++) {
            const i = Math.max(1, Math.floor(((k + 1) * L) / 8) - 1);
            const b = bias[l]![selected]! - (selected === planted[l] && seq.erroneous[i] ? ERROR_PENALTY : 0);
            let z = 0;
            for (let j = 0; j <= i; j++) z += Math.exp(beta[j]! + (j === i - 1 ? b : 0));
            closedFormDiff = Math.max(closedFormDiff, Math.abs(Math.exp(beta[i - 1]! + b) / z - aSel[i]!));
          }
        }
      });
      let logP = 0;
      for (let i = 0; i < L; i++) logP += Math.log(seq.p[i]!);
      const u = Math.max(...layers.map((x) => x.u));
      rauq.push(u);
      msp.push(-logP / L);
      labels.push(seq.label);
      sequences.push({
        label: seq.label,
        rauq: u,
        msp: -logP / L,
        selected_heads: layers.map((x) => x.selected),
        error_start: seq.errStart,
        error_len: seq.errLen,
      });
      if (q === 1) {
        const n = Math.min(L, SHOW);
        example = {
          sequence: 1,
          error_start: seq.errStart,
          error_len: seq.errLen,
          p: Array.from(seq.p.subarray(0, n)),
          layers: layers.map((x, li) => ({
            layer: SCORED_LAYERS[li]!,
            head_means: Array.from(x.headMeans),
            selected_head: x.selected,
            key_salience: Array.from(x.beta.subarray(0, n)),
            prev_attention: Array.from(x.a.subarray(0, n), (v, i) => (i === 0 ? null : v)),
            confidence: Array.from(x.c.subarray(0, n)),
            u_layer: x.u,
          })),
        };
      }
    }
    return {
      constants: {
        n_seq: N_SEQ,
        hallucinated: 'odd sequence index',
        n_layers: N_LAYERS,
        scored_layers: [...SCORED_LAYERS],
        alpha: ALPHA,
        planted_bias: PLANTED_BIAS,
        other_bias: 'U(0, 2)',
        error_penalty: ERROR_PENALTY,
        error_span: 'max(1, floor(L/4)) tokens at a uniform start',
        mu_correct: MU_CORRECT,
        mu_error: MU_ERROR,
        example_cap: SHOW,
      },
      result: {
        sequences,
        auroc_rauq: auroc(rauq, labels),
        auroc_msp: auroc(msp, labels),
        planted_heads: planted,
        head_bias: bias,
        head_selection_accuracy: correctSelections / (N_SEQ * SCORED_LAYERS.length),
        example,
      },
      checks: { closed_form_vs_softmax_max_diff: closedFormDiff },
    };
  },
});
