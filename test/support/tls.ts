// A self-signed certificate for 127.0.0.1 (made with the openssl command) for loopback TLS servers.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SelfSigned {
  readonly key: Buffer;
  readonly cert: Buffer;
  /** The certificate as a PEM file (what NODE_EXTRA_CA_CERTS names). */
  readonly certFile: string;
  /** A folder for other files of the test; removed by dispose(). */
  readonly dir: string;
  dispose(): void;
}

export function selfSignedCertificate(): SelfSigned {
  const dir = mkdtempSync(join(tmpdir(), "tau-tls-"));
  const keyFile = join(dir, "key.pem");
  const certFile = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
    { stdio: "ignore" },
  );
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile, dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
