// C2SP tlog-tiles addressing against the specification's worked example and sumdb's path vectors.
import { expect } from 'chai';
import { encodeTileIndex, levelCount, parseTilePath, tilePath, tilesOf, tileWidthAt } from '../../src/lib/tlog-tiles.js';

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
});
