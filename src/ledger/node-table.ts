/**
 * The ledger's nodes, packed (see columns.ts): digests in hash columns, payload and signature bytes
 * in an arena, small fields as numbers. `get` rebuilds a LedgerNode whose Buffers are views into
 * the packed storage, so reads copy nothing and a stored node costs about its own bytes.
 */
import { ByteArena, HashColumn, Interner, U32Column } from './columns.js';
import type { LedgerNode } from './ledger.js';

const ZERO = Buffer.alloc(32);

export class NodeTable {
  private readonly digests = new HashColumn();
  private readonly paes = new HashColumn();
  private readonly arena = new ByteArena();
  /** Per node: arena slab, offset, payload length, signature length, detail length + 1 (0: none). */
  private readonly slab = new U32Column();
  private readonly offset = new U32Column();
  private readonly payloadLen = new U32Column();
  private readonly sigLen = new U32Column();
  private readonly detailLen = new U32Column();
  /** Per node: kind id << 17 | keyid id << 1 | simulated. */
  private readonly flags = new U32Column();
  private readonly strings = new Interner();
  /** ts_utc as epoch ms; the rare timestamp that does not round-trip exactly is kept as text. */
  private readonly tsMs: number[] = [];
  private readonly tsText = new Map<number, string>();

  get length(): number {
    return this.digests.length;
  }

  push(n: LedgerNode): void {
    const i = this.digests.length;
    this.digests.push(n.nodeDigest);
    this.paes.push(n.paeSha256);
    const at = n.detail ? this.arena.add(n.payload, n.sig, n.detail) : this.arena.add(n.payload, n.sig);
    this.slab.push(at.slab);
    this.offset.push(at.offset);
    this.payloadLen.push(n.payload.length);
    this.sigLen.push(n.sig.length);
    this.detailLen.push(n.detail ? n.detail.length + 1 : 0);
    this.flags.push((this.strings.id(n.kind) << 17) | (this.strings.id(n.keyid) << 1) | (n.simulated ? 1 : 0));
    const ms = Date.parse(n.tsUtc);
    this.tsMs.push(ms);
    if (!Number.isFinite(ms) || new Date(ms).toISOString() !== n.tsUtc) this.tsText.set(i, n.tsUtc);
  }

  digest(i: number): Buffer {
    return this.digests.get(i);
  }

  get(i: number): LedgerNode | undefined {
    if (!Number.isInteger(i) || i < 0 || i >= this.length) return undefined;
    const slab = this.slab.get(i);
    const offset = this.offset.get(i);
    const plen = this.payloadLen.get(i);
    const slen = this.sigLen.get(i);
    const dlen = this.detailLen.get(i);
    const flags = this.flags.get(i);
    const node: LedgerNode = {
      index: i,
      kind: this.strings.value(flags >>> 17),
      tsUtc: this.tsText.get(i) ?? new Date(this.tsMs[i]!).toISOString(),
      payload: this.arena.view(slab, offset, plen),
      paeSha256: this.paes.get(i),
      sig: this.arena.view(slab, offset + plen, slen),
      keyid: this.strings.value((flags >>> 1) & 0xffff),
      prev: i === 0 ? ZERO : this.digests.get(i - 1),
      nodeDigest: this.digests.get(i),
      simulated: (flags & 1) === 1,
    };
    if (dlen) node.detail = this.arena.view(slab, offset + plen + slen, dlen - 1);
    return node;
  }
}
