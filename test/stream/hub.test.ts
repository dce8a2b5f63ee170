import { expect } from 'chai';
import { until } from '../helpers/until.js';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { SseHub } from '../../src/stream/hub.js';

/** A response whose unsent byte count the test controls, as a socket that stops reading. */
class FakeResponse extends EventEmitter {
  written: string[] = [];
  writableLength = 0;
  destroyed = false;
  resets = 0;
  socket = { setKeepAlive() {}, destroyed: false, bytesWritten: 0, resetAndDestroy: () => (this.resets++, this.destroy()) };
  readsNothing = false;
  writeHead() {
    return this;
  }
  write(chunk: string) {
    this.written.push(chunk);
    this.socket.bytesWritten += chunk.length;
    if (this.readsNothing) this.writableLength += chunk.length;
    return true;
  }
  end() {
    this.emit('close');
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
}

const hubWith = (over: Partial<ConstructorParameters<typeof SseHub>[0]> = {}) => new SseHub({ maxViewers: 10, ringSize: 4, heartbeatMs: 60000, sendBufferBytes: 100, retryMs: 2000, ...over });
const attach = (hub: SseHub, lastId: number | null = null): FakeResponse => {
  const res = new FakeResponse();
  hub.attach(res as unknown as ServerResponse, lastId, {});
  return res;
};

describe('SseHub', () => {
  it('drops a viewer whose unsent bytes pass the cap and keeps serving the others', () => {
    const hub = hubWith();
    const slow = attach(hub);
    const fast = attach(hub);
    slow.readsNothing = true;
    for (let i = 0; i < 5; i++) hub.publish(i, 'verdict', () => ({ pad: 'x'.repeat(40) }));
    expect(slow.destroyed).to.equal(true);
    expect(hub.stats()).to.include({ viewers: 1, dropped: 1, events: 5 });
    expect(fast.written.filter((w) => w.startsWith('id: ')).length).to.equal(5);
  });

  it('fans an event out to many viewers a slice per turn of the loop, each viewer in event order', async () => {
    const hub = hubWith({ maxViewers: 1000 });
    const viewers = Array.from({ length: 1000 }, () => attach(hub));
    const ids = (r: FakeResponse) => r.written.filter((w) => w.startsWith('id: ')).map((w) => w.split('\n')[0]);
    hub.publish(1, 'verdict', () => ({ n: 1 }));
    hub.publish(2, 'verdict', () => ({ n: 2 }));
    // the first turn wrote to some viewers only: the loop is free for other requests meanwhile
    const reached = viewers.filter((v) => ids(v).length > 0).length;
    expect(reached).to.be.above(0).and.below(1000);
    // a viewer that leaves meanwhile is not written to
    viewers[999]!.end();
    while (viewers.slice(0, 999).some((v) => ids(v).length < 2)) await new Promise((r) => setImmediate(r));
    for (const v of viewers.slice(0, 999)) expect(ids(v)).to.deep.equal(['id: 1', 'id: 2']);
    expect(ids(viewers[999]!)).to.deep.equal([]);
  });

  it('replays only events after Last-Event-ID, and says reset when they are no longer buffered', () => {
    const hub = hubWith();
    attach(hub);
    for (let i = 10; i < 16; i++) hub.publish(i, 'verdict', () => ({ i }));
    const resumed = attach(hub, 13);
    expect(resumed.written.filter((w) => w.startsWith('id: ')).map((w) => w.split('\n')[0])).to.deep.equal(['id: 14', 'id: 15']);
    const tooOld = attach(hub, 5);
    expect(tooOld.written.some((w) => w.startsWith('event: reset'))).to.equal(true);
    expect(tooOld.written.filter((w) => w.startsWith('id: ')).length).to.equal(4);
  });

  it('reports activity on the first viewer and on the last leaving; serialises each event once', () => {
    const hub = hubWith();
    const seen: boolean[] = [];
    hub.onActive = (a) => seen.push(a);
    const a = attach(hub);
    const b = attach(hub);
    hub.publish(1, 'verdict', () => ({ x: 1 }));
    expect(a.written.at(-1)).to.equal(b.written.at(-1));
    expect(a.written[0]).to.equal('retry: 2000\n\n');
    a.end();
    b.end();
    expect(seen).to.deep.equal([true, false]);
    expect(hubWith({ maxViewers: 1 }).full).to.equal(false);
  });

  it('a dropped viewer is reset (RST), so the kernel discards its unsent data at once', () => {
    const hub = hubWith();
    const slow = attach(hub);
    slow.readsNothing = true;
    for (let i = 0; i < 10; i++) hub.publish(i, 'verdict', () => ({ pad: 'x'.repeat(40) }));
    expect(hub.stats().dropped).to.equal(1);
    expect(slow.resets).to.equal(1);
  });

  it('close ends every stream with a final event: shutdown', () => {
    const hub = hubWith();
    const a = attach(hub);
    let last = '';
    a.end = ((chunk?: string) => {
      last = chunk ?? '';
      a.emit('close');
    }) as typeof a.end;
    hub.close();
    expect(last).to.match(/^event: shutdown\ndata: \{/);
    expect(hub.stats().viewers).to.equal(0);
  });

  it('backfills a Last-Event-ID older than the ring from the ledger instead of resetting', () => {
    const asked: [number, number][] = [];
    const hub = hubWith({
      sendBufferBytes: 1e6,
      backfill: (from, to) => {
        asked.push([from, to]);
        return Array.from({ length: to - from }, (_, k) => ({ id: from + k, wire: () => `id: ${from + k}\nevent: verdict\ndata: {}\n\n` }));
      },
    });
    for (let i = 0; i < 10; i++) hub.publish(i, 'verdict', () => ({ i }));
    const resumed = attach(hub, 2);
    expect(asked).to.deep.equal([[3, 6]]);
    expect(resumed.written.filter((w) => w.startsWith('id: ')).map((w) => Number(w.split('\n')[0]!.slice(4)))).to.deep.equal([3, 4, 5, 6, 7, 8, 9]);
    expect(resumed.written.some((w) => w.startsWith('event: reset'))).to.equal(false);
  });

  it('a viewer resumed past ids this replica has not published yet never receives them (no duplicates)', () => {
    const hub = hubWith({ sendBufferBytes: 1e6, aheadGraceMs: 60_000 });
    hub.publish(0, 'verdict', () => ({}));
    const ahead = attach(hub, 3); // another replica already sent it 0..3
    for (let i = 1; i < 6; i++) hub.publish(i, 'verdict', () => ({ i }));
    expect(ahead.written.filter((w) => w.startsWith('id: ')).map((w) => w.split('\n')[0])).to.deep.equal(['id: 4', 'id: 5']);
  });

  it('a viewer ahead of every event for longer than replication lag explains gets event: reset, then every new event', async () => {
    const hub = hubWith({ sendBufferBytes: 1e6, aheadGraceMs: 30 });
    hub.publish(0, 'verdict', () => ({}));
    // as after a ledger restored from an older backup: ids 1..5 will be other events
    const ahead = attach(hub, 5);
    expect(ahead.written.some((w) => w.startsWith('event: reset'))).to.equal(false);
    await until('the reset', () => ahead.written.some((w) => w.startsWith('event: reset')));
    expect(JSON.parse(ahead.written.find((w) => w.startsWith('event: reset'))!.split('data: ')[1]!)).to.deep.include({ newest_id: 0 });
    for (let i = 1; i < 4; i++) hub.publish(i, 'verdict', () => ({ i }));
    expect(ahead.written.filter((w) => w.startsWith('id: ')).map((w) => w.split('\n')[0])).to.deep.equal(['id: 1', 'id: 2', 'id: 3']);
    // reached within the grace: no reset, nothing twice
    const lagging = attach(hub, 4);
    // attached after it with the same grace: once this one is reset, the lagging one's grace is over
    const sentinel = attach(hub, 1000);
    hub.publish(4, 'verdict', () => ({}));
    hub.publish(5, 'verdict', () => ({}));
    await until('the grace to pass', () => sentinel.written.some((w) => w.startsWith('event: reset')));
    expect(lagging.written.some((w) => w.startsWith('event: reset'))).to.equal(false);
    expect(lagging.written.filter((w) => w.startsWith('id: ')).map((w) => w.split('\n')[0])).to.deep.equal(['id: 5']);
  });

  it('drops a viewer whose kernel send queue passes the cap, even with nothing queued in the process', async () => {
    const queues = new Map<unknown, number>();
    const hub = hubWith({ sendBufferBytes: 1000, lagCheckMs: 50, sendQueue: async (sockets) => sockets.map((s) => queues.get(s) ?? 0) });
    const stalled = attach(hub);
    const reading = attach(hub);
    for (let i = 0; i < 40; i++) hub.publish(i, 'verdict', () => ({ pad: 'x'.repeat(40) }));
    // what the kernel took for the stalled viewer is still unacknowledged; the other's was read
    queues.set(stalled.socket, stalled.socket.bytesWritten - 100);
    await until('the stalled viewer to be dropped', () => stalled.destroyed).catch(() => null);
    expect(stalled.resets).to.equal(1);
    expect(reading.destroyed).to.equal(false);
    expect(hub.stats()).to.include({ viewers: 1, dropped: 1 });
    reading.end();
  });

  it('replays at most replayMaxBytes per connection, then ends with event: catchup naming the last id sent', () => {
    const hub = hubWith({ ringSize: 100, sendBufferBytes: 1e6, replayMaxBytes: 200 });
    for (let i = 0; i < 20; i++) hub.publish(i, 'verdict', () => ({ pad: 'x'.repeat(20) }));
    let ended = '';
    const res = new FakeResponse();
    res.end = ((chunk?: string) => {
      ended = chunk ?? '';
    }) as typeof res.end;
    hub.attach(res as unknown as ServerResponse, 0, {});
    const ids = res.written.filter((w) => w.startsWith('id: '));
    expect(ids.join('').length).to.be.at.most(200);
    expect(ids.length).to.be.greaterThan(1);
    expect(ended).to.match(/^retry: \d+\nevent: catchup\ndata: /);
    expect(JSON.parse(ended.split('data: ')[1]!)).to.include({ last_id: ids.length, newest_id: 19 });
    expect(hub.stats()).to.include({ viewers: 0, catchups: 1 });
  });
});
