/**
 * docs/tak-listener.md says how an operator makes the certificates and the data package for ATAK:
 * its commands are run here as written (the example address swapped for loopback), and a client
 * holding exactly the files the device would get connects, trusts the listener and receives a track.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { projectRoot } from '../../src/config/load.js';
import { ListenerOutput } from '../../src/tak/listener.js';
import { eventXml, StreamSplitter } from '../../src/tak/protocol.js';
import { until } from '../helpers/until.js';

const DOC = join(projectRoot(), 'docs', 'tak-listener.md');
const EXAMPLE_IP = '192.0.2.10';

/** The fenced blocks of a Markdown text with the given info string, in order. */
function blocks(md: string, lang: string): string[] {
  return [...md.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1]!);
}

function run(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, encoding: 'utf8', timeout: 30_000 }, (err, out, stderr) => (err ? reject(new Error(`${cmd} failed: ${stderr}`)) : resolve(out)));
  });
}

const attr = (xml: string, re: RegExp): string[] => [...xml.matchAll(re)].map((m) => m[1]!);

describe('TAK listener operator guide (docs/tak-listener.md)', function () {
  let dir: string;
  let md: string;
  let out: ListenerOutput | null = null;

  before(async () => {
    md = await readFile(DOC, 'utf8');
    dir = await mkdtemp(join(tmpdir(), 'svc-tak-guide-'));
    const [certs, zip] = blocks(md, 'sh');
    await writeFile(join(dir, 'certs.sh'), certs!.replaceAll(EXAMPLE_IP, '127.0.0.1'));
    await run('bash', ['-euo', 'pipefail', 'certs.sh'], dir);
    const [manifest, pref] = blocks(md, 'xml');
    await writeFile(join(dir, 'manifest.xml'), manifest!);
    await writeFile(join(dir, 'drone-intel.pref'), pref!.replaceAll(EXAMPLE_IP, '127.0.0.1'));
    await writeFile(join(dir, 'zip.sh'), zip!);
    await run('bash', ['-euo', 'pipefail', 'zip.sh'], dir);
  });
  after(async () => {
    await out?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the files the guide makes let a client connect with its .p12, trust the listener through the truststore, and receive a track', async () => {
    out = new ListenerOutput({
      enabled: true,
      host: '127.0.0.1',
      port: 0,
      transport: 'tls',
      certPath: join(dir, 'server.pem'),
      keyPath: join(dir, 'server.key'),
      caPath: join(dir, 'ca.pem'),
      maxClients: 2,
      clientBufferBytes: 1 << 20,
      pingIntervalMs: 0,
      maxMessageBytes: 65536,
      pictureMax: 10,
    });
    await out.start();
    // the device's side: nothing but the two .p12 files and their passwords from the pref file
    const pref = await readFile(join(dir, 'drone-intel.pref'), 'utf8');
    const entry = (key: string) => new RegExp(`key="${key}"[^>]*>([^<]*)<`).exec(pref)![1]!;
    const trustPem = await run('openssl', ['pkcs12', '-in', entry('caLocation').replace(/^cert\//, ''), '-nokeys', '-passin', `pass:${entry('caPassword')}`], dir);
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: out.port!,
      pfx: await readFile(join(dir, entry('certificateLocation').replace(/^cert\//, ''))),
      passphrase: entry('clientPassword'),
      ca: trustPem,
      rejectUnauthorized: true,
    });
    const splitter = new StreamSplitter(1 << 16);
    const xml: string[] = [];
    socket.on('data', (d: Buffer) => {
      splitter.push(d);
      for (let m = splitter.next(); m; m = splitter.next()) if (m.kind === 'xml') xml.push(m.xml);
    });
    socket.on('error', () => undefined);
    try {
      await until('the handshake', () => socket.authorized || null);
      await until('the client listed', () => (out!.status().detail.clientCount as number) === 1);
      expect((out.status().detail.clients as { subject: string }[])[0]!.subject).to.equal('atak-1');
      const now = Date.now();
      const fields = { uid: 'guide-1', type: 'a-h-A', how: 'm-g', timeMs: now, startMs: now, staleMs: now + 60_000, lat: 1, lon: 2, hae: 0, ce: 10, le: 10, detailXml: '' };
      out.send({ fields, xml: eventXml(fields) });
      await until('the track', () => xml.some((x) => x.includes('uid="guide-1"')));
    } finally {
      socket.destroy();
    }

    // the pref's connect string is the listener's port over ssl
    const [host, port, proto] = entry('connectString0').split(':');
    expect([host, Number(port), proto]).to.deep.equal(['127.0.0.1', 8089, 'ssl']);
  });

  it('the data package lists in its manifest exactly the files zipped, and the pref names the two .p12 files', async () => {
    const listing = await run('unzip', ['-Z1', 'drone-intel.zip'], dir);
    const zipped = listing.trim().split('\n').sort();
    expect(zipped).to.deep.equal(['atak-1.p12', 'drone-intel.pref', 'manifest.xml', 'truststore.p12']);
    const manifest = await readFile(join(dir, 'manifest.xml'), 'utf8');
    expect(attr(manifest, /zipEntry="([^"]+)"/g).sort()).to.deep.equal(zipped.filter((f) => f !== 'manifest.xml'));
    const pref = await readFile(join(dir, 'drone-intel.pref'), 'utf8');
    expect(attr(pref, /class java\.lang\.String">(cert\/[^<]+)</g).sort()).to.deep.equal(['cert/atak-1.p12', 'cert/truststore.p12']);
  });
});
