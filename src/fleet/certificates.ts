/**
 * Certificate status at a date, from the survey and endorsement rules of the conventions (HSSC
 * annual windows ±3 months of each anniversary; intermediate between the 2nd and 3rd anniversary
 * for ISSC/SMC/MLC). The same function answers "at as_of" for the certificate view and "at ETD /
 * before ETA" for the voyage-risk factor.
 */
import { endorsementWindows } from './dataset/generate.js';
import type { Certificate } from './dataset/types.js';
import { addMonths, daysBetween } from './dates.js';

export const CERT_STATUSES = ['VALID', 'WINDOW_OPEN', 'EXPIRING_90D', 'ENDORSEMENT_OVERDUE', 'EXPIRED'] as const;
export type CertStatus = (typeof CERT_STATUSES)[number];

export interface CertWindow {
  kind: 'ANNUAL' | 'INTERMEDIATE' | 'RENEWAL';
  anniversary: number | null;
  opens: string;
  closes: string;
  endorsed_on: string | null;
}

export interface CertState {
  status: CertStatus;
  days_to_expiry: number | null;
  next_window: { opens: string; closes: string; kind: CertWindow['kind'] } | null;
  windows: CertWindow[];
}

export function certificateWindows(cert: Certificate): CertWindow[] {
  return endorsementWindows(cert.endorsement_rule, cert.issue_date).map((w) => ({
    ...w,
    endorsed_on: cert.endorsements.find((e) => e.date >= w.opens && e.date <= w.closes)?.date ?? null,
  }));
}

/** Status at `date` ('YYYY-MM-DD'): the most severe condition that holds. */
export function certificateState(cert: Certificate, date: string): CertState {
  const windows = certificateWindows(cert);
  const expiry = cert.expiry_date;
  const days = expiry === null ? null : daysBetween(date, expiry);
  let status: CertStatus = 'VALID';
  const raise = (s: CertStatus): void => {
    if (CERT_STATUSES.indexOf(s) > CERT_STATUSES.indexOf(status)) status = s;
  };
  for (const w of windows) {
    if (w.endorsed_on !== null) continue;
    if (w.closes < date) raise('ENDORSEMENT_OVERDUE');
    else if (w.opens <= date) raise('WINDOW_OPEN');
  }
  if (days !== null && days <= 90) raise('EXPIRING_90D');
  if (days !== null && days < 0) raise('EXPIRED');
  const pending = windows.find((w) => w.endorsed_on === null && w.closes >= date);
  const renewal = expiry !== null && expiry >= date ? { opens: addMonths(expiry, -3), closes: expiry, kind: 'RENEWAL' as const } : null;
  return {
    status,
    days_to_expiry: days,
    next_window: pending ? { opens: pending.opens, closes: pending.closes, kind: pending.kind } : renewal,
    windows,
  };
}
