/**
 * Pair-based additive STDP on the fgbrain synapses (Bi & Poo 1998; Song, Miller & Abbott 2000),
 * computed online with pre/post traces (Morrison, Diesmann & Gerstner 2008) over the spike trains
 * of one /fgbrain/fire run (bg = 0), and checked against the all-pairs sum. Offline: the weights
 * do not feed back into the run (kernels-a 2.2).
 */
import { defineKernel } from '../kernel-def.js';
import { buildSubstrate, LIF, simulateFire } from '../lib/fgbrain.js';
import { num } from '../../src/lib/params.js';
import { fireParams, fireWorstCase, SOURCES_RULE, sourcesWithinN, toFireParams } from './fgbrain-fire-params.js';

export interface Window {
  aPlus: number;
  aMinus: number;
  tauPlus: number;
  tauMinus: number;
}

/** The STDP window W(Δ), Δ = t_post − t_pre in ms; simultaneous pairs contribute nothing. */
export function stdpWindow(delta: number, w: Window): number {
  if (delta > 0) return w.aPlus * Math.exp(-delta / w.tauPlus);
  if (delta < 0) return -w.aMinus * Math.exp(delta / w.tauMinus);
  return 0;
}

/** Online trace rule: decay traces, apply updates, then increment (so Δ = 0 pairs give 0). */
export function onlineDw(pre: readonly number[], post: readonly number[], w: Window): number {
  const times = [...new Set([...pre, ...post])].sort((a, b) => a - b);
  let x = 0;
  let y = 0;
  let last = times[0] ?? 0;
  let dw = 0;
  let i = 0;
  let j = 0;
  for (const t of times) {
    x *= Math.exp(-(t - last) / w.tauPlus);
    y *= Math.exp(-(t - last) / w.tauMinus);
    last = t;
    let nPre = 0;
    let nPost = 0;
    while (i < pre.length && pre[i] === t) {
      nPre++;
      i++;
    }
    while (j < post.length && post[j] === t) {
      nPost++;
      j++;
    }
    dw -= nPre * w.aMinus * y;
    dw += nPost * w.aPlus * x;
    x += nPre;
    y += nPost;
  }
  return dw;
}

export default defineKernel({
  id: 'fgbrain/plasticity',
  version: 1,
  input: 'request',
  summary: 'Pair-based additive STDP on the graph’s synapses from one spiking run; online trace rule checked against the all-pairs sum',
  technique: 'additive spike-timing-dependent plasticity with pre/post traces, hard bounds',
  references: ['doi:10.1523/JNEUROSCI.18-24-10464.1998', 'doi:10.1038/78829', 'doi:10.1007/s00422-008-0233-1'],
  honesty: 'The STDP rule is real and exact for these spike trains; it is applied offline (weights do not feed back into the run), on a synthetic network.',
  params: {
    ...fireParams,
    a_plus: num(0, 0.1, 0.01).description('STDP potentiation amplitude (pre before post)'),
    a_minus: num(0, 0.1, 0.0105).description('STDP depression amplitude (post before pre)'),
    tau_plus_ms: num(1, 100, 20).description('potentiation time constant, ms'),
    tau_minus_ms: num(1, 100, 20).description('depression time constant, ms'),
    w_init: num(0, 10, 0.5).description('initial synaptic weight (at most w_max)'),
    w_max: num(0.01, 10, 1).description('upper bound of a synaptic weight'),
  },
  rules: [SOURCES_RULE, 'w_init must not exceed w_max'],
  constraints: (p) => [...sourcesWithinN(p), ...(p.w_init > p.w_max ? [{ param: 'w_init', msg: 'w_init must not exceed w_max' }] : [])],
  worstCase: { ...fireWorstCase, bg_rate_hz: 0 },
  run(p, rng) {
    const s = buildSubstrate(p.n, p.m, rng.shared('fgbrain/graph'));
    // bg = 0 by design: background draws would make the trains depend on an extra stream
    const { spikes } = simulateFire(s, { ...toFireParams(p), bgRateHz: 0 }, rng.shared('fgbrain/fire#background'));
    const ms = spikes.map((l) => l.map((step) => Math.round(step * LIF.dtMs * 10) / 10));
    const win: Window = { aPlus: p.a_plus, aMinus: p.a_minus, tauPlus: p.tau_plus_ms, tauMinus: p.tau_minus_ms };
    // the all-pairs reference (O(s_pre·s_post) per synapse) is checked only up to this many pairs:
    // at the bounds a synapse can see ~10^6 pairs, far past the time budget; tests check every one
    const REFERENCE_PAIRS = 20_000;
    let maxGap = 0;
    let checked = 0;
    const synapses = s.deps.flatMap((list, t) =>
      list.map((j) => {
        const pre = ms[j]!;
        const post = ms[t]!;
        const dw = onlineDw(pre, post, win);
        if (pre.length * post.length <= REFERENCE_PAIRS) {
          let ref = 0;
          for (const a of pre) for (const b of post) ref += stdpWindow(b - a, win);
          maxGap = Math.max(maxGap, Math.abs(dw - ref));
          checked++;
        }
        return { pre: j, post: t, pre_spikes: pre.length, post_spikes: post.length, dw, w: Math.min(p.w_max, Math.max(0, p.w_init + dw)) };
      }),
    );
    const hist = new Array<number>(10).fill(0);
    for (const syn of synapses) hist[Math.min(9, Math.floor((syn.w / p.w_max) * 10))]!++;
    return {
      result: {
        synapses,
        summary: {
          potentiated: synapses.filter((x) => x.dw > 0).length,
          depressed: synapses.filter((x) => x.dw < 0).length,
          unchanged: synapses.filter((x) => x.dw === 0).length,
          mean_dw: synapses.reduce((a, x) => a + x.dw, 0) / Math.max(1, synapses.length),
        },
        weight_histogram: hist,
        window: { a_plus: p.a_plus, a_minus: p.a_minus, tau_plus_ms: p.tau_plus_ms, tau_minus_ms: p.tau_minus_ms, balance: p.a_plus * p.tau_plus_ms > 0 ? (p.a_minus * p.tau_minus_ms) / (p.a_plus * p.tau_plus_ms) : null },
      },
      checks: { online_vs_all_pairs_max_abs: maxGap, synapses_checked: checked },
    };
  },
});
