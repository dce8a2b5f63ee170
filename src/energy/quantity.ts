/** Every number in an energy body is `{value, unit, basis}`, so its origin is never implicit. */
import type { BASIS_VOCABULARY } from '../core/doctrine.js';

export type Basis = (typeof BASIS_VOCABULARY)[number];

export interface Quantity {
  value: number | null;
  unit: string;
  basis: Basis;
  note?: string;
}

export const q = (value: number | null, unit: string, basis: Basis, note?: string): Quantity => (note === undefined ? { value, unit, basis } : { value, unit, basis, note });
