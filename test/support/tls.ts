// A self-signed certificate for 127.0.0.1 (and any host names asked for), made with the openssl command, for loopback TLS servers.
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

/** For 127.0.0.1, and for each of `dnsNames` too (a stand-in for a public host reached through a proxy). */
export function selfSignedCertificate(dnsNames: readonly string[] = []): SelfSigned {
  const dir = mkdtempSync(join(tmpdir(), "tau-tls-"));
  const keyFile = join(dir, "key.pem");
  const certFile = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", `subjectAltName=${["IP:127.0.0.1", ...dnsNames.map((n) => `DNS:${n}`)].join(",")}`],
    { stdio: "ignore" },
  );
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile, dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
