/**
 * CoT tracks as MIL-STD-2525 / APP-6 style frames, derived from the CoT `type` alone (the code, not
 * a picture, travels on the wire, so every client can draw the same frame).
 *
 * CoT type atoms: `a-<affiliation>-<dimension>-…`. Affiliation: f friend, a assumed friend; h
 * hostile, s suspect, j joker, k faker; n neutral; u unknown, p pending, o none, x other. Dimension
 * (MIL-STD-2525B battle dimension): A air, P space, G ground, F SOF, S sea surface, U subsurface, X
 * other.
 *
 * Frames per MIL-STD-2525D §5.3 / APP-6(D) (standard identity × symbol set): friend a rectangle
 * (land) or circle (sea surface), hostile a diamond, neutral a square, unknown a quatrefoil; for air
 * and space the frame keeps its upper half and is open at the bottom (friend an arch, hostile a
 * pointed "tent", neutral a square without its base, unknown three lobes); for subsurface it is the
 * mirror image, open at the top. Fills are 2525's light identity colours (friend crystal blue
 * 128,224,255; hostile salmon 255,128,128; neutral bamboo green 170,255,170; unknown light yellow
 * 255,255,128), the values milsymbol's "Light" colour mode also uses. The geometry below is drawn
 * for this project, not taken from any symbol library.
 */
export type Affiliation = 'friend' | 'hostile' | 'neutral' | 'unknown';
export type Dimension = 'air' | 'space' | 'ground' | 'sea' | 'subsurface';
export type FrameShape = 'rectangle' | 'circle' | 'diamond' | 'square' | 'quatrefoil' | 'arch' | 'tent' | 'open-square' | 'trefoil';

export interface CotFrame {
  affiliation: Affiliation;
  dimension: Dimension;
  shape: FrameShape;
  /** The open side of air/space (bottom) and subsurface (top) frames; null when closed. */
  open: 'bottom' | 'top' | null;
  fill: string;
}

export const FRAME_FILL: Record<Affiliation, string> = { friend: '#80e0ff', hostile: '#ff8080', neutral: '#aaffaa', unknown: '#ffff80' };

const AFFILIATION: Record<string, Affiliation> = { f: 'friend', a: 'friend', h: 'hostile', s: 'hostile', j: 'hostile', k: 'hostile', n: 'neutral' };
const DIMENSION: Record<string, Dimension> = { A: 'air', P: 'space', G: 'ground', F: 'ground', S: 'sea', U: 'subsurface' };

const CLOSED: Record<Affiliation, FrameShape> = { friend: 'rectangle', hostile: 'diamond', neutral: 'square', unknown: 'quatrefoil' };
const OPEN: Record<Affiliation, FrameShape> = { friend: 'arch', hostile: 'tent', neutral: 'open-square', unknown: 'trefoil' };

/** The frame a CoT type gets. Anything that is not an atom (`a-…`), or names no known affiliation, is unknown. */
export function cotFrame(type: string): CotFrame {
  const [kind, aff, dim] = type.split('-');
  const affiliation = (kind === 'a' && aff && AFFILIATION[aff]) || 'unknown';
  // other or missing dimensions draw as land frames
  const dimension = (kind === 'a' && dim && DIMENSION[dim]) || 'ground';
  const vertical = dimension === 'air' || dimension === 'space' ? 'bottom' : dimension === 'subsurface' ? 'top' : null;
  const shape = vertical ? OPEN[affiliation] : dimension === 'sea' && affiliation === 'friend' ? 'circle' : CLOSED[affiliation];
  return { affiliation, dimension, shape, open: vertical, fill: FRAME_FILL[affiliation] };
}

/**
 * The frame's outline in unit space (y down, height about 2, centred on the track's position): the
 * stroked points, in order. An open frame's outline does not return to its start; the fill closes it
 * along the open side.
 */
export function frameOutline(shape: FrameShape, open: CotFrame['open']): [number, number][] {
  let pts: [number, number][];
  switch (shape) {
    case 'rectangle':
      pts = [[-1.5, -1], [1.5, -1], [1.5, 1], [-1.5, 1]];
      break;
    case 'square':
      pts = [[-1, -1], [1, -1], [1, 1], [-1, 1]];
      break;
    case 'diamond':
      pts = [[0, -1.4], [1.4, 0], [0, 1.4], [-1.4, 0]];
      break;
    case 'circle':
      pts = polar(() => 1.2, 0, 2 * Math.PI, 40);
      break;
    case 'quatrefoil':
      pts = polar(clover, 0, 2 * Math.PI, 64);
      break;
    // open frames, drawn open at the bottom; subsurface flips them below
    case 'arch':
      pts = polar(() => 1.2, Math.PI, 2 * Math.PI, 24).map(([x, y]) => [x, y + 0.5]);
      break;
    case 'tent':
      pts = [[-1.1, 0.7], [-1.1, -0.3], [0, -1.3], [1.1, -0.3], [1.1, 0.7]];
      break;
    case 'open-square':
      pts = [[-1, 0.8], [-1, -1], [1, -1], [1, 0.8]];
      break;
    case 'trefoil':
      pts = polar(clover, Math.PI, 2 * Math.PI, 33).map(([x, y]) => [x, y + 0.5]);
      break;
  }
  return open === 'top' ? pts.map(([x, y]) => [x, -y]) : pts;
}

/** Four lobes on the axes, waists on the diagonals. */
function clover(a: number): number {
  return 1 + 0.25 * Math.cos(4 * a);
}

function polar(r: (a: number) => number, from: number, to: number, n: number): [number, number][] {
  const out: [number, number][] = [];
  const closed = to - from >= 2 * Math.PI - 1e-9;
  for (let i = 0; i < (closed ? n : n + 1); i++) {
    const a = from + ((to - from) * i) / n;
    out.push([r(a) * Math.cos(a), r(a) * Math.sin(a)]);
  }
  return out;
}
