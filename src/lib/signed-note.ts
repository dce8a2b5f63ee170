/**
 * C2SP signed notes and tlog checkpoints: the text, the key ids and the verifier keys ("vkeys") of
 * the two signature types the ledger's checkpoints carry. Ed25519 (type 0x01) is what Go's
 * `x/mod/sumdb/note` verifies; ECDSA P-256 (type 0x02, transparency-dev/witness) is the ledger's
 * own key. Formats: C2SP signed-note.md and tlog-checkpoint.md.
 */
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

export const ED25519_TYPE = 0x01;
export const ECDSA_TYPE = 0x02;

/** A key name is non-empty and holds no Unicode space and no `+`. */
const KEY_NAME = /^[^\s+]+$/u;

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

export function checkKeyName(name: string): void {
  if (!KEY_NAME.test(name)) throw new Error(`signed-note key name must be non-empty with no spaces or '+': ${JSON.stringify(name)}`);
}

/** Ed25519: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ 32-byte public key), first 4 bytes. */
export function ed25519KeyId(name: string, publicKey: Uint8Array): Buffer {
  return sha256(Buffer.from(`${name}\n`, 'utf8'), Uint8Array.of(ED25519_TYPE), publicKey).subarray(0, 4);
}

/** ECDSA: SHA-256 of the DER SubjectPublicKeyInfo, first 4 bytes (the name is not hashed). */
export function ecdsaKeyId(spkiDer: Uint8Array): Buffer {
  return sha256(spkiDer).subarray(0, 4);
}

/** `<name>+<8 hex key id>+base64(type ‖ key)`: what a verifier is configured with. */
export function verifierKey(name: string, keyId: Uint8Array, type: number, key: Uint8Array): string {
  checkKeyName(name);
  return `${name}+${Buffer.from(keyId).toString('hex')}+${Buffer.concat([Uint8Array.of(type), key]).toString('base64')}`;
}

/** The raw 32-byte Ed25519 public key of a KeyObject. */
export function ed25519Raw(publicKey: KeyObject): Buffer {
  // an Ed25519 SPKI is a fixed 12-byte header and the 32-byte key
  return publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
}

/** The Ed25519 private key of a 32-byte seed (RFC 8410 PKCS#8: a fixed 16-byte header and the seed). */
export function ed25519FromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  return createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
}

export interface NoteSignature {
  name: string;
  keyId: Uint8Array;
  signature: Uint8Array;
}

/** The signature line: `— <name> base64(key id ‖ signature)` (an em dash and a space first). */
export function signatureLine({ name, keyId, signature }: NoteSignature): string {
  return `\u2014 ${name} ${Buffer.concat([keyId, signature]).toString('base64')}\n`;
}

/** A note: its text (ending in a newline), a blank line, one line per signature. */
export function signedNote(text: string, signatures: readonly NoteSignature[]): string {
  if (!text.endsWith('\n')) throw new Error('a note text ends with a newline');
  if (signatures.length === 0) throw new Error('a signed note has at least one signature');
  return `${text}\n${signatures.map(signatureLine).join('')}`;
}

/** An Ed25519 note signature over `text` (the signed message is the text itself). */
export function ed25519NoteSignature(name: string, privateKey: KeyObject, text: string): NoteSignature {
  const publicKey = ed25519Raw(createPublicKey(privateKey));
  return { name, keyId: ed25519KeyId(name, publicKey), signature: sign(null, Buffer.from(text, 'utf8'), privateKey) };
}

/** A checkpoint's text: origin, decimal tree size, base64 RFC 6962 root, each on its line. */
export function checkpointText(origin: string, size: number, root: Uint8Array): string {
  if (origin === '' || origin.includes('\n')) throw new Error('a checkpoint origin is one non-empty line');
  return `${origin}\n${size}\n${Buffer.from(root).toString('base64')}\n`;
}

/** Splits a signed note into its text and signature lines; null when it is not one. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } | null {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) return null;
  const signatures: NoteSignature[] = [];
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})$/u.exec(line);
    if (!m) return null;
    const bytes = Buffer.from(m[2]!, 'base64');
    if (bytes.length < 5) return null;
    signatures.push({ name: m[1]!, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4) });
  }
  return { text: note.slice(0, split + 1), signatures };
}
