/**
 * Honesty chips: each one is a pure function of API fields and the page's own clock, never a
 * hard-coded claim. `tone` drives the styling: ok, warn (amber), bad (red), info.
 */
import { fmtAge } from './format.js';
import type { AdsbAnswer } from '../../../isomorphic/wire/adsb.js';

export type Tone = 'ok' | 'warn' | 'bad' | 'info';
export interface Chip {
  text: string;
  tone: Tone;
  title: string;
}

/** The /adsb fields a chip is computed from. */
export type AdsbDoc = Pick<AdsbAnswer, 'live' | 'reason' | 'source' | 'attribution' | 'age_s' | 'count'>;

/**
 * `lastPollOkAt`: when the page last got an answer; older than two poll intervals means the page
 * itself stopped hearing from the service, whatever the last payload said.
 */
export function adsbChip(doc: AdsbDoc | null, error: string | null, lastPollOkAt: number | null, now: number, pollMs: number): Chip {
  if (!doc) return { text: `NO DATA · ${error ?? 'not loaded yet'}`, tone: 'bad', title: 'The ADS-B route did not answer' };
  const attribution = doc.attribution ?? 'no attribution given';
  if (lastPollOkAt !== null && now - lastPollOkAt > 2 * pollMs) {
    return { text: `STALE (page) · last poll ${fmtAge((now - lastPollOkAt) / 1000)} ago`, tone: 'warn', title: `The page has not heard from /adsb for more than two poll intervals. ${attribution}` };
  }
  if (doc.live) {
    // live is only ever sent with reason 'fresh' (the feed has no stale-while-revalidate window)
    const count = doc.count === 0 ? ' · 0 aircraft' : '';
    return { text: `LIVE · ${doc.source ?? 'unknown source'} · ${fmtAge(doc.age_s)}${count}`, tone: 'ok', title: attribution };
  }
  if (doc.count > 0) return { text: `CACHED · live=false · ${fmtAge(doc.age_s)} old · ${doc.reason ?? 'no reason given'}`, tone: 'warn', title: attribution };
  return { text: `NO DATA · ${doc.reason ?? 'live=false'}`, tone: 'bad', title: attribution };
}

export function vesselChip(asOf: string | null, synthetic: boolean | null, kinds: string[], error: string | null): Chip {
  if (error) return { text: `VESSELS · no data (${error})`, tone: 'bad', title: '' };
  const kind = kinds.includes('dataset_voyage_interpolation') ? 'dataset positions · not AIS' : kinds.join(', ') || 'no positions';
  return { text: `${synthetic ? 'SYNTHETIC SAMPLE' : 'DATASET'} · ${kind} · as of ${asOf?.slice(0, 10) ?? '?'}`, tone: 'info', title: 'Vessel positions are interpolated along dataset voyages, not received from AIS' };
}

export function verdictChip(simulatedCount: number, total: number): Chip {
  if (total === 0) return { text: 'VERDICTS · none yet', tone: 'info', title: 'No verdict received yet' };
  const sim = simulatedCount === total ? 'SIMULATED FLIGHT' : `${simulatedCount} of ${total} simulated`;
  return { text: `${sim} · signed verdicts`, tone: 'info', title: 'Verdicts are really evaluated and signed; those marked simulated come from the simulated flight' };
}

export function cotChip(count: number, dataKind: string | null, error: string | null): Chip {
  if (error) return { text: `CoT · no data (${error})`, tone: 'bad', title: '' };
  const sample = dataKind === null || dataKind.includes('sample') ? 'SAMPLE TRACKS · no live TAK feed' : dataKind;
  return { text: `${sample} · ${count}`, tone: 'info', title: 'CoT events computed from sample tracks (how="m-s", opex="s")' };
}

export function ledgerText(durability: string | null, persistence: string | null): string {
  if (!durability) return 'Ledger state unknown';
  if (durability === 'EPHEMERAL' || persistence === 'PROCESS_MEMORY') return 'Ledger in memory — resets on restart';
  return `Ledger ${durability.toLowerCase()}`;
}
