// The operator series on /metrics, read from a real app: verdicts by decision and origin, the
// build, the flight leader's role, and the checkpoints' size and age against the ledger.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/load.js';
import { gitCommit } from '../../src/observability/build-info.js';
import { parsePrometheus, withTestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

type Samples = ReturnType<typeof parsePrometheus>;

function value(m: Samples, name: string, labels: Record<string, string> = {}): number {
  const hits = (m.get(name) ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(hits, `${name} ${JSON.stringify(labels)}`).to.have.length(1);
  return hits[0]!.value;
}

const DECISIONS = ['ALLOW', 'REVIEW', 'DENY'];
const strong = { source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 2000 };
// strong evidence, middling evidence, and a fix inside the demo no-fly zone
const FRAMES = [
  { ...strong, track_id: 'op0001' },
  { ...strong, track_id: 'op0002', n_observations: 800 },
  { ...strong, track_id: 'op0003', lat: 36.22, lon: -115.16 },
  { ...strong, track_id: 'op0004' },
  { ...strong, track_id: 'op0005', lat: 36.23, lon: -115.15 },
];

describe('operator metrics (/metrics)', function () {
  const app = withTestApp({ stream: { tickMs: 50 }, ledger: { checkpointIntervalMs: 200 } });
  const scrape = async (): Promise<Samples> => parsePrometheus((await app().http.get('/metrics')).text);
  const verdicts = (m: Samples, simulated: 'true' | 'false'): Record<string, number> => Object.fromEntries(DECISIONS.map((d) => [d, value(m, 'svc_verdicts_total', { decision: d, simulated })]));

  it('from the first scrape: every decision and origin at 0, every shed code at 0, the build, no role, no checkpoint', async () => {
    const m = await scrape();
    expect(m.get('svc_verdicts_total')).to.have.length(6);
    expect(verdicts(m, 'true')).to.deep.equal({ ALLOW: 0, REVIEW: 0, DENY: 0 });
    expect(verdicts(m, 'false')).to.deep.equal({ ALLOW: 0, REVIEW: 0, DENY: 0 });
    expect(Object.fromEntries(m.get('svc_requests_shed_total')!.map((s) => [s.labels.code, s.value]))).to.deep.equal({ QUEUE_FULL: 0, CAPACITY: 0, DEADLINE: 0, RATE_LIMITED: 0 });
    const { version } = JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string };
    // the test runs from the checkout: its HEAD (or, without git, the variable or unknown); the
    // process reads HEAD once, so a commit made while a long run is under way may have moved HEAD on
    const head = gitCommit(projectRoot());
    const reported = m.get('svc_build_info')?.[0]?.labels.commit ?? '';
    const earlier = head !== null && reported !== head && spawnSync('git', ['merge-base', '--is-ancestor', reported, head], { cwd: projectRoot() }).status === 0;
    expect(m.get('svc_build_info')).to.deep.equal([{ labels: { version, commit: earlier ? reported : head ?? process.env.SOURCE_COMMIT ?? 'unknown', node: process.version }, value: 1 }]);
    expect(m.get('svc_replica_role')).to.deep.equal([{ labels: { role: 'flight_leader' }, value: 0 }]);
    expect(value(m, 'svc_ledger_nodes')).to.equal(0);
    expect(value(m, 'svc_ledger_checkpoint_size')).to.equal(0);
    expect(value(m, 'svc_ledger_checkpoint_interval_seconds')).to.equal(0.2);
    // no checkpoint yet: the age runs from the start, and keeps running while the log is empty
    const first = value(m, 'svc_ledger_checkpoint_age_seconds');
    expect(first).to.be.above(0);
    await until('the checkpoint age to grow while nothing is appended', async () => value(await scrape(), 'svc_ledger_checkpoint_age_seconds') > first + 0.05);
  });

  it('counts each appended verdict under the decision it was answered with; a refused frame counts nothing', async () => {
    const answered: Record<string, number> = { ALLOW: 0, REVIEW: 0, DENY: 0 };
    for (const f of FRAMES) {
      const res = await app().http.post('/api/svc/v1/verdict').send(f);
      expect(res.status).to.equal(200);
      answered[res.body.decision as string]!++;
    }
    // precondition: the frames really cover more than one decision, so a mislabelled count fails
    expect(Object.values(answered).filter((n) => n > 0).length).to.be.at.least(2);
    expect((await app().http.post('/api/svc/v1/verdict').send({ track_id: 'op0006' })).status).to.equal(422);
    const m = await scrape();
    expect(verdicts(m, 'false')).to.deep.equal(answered);
    expect(verdicts(m, 'true')).to.deep.equal({ ALLOW: 0, REVIEW: 0, DENY: 0 });
    expect(value(m, 'svc_ledger_nodes')).to.equal(FRAMES.length);
  });

  it('the checkpoint catches up with the ledger within its interval, and its age restarts then', async () => {
    const m = await until('a checkpoint covering every node', async () => {
      const s = await scrape();
      return value(s, 'svc_ledger_checkpoint_size') === FRAMES.length ? s : null;
    });
    // signed at most one interval after the last append (plus a scheduling margin), not at start
    expect(value(m, 'svc_ledger_checkpoint_age_seconds')).to.be.below(2);
    const signed = await app().http.get('/api/svc/v1/ledger/checkpoint');
    expect(signed.status).to.equal(200);
    expect(signed.text.split('\n')[1]).to.equal(String(FRAMES.length));
  });

  it('flight_leader is 1 while a viewer keeps the flight running here, and its verdicts count as simulated', async () => {
    const viewer = await openSse(`${app().baseUrl}/api/svc/v1/stream/verdicts`);
    try {
      await viewer.waitFor(3);
      expect(value(await scrape(), 'svc_replica_role', { role: 'flight_leader' })).to.equal(1);
    } finally {
      viewer.close();
    }
    await until('the flight to stop once its last viewer left', async () => value(await scrape(), 'svc_replica_role', { role: 'flight_leader' }) === 0);
    // once the last batch has landed every node is one counted verdict, each counted once
    const m = await until('the counts to settle on the ledger size', async () => {
      const s = await scrape();
      const total = Object.values(verdicts(s, 'true')).reduce((a, b) => a + b, 0) + Object.values(verdicts(s, 'false')).reduce((a, b) => a + b, 0);
      return total === value(s, 'svc_ledger_nodes') ? s : null;
    });
    const simulated = Object.values(verdicts(m, 'true')).reduce((a, b) => a + b, 0);
    expect(simulated).to.be.at.least(3);
    expect(value(m, 'svc_ledger_nodes')).to.equal(FRAMES.length + simulated);
  });
});
