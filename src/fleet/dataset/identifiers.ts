/**
 * Identifier rules the dataset satisfies, so its identifiers pass their real check digits; shared
 * by the generator and the tests: IMO ship and company check digits [S1, S2], MMSI structure
 * [S3, S4] and the Tonnage Convention 1969 gross tonnage [S8, S9].
 */

/** IMO ship number: the units digit of Σ d_i·w_i over the first six digits, w = 7..2. */
export function imoShipCheckDigit(first6: string): number {
  let sum = 0;
  for (let i = 0; i < 6; i++) sum += Number(first6[i]) * (7 - i);
  return sum % 10;
}

export function isValidImoShip(imo: string): boolean {
  return /^\d{7}$/.test(imo) && imoShipCheckDigit(imo.slice(0, 6)) === Number(imo[6]);
}

/** IMO company / registered-owner number: weights 8,6,4,2,9,7, check = (11 − Σ mod 11) mod 10. */
export function imoCompanyCheckDigit(first6: string): number {
  const weights = [8, 6, 4, 2, 9, 7];
  let sum = 0;
  for (let i = 0; i < 6; i++) sum += Number(first6[i]) * weights[i]!;
  return (11 - (sum % 11)) % 10;
}

export function isValidImoCompany(num: string): boolean {
  return /^\d{7}$/.test(num) && imoCompanyCheckDigit(num.slice(0, 6)) === Number(num[6]);
}

/** GT = floor(K1·V), K1 = 0.2 + 0.02·log10 V (Tonnage Convention 1969, Annex I reg. 3). */
export function grossTonnage(enclosedVolumeM3: number): number {
  return Math.floor(enclosedVolumeM3 * (0.2 + 0.02 * Math.log10(enclosedVolumeM3)));
}
