import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SERVICE_ERROR_CODES, ServiceError } from '../../src/lib/service-error.js';
import { AppError, fromServiceError } from '../../src/http/errors.js';
import { projectRoot, ConfigError } from '../../src/config/load.js';
import { KeyError } from '../../src/ledger/keys.js';
import { NotALedgerError } from '../../src/ledger/fsck.js';
import { LockHeldError } from '../../src/ledger/store/file-store.js';
import { ChainError } from '../../src/ledger/store/postgres-store.js';
import { StoreUnavailableError } from '../../src/ledger/store/store.js';
import { IngestUnavailableError } from '../../src/cot/shared-store.js';
import { LedgerFullError } from '../../src/ledger/ledger.js';
import { NonFiniteError } from '../../src/lib/numbers.js';
import { DatasetIntegrityError } from '../../src/fleet/dataset/load.js';
import { InfeasibleAssignmentError } from '../../workers/lib/assignment.js';
import { XmlRejection } from '../../src/lib/cot/xml.js';
import { BadPayload } from '../../src/adsb/normalise.js';
import { TooLarge } from '../../src/adsb/upstream.js';
import { UnsupportedTypeError } from '../../src/kernels/type-to-json-schema.js';

// Domain errors carry stable codes from one catalogue; callers decide by code or class, never by
// the message, which is for people and may change.

/** One instance of every domain error class. */
const INSTANCES: ServiceError[] = [
  new ConfigError('bad config'),
  new KeyError('bad key'),
  new NotALedgerError('no ledger'),
  new LockHeldError('locked'),
  new ChainError('broken'),
  new StoreUnavailableError('store down', 7),
  new IngestUnavailableError('ingest down', 9),
  new LedgerFullError(10),
  new NonFiniteError('$.x'),
  new DatasetIntegrityError('mismatch'),
  new InfeasibleAssignmentError(3),
  new XmlRejection('limit', 'too deep'),
  new BadPayload('not a list'),
  new TooLarge('body over 10 bytes'),
  new UnsupportedTypeError('k result: bigint is not JSON'),
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const root = projectRoot();
const SOURCES = [...sourceFiles(join(root, 'src')), ...sourceFiles(join(root, 'workers'))].map((f) => ({ file: relative(root, f), text: readFileSync(f, 'utf8') }));

describe('src/lib/service-error: one coded base for domain errors', () => {
  it('the catalogue: these codes, each once, never renamed (a snapshot: change it only to add a code)', () => {
    expect(Object.keys(SERVICE_ERROR_CODES)).to.deep.equal([
      'SVC_CONFIG_INVALID',
      'SVC_KEY_INVALID',
      'SVC_NOT_A_LEDGER',
      'SVC_LOCK_HELD',
      'SVC_CHAIN_BROKEN',
      'SVC_STORE_UNAVAILABLE',
      'SVC_INGEST_UNAVAILABLE',
      'SVC_LEDGER_FULL',
      'SVC_NON_FINITE',
      'SVC_DATASET_INTEGRITY',
      'SVC_INFEASIBLE_ASSIGNMENT',
      'SVC_XML_REJECTED',
      'SVC_ADSB_BAD_PAYLOAD',
      'SVC_ADSB_TOO_LARGE',
      'SVC_UNSUPPORTED_TYPE',
    ]);
    for (const [code, meaning] of Object.entries(SERVICE_ERROR_CODES)) {
      expect(code).to.match(/^SVC_[A-Z_]+$/);
      expect(meaning.length, code).to.be.above(10);
    }
  });

  it('every domain error class has its own code from the catalogue, its class name as name, and its message', () => {
    const codes = INSTANCES.map((e) => e.code);
    expect(new Set(codes).size, 'one code per class').to.equal(INSTANCES.length);
    expect([...codes].sort()).to.deep.equal(Object.keys(SERVICE_ERROR_CODES).sort());
    for (const e of INSTANCES) {
      expect(e).to.be.instanceOf(ServiceError).and.instanceOf(Error);
      expect(e.name).to.equal(e.constructor.name);
      expect(e.message.length).to.be.above(0);
      expect(String(e)).to.equal(`${e.name}: ${e.message}`);
    }
    expect(new LedgerFullError(10).code).to.equal('SVC_LEDGER_FULL');
  });

  it('no other error class extends Error directly in src/ or workers/: only the coded base and AppError (HTTP answers)', () => {
    const direct = SOURCES.flatMap(({ file, text }) => [...text.matchAll(/class (\w+) extends Error\b/g)].map((m) => `${file} ${m[1]}`));
    expect(direct.sort()).to.deep.equal([
      'src/http/errors.ts AppError',
      'src/lib/service-error.ts ServiceError',
    ]);
  });

  it('fromServiceError maps by code: refusals are 503 with Retry-After, the rest 500 with the error as its cause', () => {
    const answer = (e: ServiceError, retryAfterS?: number) => {
      const a = fromServiceError(e, retryAfterS);
      return { code: a.code, status: a.status, body: a.body, headers: a.headers };
    };
    expect(answer(new LedgerFullError(10), 4)).to.deep.equal({ code: 'CAPACITY', status: 503, body: { detail: 'Ledger is full (10 nodes); nothing is evicted, retry later' }, headers: { 'Retry-After': '4' } });
    expect(answer(new StoreUnavailableError('ledger write queue full', 7), 4)).to.deep.equal({
      code: 'CAPACITY',
      status: 503,
      body: { detail: 'Ledger store unavailable: ledger write queue full, retry later' },
      headers: { 'Retry-After': '7' },
    });
    expect(answer(new IngestUnavailableError('CoT ingest store closed', 9))).to.deep.equal({ code: 'CAPACITY', status: 503, body: { detail: 'CoT ingest store (PostgreSQL) unavailable, retry later' }, headers: { 'Retry-After': '9' } });
    // the default Retry-After of a refusal that names none
    expect(answer(new LedgerFullError(10)).headers).to.deep.equal({ 'Retry-After': '1' });
    const mapped = new Set(['SVC_LEDGER_FULL', 'SVC_STORE_UNAVAILABLE', 'SVC_INGEST_UNAVAILABLE']);
    for (const e of INSTANCES.filter((x) => !mapped.has(x.code))) {
      const a = fromServiceError(e);
      expect(a, e.code).to.be.instanceOf(AppError);
      expect({ code: a.code, status: a.status, body: a.body }, e.code).to.deep.equal({ code: 'INTERNAL', status: 500, body: { detail: 'Internal Server Error' } });
      expect(a.cause, e.code).to.equal(e);
    }
    // the mapping reads the code, not the message
    const renamed = new StoreUnavailableError('anything at all', 2);
    expect(fromServiceError(renamed).status).to.equal(503);
  });

  it('no code classifies errors by their message, except where a library gives nothing else (each named, with why)', () => {
    // a comparison or a pattern test on an error's message
    const pattern = /\.message\s*(===|!==|==|!=)|\.message\??\.(includes|startsWith|endsWith|match|search|indexOf)\(|\.test\(.*\.message/;
    const found = SOURCES.flatMap(({ file, text }) => text.split('\n').flatMap((line) => (pattern.test(line) ? [`${file}: ${line.trim()}`] : [])));
    expect(found).to.deep.equal([
      // node-postgres raises a lost connection as a plain Error without a code
      "src/lib/pg-reconnect.ts: return /connect|terminat|timeout|closed|ended|socket/i.test(e?.message ?? '');",
      // piscina 5 rejects with plain Errors from a catalogue it does not export: queue full, thread exited
      'src/platform/task-results.ts: return (err as Error | undefined)?.message === PISCINA_QUEUE_FULL;',
      "src/platform/task-results.ts: return PISCINA_WORKER_EXIT.test((err as Error | undefined)?.message ?? '');",
      // classified by its code first; the message names the refused options, read as data
      "src/platform/worker-source.ts: refused = e.message.slice(e.message.indexOf(': ') + 2).split(', ');",
    ]);
    // both piscina checks sit in named functions
    const taskResults = SOURCES.find((x) => x.file === 'src/platform/task-results.ts')!.text;
    expect(taskResults).to.match(/export function isPiscinaQueueFull\(err: unknown\): boolean \{\n\s+return \(err as Error \| undefined\)\?\.message === PISCINA_QUEUE_FULL;/);
    expect(taskResults).to.match(/function isPiscinaWorkerExit\(err: unknown\): boolean \{\n\s+return PISCINA_WORKER_EXIT\.test/);
  });
});
