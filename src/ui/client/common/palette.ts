/**
 * Colours, glyph choice and contrast maths. Pure: unit-tested in Node. The altitude ramp is stepped
 * so the legend can print each numeric stop; ground and unknown altitude have their own colours;
 * every entry keeps ≥ 3:1 against the ocean and the land fills. Decisions use the Okabe–Ito set and
 * a shape each, so they never depend on colour alone.
 */

export const OCEAN = '#0b1d2e';
export const LAND = '#23382c';
export const PANEL = '#0f2133';
export const PAGE_BG = '#07121c';
export const TEXT = '#d8e2ec';
export const MUTED = '#9fb3c6';
export const STALE = '#8a8f94';

/** Upper bound (exclusive, feet) and colour of each step; the last step has no bound. */
export const ALTITUDE_STOPS: readonly { below: number | null; color: string; label: string }[] = [
  { below: 2_000, color: '#ff6e40', label: '< 2,000 ft' },
  { below: 5_000, color: '#ffab40', label: '2,000–5,000' },
  { below: 10_000, color: '#ffee58', label: '5,000–10,000' },
  { below: 20_000, color: '#9ccc65', label: '10,000–20,000' },
  { below: 30_000, color: '#4dd0e1', label: '20,000–30,000' },
  { below: 40_000, color: '#90a4ff', label: '30,000–40,000' },
  { below: null, color: '#f48fb1', label: '≥ 40,000 ft' },
];
export const GROUND_COLOR = '#e0c9a6';
export const UNKNOWN_ALT_COLOR = '#ffffff';

export interface AltitudeInput {
  on_ground?: boolean | null;
  alt_baro_ft?: number | null;
  alt_geom_ft?: number | null;
}

export function altitudeFt(a: AltitudeInput): number | null {
  return a.alt_baro_ft ?? a.alt_geom_ft ?? null;
}

export function altitudeColor(a: AltitudeInput): string {
  if (a.on_ground) return GROUND_COLOR;
  const ft = altitudeFt(a);
  if (ft === null || !Number.isFinite(ft)) return UNKNOWN_ALT_COLOR;
  for (const s of ALTITUDE_STOPS) if (s.below === null || ft < s.below) return s.color;
  return ALTITUDE_STOPS[ALTITUDE_STOPS.length - 1]!.color;
}

export type Decision = 'ALLOW' | 'REVIEW' | 'DENY';
export const DECISIONS: readonly Decision[] = ['ALLOW', 'REVIEW', 'DENY'];
/** Okabe–Ito bluish green, orange, vermillion; shapes circle, triangle, crossed square. */
export const DECISION_STYLE: Record<Decision, { color: string; shape: 'circle' | 'triangle' | 'crossed-square' }> = {
  ALLOW: { color: '#009e73', shape: 'circle' },
  REVIEW: { color: '#e69f00', shape: 'triangle' },
  DENY: { color: '#ff5a1f', shape: 'crossed-square' },
};
export const VESSEL_COLOR = '#56b4e9';
export const ZONE_COLOR = '#ff5a1f';

export type Glyph = 'jet' | 'heavy' | 'turboprop' | 'rotorcraft' | 'uav' | 'fighter' | 'unknown';
/** Half-length in CSS px of each glyph (`arrow`: the level of detail for many aircraft). */
export const GLYPH_SIZE: Record<Glyph | 'arrow', number> = { jet: 10, heavy: 12, turboprop: 10, rotorcraft: 10, uav: 9, fighter: 9, unknown: 9, arrow: 6 };
export const GLYPHS: readonly Glyph[] = ['jet', 'heavy', 'turboprop', 'rotorcraft', 'uav', 'fighter', 'unknown'];

/** ICAO type designators whose look the emitter category does not tell (a small, explicit list). */
const TYPE_GLYPH: Record<string, Glyph> = {
  C130: 'turboprop', C30J: 'turboprop', P3: 'turboprop', E2: 'turboprop', C2: 'turboprop', A400: 'turboprop', C295: 'turboprop', CN35: 'turboprop', DHC6: 'turboprop', B350: 'turboprop', C12: 'turboprop', PC12: 'turboprop', V22: 'turboprop',
  H60: 'rotorcraft', H47: 'rotorcraft', H53: 'rotorcraft', H64: 'rotorcraft', EC45: 'rotorcraft', EC35: 'rotorcraft', NH90: 'rotorcraft', A139: 'rotorcraft', LYNX: 'rotorcraft', PUMA: 'rotorcraft',
  F16: 'fighter', F15: 'fighter', F18H: 'fighter', F18S: 'fighter', F35: 'fighter', F22: 'fighter', EUFI: 'fighter', RFAL: 'fighter', TORN: 'fighter', GRIF: 'fighter', T38: 'fighter', HAWK: 'fighter',
  Q9: 'uav', Q4: 'uav', RQ4: 'uav', MQ9: 'uav', Q1: 'uav',
  C17: 'heavy', C5M: 'heavy', KC46: 'heavy', K35R: 'heavy', B52: 'heavy', A332: 'heavy', E3TF: 'heavy', E6: 'heavy', B748: 'heavy',
};

/** Category per readsb's emitter list: A5 heavy, A6 high performance, A7 rotorcraft, B6 UAV. */
export function glyphFor(category: string | null | undefined, typeCode: string | null | undefined): Glyph {
  const byType = typeCode ? TYPE_GLYPH[typeCode.toUpperCase()] : undefined;
  if (byType) return byType;
  switch (category) {
    case 'A1':
    case 'A2':
      return 'turboprop';
    case 'A3':
    case 'A4':
      return 'jet';
    case 'A5':
      return 'heavy';
    case 'A6':
      return 'fighter';
    case 'A7':
      return 'rotorcraft';
    case 'B6':
      return 'uav';
    default:
      return 'unknown';
  }
}

// WCAG 2.x relative luminance and contrast ratio
function channel(c: number): number {
  const s = c / 255;
  return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
}
export function hexToRgb(hex: string): [number, number, number] {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) throw new Error(`not a #rrggbb colour: ${hex}`);
  return [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16)];
}
export function luminance(hex: string): number {
  const [r, g, b] = hexToRgb(hex);
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}
