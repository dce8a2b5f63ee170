import { expect } from 'chai';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KeyError, loadSigningKey } from '../../src/ledger/keys.js';
import { buildTestApp } from '../helpers/app.js';
import { withTempDir } from '../helpers/shell.js';

const pkcs8 = (curve: string): string => generateKeyPairSync('ec', { namedCurve: curve }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('ledger signing key', () => {
  it('loads a P-256 PKCS#8 key file: keyid is the SHA-256 of its DER SPKI, no ephemeral-key limit', async () => {
    await withTempDir(async (dir) => {
      const file = join(dir, 'key.pem');
      await writeFile(file, pkcs8('prime256v1'));
      const key = loadSigningKey(file);
      expect(key.ephemeral).to.equal(false);
      expect(key.keyid).to.equal(createHash('sha256').update(key.publicKey.export({ type: 'spki', format: 'der' })).digest('hex'));
      const t = await buildTestApp({ ledger: { signingKeyFile: file } });
      try {
        const doc = (await t.http.get('/api/svc/v1/receipt/export')).body;
        expect(doc.keyid).to.equal(key.keyid);
        expect(doc.limits.map((l: { code: string }) => l.code)).to.deep.equal(['EPHEMERAL_LEDGER']);
        const v = await t.http.post('/api/svc/v1/verdict').send({ track_id: 'k1', lat: 1, lon: 2 });
        expect(v.body.receipt.dsse.keyid).to.equal(key.keyid);
      } finally {
        await t.close();
      }
    });
  });

  it('refuses a key that is not P-256, and a file that is not a key', async () => {
    await withTempDir(async (dir) => {
      const p384 = join(dir, 'p384.pem');
      await writeFile(p384, pkcs8('secp384r1'));
      expect(() => loadSigningKey(p384)).to.throw(KeyError, /must be EC P-256/);
      const junk = join(dir, 'junk.pem');
      await writeFile(junk, 'not a key');
      expect(() => loadSigningKey(junk)).to.throw(KeyError, /not a PKCS#8 PEM private key/);
      expect(() => loadSigningKey(join(dir, 'missing.pem'))).to.throw(KeyError, /cannot read/);
    });
  });

  it('generates a fresh key per start when none is configured (a restart is a new log)', () => {
    expect(loadSigningKey(null).keyid).to.not.equal(loadSigningKey(null).keyid);
  });
});
