// The public key's created_at is the key's own time, recorded with it: when it was generated, or
// when the ledger first saw an operator's key file; every later start reports the same value.
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createDatabase, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { MemoryStore } from '../../src/ledger/store/memory-store.js';

const PUBKEY = '/api/svc/v1/edge/pubkey';

interface Start {
  keyid: string;
  createdAt: string;
  /** Date.now() just before this start began. */
  startedAt: number;
}

/** Starts the service on `config`, reads its public key document, and stops it. */
async function start(config: Record<string, unknown>): Promise<Start> {
  const startedAt = Date.now();
  let app: TestApp | undefined;
  try {
    app = await buildTestApp(config);
    const body = (await app.http.get(PUBKEY).expect(200)).body as { keyid: string; created_at: string };
    return { keyid: body.keyid, createdAt: body.created_at, startedAt };
  } finally {
    await app?.close();
  }
}

function operatorKey(dir: string): string {
  const file = join(dir, 'operator-key.pem');
  writeFileSync(file, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return file;
}

describe('the public key created_at survives restarts', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-key-created-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('file mode, generated key: the second start reports the time the first one generated it', async () => {
    const config = { ledger: { mode: 'file', dataDir: join(dir, 'data') } };
    const first = await start(config);
    const second = await start(config);
    expect(second.keyid).to.equal(first.keyid);
    expect(second.createdAt).to.equal(first.createdAt);
    expect(Date.parse(first.createdAt)).to.be.at.least(first.startedAt).and.below(second.startedAt);
    // recorded beside the public key, in the data directory's keyring
    expect(readFileSync(join(dir, 'data', 'keys', `${first.keyid}.created_at`), 'utf8')).to.equal(`${first.createdAt}\n`);
  });

  it("file mode, an operator's key file: the time the ledger first saw it, kept; the key file is never changed", async () => {
    const keyFile = operatorKey(dir);
    const pem = readFileSync(keyFile, 'utf8');
    const config = { ledger: { mode: 'file', dataDir: join(dir, 'data'), signingKeyFile: keyFile } };
    const first = await start(config);
    const second = await start(config);
    expect(second.createdAt).to.equal(first.createdAt);
    expect(Date.parse(second.createdAt)).to.be.below(second.startedAt);
    expect(readFileSync(keyFile, 'utf8')).to.equal(pem);
  });

  it('a keyring written before the time was recorded: the public key file\'s time, then kept', async () => {
    const config = { ledger: { mode: 'file', dataDir: join(dir, 'data') } };
    const first = await start(config);
    const timeFile = join(dir, 'data', 'keys', `${first.keyid}.created_at`);
    rmSync(timeFile);
    const published = new Date(Date.UTC(2025, 5, 1, 12, 0, 0));
    utimesSync(join(dir, 'data', 'keys', `${first.keyid}.pem`), published, published);
    expect((await start(config)).createdAt).to.equal(published.toISOString());
    expect(existsSync(timeFile)).to.equal(true);
    // a damaged time file is written anew from the same source
    writeFileSync(timeFile, 'not a time\n');
    expect((await start(config)).createdAt).to.equal(published.toISOString());
    expect(readFileSync(timeFile, 'utf8')).to.equal(`${published.toISOString()}\n`);
  });

  it('memory mode: first recorded wins within the process', async () => {
    const store = new MemoryStore();
    expect(await store.recordKey('k', 'PEM', '2026-01-01T00:00:00.000Z')).to.equal('2026-01-01T00:00:00.000Z');
    expect(await store.recordKey('k', 'PEM', '2026-06-01T00:00:00.000Z')).to.equal('2026-01-01T00:00:00.000Z');
  });

  describe('postgres mode', () => {
    let db: TestDatabase;
    let url: string;
    before(async () => {
      db = await usePostgres();
      url = await createDatabase(db, `keytime_${process.pid}`);
    });
    after(async () => {
      await db?.release();
    });

    it('two starts (two replica data directories) report the time the shared ledger first recorded the key', async () => {
      const keyFile = operatorKey(dir);
      const first = await start({ ledger: { mode: 'postgres', databaseUrl: url, signingKeyFile: keyFile, dataDir: join(dir, 'a') } });
      const second = await start({ ledger: { mode: 'postgres', databaseUrl: url, signingKeyFile: keyFile, dataDir: join(dir, 'b') } });
      expect(second.createdAt).to.equal(first.createdAt);
      expect(Date.parse(first.createdAt)).to.be.at.least(first.startedAt).and.below(second.startedAt);
    });
  });
});
