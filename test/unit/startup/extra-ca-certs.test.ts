import { describe, expect, it } from "vitest";
import { DEFERRED_CA_CERTS_ENV, forTauProcess } from "../../../handwritten/startup/index.js";

describe("forTauProcess", () => {
  it("[protocol.extra-ca-certs.env] renames NODE_EXTRA_CA_CERTS for a tau process and leaves the rest alone", () => {
    const env = { PATH: "/bin", NODE_EXTRA_CA_CERTS: "/etc/corp.pem" };
    expect(forTauProcess(env)).toEqual({ PATH: "/bin", [DEFERRED_CA_CERTS_ENV]: "/etc/corp.pem" });
    expect(env).toEqual({ PATH: "/bin", NODE_EXTRA_CA_CERTS: "/etc/corp.pem" }); // not modified
    expect(forTauProcess({ PATH: "/bin" })).toEqual({ PATH: "/bin" });
  });

  it("[protocol.extra-ca-certs.env] keeps it when NODE_OPTIONS picks OpenSSL's store, which only node can extend", () => {
    const env = { NODE_EXTRA_CA_CERTS: "/etc/corp.pem", NODE_OPTIONS: "--max-old-space-size=512 --use-openssl-ca" };
    expect(forTauProcess(env)).toBe(env);
    expect(forTauProcess({ NODE_EXTRA_CA_CERTS: "/x", NODE_OPTIONS: "--use-openssl-ca" })).toEqual({ NODE_EXTRA_CA_CERTS: "/x", NODE_OPTIONS: "--use-openssl-ca" });
  });
});
