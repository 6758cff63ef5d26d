// What a provider extension's configuration says of where its rounds go (agent.prompt_started's
// `provider`, SPEC-trace-export "otlp"): tau's own provider extension's profile and base URL host and
// port, never the URL's credentials, path or query; only the instance for any other extension.
import { describe, expect, it } from "vitest";
import { profileExtension, providerEndpoint } from "../../../handwritten/config/index.js";

const own = (config: Record<string, unknown>) => ({ name: "p", kind: "provider" as const, command: ["tau", "ext", "provider"], config });

describe("providerEndpoint", () => {
  it("[trace.otlp.conventions] names the profile and the base URL's host and port, the scheme's default port, and nothing else of the URL", () => {
    expect(providerEndpoint(own({ profile: "chat_completions", base_url: "http://user:secret@127.0.0.1:8080/v1?key=k" }))).toEqual({ instance: "p", api: "chat_completions", server_address: "127.0.0.1", server_port: 8080 });
    expect(providerEndpoint(own({ profile: "responses", base_url: "https://api.openai.com/v1" }))).toEqual({ instance: "p", api: "responses", server_address: "api.openai.com", server_port: 443 });
    expect(providerEndpoint(own({ profile: "chat_completions", base_url: "http://[::1]/v1" }))).toEqual({ instance: "p", api: "chat_completions", server_address: "::1", server_port: 80 });
    expect(providerEndpoint(profileExtension("groq", { api: "chat_completions", base_url: "https://api.groq.com/openai/v1", models: ["m"] }))).toEqual({ instance: "groq", api: "chat_completions", server_address: "api.groq.com", server_port: 443 });
  });

  it("[trace.otlp.conventions] says only what it knows: the offline demo has no server, another extension only its instance", () => {
    expect(providerEndpoint(own({}))).toEqual({ instance: "p", api: "scripted" });
    expect(providerEndpoint(own({ profile: "chat_completions", base_url: "not a url" }))).toEqual({ instance: "p", api: "chat_completions" });
    expect(providerEndpoint({ name: "theirs", kind: "provider", command: ["python3", "provider.py"], config: { base_url: "https://example.com" } })).toEqual({ instance: "theirs" });
  });
});
