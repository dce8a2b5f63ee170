/**
 * C2SP tlog-tiles addressing: tile height 8 (256 hashes of 32 bytes per full tile), level 0 holds
 * the leaf hashes, level L ≥ 1 the Merkle tree hashes of the full tiles of level L-1, i.e. the tree
 * nodes of height 8·L. Tile indices are written in 3-digit groups, every group but the last
 * prefixed with `x` (1234067 → x001/x234/067), and a partial tile of width W adds `.p/W`.
 */

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;
export const HASH_SIZE = 32;

export interface TileRef {
  /** 0..63, or 'entries' for an entry bundle. */
  level: number | 'entries';
  index: number;
  /** 1..256; 256 is a full tile. */
  width: number;
}

/** `1234067` → `x001/x234/067`. */
export function encodeTileIndex(n: number): string {
  let s = String(n % 1000).padStart(3, '0');
  for (n = Math.floor(n / 1000); n > 0; n = Math.floor(n / 1000)) s = `x${String(n % 1000).padStart(3, '0')}/${s}`;
  return s;
}

/** The path below `tile/`: `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]`. */
export function tilePath(t: TileRef): string {
  return `${t.level}/${encodeTileIndex(t.index)}${t.width < TILE_WIDTH ? `.p/${t.width}` : ''}`;
}

const GROUP = /^x\d{3}$/;
const LAST = /^\d{3}$/;

/**
 * Parses the segments after `tile/` strictly (the canonical spelling only, so every tile has one
 * URL): null when they name no tile.
 */
export function parseTilePath(segments: readonly string[]): TileRef | null {
  if (segments.length < 2) return null;
  const levelText = segments[0]!;
  let level: TileRef['level'];
  if (levelText === 'entries') level = 'entries';
  else if (/^(0|[1-9]\d?)$/.test(levelText) && Number(levelText) < 64) level = Number(levelText);
  else return null;
  let rest = segments.slice(1);
  let width = TILE_WIDTH;
  const last = rest.at(-1)!;
  if (rest.length >= 2 && rest.at(-2)!.endsWith('.p')) {
    if (!/^[1-9]\d{0,2}$/.test(last) || Number(last) >= TILE_WIDTH) return null;
    width = Number(last);
    rest = [...rest.slice(0, -2), rest.at(-2)!.slice(0, -2)];
  }
  // 2^53 has 16 digits: at most 6 groups
  if (rest.length > 6 || !LAST.test(rest.at(-1)!) || !rest.slice(0, -1).every((g) => GROUP.test(g))) return null;
  let index = 0;
  for (const g of rest) index = index * 1000 + Number(g.replace('x', ''));
  // a leading zero group (x000/…) is another spelling of a shorter path
  if (rest.length > 1 && rest[0] === 'x000') return null;
  return Number.isSafeInteger(index) ? { level, index, width } : null;
}

/** Hashes stored at `level` for a tree of `size` leaves: floor(size / 256^level). */
export function levelCount(size: number, level: number): number {
  return Math.floor(size / TILE_WIDTH ** level);
}

/** The width tile (level, index) has in a tree of `size` leaves: 0 when it is empty. */
export function tileWidthAt(size: number, level: number, index: number): number {
  return Math.max(0, Math.min(TILE_WIDTH, levelCount(size, level) - index * TILE_WIDTH));
}

/** Every tile a tree of `size` leaves has, level by level (the full ones and the partial right edge). */
export function tilesOf(size: number): TileRef[] {
  const out: TileRef[] = [];
  for (let level = 0; levelCount(size, level) > 0; level++) {
    const count = levelCount(size, level);
    for (let index = 0; index * TILE_WIDTH < count; index++) out.push({ level, index, width: tileWidthAt(size, level, index) });
  }
  return out;
}
