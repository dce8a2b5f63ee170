// The PAC-Bayes pieces against closed forms and an independent root finder (Newton on kl(q‖p) − B).
import { expect } from 'chai';
import { binaryKl, DELTA, KL_POSTERIOR_PRIOR, klInverseLower, pacBayesBound } from '../../src/verdicts/pac-bayes.js';

/** The root of kl(q‖p) = B below q by Newton from p = q/2 (kl is convex and decreasing on (0, q)), guarded by halving. */
function newtonLower(q: number, B: number): number {
  const kl = (p: number): number => q * Math.log(q / p) + (1 - q) * Math.log((1 - q) / (1 - p));
  const dkl = (p: number): number => -q / p + (1 - q) / (1 - p);
  let p = q / 2;
  while (kl(p) < B) p /= 2; // start left of the root, where Newton on a convex decreasing function is monotone
  for (let i = 0; i < 200; i++) p = p - (kl(p) - B) / dkl(p);
  return p;
}

describe('PAC-Bayes floor', () => {
  it('binary KL: closed forms, the 0·ln 0 convention, infinity at p = 0 or 1', () => {
    expect(binaryKl(0.5, 0.5)).to.equal(0);
    expect(binaryKl(0.3, 0.6)).to.be.closeTo(0.3 * Math.log(0.3 / 0.6) + 0.7 * Math.log(0.7 / 0.4), 1e-15);
    expect(binaryKl(0, 0.25)).to.be.closeTo(-Math.log(0.75), 1e-15);
    expect(binaryKl(1, 0.25)).to.be.closeTo(-Math.log(0.25), 1e-15);
    expect(binaryKl(0, 0)).to.equal(0);
    expect(binaryKl(1, 1)).to.equal(0);
    expect(binaryKl(0.5, 0)).to.equal(Infinity);
    expect(binaryKl(0.5, 1)).to.equal(Infinity);
  });

  it('the bound (KL + ln(2√n/δ)) / n with the defaults KL = 0.5, δ = 0.05, and with others', () => {
    expect([KL_POSTERIOR_PRIOR, DELTA]).to.deep.equal([0.5, 0.05]);
    expect(pacBayesBound(100)).to.be.closeTo((0.5 + Math.log(20 / 0.05)) / 100, 1e-15);
    expect(pacBayesBound(1)).to.be.closeTo(0.5 + Math.log(40), 1e-14);
    expect(pacBayesBound(400, 2, 0.1)).to.be.closeTo((2 + Math.log(40 / 0.1)) / 400, 1e-15);
  });

  it('the lower inverse equals an independent Newton root to 1e-11, for several q and bounds', () => {
    for (const q of [0.95, 0.8, 0.5, 0.2]) {
      for (const B of [0.001, 0.01, 0.1, 0.5]) {
        const p = klInverseLower(q, B);
        expect(p, `q=${q} B=${B}`).to.be.closeTo(newtonLower(q, B), 1e-11);
        // the bisection returns the upper end of its bracket: never below the infimum
        expect(binaryKl(q, p)).to.be.at.most(B);
      }
    }
  });

  it('edge cases: bound 0 or negative returns q; q = 0 returns 0; a huge bound drives the floor to (almost) 0', () => {
    expect(klInverseLower(0.9, 0)).to.equal(0.9);
    expect(klInverseLower(0.9, -1)).to.equal(0.9);
    expect(klInverseLower(0, 0.3)).to.equal(0);
    const p = klInverseLower(0.5, 20);
    expect(p).to.be.closeTo(newtonLower(0.5, 20), 1e-11);
    expect(p).to.be.above(0).and.below(1e-8);
  });
});
