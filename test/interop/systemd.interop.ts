/**
 * Interop: deploy/systemd/drone-intel-svc.service against systemd's own tools, from the Debian
 * package `systemd`: `systemd-analyze verify` must accept it without a word and `systemd-analyze
 * security --offline` rate it "OK"; its settings are read back and checked against what the
 * service does (its entry point, MALLOC_TOP_PAD_, its config, exit code 2, how long SIGTERM takes);
 * and the built service runs the way the unit runs it. PID 1 here is not systemd, so that sandbox
 * is rebuilt with util-linux's unshare and setpriv: the unit's environment, every mount read-only
 * but the state directory, /tmp empty, home directories hidden, no capabilities, no new privileges,
 * another user. Run by `npm run test:interop` (not by `npm test`: it needs the Debian package).
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig, projectRoot } from '../../src/config/load.js';
import { SHUTDOWN_MARGIN_MS } from '../../src/shutdown.js';
import { loadFrame } from '../helpers/postgres.js';
import { openSse } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const ROOT = projectRoot();
const NAME = 'drone-intel-svc.service';
const UNIT_FILE = join(ROOT, 'deploy/systemd', NAME);
const ENV_EXAMPLE = join(ROOT, 'deploy/systemd/drone-intel-svc.env.example');
const API = '/api/svc/v1';
/** The Debian package of each program the test runs: a missing one fails the test naming it. */
const PACKAGE: Record<string, string> = { 'systemd-analyze': 'systemd', unshare: 'util-linux', setpriv: 'util-linux' };
/** `systemd-analyze security` rates 0–10; up to 2.0 it says "OK". */
const MAX_EXPOSURE = 2.0;
/** nobody:nogroup, the service's user in the sandbox when the test runs as root. */
const NOBODY = 65534;

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function run(cmd: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', (e) => reject(missing(cmd, e)));
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

function missing(cmd: string, e: Error): Error {
  const pkg = PACKAGE[cmd] ?? cmd;
  return new Error(`the systemd interop test needs \`${cmd}\` from the Debian package \`${pkg}\` (${e.message}); install it: apt-get install -y ${pkg}`);
}

/** A unit file as systemd reads it: `[Section]`, `Key=value`, `#`/`;` comments, `\` continuations. */
type Unit = Map<string, [string, string][]>;

function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section = '';
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head) {
      section = head[1]!;
      unit.set(section, unit.get(section) ?? []);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`not a unit file line: ${line}`);
    unit.get(section)!.push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return unit;
}

/** Every value of `key` in `section`, from its last empty assignment on (systemd resets a list there). */
function all(unit: Unit, section: string, key: string): string[] {
  const values = (unit.get(section) ?? []).filter(([k]) => k === key).map(([, v]) => v);
  return values.slice(values.lastIndexOf('') + 1);
}

/** The value of a single-valued `key`: systemd uses the last assignment. */
function one(unit: Unit, section: string, key: string): string | undefined {
  return (unit.get(section) ?? []).filter(([k]) => k === key).at(-1)?.[1];
}

const isTrue = (v: string | undefined): boolean => v !== undefined && /^(1|yes|y|true|t|on)$/i.test(v);

/** `Environment=` lines: space-separated `NAME=value` words, a word optionally in double quotes. */
function environment(unit: Unit): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of all(unit, 'Service', 'Environment')) {
    for (const word of line.match(/"[^"]*"|\S+/g) ?? []) {
      const a = word.replace(/^"(.*)"$/, '$1');
      env[a.slice(0, a.indexOf('='))] = a.slice(a.indexOf('=') + 1);
    }
  }
  return env;
}

/** A time span as systemd reads it (`10s`, `1min 30s`, `90`), in ms: systemd-analyze parses it. */
async function timespanMs(value: string): Promise<number> {
  const r = await run('systemd-analyze', ['timespan', value]);
  const us = /μs:\s*(\d+)/.exec(r.out);
  if (r.code !== 0 || !us) throw new Error(`systemd-analyze timespan ${value}: ${r.err || r.out}`);
  return Number(us[1]) / 1000;
}

/** The unit in a directory of its own, as `drone-intel-svc.service`, after `edit`. */
function unitCopy(dir: string, edit: (text: string) => string): string {
  const file = join(dir, NAME);
  writeFileSync(file, edit(readFileSync(UNIT_FILE, 'utf8')));
  return file;
}

interface Started {
  child: ChildProcess;
  port: number;
  lines: string[];
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns the service (however wrapped) and resolves once it logs `serving`. */
async function startWrapped(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let port = 0;
  await new Promise<void>((resolve, reject) => {
    child.once('error', (e) => reject(missing(cmd, e)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      try {
        const msg = JSON.parse(line) as { msg?: string; port?: number };
        if (msg.msg === 'listening') port = msg.port!;
        if (msg.msg === 'serving') resolve();
      } catch {
        // not a log line
      }
    });
    void exit.then(({ code, signal }) => reject(new Error(`the service exited with ${code ?? signal} before serving: ${stderr.slice(-2000)}`)));
  });
  return { child, port, lines, stderr: () => stderr, exit };
}

/** The built entry point run directly with `env` until it exits: exit code and stderr. */
async function runToEnd(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/main.js')], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

/**
 * The unit's sandbox, for `sh -c`: $1 the checkout, $2 the state directory, $3 node. The checkout
 * appears at /opt/drone-intel-svc and the state directory at /var/lib/drone-intel-svc, where the
 * unit has them, and node at /opt/node (where the test's own node lives may be hidden by
 * ProtectHome). /tmp is empty and read-only, stricter than PrivateTmp=: the unit says the service
 * writes nothing there when it runs from dist/.
 */
function sandboxScript(asRoot: boolean): string {
  const user = asRoot ? `--reuid=${NOBODY} --regid=${NOBODY} --clear-groups` : '';
  return [
    'set -eu',
    // ProtectSystem=strict: every mount read-only, the API file systems excepted
    `for m in $(awk '{print $5}' /proc/self/mountinfo); do case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) ;; *) mount -o remount,bind,ro "$m" ;; esac; done`,
    'mount -t tmpfs -o mode=0755 tmpfs /opt',
    'mkdir /opt/drone-intel-svc && mount --bind "$1" /opt/drone-intel-svc',
    'touch /opt/node && mount --bind "$3" /opt/node',
    'mount -t tmpfs -o mode=0755 tmpfs /var/lib',
    'mkdir /var/lib/drone-intel-svc && mount --bind "$2" /var/lib/drone-intel-svc',
    'for m in /opt/drone-intel-svc /opt/node /opt /var/lib; do mount -o remount,bind,ro "$m"; done',
    // ReadWritePaths= (and StateDirectory=)
    'mount -o remount,bind,rw /var/lib/drone-intel-svc',
    // PrivateTmp=, read-only
    'for d in /tmp /var/tmp; do mount -t tmpfs -o ro,mode=1777 tmpfs "$d"; done',
    // ProtectHome=yes
    'for d in /home /root /run/user; do if [ -d "$d" ]; then mount -t tmpfs -o ro,mode=0000 tmpfs "$d"; fi; done',
    'cd /opt/drone-intel-svc',
    'umask 0027',
    `exec setpriv ${user} --no-new-privs --bounding-set=-all --inh-caps=-all -- /opt/node /opt/drone-intel-svc/dist/src/main.js`,
  ].join('\n');
}

describe('interop: the systemd unit (systemd-analyze; the service in the unit\'s sandbox)', function () {
  this.timeout(120_000);
  let unit: Unit;
  let env: Record<string, string>;
  let work: string;

  before(async () => {
    const v = await run('systemd-analyze', ['--version']);
    expect(v.code, v.err).to.equal(0);
    unit = parseUnit(readFileSync(UNIT_FILE, 'utf8'));
    env = environment(unit);
    work = mkdtempSync(join(tmpdir(), 'systemd-interop-'));
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  // verify checks that ExecStart's program is executable: the copy verified names the node running
  // this test, not /usr/bin/node, which this machine need not have; nothing else is changed (verify
  // reads no other path of the unit). It warns and still exits 0 on an unknown key or a bad value,
  // so any output at all fails.
  it('systemd-analyze verify accepts the unit without a warning, and does warn of a misspelt key', async () => {
    const node = one(unit, 'Service', 'ExecStart')!.split(/\s+/)[0]!;
    const dir = mkdtempSync(join(work, 'verify-'));
    const file = unitCopy(dir, (t) => t.split(`ExecStart=${node} `).join(`ExecStart=${process.execPath} `));
    const shipped = readFileSync(UNIT_FILE, 'utf8').split('\n');
    expect(readFileSync(file, 'utf8').split('\n').filter((line, i) => line !== shipped[i] && !line.startsWith('ExecStart='))).to.deep.equal([]);
    const ok = await run('systemd-analyze', ['verify', '--recursive-errors=no', file]);
    expect({ code: ok.code, output: ok.out + ok.err }).to.deep.equal({ code: 0, output: '' });

    const bad = unitCopy(mkdtempSync(join(work, 'verify-')), (t) => t.split(`ExecStart=${node} `).join(`ExecStart=${process.execPath} `).replace('ProtectHome=', 'ProtectHomes='));
    const warned = await run('systemd-analyze', ['verify', '--recursive-errors=no', bad]);
    expect(warned.out + warned.err).to.include("Unknown key 'ProtectHomes'");
    const gone = unitCopy(mkdtempSync(join(work, 'verify-')), (t) => t.split(`ExecStart=${node} `).join('ExecStart=/nonexistent/node '));
    const refused = await run('systemd-analyze', ['verify', '--recursive-errors=no', gone]);
    expect(refused.code).to.not.equal(0);
    expect(refused.err).to.include('/nonexistent/node is not executable');
  });

  it(`systemd-analyze security --offline rates its exposure ${MAX_EXPOSURE} or less ("OK")`, async () => {
    const r = await run('systemd-analyze', ['security', '--offline=true', UNIT_FILE]);
    const level = /Overall exposure level for \S+: ([\d.]+) (\w+)/.exec(r.out);
    expect(level, r.out + r.err).to.not.equal(null);
    expect(Number(level![1]), r.out).to.be.at.most(MAX_EXPOSURE);
    expect(level![2]).to.equal('OK');
  });

  it('runs the built entry point with Node from its install directory, as a user of its own', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { main: string };
    const dir = one(unit, 'Service', 'WorkingDirectory')!;
    expect(dir).to.match(/^\/\S+[^/]$/);
    const [node, script, ...rest] = one(unit, 'Service', 'ExecStart')!.split(/\s+/);
    expect(node).to.match(/^\/\S*\/node$/);
    expect(script).to.equal(`${dir}/${pkg.main}`);
    expect(rest).to.deep.equal([]);
    // the Procfile runs the same file
    expect(readFileSync(join(ROOT, 'Procfile'), 'utf8')).to.match(new RegExp(` node ${pkg.main}\\n$`));
    expect(existsSync(join(ROOT, pkg.main.replace(/^dist\//, '').replace(/\.js$/, '.ts')))).to.equal(true);
    expect(one(unit, 'Service', 'Type')).to.be.oneOf(['exec', 'simple']);
    const user = one(unit, 'Service', 'User');
    expect(user).to.match(/^[a-z][a-z0-9-]*$/);
    expect(user).to.not.equal('root');
    expect(isTrue(one(unit, 'Service', 'DynamicUser'))).to.equal(false);
  });

  it('sets MALLOC_TOP_PAD_ as the Procfile and package.json do, and NODE_ENV=production, whose config has an example', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { config: { malloc_top_pad: string } };
    const procfile = /MALLOC_TOP_PAD_=(\d+)/.exec(readFileSync(join(ROOT, 'Procfile'), 'utf8'))![1];
    expect(env.MALLOC_TOP_PAD_).to.equal(pkg.config.malloc_top_pad);
    expect(env.MALLOC_TOP_PAD_).to.equal(procfile);
    expect(env.NODE_ENV).to.equal('production');
    expect(existsSync(join(ROOT, `config/${env.NODE_ENV}.example.json`))).to.equal(true);
  });

  it('keeps the ledger in its state directory, the one path it may write', () => {
    const state = one(unit, 'Service', 'StateDirectory')!;
    expect(state).to.match(/^[a-z][a-z0-9-]*$/);
    const dir = `/var/lib/${state}`;
    expect(env.SVC_DATA_DIR).to.equal(dir);
    expect(one(unit, 'Service', 'ProtectSystem')).to.equal('strict');
    expect(all(unit, 'Service', 'ReadWritePaths').flatMap((v) => v.split(/\s+/))).to.deep.equal([dir]);
    // the production example names the same directory, so either source gives the same ledger
    const example = JSON.parse(readFileSync(join(ROOT, 'config/production.example.json'), 'utf8')) as { ledger: { dataDir: string } };
    expect(example.ledger.dataDir).to.equal(dir);
  });

  it('restarts after a failure, never after exit code 2, which the service exits with on a bad configuration', async () => {
    expect(one(unit, 'Service', 'Restart')).to.equal('on-failure');
    expect(all(unit, 'Service', 'RestartPreventExitStatus').flatMap((v) => v.split(/\s+/))).to.include('2');
    const bad = await runToEnd({ PATH: process.env.PATH, ...env, SVC_DATA_DIR: join(work, 'unused'), SVC_LEDGER_MODE: 'bogus' });
    expect(bad.code, bad.stderr).to.equal(2);
    expect(bad.stderr).to.include('ledger.mode (env SVC_LEDGER_MODE)');
  });

  it('gives SIGTERM longer than the longest drain the shipped configs allow, plus the shutdown margin', async () => {
    expect(one(unit, 'Service', 'KillSignal')).to.equal('SIGTERM');
    expect(one(unit, 'Service', 'KillMode') ?? 'control-group').to.equal('control-group');
    expect(one(unit, 'Service', 'SendSIGKILL') ?? 'yes').to.match(/^(1|yes|true|on)$/);
    const read = (f: string) => (JSON.parse(readFileSync(join(ROOT, 'config', f), 'utf8')) as { server?: { shutdownTimeoutMs?: number } }).server?.shutdownTimeoutMs ?? 0;
    // the environment file's value counts too, commented out or not
    const fromEnv = [...readFileSync(ENV_EXAMPLE, 'utf8').matchAll(/^#?SVC_SHUTDOWN_TIMEOUT_MS=(\d+)/gm)].map((m) => Number(m[1]));
    const drainMs = Math.max(loadConfig({ env: {} }).server.shutdownTimeoutMs, read('production.example.json'), ...fromEnv);
    expect(drainMs).to.be.at.least(1000);
    const stopMs = await timespanMs(one(unit, 'Service', 'TimeoutStopSec')!);
    expect(stopMs).to.be.above(drainMs + SHUTDOWN_MARGIN_MS);
  });

  it('allows at least twice guard.maxConnections open files, the hard limit Node raises its own to', async () => {
    const { guardConfig } = await import('../../src/http/guard.config.js');
    const example = JSON.parse(readFileSync(join(ROOT, 'config/production.example.json'), 'utf8')) as { guard?: { maxConnections?: number } };
    const defaults = guardConfig.schema.validate(undefined).value as { maxConnections: number };
    const maxConnections = Math.max(defaults.maxConnections, example.guard?.maxConnections ?? 0);
    const limit = one(unit, 'Service', 'LimitNOFILE')!;
    const hard = limit.split(':').at(-1)!;
    expect(hard).to.match(/^\d+$/);
    expect(Number(hard)).to.be.at.least(2 * maxConnections);
  });

  it('has the hardening the service was run under below, and none that stops V8', () => {
    const s = (k: string) => one(unit, 'Service', k);
    expect(isTrue(s('NoNewPrivileges'))).to.equal(true);
    expect(s('ProtectHome')).to.match(/^(1|yes|true|on)$/);
    expect(isTrue(s('PrivateTmp'))).to.equal(true);
    expect(s('CapabilityBoundingSet')).to.equal('');
    expect(s('UMask')).to.equal('0027');
    // V8's JIT writes code it then runs; os.cpus() reads /proc/stat
    expect(isTrue(s('MemoryDenyWriteExecute'))).to.equal(false);
    expect(s('ProcSubset') ?? 'all').to.equal('all');
  });

  describe('the built service in the unit\'s sandbox', () => {
    const asRoot = process.getuid?.() === 0;
    let state: string;
    let svc: Started;
    let base: string;

    before(async function () {
      this.timeout(180_000);
      const built = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/build.ts'), '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      built.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const [code] = (await once(built, 'exit')) as [number];
      expect(code, err).to.equal(0);
      state = mkdtempSync(join(work, 'state-'));
      // StateDirectory= hands the directory to the service's user, StateDirectoryMode= sets its mode
      chmodSync(state, parseInt(one(unit, 'Service', 'StateDirectoryMode') ?? '0755', 8));
      if (asRoot) chownSync(state, NOBODY, NOBODY);
      const ns = asRoot ? ['--mount'] : ['--user', '--map-root-user', '--mount'];
      const path = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
      svc = await startWrapped('unshare', [...ns, '--propagation', 'private', 'sh', '-c', sandboxScript(asRoot), 'sandbox', ROOT, state, process.execPath], {
        PATH: path,
        STATE_DIRECTORY: '/var/lib/drone-intel-svc',
        ...env,
        PORT: '0',
        HOST: '127.0.0.1',
      });
      base = `http://127.0.0.1:${svc.port}`;
    });

    after(() => {
      if (svc?.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
    });

    it('serves, appends to the ledger and runs a kernel in a worker thread, with no allocator warning', async () => {
      await until('the sandboxed service to report healthy', async () => (await fetch(`${base}${API}/health`)).status === 200, 60_000);
      const verdict = await fetch(`${base}${API}/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(loadFrame(1)) });
      expect(verdict.status, await verdict.clone().text()).to.equal(200);
      expect(((await verdict.json()) as { ledger: { index: number } }).ledger.index).to.be.a('number');
      const kernel = await fetch(`${base}${API}/ssm/scan?seq_len=128&seed=7`);
      expect(kernel.status, await kernel.text()).to.equal(200);
      expect(svc.lines.filter((l) => l.includes('MALLOC_TOP_PAD_'))).to.deep.equal([]);
      expect(svc.stderr()).to.equal('');
    });

    it('refuses a second instance on its ledger, and one on its port, with exit code 2', async () => {
      const direct = { PATH: process.env.PATH, ...env, HOST: '127.0.0.1', SVC_LEDGER_FSCK_AT_START: 'false' };
      const locked = await runToEnd({ ...direct, PORT: '0', SVC_DATA_DIR: state });
      expect(locked.code, locked.stderr).to.equal(2);
      expect(locked.stderr).to.include(`data directory ${state} is locked by`);
      const port = await runToEnd({ ...direct, PORT: String(svc.port), SVC_DATA_DIR: join(work, 'other') });
      expect(port.code, port.stderr).to.equal(2);
      expect(port.stderr).to.include(`port ${svc.port} is in use (EADDRINUSE)`);
    });

    it('ends a viewer\'s stream and exits 0 within TimeoutStopSec of SIGTERM, having written only to its state directory', async () => {
      const viewer = await openSse(`${base}${API}/stream/verdicts`);
      await viewer.waitFor(1, 30_000);
      const stopMs = await timespanMs(one(unit, 'Service', 'TimeoutStopSec')!);
      const started = performance.now();
      svc.child.kill('SIGTERM');
      const exit = await svc.exit;
      const tookMs = performance.now() - started;
      expect(exit).to.deep.equal({ code: 0, signal: null });
      expect(tookMs).to.be.below(stopMs);
      expect(viewer.events.map((e) => e.event)).to.include('shutdown');
      expect(svc.lines.some((l) => l.includes('"msg":"stopped"'))).to.equal(true);
      expect(svc.stderr()).to.equal('');
      // the ledger and key are there, and UMask=0027 kept every file from other users
      const files = readdirSync(state, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
      expect(files.map((f) => f.name)).to.include('signing-key.pem');
      const open = files.map((f) => join(f.parentPath, f.name)).filter((p) => (statSync(p).mode & 0o007) !== 0);
      expect(open).to.deep.equal([]);
      console.log(`      stop took ${Math.round(tookMs)} ms of ${stopMs} ms; ${files.length} files in the state directory`);
    });
  });
});
