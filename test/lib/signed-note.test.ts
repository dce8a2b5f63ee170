import { expect } from 'chai';
import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import { checkKeyName, checkpointText, ecdsaKeyId, ed25519FromSeed, ed25519KeyId, ed25519NoteSignature, ed25519Raw, parseNote, signatureLine, signedNote, verifierKey, ED25519_TYPE, ECDSA_TYPE } from '../../src/lib/signed-note.js';
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

  it("parses Go's example note into its text and signature; a note with several signatures keeps their order", () => {
    const parsed = parseNote(GO_NOTE)!;
    expect(parsed.text).to.equal(GO_TEXT);
    expect(parsed.signatures).to.have.length(1);
    const [sig] = parsed.signatures;
    expect([sig!.name, Buffer.from(sig!.keyId).toString('hex'), sig!.signature.length]).to.deep.equal(['PeterNeumann', 'c74f20a3', 64]);
    // a text with a blank line of its own: the signatures start after the last blank line
    const text = 'first\n\nthird\n';
    const a = { name: 'a.example/x', keyId: Buffer.from('00010203', 'hex'), signature: Buffer.alloc(64, 1) };
    const b = { name: 'b', keyId: Buffer.from('ffeeddcc', 'hex'), signature: Buffer.from([9]) };
    const note = signedNote(text, [a, b]);
    expect(note).to.equal(`${text}\n${signatureLine(a)}${signatureLine(b)}`);
    expect(signatureLine(b)).to.equal(`\u2014 b ${Buffer.from('ffeeddcc09', 'hex').toString('base64')}\n`);
    const back = parseNote(note)!;
    expect(back.text).to.equal(text);
    expect(back.signatures.map((x) => [x.name, Buffer.from(x.keyId).toString('hex'), Buffer.from(x.signature).toString('hex')])).to.deep.equal([
      ['a.example/x', '00010203', '01'.repeat(64)],
      ['b', 'ffeeddcc', '09'],
    ]);
  });

  it('parseNote inverts signedNote, down to a text that is one empty line', () => {
    const sig = { name: 'n', keyId: Buffer.from('01020304', 'hex'), signature: Buffer.from([5]) };
    for (const text of ['\n', 'a\n', 'a\n\n\nb\n']) {
      const back = parseNote(signedNote(text, [sig]))!;
      expect([back.text, back.signatures.length], JSON.stringify(text)).to.deep.equal([text, 1]);
    }
  });

  it('parseNote: null for anything that is not a signed note', () => {
    const sig = `\u2014 name ${Buffer.alloc(5, 7).toString('base64')}`;
    expect(parseNote(`text\n\n${sig}\n`)?.signatures.length).to.equal(1);
    for (const bad of [
      `text\n${sig}\n`, // no blank line
      `x${sig}\n`, // no blank line, and what follows the first character looks like a signature line
      `text\n\n${sig}`, // no final newline
      `text\n\n${sig}\n\n`, // an empty signature line
      `text\n\n- name ${Buffer.alloc(5).toString('base64')}\n`, // not an em dash
      `text\n\n\u2014 name  ${Buffer.alloc(5).toString('base64')}\n`, // two spaces
      `text\n\n\u2014 name ${Buffer.alloc(5).toString('base64')} extra\n`,
      `text\n\n\u2014 name AAAA\n`, // 3 bytes: no room for a key id and a signature
      `text\n\n\u2014 name ${Buffer.alloc(4).toString('base64')}\n`,
      `text\n\n\u2014 name ab$d\n`,
    ]) {
      expect(parseNote(bad), JSON.stringify(bad)).to.equal(null);
    }
  });

  it('refuses malformed inputs: seeds of other lengths, texts without a final newline, notes without signatures, bad names and origins', () => {
    for (const n of [0, 31, 33]) expect(() => ed25519FromSeed(Buffer.alloc(n)), `seed of ${n}`).to.throw('an Ed25519 seed is 32 bytes');
    const s = { name: 'n', keyId: Buffer.alloc(4), signature: Buffer.alloc(64) };
    expect(() => signedNote('no newline', [s])).to.throw('a note text ends with a newline');
    expect(() => signedNote('text\n', [])).to.throw('a signed note has at least one signature');
    for (const name of ['', 'a b', 'a+b', 'a\u00a0b', 'tab\there']) expect(() => checkKeyName(name), JSON.stringify(name)).to.throw('signed-note key name must be non-empty');
    expect(() => checkKeyName('example.org/log')).to.not.throw();
    for (const origin of ['', 'a\nb']) expect(() => checkpointText(origin, 1, Buffer.alloc(32))).to.throw('a checkpoint origin is one non-empty line');
  });
});
