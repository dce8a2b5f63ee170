/**
 * SSE memory against viewers that never read and against resume storms: 2,000 non-reading viewers
 * on a busy stream keep the kernel's TCP memory under a stated bound (each is dropped once its
 * unacknowledged bytes, in the process and in its kernel send queue, pass the cap), and a resume
 * replays a bounded number of bytes per connection and per client address while a client that
 * follows `event: catchup` still gets every event exactly once.
 */
import { expect } from 'chai';
import { EventSource } from 'eventsource';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { ipBytes, procAddress, procSendQueueProbe } from '../../src/stream/tcp-queue.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { openSse, sseBlocks } from '../helpers/sse.js';

const STREAM = '/api/svc/v1/stream/verdicts';
const PAGE = 4096;
const VIEWERS = 2000;
/** Kernel TCP memory the 2,000 non-reading viewers may add, both ends of each loopback connection. */
const BOUND_PER_VIEWER = 256 * 1024;

/** TCP memory in pages (the kernel's own count, /proc/net/sockstat). */
const tcpPages = (): number => Number(/^TCP:.* mem (\d+)/m.exec(readFileSync('/proc/net/sockstat', 'utf8'))![1]);

/** Resolves when `cond` holds, checked every `everyMs`; rejects with `what` after `ms`. */
async function until(cond: () => boolean, ms: number, what: string, everyMs = 20): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Connection caps as high as the test needs. */
const connectionOverrides = (): Record<string, unknown> => ({ maxConnections: 10_000, maxConnectionsPerAddress: 10_000 });

const frame = (k: number) => ({ track_id: `r${k}`, source: 'ADS-B', lat: 36.3 + (k % 50) * 1e-4, lon: -115.16, alt_m: 80, speed_mps: 10, rssi_dbm: -50, id_authenticated: true, n_observations: 500 });

interface Replay {
  status: number;
  bytes: number;
  events: { id: number | null; event: string; data: string; retry?: number }[];
}

/** One GET of the stream from `localAddress`, read to its end (a replay cut at the budget ends) or to the first verdict above `endAfterFirstVerdictAbove`. */
function readReplay(t: TestApp, lastEventId: string, localAddress = '127.0.0.1', endAfterFirstVerdictAbove?: number): Promise<Replay> {
  return new Promise((resolve, reject) => {
    const req = request(`${t.baseUrl}${STREAM}`, { localAddress, headers: { accept: 'text/event-stream', 'last-event-id': lastEventId } }, (res: IncomingMessage) => {
      const out: Replay = { status: res.statusCode!, bytes: 0, events: [] };
      const blocks = sseBlocks();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const block of blocks(chunk)) {
          const e: Replay['events'][number] = { id: null, event: 'message', data: '' };
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) e.id = Number(line.slice(4));
            else if (line.startsWith('event: ')) e.event = line.slice(7);
            else if (line.startsWith('data: ')) e.data = line.slice(6);
            else if (line.startsWith('retry: ')) e.retry = Number(line.slice(7));
          }
          if (e.event === 'verdict') out.bytes += Buffer.byteLength(`${block}\n\n`);
          out.events.push(e);
          if (endAfterFirstVerdictAbove !== undefined && e.event === 'verdict' && e.id! > endAfterFirstVerdictAbove) {
            req.destroy();
            resolve(out);
          }
        }
      });
      res.on('end', () => resolve(out));
      res.on('error', () => resolve(out));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('SSE memory: non-reading viewers and resume storms', function () {
  // thousands of sockets and replays: seconds on a quiet machine, minutes on a loaded one
  this.timeout(300_000);

  describe('the kernel send queue probe (/proc/net/tcp)', () => {
    it('prints addresses as the kernel does: words in host order, v4-mapped in tcp6', () => {
      expect(ipBytes('::ffff:127.0.0.1')).to.deep.equal([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 127, 0, 0, 1]);
      expect(ipBytes('fe80::1%eth0')).to.deep.equal([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
      expect(procAddress('127.0.0.1', 8000, false)).to.equal('0100007F:1F40');
      expect(procAddress('::ffff:127.0.0.1', 8000, true)).to.equal('0000000000000000FFFF00000100007F:1F40');
      expect(procAddress('::1', 80, true)).to.equal('00000000000000000000000001000000:0050');
    });

    for (const host of ['127.0.0.1', '::1']) {
      it(`reads what a socket holds unacknowledged in the kernel when its peer stops reading (${host})`, async () => {
        const probe = procSendQueueProbe()!;
        expect(probe, 'this service runs on Linux').to.be.a('function');
        const server = createServer();
        server.listen(0, host);
        await once(server, 'listening');
        const accepted = once(server, 'connection') as Promise<[Socket]>;
        const client = connect({ host, port: (server.address() as { port: number }).port });
        client.pause(); // paused before it connects: it never reads
        const [side] = await accepted;
        try {
          expect(await probe([side])).to.deep.equal([0]);
          const chunk = Buffer.alloc(64 * 1024, 'x');
          while (side.write(chunk));
          const [queued] = await probe([side]);
          // what the peer's receive window took is acknowledged; the rest waits in the send queue
          expect(queued).to.be.a('number').greaterThan(64 * 1024);
          expect(queued).to.be.at.most(side.bytesWritten);
        } finally {
          client.destroy();
          side.destroy();
          server.close();
        }
      });
    }
  });

  describe(`${VIEWERS} viewers that send the GET and never read, while verdicts flow`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(
        { stream: { tickMs: 300, heartbeatMs: 60_000, sendBufferBytes: 64 * 1024, lagCheckMs: 100 }, guard: connectionOverrides() },
        { checkResponses: false },
      );
    });
    after(() => t.close());

    it(`add at most ${BOUND_PER_VIEWER / 1024} KiB of kernel TCP memory each, and are all dropped; a reading viewer keeps up`, async () => {
      const hub = t.provided.stream.hub;
      const port = Number(new URL(t.baseUrl).port);
      const good = await openSse(`${t.baseUrl}${STREAM}`);
      await good.waitFor(4);
      const base = tcpPages();
      const bound = Math.ceil((VIEWERS * BOUND_PER_VIEWER) / PAGE);
      let peak = 0;
      let over: Error | null = null;
      const sampler = setInterval(() => {
        peak = Math.max(peak, tcpPages() - base);
        // stop at once, so a regression cannot push the machine's TCP memory towards its limits
        if (peak > bound && !over) over = new Error(`kernel TCP memory rose by ${peak} pages (${((peak * PAGE) / 2 ** 20).toFixed(0)} MiB), above ${bound}`);
      }, 25);
      const sockets: Socket[] = [];
      try {
        const check = (): boolean => {
          if (over) throw over;
          return true;
        };
        // spread over 40 local addresses, in batches the listen backlog takes at once
        for (let i = 0; i < VIEWERS; i += 200) {
          for (let k = i; k < i + 200; k++) {
            const s = connect({ host: '127.0.0.1', port, localAddress: `127.0.0.${2 + (k % 40)}` });
            s.pause(); // before connecting: this socket never reads a byte
            s.on('error', () => {});
            s.write(`GET ${STREAM} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
            sockets.push(s);
          }
          await until(() => check() && hub.stats().viewers + hub.stats().dropped >= i + 201, 120_000, `${i + 200} viewers attached`);
        }
        const published = hub.stats().events;
        await until(() => check() && hub.stats().dropped >= VIEWERS, 120_000, `all ${VIEWERS} non-reading viewers dropped (dropped ${hub.stats().dropped})`);
        // the stream stays busy a while longer: nothing grows back
        const settled = hub.stats().events;
        await until(() => check() && hub.stats().events >= settled + 10, 60_000, 'ten more events');
        check();
        expect(hub.stats().events - published, 'events that flowed while the viewers were connected').to.be.at.least(10);
        expect(hub.stats().viewers).to.equal(1);
        const ids = good.events.map((e) => Number(e.id));
        expect(ids.every((id, k) => k === 0 || id === ids[k - 1]! + 1), 'the reading viewer missed nothing').to.equal(true);
        expect(good.events.length).to.be.at.least(settled - (ids[0] ?? 0));
        console.log(`      kernel TCP memory: peak +${peak} pages (${((peak * PAGE) / VIEWERS / 1024).toFixed(0)} KiB per viewer, both ends), bound ${bound}; after the drops +${tcpPages() - base}`);
        expect(peak).to.be.at.most(bound);
      } finally {
        clearInterval(sampler);
        for (const s of sockets) s.destroy();
        good.close();
      }
    });
  });

  describe('resume storms', () => {
    const EVENTS = 640;
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ stream: { tickMs: 60_000, replayMaxBytes: 64 * 1024, replayBytesPerAddressPerS: 256 * 1024 } });
      for (let b = 0; b < EVENTS / 64; b++) {
        const res = await t.http.post('/api/svc/v1/edge/3d').send({ frames: Array.from({ length: 64 }, (_, k) => frame(b * 64 + k)) });
        expect(res.status).to.equal(200);
      }
    });
    after(() => t.close());

    it('Last-Event-ID: 0 replays at most replayMaxBytes, then ends with event: catchup', async () => {
      const all = EVENTS * 2.5 * 1024; // what the old replay sent each time: every event after 0
      const r = await readReplay(t, '0', '127.0.0.11', EVENTS - 2);
      expect(r.status).to.equal(200);
      expect(r.bytes).to.be.at.most(64 * 1024).and.below(all / 10);
      const verdicts = r.events.filter((e) => e.event === 'verdict').map((e) => e.id);
      expect(verdicts[0]).to.equal(1);
      const last = r.events.at(-1)!;
      expect(last.event).to.equal('catchup');
      expect(JSON.parse(last.data)).to.include({ last_id: verdicts.at(-1), newest_id: EVENTS - 1 });
      expect(last.retry).to.be.a('number').at.least(100);
    });

    it('a storm of reconnects from one address is replayed at the address rate; another address is not held back', async () => {
      const started = Date.now();
      let bytes = 0;
      for (let i = 0; i < 40; i++) bytes += (await readReplay(t, '0', '127.0.0.12', EVENTS - 2)).bytes;
      const elapsed = (Date.now() - started) / 1000;
      console.log(`      40 resumes from Last-Event-ID 0 in ${elapsed.toFixed(2)} s: ${(bytes / 1024).toFixed(0)} KiB replayed`);
      // a full bucket (one second's budget) plus what refilled meanwhile, plus one event of overshoot
      expect(bytes).to.be.at.most(256 * 1024 * (1 + elapsed) + 4096);
      expect(bytes).to.be.below(40 * 64 * 1024 * 0.5);
      const other = await readReplay(t, '0', '127.0.0.13', EVENTS - 2);
      expect(other.bytes).to.be.greaterThan(32 * 1024);
    });

    it('a client that follows event: catchup gets every event exactly once, in order, then live ones', async () => {
      const ids: number[] = [];
      let last = '0';
      let reconnects = 0;
      // a guard against a replay that never advances, not a speed bound
      const deadline = Date.now() + 240_000;
      // live verdicts keep arriving while the client catches up
      const live = setInterval(() => void t.http.post('/api/svc/v1/verdict').send(frame(9999)).then(() => {}), 300);
      try {
      for (;;) {
        expect(Date.now(), `caught up within 240 s (${ids.length} events after ${reconnects} connections)`).to.be.below(deadline);
        const r = await readReplay(t, last, '127.0.0.14', EVENTS - 1);
        reconnects++;
        for (const e of r.events) if (e.event === 'verdict') ids.push(e.id!);
        if (ids.length) last = String(ids.at(-1));
        const end = r.events.at(-1);
        if (end?.event !== 'catchup') break;
        // as EventSource does: wait the retry the stream asked for, then resume from the last id
        await new Promise((resolve) => setTimeout(resolve, end.retry ?? 2000));
      }
      } finally {
        clearInterval(live);
      }
      expect(reconnects).to.be.greaterThan(2);
      expect(ids.at(-1)).to.be.at.least(EVENTS);
      expect(ids).to.deep.equal(Array.from({ length: ids.length }, (_, k) => k + 1));
    });

    it('an EventSource resuming from Last-Event-ID 0 follows event: catchup on its own and misses nothing', async () => {
      let opens = 0;
      const ids: number[] = [];
      const es = new EventSource(`${t.baseUrl}${STREAM}`, {
        fetch: (input, init) => {
          const headers = new Headers(init?.headers);
          if (!headers.has('last-event-id')) headers.set('last-event-id', '0');
          opens++;
          return fetch(input, { ...init, headers });
        },
      });
      es.addEventListener('verdict', (e) => ids.push(Number(e.lastEventId)));
      try {
        await until(() => ids.length >= EVENTS - 1, 120_000, `the replay of ${EVENTS - 1} events (${ids.length} after ${opens} connections)`, 50);
      } finally {
        es.close();
      }
      expect(ids.slice(0, EVENTS - 1)).to.deep.equal(Array.from({ length: EVENTS - 1 }, (_, k) => k + 1));
      expect(opens).to.be.greaterThan(2);
    });
  });
});
