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
  const why = `reason ${doc.reason ?? 'not given'} (/adsb). ${attribution}`;
  if (doc.count > 0) return { text: `CACHED · live=false · ${fmtAge(doc.age_s)} old · ${reasonText(doc.reason)}`, tone: 'warn', title: why };
  return { text: `NO DATA · ${reasonText(doc.reason)}`, tone: 'bad', title: why };
}

/** The feed's reason in words; the machine code stays in the chip's title. */
export function reasonText(reason: AdsbAnswer['reason'] | null | undefined): string {
  const words: Record<AdsbAnswer['reason'], string> = {
    fresh: 'fresh',
    upstream_failed_serving_last_snapshot: 'upstreams failing, last snapshot shown',
    refresh_pending_serving_last_snapshot: 'refreshing, last snapshot shown',
    snapshot_expired: 'last snapshot too old to show',
    no_snapshot: 'no snapshot yet',
    refresh_pending: 'first refresh under way',
    disabled: 'switched off',
  };
  return reason ? (words[reason] ?? reason) : 'not live';
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

export interface FeedDown {
  text: string;
  /** One line per upstream: its name, breaker and last error, for the detail one click away. */
  upstreams: string[];
}

/** What an attempt's outcome means to an operator, with the cause named when the error gives it. */
function failure(outcome: string, error: string | null): string {
  if (outcome === 'network') {
    if (error && /ENOTFOUND|EAI_AGAIN|getaddrinfo/i.test(error)) return 'unreachable (DNS)';
    if (error && /ECONNREFUSED/i.test(error)) return 'unreachable (connection refused)';
    return 'unreachable';
  }
  const words: Record<string, string> = {
    timeout: 'timed out',
    rate_limited: 'rate limited (HTTP 429)',
    forbidden: 'refused access (HTTP 403)',
    client_error: 'answered a client error',
    server_error: 'answered a server error',
    bad_payload: 'sent an unreadable answer',
    truncated: 'cut the answer short',
    too_large: 'sent too large an answer',
    skipped_breaker_open: 'paused after repeated failures',
    skipped_min_interval: 'not asked again yet',
  };
  return words[outcome] ?? outcome;
}

const ago = (ms: number): string => fmtAge(Math.max(0, ms) / 1000);

/**
 * The banner the map shows while aircraft are not live: which upstreams fail and how, when the
 * service last tried, and when the next try comes (the earliest breaker reopening, or this page's
 * next poll, which asks the service to try). Null while the feed is live. Pure: every word comes
 * from the /adsb answer, the page's error and its clock.
 */
export function feedDown(doc: AdsbAnswer | null, error: string | null, now: number, nextPollAt: number): FeedDown | null {
  if (!doc) return error ? { text: `Aircraft feed: no answer from this service (${error})`, upstreams: [] } : null;
  if (doc.live) return null;
  if (doc.reason === 'disabled') return { text: 'Aircraft feed switched off in this deployment (no upstream configured)', upstreams: [] };
  const latest = new Map<string, AdsbAnswer['attempts'][number]>();
  for (const a of doc.attempts) {
    const seen = latest.get(a.upstream);
    if (!seen || Date.parse(a.at) >= Date.parse(seen.at)) latest.set(a.upstream, a);
  }
  const groups = new Map<string, number>();
  for (const a of latest.values()) {
    if (a.outcome === 'ok') continue;
    const why = failure(a.outcome, a.error);
    groups.set(why, (groups.get(why) ?? 0) + 1);
  }
  const parts = [...groups].map(([why, n]) => `${n} upstream${n === 1 ? '' : 's'} ${why}`);
  const lastTry = Math.max(...doc.attempts.map((a) => Date.parse(a.at)).filter(Number.isFinite));
  const reopen = doc.upstreams.map((u) => (u.open_until ? Date.parse(u.open_until) : NaN)).filter(Number.isFinite);
  const allOpen = doc.upstreams.length > 0 && reopen.length === doc.upstreams.length;
  const next = allOpen ? Math.max(nextPollAt, Math.min(...reopen)) : nextPollAt;
  const head = doc.count > 0 ? `Aircraft feed down, showing the snapshot of ${fmtAge(doc.age_s)} ago` : 'Aircraft feed down';
  const timing = [Number.isFinite(lastTry) ? `last try ${ago(now - lastTry)} ago` : 'no try yet', `next in ${ago(next - now)}`];
  return {
    text: `${head}: ${parts.length ? parts.join(', ') : reasonText(doc.reason)}, ${timing.join(', ')}`,
    upstreams: doc.upstreams.map(
      (u) => `${u.name}: breaker ${u.breaker}${u.open_until ? ` until ${u.open_until.slice(11, 19)}Z` : ''}, ${u.consecutive_failures} failure(s) in a row, last error ${u.last_error ?? 'none'}, last ok ${u.last_ok_at ?? 'never'}`,
    ),
  };
}
