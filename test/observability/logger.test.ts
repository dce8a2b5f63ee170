import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import supertest from 'supertest';
import { buildApp } from '../../src/app.js';
import { createLogger } from '../../src/observability/logger.js';
import { testConfig } from '../helpers/app.js';

function memoryLogger() {
  const lines: Record<string, unknown>[] = [];
  const dest = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger('info', 'svc', dest), lines };
}

describe('logging', () => {
  it('writes one JSON line per request with id, route template, status and duration', async () => {
    const { log, lines } = memoryLogger();
    const built = await buildApp(testConfig(), { log });
    try {
      await supertest(built.app.callback()).get('/api/svc/v1/ssm/scan?seq_len=4').set('x-request-id', 'req-42');
      const line = lines.find((l) => l.msg === 'request' && l.reqId === 'req-42')!;
      expect(line).to.include({ method: 'GET', route: '/api/svc/v1/ssm/scan', path: '/api/svc/v1/ssm/scan', status: 200, level: 30 });
      expect(line.ms).to.be.a('number');
      expect(lines.filter((l) => l.reqId === 'req-42')).to.have.length(1);
    } finally {
      await built.close();
    }
  });

  it('redacts private keys wherever they appear in a logged object', () => {
    const { log, lines } = memoryLogger();
    const pem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    log.info({ privateKey: pem, config: { privateKey: pem, signingKey: pem } }, 'loaded');
    const text = JSON.stringify(lines);
    expect(text).to.not.include('PRIVATE KEY');
    expect(lines[0]!.privateKey).to.equal('[redacted]');
  });
});
