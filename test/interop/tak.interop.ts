/**
 * Interop: the TAK outputs of the real service (its entry point, configured through the
 * environment) against peers that are not this project's code: socat (Debian package `socat`)
 * joins ATAK's SA multicast group on loopback and prints what arrives; `openssl s_client` connects
 * to the streaming listener with a client certificate from the operator's CA, as a TAK client's TLS
 * stack would, and prints the stream. Each verdict posted must reach both as an XSD-valid CoT event
 * that @tak-ps/node-cot parses. Run by `npm run test:interop` (not by `npm test`: it needs socat).
 */
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { makeTakCerts, type TakCerts } from '../helpers/tak-certs.js';
import { freePort } from '../helpers/free-port.js';
import { nodeCot, xsdValid } from '../helpers/cot-oracle.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';
import { until } from '../helpers/until.js';
import { VERDICT_EXAMPLES } from '../../src/verdicts/verdicts.routes.js';

const GROUP = '239.2.3.1';

/** A child whose stdout is collected as text. */
function collect(cmd: string, args: string[]): { child: ChildProcess; out: () => string } {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.resume();
  return { child, out: () => out };
}

/** The `<event>` elements in a stream of text, each whole. */
const events = (text: string): string[] => text.match(/<event\b[\s\S]*?<\/event>/g) ?? [];

describe('interop: TAK outputs against socat (Mesh SA) and openssl s_client (listener)', function () {
  this.timeout(120_000);
  let certs: TakCerts;
  let svc: ServiceProcess | null = null;
  const peers: ChildProcess[] = [];

  before(() => {
    const socat = spawnSync('socat', ['-V'], { encoding: 'utf8' });
    if (socat.status !== 0) throw new Error('socat is not installed: apt-get install -y socat');
  });
  after(async () => {
    for (const p of peers) p.kill('SIGKILL');
    svc?.child.kill('SIGKILL');
    await certs?.cleanup();
  });

  it('a posted verdict reaches a multicast receiver and a TLS client of the listener as valid CoT', async () => {
    certs = await makeTakCerts();
    const [meshPort, listenerPort] = await Promise.all([freePort(), freePort()]);
    // the receiver joins the group on loopback first: the service sends from there too
    const mesh = collect('socat', ['-u', `UDP4-RECV:${meshPort},ip-add-membership=${GROUP}:127.0.0.1,reuseaddr`, 'STDOUT']);
    peers.push(mesh.child);
    svc = await startService({
      SVC_STREAM_FLIGHT: 'off',
      SVC_TAK_AIRCRAFT: 'false',
      SVC_TAK_MESH_ENABLED: 'true',
      SVC_TAK_MESH_GROUP: GROUP,
      SVC_TAK_MESH_PORT: String(meshPort),
      SVC_TAK_MESH_INTERFACE: '127.0.0.1',
      SVC_TAK_LISTENER_ENABLED: 'true',
      SVC_TAK_LISTENER_PORT: String(listenerPort),
      SVC_TAK_LISTENER_CERT: certs.serverCert,
      SVC_TAK_LISTENER_KEY: certs.serverKey,
      SVC_TAK_LISTENER_CA: certs.caCert,
    });
    const tls = collect('openssl', ['s_client', '-connect', `127.0.0.1:${listenerPort}`, '-cert', certs.clientCert, '-key', certs.clientKey, '-CAfile', certs.caCert, '-verify_return_error', '-quiet']);
    peers.push(tls.child);
    // the listener offers TAK Protocol v1 first: the client is connected and verified
    await until('the listener offer through openssl', () => tls.out().includes('t-x-takp-v'), 30_000);
    const res = await fetch(`${svc.base}/api/svc/v1/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(VERDICT_EXAMPLES.deny.value) });
    expect(res.status).to.equal(200);
    const uid = `svc-verdict-${VERDICT_EXAMPLES.deny.value.track_id}`;
    const mine = (text: string) => events(text).find((e) => e.includes(`uid="${uid}"`));
    const [fromMesh, fromTls] = await Promise.all([until('the datagram at socat', () => mine(mesh.out()), 10_000), until('the event at openssl s_client', () => mine(tls.out()), 10_000)]);
    expect(await xsdValid([fromMesh, fromTls])).to.deep.equal([true, true]);
    const Cot = await nodeCot();
    for (const xml of [fromMesh, fromTls]) {
      const cot = new Cot(xml);
      expect(cot.raw.event._attributes.uid).to.equal(uid);
      expect(cot.raw.event._attributes.type).to.equal('a-h-A-M-F-Q');
    }
  });
});
