/**
 * Active, read-only probes shared by evidence claims, readiness sections and wiring health. None
 * touches the ledger: the signer probe signs a throwaway message in the pool and verifies it here;
 * the ledger probe recomputes; ADS-B probes are rate-limited GETs that bypass the cache.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import sax from 'sax';
import type { Observed } from '../introspection/observed.js';
import { API } from '../isomorphic/api.js';
import { routeKey } from '../introspection/route-inventory.js';

export interface ProbeResult {
  ok: boolean;
  latency_ms: number;
  output: string;
  details?: Record<string, unknown>;
}

const ms = (started: number): number => Math.max(0.001, Math.round((performance.now() - started) * 1000) / 1000);

/** DSSE v1 pre-authentication encoding, written here independently of src/ledger (spec 1.0.2). */
export function dssePae(payloadType: string, body: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
}

/** The DSSE spec's own vector: the PAE routine must reproduce it before any check relies on it. */
export function paeSpecVectorOk(): boolean {
  return dssePae('http://example.com/HelloWorld', Buffer.from('hello world')).toString() === 'DSSEv1 29 http://example.com/HelloWorld 11 hello world';
}

export function hasRoute(s: Observed, key: string): boolean {
  return s.routeTable().some((r) => routeKey(r) === key);
}

/** The published key, parsed from the exact bytes the pubkey route serves. */
export async function publishedKey(s: Observed): Promise<{ key: KeyObject; keyid: string; pem: string } | { error: string }> {
  if (!hasRoute(s, `GET ${API}/edge/pubkey.pem`)) return { error: 'public key route not mounted' };
  const res = await s.inProcess.get(`${API}/edge/pubkey.pem`);
  if (res.status !== 200) return { error: `public key route answered ${res.status}` };
  const pem = res.body.toString('utf8');
  try {
    const key = createPublicKey(pem);
    const keyid = createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('hex');
    return { key, keyid, pem };
  } catch (err) {
    return { error: `published key does not parse: ${(err as Error).message}` };
  }
}

/** Strict ASN.1 DER ECDSA-Sig-Value: SEQUENCE { INTEGER r, INTEGER s }, each 1..33 bytes. */
export function isDerEcdsa(sig: Buffer): boolean {
  if (sig.length < 8 || sig[0] !== 0x30 || sig[1] !== sig.length - 2) return false;
  let at = 2;
  for (let i = 0; i < 2; i++) {
    if (sig[at] !== 0x02) return false;
    const len = sig[at + 1]!;
    if (len < 1 || len > 33 || at + 2 + len > sig.length) return false;
    at += 2 + len;
  }
  return at === sig.length;
}

const PROBE_TYPE = 'application/vnd.svc.probe+json';

/**
 * Signs a fixed probe payload in a worker (the same key the ledger signs with) and verifies it on
 * this thread with the key parsed from the pubkey route. A tampered copy must not verify. Nothing
 * is appended: the ledger size is compared before and after.
 */
export async function signerProbe(s: Observed): Promise<ProbeResult> {
  const started = performance.now();
  const key = await publishedKey(s);
  if ('error' in key) return { ok: false, latency_ms: ms(started), output: key.error };
  const sizeBefore = s.ledger.size();
  const body = Buffer.from(JSON.stringify({ probe: 'signatures-real-ecdsa', keyid: key.keyid }));
  const pae = dssePae(PROBE_TYPE, body);
  let sig: Buffer;
  try {
    const out = await s.pool.run<Uint8Array[]>({ kind: 'sign', paes: [pae] }, { deadlineMs: 2000 });
    sig = Buffer.from(out.value[0]!);
  } catch (err) {
    return { ok: false, latency_ms: ms(started), output: `worker signing failed: ${(err as Error).message}` };
  }
  const der = isDerEcdsa(sig);
  const verified = verify('sha256', pae, key.key, sig);
  const tampered = Buffer.from(pae);
  tampered.writeUInt8(tampered.readUInt8(tampered.length - 2) ^ 0x01, tampered.length - 2);
  const tamperedVerifies = verify('sha256', tampered, key.key, sig);
  const sizeAfter = s.ledger.size();
  const curve = key.key.asymmetricKeyDetails?.namedCurve ?? null;
  const keyidMatches = s.ledger ? s.ledger.keyid === key.keyid : false;
  const ok = verified && der && !tamperedVerifies && curve === 'prime256v1' && sizeBefore === sizeAfter && keyidMatches;
  return {
    ok,
    latency_ms: ms(started),
    output: ok
      ? 'probe signed in a worker, verified here with the published key; a one-bit change does not verify; nothing appended'
      : `probe failed: verified=${verified} der=${der} tampered_verifies=${tamperedVerifies} curve=${curve} keyid_matches=${keyidMatches} ledger_size ${sizeBefore}->${sizeAfter}`,
    details: {
      verified,
      der_encoded: der,
      tampered_verifies: tamperedVerifies,
      curve,
      keyid: key.keyid,
      keyid_matches_signer: keyidMatches,
      pae_sha256: createHash('sha256').update(pae).digest('hex'),
      ledger_size_before: sizeBefore,
      ledger_size_after: sizeAfter,
    },
  };
}

/** Recomputes the whole chain and Merkle root and compares with the root the ledger serves. */
export function ledgerProbe(s: Observed): ProbeResult {
  const started = performance.now();
  const r = s.ledger.verifyIntegrity();
  const stored = s.ledger.root();
  const ok = r.verified && r.root === stored;
  return {
    ok,
    latency_ms: ms(started),
    output: ok ? r.reason : `${r.reason}${r.root !== stored ? '; recomputed root differs from the served root' : ''}`,
    details: { verified: r.verified, nodes: r.nodes, recomputed_root: r.root, served_root: stored, first_bad_node: firstBadNode(r.reason) },
  };
}

export function firstBadNode(reason: string): number | null {
  const m = /\bnode (\d+)/.exec(reason);
  return m ? Number(m[1]) : null;
}

/** A no-op task through the pool: proves a worker answers, and how fast. */
export async function poolProbe(s: Observed): Promise<ProbeResult> {
  const started = performance.now();
  try {
    const out = await s.pool.run<{ pid: number }>({ kind: 'probe' }, { deadlineMs: 2000 });
    return { ok: true, latency_ms: ms(started), output: `worker answered in ${ms(started)} ms`, details: { pid: out.value.pid, wait_ms: Math.round(out.waitMs * 1000) / 1000 } };
  } catch (err) {
    return { ok: false, latency_ms: ms(started), output: `probe task failed: ${(err as Error).message}` };
  }
}

/** Minimum gap between two probe GETs of the same upstream (public aggregators allow ~1 req/s). */
export const ADSB_PROBE_MIN_INTERVAL_MS = 10_000;
const ADSB_PROBE_TIMEOUT_MS = 2_000;

/**
 * One GET per upstream with a timeout, bypassing the cache (nothing is stored): skipped when this
 * service probed it in the last ADSB_PROBE_MIN_INTERVAL_MS, when the feed fetched it successfully
 * in the last second, or while its circuit breaker is open.
 */
export async function adsbProbe(s: Observed): Promise<ProbeResult> {
  const started = performance.now();
  const status = s.adsb();
  const memo = s.adsbProbes;
  const now = Date.now();
  const results = await Promise.all(
    status.providers.map(async (p) => {
      const prior = memo.get(p.url);
      if (prior && now - prior.at < ADSB_PROBE_MIN_INTERVAL_MS) return { provider: p.name, skipped: 'probed recently', last: prior.result };
      if (p.breaker === 'open') return { provider: p.name, skipped: 'circuit breaker open' };
      if (p.lastOkAt && now - Date.parse(p.lastOkAt) < 1000) return { provider: p.name, skipped: 'fetched by the feed in the last second', ok: true };
      const t0 = performance.now();
      let result: Record<string, unknown>;
      memo.set(p.url, { at: now, result: { pending: true } });
      try {
        const res = await fetch(p.url, { signal: AbortSignal.timeout(ADSB_PROBE_TIMEOUT_MS), headers: { accept: 'application/json' } });
        await res.body?.cancel();
        result = { provider: p.name, status: res.status, ok: res.ok, latency_ms: ms(t0) };
      } catch (err) {
        result = { provider: p.name, status: null, ok: false, latency_ms: ms(t0), error: (err as Error).name === 'TimeoutError' ? 'timeout' : (err as Error).message };
      }
      memo.set(p.url, { at: now, result });
      return result;
    }),
  );
  const answered = results.filter((r) => (r as { ok?: boolean }).ok === true || (r as { last?: { ok?: boolean } }).last?.ok === true);
  return {
    ok: status.providers.length > 0 && answered.length > 0,
    latency_ms: ms(started),
    output: `${answered.length} of ${status.providers.length} upstreams answered (probe or recent fetch)`,
    details: { upstreams: results },
  };
}

/** Exports every track, parses the XML back and counts the events against the CoT status. */
export async function cotProbe(s: Observed): Promise<ProbeResult> {
  const started = performance.now();
  if (!hasRoute(s, `GET ${API}/cot/export`)) return { ok: false, latency_ms: ms(started), output: 'CoT export route not mounted' };
  const res = await s.inProcess.get(`${API}/cot/export`);
  let events = 0;
  let parseError: string | null = null;
  const parser = sax.parser(true, {});
  const handlers: Partial<sax.SAXParser> = {
    onopentag: (tag) => {
      if (tag.name === 'event') events++;
    },
    onerror: (err) => {
      parseError = err.message.split('\n')[0] ?? 'parse error';
    },
  };
  Object.assign(parser, handlers);
  try {
    parser.write(res.body.toString('utf8')).close();
  } catch (err) {
    parseError ??= (err as Error).message;
  }
  const total = s.cot.tracksTotal();
  const valid = s.cot.tracksCotValid();
  const ok = res.status === 200 && parseError === null && events === total && valid === total;
  return {
    ok,
    latency_ms: ms(started),
    output: ok ? `${events} events exported, parsed back and matching ${total} tracks` : `export ${res.status}, ${events} events parsed, ${total} tracks, ${valid} valid${parseError ? `, ${parseError}` : ''}`,
    details: { status_code: res.status, events_parsed: events, tracks_total: total, tracks_cot_valid: valid },
  };
}

/** Dataset views are deterministic: two reads of the full collection must be byte-identical. */
export async function fleetProbe(s: Observed): Promise<ProbeResult> {
  const started = performance.now();
  if (!hasRoute(s, `GET ${API}/fleet/all`)) return { ok: false, latency_ms: ms(started), output: 'fleet route not mounted' };
  const a = await s.inProcess.get(`${API}/fleet/all`);
  const b = await s.inProcess.get(`${API}/fleet/all`);
  const ha = createHash('sha256').update(a.body).digest('hex');
  const hb = createHash('sha256').update(b.body).digest('hex');
  const ok = a.status === 200 && b.status === 200 && ha === hb;
  return { ok, latency_ms: ms(started), output: ok ? 'two reads byte-identical' : `reads differ or failed (${a.status}/${b.status})`, details: { body_sha256: ha, bytes: a.body.length } };
}

export async function withBudget<T>(work: Promise<T>, budgetMs: number, onTimeout: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout()), Math.max(1, budgetMs));
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const sha = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/**
 * RFC 9162 §2.1.3.2 inclusion-proof verification over a node digest, written here independently
 * of the ledger's own Merkle code (leaf = SHA-256(0x00 ‖ d), interior = SHA-256(0x01 ‖ l ‖ r)).
 */
export function inclusionVerifies(digest: Buffer, index: number, size: number, path: readonly Buffer[], root: Buffer): boolean {
  if (index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = sha(Buffer.from([0]), digest);
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = sha(Buffer.from([1]), p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      r = sha(Buffer.from([1]), r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(root);
}
