// The Iroh binding (@number0/iroh, a native module), loaded only by the swarm worker and
// `tau swarm`: nothing else in tau pays for it. Endpoints bind with the minimal preset (no
// discovery services) and relays off unless a relay URL is given; a peer is always named by its
// endpoint id, and addresses only say where to look for it.
import { createRequire } from "node:module";
import type * as IrohModule from "@number0/iroh/index.js";
import { SWARM_ALPN } from "./frames.js";

export type Iroh = typeof IrohModule;
export type IrohEndpoint = IrohModule.Endpoint;
export type IrohConnection = IrohModule.Connection;
export type IrohSendStream = IrohModule.SendStream;
export type IrohRecvStream = IrohModule.RecvStream;

let loaded: Iroh | undefined;

/**
 * Required from tau's own node_modules on first use: never bundled (a native module), and not a
 * dynamic import(), which a code-cached fast bundle cannot run (build.ts).
 */
export function loadIroh(): Promise<Iroh> {
  try {
    loaded ??= createRequire(import.meta.url)("@number0/iroh/index.js") as Iroh;
    return Promise.resolve(loaded);
  } catch (err) {
    return Promise.reject(new Error(`the Iroh binding (@number0/iroh) could not be loaded: ${(err as Error).message.split("\n")[0]}`));
  }
}

/** An endpoint key: 32 bytes as 64 lowercase hex digits (what `tau swarm key` writes). */
export const ENDPOINT_KEY = /^[0-9a-f]{64}$/;

export function keyProblem(text: string): string | undefined {
  return ENDPOINT_KEY.test(text.trim()) ? undefined : "is not an endpoint key (64 hex digits; tau swarm key writes one)";
}

export function hexBytes(hex: string): number[] {
  return Array.from(Buffer.from(hex.trim(), "hex"));
}

export function endpointIdHex(id: IrohModule.EndpointId): string {
  return Buffer.from(id.toBytes()).toString("hex");
}

export interface BindOptions {
  /** The endpoint's secret key, 64 hex digits. */
  readonly key: string;
  /** `host:port` to bind; an ephemeral port on every address when absent. */
  readonly bind?: string;
  /** Accept swarm connections (the coordinator); a worker only dials. */
  readonly accept?: boolean;
  readonly relayUrl?: string;
}

export async function bindEndpoint(o: BindOptions): Promise<IrohEndpoint> {
  const iroh = await loadIroh();
  const b = iroh.Endpoint.builder();
  iroh.presetMinimal(b);
  b.secretKey(hexBytes(o.key));
  if (o.accept === true) b.alpns([SWARM_ALPN]);
  b.relayMode(o.relayUrl === undefined ? iroh.RelayMode.disabled() : iroh.RelayMode.customFromUrls([o.relayUrl]));
  if (o.bind !== undefined) b.bindAddr(o.bind);
  return b.bind();
}

/** The endpoint id of a secret key. */
export async function endpointIdOfKey(key: string): Promise<string> {
  const iroh = await loadIroh();
  return Buffer.from(iroh.SecretKey.fromBytes(hexBytes(key)).public().toBytes()).toString("hex");
}

export async function generateKey(): Promise<string> {
  const iroh = await loadIroh();
  return Buffer.from(iroh.SecretKey.generate().toBytes()).toString("hex");
}
