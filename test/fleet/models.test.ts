import { expect } from 'chai';
import { Rng } from '../../src/lib/prng.js';
import { certificateState } from '../../src/fleet/certificates.js';
import type { Certificate } from '../../src/fleet/dataset/types.js';
import { attainedAer, requiredCii } from '../../src/fleet/forecast.js';
import { seasonalFactor, warAreaFactor } from '../../src/fleet/voyage-risk.js';
import { fitWeibull, meanResidualLife, reliability } from '../../src/fleet/weibull.js';

const cert = (over: Partial<Certificate>): Certificate => ({
  cert_id: 'C-T',
  vessel_imo: '9074729',
  company_imo: null,
  type: 'ISSC',
  convention: 'ISPS',
  issued_by: 'test',
  issue_date: '2021-01-15',
  expiry_date: '2026-01-15',
  endorsement_rule: 'INTERMEDIATE_2_3',
  endorsements: [],
  psc_deficiency_code: '01122',
  ...over,
});

describe('fleet models: Weibull, certificates, voyage risk, CII', () => {
  it("MRL reproduces Nelson's example (β=2, η=13, T=6.5 → 7.09) and numeric integration of R", () => {
    const m = { beta: 2, eta: 13 };
    expect(meanResidualLife(m, 6.5)).to.be.closeTo(7.09, 0.01);
    for (const [b, e, t] of [[2.5, 20000, 8000], [0.8, 5000, 3000], [1.4, 3000, 100]] as const) {
      // MRL(T) = ∫_T^∞ R(u) du / R(T), Simpson on [T, T + 40η]
      const n = 200000;
      const h = (40 * e) / n;
      let s = 0;
      for (let i = 0; i <= n; i++) s += (i === 0 || i === n ? 1 : i % 2 ? 4 : 2) * reliability({ beta: b, eta: e }, t + i * h);
      const integral = ((s * h) / 3) / reliability({ beta: b, eta: e }, t);
      expect(meanResidualLife({ beta: b, eta: e }, t) / integral).to.be.closeTo(1, 1e-6);
    }
  });

  it('the censored fit recovers β=2, η=10000 within 5% from 2000 samples with ~30% censoring', () => {
    const rng = new Rng(20250630);
    const lives = Array.from({ length: 2000 }, () => {
      const t = 10000 * (-Math.log(1 - rng.next())) ** 0.5;
      const c = rng.uniform(0, 29540);
      return c < t ? { t: c, failed: false } : { t, failed: true };
    });
    const censored = lives.filter((l) => !l.failed).length / lives.length;
    expect(censored).to.be.within(0.25, 0.35);
    const fit = fitWeibull(lives)!;
    expect(fit.beta).to.be.closeTo(2, 0.1);
    expect(fit.eta).to.be.closeTo(10000, 500);
  });

  it('certificate status: unendorsed closed intermediate window is ENDORSEMENT_OVERDUE, expiry in 30 days is EXPIRING_90D', () => {
    // window 2023-01-15 .. 2024-01-15, closed before as_of, no endorsement
    expect(certificateState(cert({}), '2025-06-30').status).to.equal('ENDORSEMENT_OVERDUE');
    expect(certificateState(cert({ endorsements: [{ kind: 'INTERMEDIATE', date: '2023-06-01' }] }), '2025-06-30').status).to.equal('VALID');
    const expiring = cert({ issue_date: '2020-07-30', expiry_date: '2025-07-30', endorsements: [{ kind: 'INTERMEDIATE', date: '2023-01-10' }] });
    const st = certificateState(expiring, '2025-06-30');
    expect(st).to.include({ status: 'EXPIRING_90D', days_to_expiry: 30 });
    expect(certificateState(expiring, '2025-07-31').status).to.equal('EXPIRED');
    expect(certificateState(cert({}), '2023-02-01').status).to.equal('WINDOW_OPEN');
  });

  it('war area: central Gulf of Aden is inside, the English Channel is not', () => {
    expect(warAreaFactor([{ lat: 12.5, lon: 48.0 }, { lat: 12.5, lon: 48.0 }]).value).to.equal(1);
    expect(warAreaFactor([{ lat: 50.2, lon: -1.5 }, { lat: 49.9, lon: -3.0 }]).value).to.equal(0);
  });

  it('seasonal weather: 10 days in Winter Zone I in January is 1, in July 0', () => {
    const legs = [{ lat: 52, lon: -50 }, { lat: 52, lon: -25 }];
    const jan = Date.UTC(2025, 0, 5);
    const jul = Date.UTC(2025, 6, 5);
    expect(seasonalFactor(legs, jan, jan + 10 * 86400000).value).to.equal(1);
    expect(seasonalFactor(legs, jul, jul + 10 * 86400000).value).to.equal(0);
  });

  it('CII: 1000 t HFO over 10000 nm at 50000 DWT is 6.228 g/dwt-nm; 2026 required = 2023 × 0.89/0.95', () => {
    const co2 = 1000 * 3.114;
    expect(attainedAer(co2, 50000, 10000)).to.be.closeTo(6.228, 1e-12);
    for (const type of ['Bulk Carrier', 'Crude Oil Tanker', 'Container Ship']) {
      expect(requiredCii(type, 50000, 2026) / requiredCii(type, 50000, 2023)).to.be.closeTo(0.89 / 0.95, 1e-12);
    }
  });
});
