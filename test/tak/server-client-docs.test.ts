/**
 * docs/tak-server-client.md says how to point the client at a TAK Server: its settings table lists
 * exactly the env names ServerClientConfig asks for, and its commands for a `.p12` Node cannot read
 * are run here as written, on a `.p12` made the way OpenSSL 1.x makes them, after which the client
 * connects with the converted files.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/load.js';
import { eventXml } from '../../src/tak/protocol.js';
import { ServerClientOutput, type ServerClientConfig } from '../../src/tak/server-client.js';
import { FakeTakServer } from '../helpers/fake-tak-server.js';
import { makeTakCerts, type TakCerts } from '../helpers/tak-certs.js';
import { until } from '../helpers/until.js';

const ROOT = projectRoot();
const DOC = join(ROOT, 'docs', 'tak-server-client.md');

function blocks(md: string, lang: string): string[] {
  return [...md.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1] as string);
}

function run(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, encoding: 'utf8', timeout: 30_000 }, (err, out, stderr) => (err ? reject(new Error(`${cmd} failed: ${stderr}`)) : resolve(out)));
  });
}

function config(port: number, over: Partial<ServerClientConfig>): ServerClientConfig {
  return {
    enabled: true, host: '127.0.0.1', port, tls: true, p12Path: null, p12Password: null, certPath: null, keyPath: null, caPath: null, servername: null,
    protocol: 'auto', bufferSize: 10, backoffBaseMs: 20, backoffMaxMs: 200, pingIntervalMs: 0, negotiationWaitMs: 300, responseTimeoutMs: 1000,
    connectTimeoutMs: 5000, maxMessageBytes: 1 << 20, uid: 'drone-intel-svc', ...over,
  };
}

describe('docs/tak-server-client.md', function () {
  this.timeout(30_000);
  let certs: TakCerts;
  let server: FakeTakServer;
  const clients: ServerClientOutput[] = [];

  before(async () => {
    certs = await makeTakCerts();
    server = new FakeTakServer({ offerV1: false, tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.caCert } });
    await server.start();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.stop();
    await certs.cleanup();
  });

  it('its settings table names exactly the env names the client config lists', async () => {
    const doc = await readFile(DOC, 'utf8');
    const src = await readFile(join(ROOT, 'src', 'tak', 'server-client.ts'), 'utf8');
    const table = doc.slice(doc.indexOf('## Settings'), doc.indexOf('## A client certificate'));
    const documented = new Set(table.match(/SVC_TAK_SERVER_[A-Z0-9_]+/g));
    const wanted = new Set(src.match(/SVC_TAK_SERVER_[A-Z0-9_]+/g));
    expect([...documented].sort()).to.deep.equal([...wanted].sort());
    expect(documented.size).to.equal(20);
  });

  it('a .p12 made by OpenSSL 1.x defaults is refused with the documented code; the documented conversion makes files the client connects with', async () => {
    const doc = await readFile(DOC, 'utf8');
    const sh = blocks(doc, 'sh');
    const convert = sh.find((b) => b.includes('-nocerts'));
    expect(convert, 'the conversion block').to.be.a('string');
    // the file as the TAK Server's script leaves it on an OpenSSL 1.x host: RC2 for the certificates
    await run('openssl', ['pkcs12', '-export', '-legacy', '-in', certs.clientCert, '-inkey', certs.clientKey, '-certfile', certs.caCert, '-name', 'drone-intel-svc', '-out', 'drone-intel-svc.p12', '-passout', 'pass:atakatak'], certs.dir);

    const legacy = new ServerClientOutput(config(server.port, { p12Path: join(certs.dir, 'drone-intel-svc.p12'), p12Password: 'atakatak', caPath: certs.caCert }));
    clients.push(legacy);
    await legacy.start();
    await until('the refusal', () => legacy.status().detail.lastError);
    expect(legacy.status().state).to.be.oneOf(['backoff', 'connecting']);
    expect(legacy.status().detail.lastError).to.deep.include({ kind: 'certificate_files', code: 'ERR_CRYPTO_UNSUPPORTED_OPERATION' });
    expect((legacy.status().detail.lastError as { message: string }).message).to.contain('openssl pkcs12 -legacy');
    await legacy.close();

    await run('bash', ['-euc', convert as string], certs.dir);
    const converted = new ServerClientOutput(config(server.port, { certPath: join(certs.dir, 'drone-intel-svc.pem'), keyPath: join(certs.dir, 'drone-intel-svc.key'), caPath: certs.caCert }));
    clients.push(converted);
    await converted.start();
    const fields = { uid: 'doc-1', type: 'a-h-A-M-F-Q', how: 'm-g', timeMs: 0, startMs: 0, staleMs: 60_000, lat: 1, lon: 2, hae: 3, ce: 4, le: 5, detailXml: '' };
    converted.send({ fields, xml: eventXml(fields) });
    await until('the event', () => server.events().length === 1);
    expect(server.peers).to.deep.equal([certs.clientCn]);
    expect(converted.status().detail.lastError).to.equal(null);
  });
});
