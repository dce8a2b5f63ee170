// C2SP tlog-tiles addressing against the specification's worked example and sumdb's path vectors.
import { expect } from 'chai';
import { consistencyProof, inclusionProof, leafHash, rootFromLeafHashes } from '../../src/lib/merkle.js';
import { encodeTileIndex, levelCount, parseTilePath, tilePath, tilesOf, tileWidthAt } from '../../src/lib/tlog-tiles.js';

/**
 * Tree hashes and proofs printed by golang.org/x/mod/sumdb/tlog 0.7.0 (Debian's golang-golang-x-mod-dev)
 * for the records of its own TestTree, `leaf 0` … `leaf 99`: TreeHash at several sizes,
 * ProveRecord(100, 42) and ProveTree(100, 37). The ledger's tiles are checked against the same
 * RFC 6962 functions these vectors pin down.
 */
const SUMDB = {
  roots: { 1: 'G7l9zCFjXUfiZj79/QoXRobZjdcBNS3SzQbotD/T0wU=', 2: '/F9riP+FVPdbsvnm85wxsZNtRLaSdu33sSBalVuXYeM=', 3: '1Pksj7uJcg6ztVZ3x9fvrd/rENEaGoSguo8aIzN/qpU=', 7: 'WmH8K1T5z6cXdPJDIUPdQMbLKxGUf69lp9PaXLZRmcg=', 8: 'xcLIIO00L92ozolra5z1uMAKIcxLIHFMxuXTwFw1JAs=', 64: '8mHiNpLZeP2sP9lJ21SVlApDeuZxuabd6aphGNADZS8=', 100: 'E/iJFcVg3JEaHaD7IJ2EoglxBR8pTr60KPs/wpOvJ0M=' } as Record<number, string>,
  record42: 'MtZISa/30AwcCM/DX3L903rkGtBMUNPQoiLOnVL3gMk= HQlfFgoDPwjZ6IoYgRWK2+OATgYDWokzm08K4D1treU= BUp4UENvDQWQreOrL0X1+H2FjEujUU2muPocCKsPIuE= 33CoGkNmy/3D5H2IeSPc6bAZvEd9ZWBL2e3eC8OXwTI= nElKb1se8i1C8FCfRZNrilwF6OoGvvi0IyTxX9Usl9Y= mltaKilXHK09gVVfNL8yVv2lYnlpHN7DT1fI9ISss/o= Ww8HmgYW6QBAbUdlvADEdLQtGc3Ps/Qs678QKnwkB/w=',
  tree37: 's0iJOUVkKQwAxsx9UEPV48IZlITDAcEYKvNGdY3fEbQ= kAI2mHOU4t9fH4VMoQP22+YMp8FQ8JRBQSq7mpXSV4Q= OFkRC2Ia2bvMlPrsumkqr45ay32xXRqkGmqk4mmKIGk= W+d7jKTb7oTFmtC8yxfVbHM3UNCm0beA3j2Olp3QMWI= IFQ7jalskgBDvkqooacH36ByRDZ2D7pWPDROL9wwqIU= nElKb1se8i1C8FCfRZNrilwF6OoGvvi0IyTxX9Usl9Y= mltaKilXHK09gVVfNL8yVv2lYnlpHN7DT1fI9ISss/o= Ww8HmgYW6QBAbUdlvADEdLQtGc3Ps/Qs678QKnwkB/w=',
};

describe('tlog-tiles addressing', () => {
  it('writes indices in 3-digit groups with x prefixes (the specification and sumdb vectors, height prefix stripped)', () => {
    expect(encodeTileIndex(1234067)).to.equal('x001/x234/067');
    expect(encodeTileIndex(0)).to.equal('000');
    expect(encodeTileIndex(999)).to.equal('999');
    expect(encodeTileIndex(1000)).to.equal('x001/000');
    // golang.org/x/mod/sumdb/tlog tilePaths: tile/3/5/x123/x456/078(.p/2), tile/1/data/x003/x057/500
    expect(tilePath({ level: 5, index: 123456078, width: 256 })).to.equal('5/x123/x456/078');
    expect(tilePath({ level: 5, index: 123456078, width: 2 })).to.equal('5/x123/x456/078.p/2');
    expect(tilePath({ level: 'entries', index: 3057500, width: 256 })).to.equal('entries/x003/x057/500');
  });

  it('parses exactly the canonical paths and round-trips them', () => {
    for (const t of [
      { level: 0, index: 0, width: 256 },
      { level: 0, index: 1, width: 5 },
      { level: 2, index: 1234067, width: 255 },
      { level: 'entries' as const, index: 273, width: 112 },
      { level: 63, index: 2 ** 53 - 1, width: 1 },
    ]) {
      expect(parseTilePath(tilePath(t).split('/'))).to.deep.equal(t);
    }
    // sumdb's refusals, and other spellings of a tile that has one canonical path
    for (const bad of ['5/123/456/078', '-1/123/456/078', '0/1', '0/0001', '0/x000/001', '0/001.p/0', '0/001.p/256', '0/001.p/07', '64/000', '00/000', 'data/000', '0/x001', '0/x1/000', '0/001.p', '0', '0/001/']) {
      expect(parseTilePath(bad.split('/')), bad).to.equal(null);
    }
  });

  it('a tree of 70,000 entries: 273 full level-0 tiles and one of width 112, one full and one of width 17 at level 1, one of width 1 at level 2', () => {
    const tiles = tilesOf(70_000);
    const at = (level: number) => tiles.filter((t) => t.level === level);
    expect(at(0).length).to.equal(274);
    expect(at(0).filter((t) => t.width === 256).length).to.equal(273);
    expect(at(0).at(-1)).to.deep.equal({ level: 0, index: 273, width: 112 });
    expect(at(1)).to.deep.equal([
      { level: 1, index: 0, width: 256 },
      { level: 1, index: 1, width: 17 },
    ]);
    expect(at(2)).to.deep.equal([{ level: 2, index: 0, width: 1 }]);
    expect(at(3)).to.deep.equal([]);
    expect([levelCount(70_000, 0), levelCount(70_000, 1), levelCount(70_000, 2)]).to.deep.equal([70_000, 273, 1]);
    expect(tilePath(at(0).at(-1)!)).to.equal('0/273.p/112');
    expect(tileWidthAt(70_000, 0, 274)).to.equal(0);
  });

  it('tiles of trees whose levels end on a tile boundary, and of the empty and one-entry trees: exactly the non-empty ones', () => {
    expect(tilesOf(0)).to.deep.equal([]);
    expect(tilesOf(1)).to.deep.equal([{ level: 0, index: 0, width: 1 }]);
    expect(tilesOf(512)).to.deep.equal([
      { level: 0, index: 0, width: 256 },
      { level: 0, index: 1, width: 256 },
      { level: 1, index: 0, width: 2 },
    ]);
    const t = tilesOf(65_536);
    expect([t.length, t.filter((x) => x.level === 0 && x.width === 256).length]).to.deep.equal([258, 256]);
    expect(t.slice(256)).to.deep.equal([
      { level: 1, index: 0, width: 256 },
      { level: 2, index: 0, width: 1 },
    ]);
    expect([tileWidthAt(512, 0, 1), tileWidthAt(512, 0, 2), tileWidthAt(512, 1, 0), tileWidthAt(511, 1, 0)]).to.deep.equal([256, 0, 2, 1]);
  });

  it("RFC 6962 hashing equals sumdb's: tree hashes of its TestTree records and its record and tree proofs", () => {
    const leaves = Array.from({ length: 100 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    for (const [size, root] of Object.entries(SUMDB.roots)) expect(rootFromLeafHashes(leaves.slice(0, Number(size))).toString('base64'), `size ${size}`).to.equal(root);
    expect(inclusionProof(leaves, 42).map((h) => h.toString('base64')).join(' ')).to.equal(SUMDB.record42);
    expect(consistencyProof(leaves, 37).map((h) => h.toString('base64')).join(' ')).to.equal(SUMDB.tree37);
  });
});
