/**
 * The listener in the running service, over TLS with client certificates: @tak-ps/node-tak connects
 * as a TAK client would and receives a verdict within 1 s of its POST, as a schema-valid event.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { VERDICT_EXAMPLES } from '../../src/verdicts/verdicts.routes.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { nodeCot, xsdValid, type NodeCot } from '../helpers/cot-oracle.js';
import { loadNodeTak, nodeTakConnect, type NodeTak } from '../helpers/node-tak.js';
import { makeTakCerts, type TakCerts } from '../helpers/tak-certs.js';
import { until } from '../helpers/until.js';

const API = '/api/svc/v1';

describe('TAK listener in the service', function () {
  this.timeout(60_000);
  let certs: TakCerts;
  let t: TestApp | undefined;
  let tak: NodeTak | undefined;

  before(async () => {
    [certs] = await Promise.all([makeTakCerts(), loadNodeTak(), nodeCot()]);
  });
  after(async () => {
    tak?.destroy();
    await t?.close();
    await certs?.cleanup();
  });

  it('node-tak with a certificate from the CA receives a verdict within 1 s of its POST', async () => {
    t = await buildTestApp({
      stream: { flight: 'off' },
      tak: {
        aircraft: false,
        statusIntervalMs: 100,
        listener: { enabled: true, host: '127.0.0.1', port: 0, transport: 'tls', certPath: certs.serverCert, keyPath: certs.serverKey, caPath: certs.caCert },
      },
    });
    const app = t;
    await app.provided.tak!.host.started();
    const listener = async () => (await app.http.get(`${API}/cot/status`)).body.roadmap.tak_listener as { wired: boolean; state: string; detail: Record<string, unknown> };
    const port = await until('the listener port', async () => {
      const l = await listener();
      return l.wired && l.state === 'listening' && (l.detail.port as number);
    });

    tak = await nodeTakConnect('service-test', port, { cert: readFileSync(certs.clientCert, 'utf8'), key: readFileSync(certs.clientKey, 'utf8') });
    const got: { at: number; cot: NodeCot }[] = [];
    let raw = '';
    tak.client!.on('data', (d: Buffer) => (raw += d.toString('utf8')));
    tak.on('cot', (cot) => got.push({ at: Date.now(), cot }));
    await until('the pong', () => tak!.open);
    await until('the listener reporting the client', async () => (await listener()).detail.clientCount === 1);

    const uid = `svc-verdict-${VERDICT_EXAMPLES.review.value.track_id}`;
    const postedAt = Date.now();
    expect((await app.http.post(`${API}/verdict`).send(VERDICT_EXAMPLES.review.value)).status).to.equal(200);
    const hit = await until('the verdict at node-tak', () => got.find((g) => g.cot.uid() === uid), 1000);
    expect(hit.at - postedAt).to.be.below(1000);
    expect(hit.cot.raw.event._attributes.type).to.equal('a-u-A-M-F-Q');

    const xml = /<event [^>]*uid="[^"]*"[\s\S]*?<\/event>/g;
    const doc = [...raw.matchAll(xml)].map((m) => m[0]).find((d) => d.includes(`uid="${uid}"`))!;
    expect(await xsdValid([doc])).to.deep.equal([true]);
    const status = await listener();
    expect((status.detail.clients as { subject: string }[]).map((c) => c.subject)).to.deep.equal([certs.clientCn]);
  });
});
