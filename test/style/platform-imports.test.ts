import { expect } from 'chai';
import { ESLint } from 'eslint';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/load.js';

// The rule that keeps src/platform/ free of features is only worth something if it fires: the
// planted imports below are linted as the text of a real platform file through the project's own
// ESLint configuration (one lint, one import a line), and the rule's verdict is read per line.
const ROOT = projectRoot();
const FILE = join(ROOT, 'src', 'platform', 'plugin.ts');
const RULE = 'no-restricted-imports';
const REFUSED = ['../tak/x.js', '../alerts/alerts.feature.js', '../verdicts/axes.js', '../app.js', '../some-future-feature/index.js', '../../workers/registry.js'];
const ALLOWED = ['../config/schema.js', '../http/route.js', '../isomorphic/api.js', '../lib/service-error.js', '../observability/metrics.js', './pool.js', 'node:fs'];

describe('src/platform/ imports no feature (ESLint rule)', () => {
  const planted = [...REFUSED, ...ALLOWED];
  const byLine = new Map<string, string[]>();

  before(async () => {
    const text = planted.map((spec, i) => `import * as planted${i} from '${spec}';\n`).join('') + `export const used = [${planted.map((_, i) => `planted${i}`).join(', ')}];\n`;
    const [result] = await new ESLint({ cwd: ROOT }).lintText(text, { filePath: FILE });
    for (const m of result!.messages.filter((message) => message.ruleId === RULE)) {
      const spec = planted[m.line - 1]!;
      byLine.set(spec, [...(byLine.get(spec) ?? []), m.message]);
    }
  });

  for (const specifier of REFUSED) {
    it(`refuses ${specifier}`, () => {
      const messages = byLine.get(specifier) ?? [];
      expect(messages, specifier).to.have.length.above(0);
      for (const message of messages) expect(message).to.include(`'${specifier}' import is restricted`).and.include('src/platform/ imports');
    });
  }

  for (const specifier of ALLOWED) {
    it(`allows ${specifier}`, () => {
      expect(byLine.get(specifier) ?? []).to.deep.equal([]);
    });
  }
});
