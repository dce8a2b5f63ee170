/**
 * Certificates for the TAK TLS tests, made with the openssl CLI in a temp dir at test time (no key
 * material is committed): a CA, a server certificate for 127.0.0.1 and localhost, a client
 * certificate from that CA and its PKCS#12, and a second CA with its own client and server
 * certificates, which a peer trusting only the first CA must refuse.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TakCerts {
  dir: string;
  /** The CA both the server and the client trust. */
  caCert: string;
  caKey: string;
  /** Server certificate (CN 127.0.0.1, SAN IP:127.0.0.1 and DNS:localhost) and key, from the CA. */
  serverCert: string;
  serverKey: string;
  /** A client certificate (CN `clientCn`) and key, from the CA. */
  clientCert: string;
  clientKey: string;
  clientCn: string;
  /** The same client as PKCS#12 (certificate, key and CA), protected by `p12Password`. */
  clientP12: string;
  p12Password: string;
  /** Another CA, and a client and a server certificate it issued: the trusted side must refuse both. */
  otherCaCert: string;
  otherClientCert: string;
  otherClientKey: string;
  otherServerCert: string;
  otherServerKey: string;
  /** Removes the directory. */
  cleanup(): Promise<void>;
}

function openssl(dir: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd: dir, encoding: 'utf8', timeout: 20000 }, (err, _out, stderr) => {
      if (err) reject(new Error(`openssl ${args.join(' ')} failed: ${stderr}`));
      else resolve();
    });
  });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function ca(dir: string, name: string): Promise<void> {
  await openssl(dir, ['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name} test CA`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
}

/** A leaf certificate for `cn`, signed by CA `caName`, with the given extensions file content. */
async function leaf(dir: string, name: string, cn: string, caName: string, ext: string): Promise<void> {
  await writeFile(join(dir, `${name}.ext`), ext);
  await openssl(dir, ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  await openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${caName}.pem`, '-CAkey', `${caName}.key`, '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`]);
}

const SERVER_EXT = 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyAgreement\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n';
const CLIENT_EXT = 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyAgreement\nextendedKeyUsage=clientAuth\n';

/** Generates the whole set (about half a second); call `cleanup()` when done. */
export async function makeTakCerts(p12Password = 'atakatak', clientCn = 'svc-tak-client'): Promise<TakCerts> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-tak-certs-'));
  await Promise.all([ca(dir, 'ca'), ca(dir, 'other-ca')]);
  await Promise.all([
    leaf(dir, 'server', '127.0.0.1', 'ca', SERVER_EXT),
    leaf(dir, 'client', clientCn, 'ca', CLIENT_EXT),
    leaf(dir, 'other-client', clientCn, 'other-ca', CLIENT_EXT),
    leaf(dir, 'other-server', '127.0.0.1', 'other-ca', SERVER_EXT),
  ]);
  await openssl(dir, ['pkcs12', '-export', '-in', 'client.pem', '-inkey', 'client.key', '-certfile', 'ca.pem', '-out', 'client.p12', '-passout', `pass:${p12Password}`, '-name', clientCn]);
  const p = (f: string) => join(dir, f);
  return {
    dir,
    caCert: p('ca.pem'),
    caKey: p('ca.key'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    clientCert: p('client.pem'),
    clientKey: p('client.key'),
    clientCn,
    clientP12: p('client.p12'),
    p12Password,
    otherCaCert: p('other-ca.pem'),
    otherClientCert: p('other-client.pem'),
    otherClientKey: p('other-client.key'),
    otherServerCert: p('other-server.pem'),
    otherServerKey: p('other-server.key'),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
