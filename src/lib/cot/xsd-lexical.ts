/**
 * The lexical rules of the MITRE CoT 2.0 schema's simple types, matched to libxml2 (`xmllint
 * --schema`, the test oracle) case by case, so our "valid" is the schema's:
 * - XSD `\w` is any character except punctuation, separators and "other" (so `_` is NOT a word
 *   character, `+` and `ü` are); XSD `\d` is any Unicode decimal digit; patterns are anchored.
 * - xs:decimal has no exponent, NaN or INF; surrounding XML whitespace is collapsed; range checks
 *   are exact (no float rounding: 90.0000000000000001 is out of range).
 * - xs:dateTime as libxml2 checks it: no surrounding whitespace, real calendar days, 24:00:00 only
 *   exactly, seconds < 60, zone offsets up to ±14:00.
 */

const W = '[^\\p{P}\\p{Z}\\p{C}]';
export const TYPE_PATTERN = new RegExp(`^${W}+(?:-${W}+)*(?:;[^;]*)?$`, 'u');
export const HOW_PATTERN = new RegExp(`^${W}(?:-${W}+)*$`, 'u');
export const QOS_PATTERN = new RegExp(`^\\p{Nd}-${W}-${W}$`, 'u');

const collapse = (v: string): string => v.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, '');

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

/** The canonical parts of an xs:decimal, or null if the lexical form is not one. */
export function parseDecimal(raw: string): { negative: boolean; int: string; frac: string } | null {
  const v = collapse(raw);
  const m = DECIMAL.exec(v);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const int = m[2]!.replace(/^0+/, '');
  const frac = (m[3] ?? '').replace(/0+$/, '');
  const zero = int === '' && frac === '';
  return { negative: m[1] === '-' && !zero, int, frac };
}

/** Exact comparison of a parsed decimal with an integer bound: -1, 0 or 1. */
export function compareDecimal(d: { negative: boolean; int: string; frac: string }, bound: number): number {
  const b = { negative: bound < 0, int: String(Math.abs(bound)).replace(/^0+/, '') };
  if (d.negative !== b.negative) return d.negative ? -1 : 1;
  const sign = d.negative ? -1 : 1;
  let mag: number;
  if (d.int.length !== b.int.length) mag = d.int.length > b.int.length ? 1 : -1;
  else if (d.int !== b.int) mag = d.int > b.int ? 1 : -1;
  else mag = d.frac !== '' ? 1 : 0;
  return sign * mag;
}

/** Fixed-point decimal check with an inclusive integer range; returns an error code or null. */
export function checkDecimal(raw: string, min?: number, max?: number): 'invalid_decimal' | 'out_of_range' | null {
  const d = parseDecimal(raw);
  if (!d) return 'invalid_decimal';
  if (min !== undefined && compareDecimal(d, min) < 0) return 'out_of_range';
  if (max !== undefined && compareDecimal(d, max) > 0) return 'out_of_range';
  return null;
}

const DATETIME = /^(-?)(\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

function daysIn(year: number, month: number): number {
  if (month === 2) {
    const y = Math.abs(year);
    return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

export function isDateTime(v: string): boolean {
  const m = DATETIME.exec(v);
  if (!m) return false;
  const [, , yearS, mo, d, h, mi, s, frac, tz] = m as unknown as string[];
  if (yearS!.length > 4 && yearS!.startsWith('0')) return false;
  if (yearS!.length > 9) return false; // libxml2 refuses years that overflow its field
  const year = Number(yearS);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year === 0 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  if (minute > 59 || second > 59) return false;
  if (hour > 24 || (hour === 24 && (minute !== 0 || second !== 0 || /[1-9]/.test(frac ?? '')))) return false;
  if (tz && tz !== 'Z') {
    const th = Number(tz.slice(1, 3));
    const tm = Number(tz.slice(4, 6));
    if (tm > 59 || th > 14 || (th === 14 && tm !== 0)) return false;
  }
  return true;
}

/** Epoch ms of an xs:dateTime (no zone read as UTC); NaN when JavaScript cannot represent it. */
export function dateTimeMs(v: string): number {
  if (!isDateTime(v)) return Number.NaN;
  return Date.parse(/(Z|[+-]\d{2}:\d{2})$/.test(v) ? v : `${v}Z`);
}
