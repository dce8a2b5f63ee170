import { expect } from 'chai';
import { KERNELS } from '../../workers/registry.js';
import { runRaw } from '../helpers/kernels.js';

// Flags that report which path a run took rather than assert that it came out right.
const REPORTS_A_PATH: Readonly<Record<string, readonly string[]>> = {
  'herotq/quantize': ['checks.eigen_floor_applied'],
};

/** Every `false` under a body's `checks`, by path. */
function failedChecks(value: unknown, path = 'checks'): string[] {
  if (value === false) return [path];
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => failedChecks(v, `${path}.${k}`));
}

describe('kernel self-checks', function () {
  this.timeout(120_000);

  it('every boolean a kernel reports under checks is true at its defaults, three seeds and its worst case', () => {
    const failed: string[] = [];
    let booleans = 0;
    for (const def of KERNELS) {
      for (const over of [{}, { seed: 1 }, { seed: 2 }, { seed: 3 }, ...(def.worstCase ? [def.worstCase] : [])]) {
        const checks = runRaw(def, over).checks;
        booleans += JSON.stringify(checks ?? {}).match(/:(true|false)\b/g)?.length ?? 0;
        const allowed = REPORTS_A_PATH[def.id] ?? [];
        for (const path of failedChecks(checks)) if (!allowed.includes(path)) failed.push(`${def.id} ${JSON.stringify(over)}: ${path}`);
      }
    }
    expect(booleans, 'boolean checks seen').to.be.greaterThan(100);
    expect(failed).to.deep.equal([]);
  });

  it('finds a false check anywhere below checks, and nothing in a body without one', () => {
    expect(failedChecks({ a: true, b: { c: false, d: [true, false] }, e: null })).to.deep.equal(['checks.b.c', 'checks.b.d.1']);
    expect(failedChecks(undefined)).to.deep.equal([]);
  });
});
