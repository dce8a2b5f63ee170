import { expect } from 'chai';
import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import { checkpointText, ecdsaKeyId, ed25519FromSeed, ed25519KeyId, ed25519NoteSignature, ed25519Raw, signedNote, verifierKey, ED25519_TYPE, ECDSA_TYPE } from '../../src/lib/signed-note.js';
import { createPublicKey } from 'node:crypto';

// golang.org/x/mod sumdb/note's own example (note_test.go, example_test.go): a signing key, its
// verifier key, a text and the note Go signs for it (Ed25519 is deterministic)
const GO_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const GO_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE = `${GO_TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

describe('src/lib/signed-note (C2SP signed notes and checkpoints)', () => {
  it("signs Go's example note byte for byte, and derives its verifier key", () => {
    // PRIVATE+KEY+<name>+<key id>+base64(type ‖ seed); the base64 may itself hold '+'
    const material = Buffer.from(GO_SKEY.split('+').slice(4).join('+'), 'base64');
    expect(material[0]).to.equal(ED25519_TYPE);
    const key = ed25519FromSeed(material.subarray(1));
    const pub = ed25519Raw(createPublicKey(key));
    expect(verifierKey('PeterNeumann', ed25519KeyId('PeterNeumann', pub), ED25519_TYPE, pub)).to.equal(GO_VKEY);
    expect(signedNote(GO_TEXT, [ed25519NoteSignature('PeterNeumann', key, GO_TEXT)])).to.equal(GO_NOTE);
  });

  it('names an ECDSA key by the SHA-256 of its SPKI alone, and its vkey carries type 0x02 and the SPKI', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const spki = publicKey.export({ format: 'der', type: 'spki' });
    const id = ecdsaKeyId(spki);
    expect(id.toString('hex')).to.equal(createHash('sha256').update(spki).digest('hex').slice(0, 8));
    const [name, hash, ...rest] = verifierKey('example.org/log', id, ECDSA_TYPE, spki).split('+') as [string, string, ...string[]];
    const material = rest.join('+');
    expect([name, hash]).to.deep.equal(['example.org/log', id.toString('hex')]);
    const raw = Buffer.from(material, 'base64');
    expect(raw[0]).to.equal(0x02);
    expect(raw.subarray(1).equals(spki)).to.equal(true);
  });

  it('a checkpoint is three lines; its Ed25519 signature verifies over exactly that text', () => {
    const root = createHash('sha256').update('').digest();
    const text = checkpointText('example.org/log', 0, root);
    expect(text).to.equal(`example.org/log\n0\n${root.toString('base64')}\n`);
    const key = ed25519FromSeed(Buffer.alloc(32, 7));
    const s = ed25519NoteSignature('example.org/log', key, text);
    expect(verify(null, Buffer.from(text), createPublicKey(key), Buffer.from(s.signature))).to.equal(true);
    expect(() => checkpointText('two\nlines', 1, root)).to.throw();
    expect(() => verifierKey('has space', s.keyId, ED25519_TYPE, Buffer.alloc(32))).to.throw();
  });
});
