/**
 * A real HAProxy (Debian package `haproxy`) in front of service replicas, run in the foreground
 * with a generated config in a temp dir: HTTP mode, round robin, no stickiness, active health
 * checks on /health, and an admin stats socket to read what the balancer thinks of each server.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './free-port.js';

export { freePort };
import { join } from 'node:path';

export const HAPROXY_INSTALL = 'apt-get install -y haproxy';

/** Response header naming the server haproxy picked for a request. */
export const SERVED_BY = 'x-served-by';

export interface Haproxy {
  child: ChildProcess;
  base: string;
  /** One row of `show stat` per server of the backend: name, status (UP, DOWN, ...), last check. */
  servers(): Promise<ServerStat[]>;
  stderr(): string;
  stop(): Promise<void>;
}

export interface ServerStat {
  name: string;
  status: string;
  checkStatus: string;
  /** Times the server went from UP to DOWN. */
  downs: number;
}

/** Debian installs it in /usr/sbin, which an unprivileged user's PATH often lacks. */
const HAPROXY = spawnSync('haproxy', ['-v']).error && existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy';

/** `haproxy -v`, or an error naming the Debian package to install. */
export function haproxyVersion(): string {
  const r = spawnSync(HAPROXY, ['-v'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new Error(`this interop suite needs HAProxy (Debian package \`haproxy\`): ${r.error?.message ?? r.stderr}; install it: ${HAPROXY_INSTALL}`);
  }
  return r.stdout.split('\n')[0]!;
}

export interface HaproxyOptions {
  /** Where the config and the stats socket go. */
  dir: string;
  /** Backend servers by name, each `http://127.0.0.1:<port>`. */
  servers: Record<string, string>;
  healthPath: string;
  /** Health check interval, and the failed / passed checks that mark a server down / up. */
  interMs: number;
  fall: number;
  rise: number;
}

export function haproxyConfig(o: HaproxyOptions & { port: number; socket: string }): string {
  const servers = Object.entries(o.servers).map(([name, url]) => `  server ${name} ${new URL(url).host} check`);
  return [
    'global',
    '  maxconn 4096',
    // server state changes and failed requests only, for the failure messages
    '  log stderr format raw local0',
    `  stats socket ${o.socket} mode 600 level admin`,
    '',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  option dontlog-normal',
    '  timeout connect 2s',
    // longer than the stream's heartbeat, so an idle SSE response is never cut
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout tunnel 1h',
    // a check waits this long for /health: a replica busy with a burst is slow, not down
    '  timeout check 2s',
    '  timeout http-keep-alive 10s',
    // a request that cannot connect (a replica just killed) goes to the other replica
    '  retries 3',
    '  option redispatch',
    '',
    'frontend svc',
    `  bind 127.0.0.1:${o.port}`,
    '  default_backend replicas',
    '',
    'backend replicas',
    '  balance roundrobin',
    `  option httpchk GET ${o.healthPath}`,
    '  http-check expect status 200',
    `  default-server inter ${o.interMs} fastinter ${o.interMs} downinter ${o.interMs} fall ${o.fall} rise ${o.rise}`,
    `  http-response set-header ${SERVED_BY} %[srv_name]`,
    ...servers,
    '',
  ].join('\n');
}

/** Sends one command to the stats socket and returns the whole answer. */
function socketCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = connect(socket);
    let out = '';
    c.setEncoding('utf8');
    c.on('data', (d: string) => (out += d));
    c.on('error', reject);
    c.on('end', () => resolve(out));
    c.end(`${command}\n`);
  });
}

function parseStat(csv: string, backend: string): ServerStat[] {
  const [head, ...rows] = csv.trim().split('\n');
  const cols = head!.replace(/^# /, '').split(',');
  const at = (name: string): number => cols.indexOf(name);
  return rows
    .map((r) => r.split(','))
    .filter((r) => r[at('pxname')] === backend && !['FRONTEND', 'BACKEND'].includes(r[at('svname')]!))
    .map((r) => ({ name: r[at('svname')]!, status: r[at('status')]!, checkStatus: r[at('check_status')]!, downs: Number(r[at('chkdown')]) }));
}

/** Whether a connection to `port` on loopback, or to the unix socket at `path`, is accepted. */
function accepts(target: { port: number } | { path: string }): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const c = 'port' in target ? connect(target.port, '127.0.0.1') : connect(target.path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** Starts haproxy in the foreground (-db) and resolves once its port and its stats socket accept connections. */
export async function startHaproxy(o: HaproxyOptions): Promise<Haproxy> {
  const port = await freePort();
  const socket = join(o.dir, 'haproxy.sock');
  const cfg = join(o.dir, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig({ ...o, port, socket }));
  const child = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<never>((_, reject) => {
    child.once('error', (err) => reject(new Error(`haproxy could not be run (${err.message}); install it: ${HAPROXY_INSTALL}`)));
    child.once('exit', (code) => reject(new Error(`haproxy exited with ${code}: ${stderr}`)));
  });
  exited.catch(() => {}); // observed through the race below; later it only means haproxy stopped
  const deadline = Date.now() + 10_000;
  const listening = (async () => {
    for (let wait = 5; child.exitCode === null && child.signalCode === null; wait = Math.min(wait * 2, 100)) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`haproxy did not listen on 127.0.0.1:${port} and ${socket} within 10 s: ${stderr}`);
      }
      // the stats socket can come up after the port: the tests read server states through it
      if ((await accepts({ port })) && (await accepts({ path: socket }))) return;
      await new Promise((r) => setTimeout(r, wait));
    }
  })();
  await Promise.race([listening, exited]);
  return {
    child,
    base: `http://127.0.0.1:${port}`,
    servers: async () => parseStat(await socketCommand(socket, 'show stat'), 'replicas'),
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
