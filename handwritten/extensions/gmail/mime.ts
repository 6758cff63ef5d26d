// Mail as text (SPEC-gmail): a draft built as one RFC 5322 message (header values checked: no line
// breaks, so an argument cannot add a header), and a fetched message's readable text — its
// text/plain part, else its text/html part turned into markdown the web extension's way.
import { ToolFailure } from "../../sdk/index.js";
import { pageText, withoutScripts } from "../web/html.js";
import type { Message, MessagePart } from "./api.js";
import { GMAIL_MAX_HEADER_CHARS } from "./limits.js";

/** One header value: bounded, and without CR, LF or other control characters. */
export function headerValue(name: string, value: unknown, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== "string" || (required && value.trim() === "")) throw new ToolFailure(`${name} must be a non-empty string`);
  if (value.length > GMAIL_MAX_HEADER_CHARS) throw new ToolFailure(`${name} is longer than ${GMAIL_MAX_HEADER_CHARS} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new ToolFailure(`${name} must be one line without control characters`);
  return value.trim();
}

/** A header value in RFC 2047 form when it is not plain ASCII. */
function encoded(value: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\u0020-\u007e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, "utf8").toString("base64")}?=`;
}

/** The draft as Gmail's `raw`: base64url of a text/plain UTF-8 message. */
export function draftRaw(d: { to: string; cc?: string; subject: string; body: string }): string {
  const lines = [
    `To: ${d.to}`,
    ...(d.cc !== undefined ? [`Cc: ${d.cc}`] : []),
    `Subject: ${encoded(d.subject)}`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=UTF-8",
    "Content-Transfer-Encoding: base64",
    "",
    (Buffer.from(d.body.replace(/\r?\n/g, "\r\n"), "utf8").toString("base64").match(/.{1,76}/g) ?? []).join("\r\n"),
  ];
  return Buffer.from(lines.join("\r\n"), "utf8").toString("base64url");
}

export function header(m: Message | MessagePart | undefined, name: string): string {
  const part = m !== undefined && "payload" in m ? m.payload : (m as MessagePart | undefined);
  const h = part?.headers?.find((x) => x.name.toLowerCase() === name.toLowerCase());
  return h?.value ?? "";
}

/** The first part of `mime` type, depth first (attachments, which have a file name, skipped). */
function findPart(part: MessagePart | undefined, mime: string, depth = 0): MessagePart | undefined {
  if (part === undefined || depth > 16) return undefined;
  if (part.mimeType?.toLowerCase() === mime && (part.filename ?? "") === "" && typeof part.body?.data === "string") return part;
  for (const p of part.parts ?? []) {
    const found = findPart(p, mime, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The attachments' names and sizes (never their contents). */
export function attachments(part: MessagePart | undefined, out: string[] = [], depth = 0): string[] {
  if (part === undefined || depth > 16) return out;
  if ((part.filename ?? "") !== "") out.push(`${part.filename} (${part.mimeType ?? "?"}, ${part.body?.size ?? 0} bytes)`);
  for (const p of part.parts ?? []) attachments(p, out, depth + 1);
  return out;
}

/** A message's readable text, at most `max` characters. */
export async function messageText(m: Message, max: number): Promise<string> {
  const plain = findPart(m.payload, "text/plain");
  if (plain?.body?.data !== undefined) return Buffer.from(plain.body.data, "base64url").toString("utf8").slice(0, max);
  const html = findPart(m.payload, "text/html");
  if (html?.body?.data !== undefined) {
    const markup = Buffer.from(html.body.data, "base64url").toString("utf8");
    const page = await pageText(Buffer.from(markup, "utf8"), "text/html; charset=utf-8", new URL("https://mail.google.com/"));
    // Readability finds no article in a short mail: its text without tags is what there is.
    const text = page.text !== "" ? page.text : withoutScripts(markup).replace(/<[^>]*>/g, " ").replace(/[ \t]+/g, " ").trim();
    return text.slice(0, max);
  }
  return (m.snippet ?? "").slice(0, max);
}
