/**
 * No plugin provides a private key: what one feature hands another is walked (own properties,
 * getters, array items, map and set entries, to a bounded depth) for a private KeyObject or a PEM
 * private key. Signatures are made through the Signer, which signs in the pool's signing lane.
 */
import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const PEM_PRIVATE = /-----BEGIN (?:[A-Z ]+ )?PRIVATE KEY-----/;
const MAX_DEPTH = 10;

/** Paths from `root` to every private key reachable within `maxDepth` steps. */
function privateKeysIn(root: unknown, maxDepth = MAX_DEPTH, label = 'root'): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  const visit = (v: unknown, path: string, depth: number): void => {
    if (typeof v === 'string') {
      if (PEM_PRIVATE.test(v)) found.push(path);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    if (v instanceof KeyObject) {
      if (v.type === 'private') found.push(path);
      return;
    }
    if (seen.has(v) || depth >= maxDepth || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return;
    seen.add(v);
    if (v instanceof Map) {
      for (const [k, x] of v) {
        visit(k, `${path}.keys()`, depth + 1);
        visit(x, `${path}.get(${String(k)})`, depth + 1);
      }
    } else if (v instanceof Set) {
      for (const x of v) visit(x, `${path}.values()`, depth + 1);
    }
    for (const key of Reflect.ownKeys(v)) visit(read(v, key), `${path}.${String(key)}`, depth + 1);
    // accessors a class defines (a getter may hand out what no field shows)
    for (let proto = Object.getPrototypeOf(v) as object | null; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
      for (const key of Reflect.ownKeys(proto)) {
        if (Object.getOwnPropertyDescriptor(proto, key)?.get) visit(read(v, key), `${path}.${String(key)}`, depth + 1);
      }
    }
  };
  visit(root, label, 0);
  return found;
}

function read(o: object, key: string | symbol): unknown {
  try {
    return (o as Record<string | symbol, unknown>)[key];
  } catch {
    return undefined;
  }
}

describe('plugin provides hold no private key', () => {
  it('the walk finds a planted private KeyObject or PEM deep in maps, sets, arrays and getters', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    class Holder {
      readonly #hidden = 1;
      constructor(private readonly k: KeyObject) {}
      get pem(): string {
        return pem + String(this.#hidden);
      }
    }
    const planted = { a: [{ m: new Map([['x', new Set([new Holder(privateKey)])]]) }], public: privateKey.type === 'private' ? null : privateKey };
    expect(privateKeysIn(planted)).to.deep.equal(['root.a.0.m.get(x).values().k', 'root.a.0.m.get(x).values().pem']);
    expect(privateKeysIn({ deep: { er: planted } }, 3)).to.deep.equal([]);
  });

  for (const mode of ['memory', 'file'] as const) {
    it(`none in any plugin's provides (ledger mode ${mode})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-provides-'));
      let t: TestApp | undefined;
      try {
        t = await buildTestApp({ ledger: { mode, dataDir: dir } });
        // a verdict first, so the ledger, the writer and the signer hold what they hold in use
        await t.http.post('/api/svc/v1/verdict').send({ track_id: 'A1B2C3', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 0, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 100000 }).expect(200);
        expect(Object.keys(t.provided).sort()).to.deep.equal([...t.services.plugins()].sort());
        expect(privateKeysIn(t.provided, MAX_DEPTH, 'provided')).to.deep.equal([]);
        // every plugin is handed the services too (the pool among them, whose signing lane holds the key)
        expect(privateKeysIn(t.services, MAX_DEPTH, 'services')).to.deep.equal([]);
      } finally {
        await t?.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
