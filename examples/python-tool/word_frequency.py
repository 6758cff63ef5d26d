#!/usr/bin/env python3
"""An example tau extension in Python: one tool, `word_frequency`, which lists the most frequent
words of a text. It is built on the contracts codegen writes for Python
(generated/sdk/python/tau_protocol.py) and a small frame and CBOR helper (tau_stdio.py); it needs
nothing beyond python3's standard library.

Configure it in harness.yaml:
  extensions:
    - name: words-py
      command: ["python3", "examples/python-tool/word_frequency.py"]
      config: { case_sensitive: false }

What it says, in order (records/SPEC-extension-host.md, SPEC-tool-routing.md): hello; then it waits
for configure; it declares its tool and says ready (or sends config_error for a bad
configuration); then it answers each call routed to it (a directed `tool.call`) with
`tool.result_reported` or `tool.error_reported`, and leaves when the harness disconnects or closes
its stdin.
"""
import json
import os
import re
import sys
from collections import Counter

# No byte-code caches beside the modules: generated/ holds exactly what codegen writes.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "generated", "sdk", "python"))

from tau_protocol import (  # noqa: E402  (the generated module's folder is put on the path first)
    ConfigErrorMessage,
    ConfigErrorMessageName,
    ConfigErrorMessagePayload,
    ConfigureMessage,
    DirectMessage,
    DisconnectMessage,
    EmitMessage,
    EmitMessageName,
    EmitMessagePayload,
    ErrorMessage,
    HelloMessage,
    HelloMessageName,
    HelloMessagePayload,
    PeerRole,
    ReadyMessage,
    ReadyMessageName,
    ReadyMessagePayload,
    Revision,
    RoutedToolCall,
    ToolDisplay,
    ToolErrorReported,
    ToolRegistrationDeclared,
    ToolResultReported,
    event_data_from_dict,
    event_envelope,
    message_from_dict,
)
from tau_stdio import PROTOCOL_REVISION, Channel  # noqa: E402

TOOL_NAME = "word_frequency"
TOOL_DESCRIPTION = "Lists the most frequent words of a text, most frequent first, one `word count` per line."
TOOL_PARAMETERS = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "maxLength": 1000000},
        "top": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many words to list (default 5)."},
    },
    "required": ["text"],
    "additionalProperties": False,
}
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


class ToolFailure(Exception):
    """A failure whose message is meant for the model and the user."""


def word_frequency(args, case_sensitive):
    """The tool itself: (output, summary) for the call's arguments."""
    if not isinstance(args, dict) or not isinstance(args.get("text"), str):
        raise ToolFailure("text must be a string")
    top = args.get("top", 5)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 100:
        raise ToolFailure("top must be a whole number from 1 to 100")
    words = WORD.findall(args["text"])
    counts = Counter(w if case_sensitive else w.lower() for w in words)
    # Ties in alphabetical order, so the same text always gives the same answer.
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
    output = "\n".join("%s %d" % (w, n) for w, n in ranked) if ranked else "(no words)"
    return output, "%d words, %d distinct" % (len(words), len(counts))


def emit(channel, name, data):
    """Publishes event `name` with `data`, an instance of that event's generated payload type."""
    channel.send(EmitMessage(message=EmitMessageName.EMIT, payload=EmitMessagePayload(event=event_envelope(name, data))))


def answer(channel, call, configuration, case_sensitive):
    """Runs one routed call and reports how it ended: exactly one result or error report."""
    prefix = configuration.tool_prefix
    tool = call.tool[len(prefix):] if call.tool.startswith(prefix) else call.tool
    if tool != TOOL_NAME:
        emit(channel, "tool.error_reported", ToolErrorReported(call_id=call.call_id, error="this extension has no tool %s" % call.tool))
        return
    try:
        args = json.loads(call.arguments_json)
    except ValueError:
        emit(channel, "tool.error_reported", ToolErrorReported(call_id=call.call_id, error="the tool arguments are not valid JSON"))
        return
    try:
        output, summary = word_frequency(args, case_sensitive)
    except ToolFailure as failure:
        emit(channel, "tool.error_reported", ToolErrorReported(call_id=call.call_id, error=str(failure)))
        return
    emit(channel, "tool.result_reported", ToolResultReported(call_id=call.call_id, output=output, display=ToolDisplay(summary=summary)))


def main():
    channel = Channel()
    major, minor = PROTOCOL_REVISION
    channel.send(HelloMessage(
        message=HelloMessageName.HELLO,
        payload=HelloMessagePayload(revision=Revision(major=major, minor=minor), role=PeerRole.EXTENSION),
    ))
    first = channel.receive()
    if first is None or first.get("message") != "configure":
        # An `error` (another protocol major) or `disconnect`: the harness will not configure us.
        sys.stderr.write("word_frequency: the harness did not configure this extension (%s)\n" % (first or {}).get("message", "end of input"))
        return 1
    configuration = ConfigureMessage.from_dict(first).payload

    case_sensitive = configuration.config.get("case_sensitive", False)
    if isinstance(case_sensitive, bool):
        emit(channel, "tool.registration_declared", ToolRegistrationDeclared(name=TOOL_NAME, description=TOOL_DESCRIPTION, parameters=TOOL_PARAMETERS))
        # Calls reach their owner alone, as directed `tool.call`s: nothing to subscribe to.
        channel.send(ReadyMessage(message=ReadyMessageName.READY, payload=ReadyMessagePayload()))
    else:
        # Not ready: the harness reports this as a notice naming the instance and stops the process.
        channel.send(ConfigErrorMessage(message=ConfigErrorMessageName.CONFIG_ERROR, payload=ConfigErrorMessagePayload(text="case_sensitive must be true or false")))

    while True:
        raw = channel.receive()
        if raw is None:
            return 0
        try:
            message = message_from_dict(raw)
        except (KeyError, AssertionError, ValueError):
            # A message newer than these contracts, or of another shape: say so in the session's
            # extensions.log (stderr), and go on.
            sys.stderr.write("word_frequency: could not read a %r message\n" % (raw.get("message") if isinstance(raw, dict) else None))
            continue
        if isinstance(message, DisconnectMessage):
            return 0
        if isinstance(message, ErrorMessage):
            sys.stderr.write("word_frequency: the harness refused a message (%s)\n" % message.payload.code.value)
        elif isinstance(message, DirectMessage) and message.payload.event.name == "tool.call":
            # A call is sent to its owner alone, and never replayed.
            call = event_data_from_dict("tool.call", message.payload.event.data)
            assert isinstance(call, RoutedToolCall)
            answer(channel, call, configuration, case_sensitive)
        # A `tool.cancel_request` arrives directed after its call, but a call here ends before the next message is read.


if __name__ == "__main__":
    sys.exit(main())
