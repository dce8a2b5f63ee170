/**
 * The generated document passes Redocly's `recommended` ruleset with no error; its warnings are
 * printed so a new one is seen in the test output.
 */
import { expect } from 'chai';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildOpenApi } from '../../src/docs/openapi.js';

async function lint(doc: unknown, rules: Record<string, string> = {}): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended'], rules } as Parameters<typeof createConfig>[0]);
  return lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
}

const describeProblem = (p: NormalizedProblem): string => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`;

describe('/openapi.json under Redocly recommended', function () {
  let t: TestApp;
  let doc: { paths: Record<string, unknown> };

  before(async () => {
    t = await buildTestApp({}, { checkResponses: false });
    doc = buildOpenApi(t.routes) as typeof doc;
  });
  after(() => t.close());

  it('reports no error (warnings printed)', async () => {
    const problems = await lint(doc);
    const warnings = problems.filter((p) => p.severity !== 'error');
    if (warnings.length) console.log(`      redocly warnings (${warnings.length}):\n        ${warnings.map(describeProblem).join('\n        ')}`);
    expect(problems.filter((p) => p.severity === 'error').map(describeProblem)).to.deep.equal([]);
  });

  it('no rule of the ruleset is switched off: a trailing-slash path would be an error', async () => {
    const slashed = structuredClone(doc) as { paths: Record<string, { get: { operationId: string } }> };
    slashed.paths['/jackin/'] = { get: { ...slashed.paths['/jackin']!.get, operationId: 'get_jackin_slash' } };
    const errors = (await lint(slashed)).filter((p) => p.severity === 'error');
    expect(errors.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`)).to.deep.equal(['no-path-trailing-slash #/paths/~1jackin~1']);
  });

  it('an error the ruleset knows is reported (the linter is really run)', async () => {
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, { operationId: string }>> };
    broken.paths['/api/svc/v1/health']!.get!.operationId = broken.paths['/api/svc/v1/doctrine']!.get!.operationId;
    const errors = (await lint(broken)).filter((p) => p.severity === 'error');
    expect(errors.map((p) => p.ruleId)).to.deep.equal(['operation-operationId-unique']);
  });
});
