/**
 * The ledger file audited the way README tells an operator to, independently of the service's
 * code: JSON lines, the PAE and node digests recomputed, links followed, every signature checked
 * with the key its line names (data/keys/<keyid>.pem), and the RFC 9162 root rebuilt.
 */
import { expect } from 'chai';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface FileNode {
  i: number;
  prev: string;
  digest: string;
  pae_sha256: string;
  payload_type: string;
  payload: string;
  sig: string;
  keyid: string;
}

/** The ledger file read the way an auditor would: JSON lines, header first. */
export function readLedgerFile(dir: string): { header: Record<string, unknown>; nodes: FileNode[] } {
  const lines = readFileSync(join(dir, 'khipu.jsonl'), 'utf8').split('\n').filter(Boolean);
  return { header: JSON.parse(lines[0]!) as Record<string, unknown>, nodes: lines.slice(1).map((l) => JSON.parse(l) as FileNode) };
}

/** Independent recomputation: PAE, node digests, chain links and every signature (keys by keyid). */
export function auditLedgerFile(dir: string): { size: number; root: string } {
  const { nodes } = readLedgerFile(dir);
  const keys = new Map<string, ReturnType<typeof createPublicKey>>();
  for (const n of nodes) {
    if (!keys.has(n.keyid)) keys.set(n.keyid, createPublicKey(readFileSync(join(dir, 'keys', `${n.keyid}.pem`), 'utf8')));
  }
  let prev = Buffer.alloc(32);
  const leaves: Buffer[] = [];
  nodes.forEach((n, i) => {
    expect(n.i).to.equal(i);
    const payload = Buffer.from(n.payload, 'base64');
    const pae = Buffer.concat([Buffer.from(`DSSEv1 ${n.payload_type.length} ${n.payload_type} ${payload.length} `), payload]);
    expect(createHash('sha256').update(pae).digest('hex'), `pae ${i}`).to.equal(n.pae_sha256);
    expect(n.prev, `prev ${i}`).to.equal(prev.toString('hex'));
    const idx = Buffer.alloc(8);
    idx.writeBigUInt64BE(BigInt(i));
    const digest = createHash('sha256').update('svc.khipu.node.v1\n').update(idx).update(prev).update(Buffer.from(n.pae_sha256, 'hex')).digest();
    expect(digest.toString('hex'), `digest ${i}`).to.equal(n.digest);
    expect(verify('sha256', pae, keys.get(n.keyid)!, Buffer.from(n.sig, 'base64')), `signature ${i}`).to.equal(true);
    leaves.push(createHash('sha256').update(Buffer.from([0])).update(digest).digest());
    prev = digest;
  });
  return { size: nodes.length, root: rfc9162Root(leaves).toString('hex') };
}

function rfc9162Root(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return createHash('sha256').update(Buffer.from([1])).update(rfc9162Root(leaves.slice(0, k))).update(rfc9162Root(leaves.slice(k))).digest();
}

