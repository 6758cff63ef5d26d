"""Frames and CBOR for a tau extension written in Python, with the standard library only.

An extension talks to its harness over stdin and stdout. Every frame is a 4-byte big-endian length
and one CBOR data item, a map {message, payload} (records/SPEC-wire-protocol.md). This module
writes and reads the plain CBOR the protocol allows: maps with text keys, arrays, text, byte
strings, integers, floats, booleans and null, with definite lengths, nested at most 64 deep.
Anything else the harness would refuse is refused here too, before it is sent or used.
"""
import struct
import sys

# The protocol revision this helper and the generated contracts speak (SPEC-wire-protocol).
PROTOCOL_REVISION = (1, 0)

MAX_FRAME_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
# tau's numbers are JavaScript numbers: integers beyond this are refused by the harness.
MAX_SAFE_INTEGER = 2 ** 53 - 1


class ProtocolError(Exception):
    """A value that cannot be sent, or bytes that are not a frame of plain CBOR."""


def _head(major, n):
    if n < 24:
        return bytes([(major << 5) | n])
    if n < 0x100:
        return bytes([(major << 5) | 24, n])
    if n < 0x10000:
        return bytes([(major << 5) | 25]) + struct.pack(">H", n)
    if n < 0x100000000:
        return bytes([(major << 5) | 26]) + struct.pack(">I", n)
    return bytes([(major << 5) | 27]) + struct.pack(">Q", n)


def encode(value, depth=0):
    """The CBOR bytes of `value`: dicts with str keys, lists, str, bytes, int, float, bool, None."""
    if depth > MAX_DEPTH:
        raise ProtocolError("nested deeper than %d" % MAX_DEPTH)
    if value is None:
        return b"\xf6"
    if value is True:
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ProtocolError("an integer beyond 2^53 - 1")
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, float):
        return b"\xfb" + struct.pack(">d", value)
    if isinstance(value, str):
        data = value.encode("utf-8")
        return _head(3, len(data)) + data
    if isinstance(value, bytes):
        return _head(2, len(value)) + value
    if isinstance(value, (list, tuple)):
        return _head(4, len(value)) + b"".join(encode(x, depth + 1) for x in value)
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise ProtocolError("a map key that is not text")
            parts.append(encode(key, depth + 1) + encode(item, depth + 1))
        return _head(5, len(parts)) + b"".join(parts)
    raise ProtocolError("cannot encode a %s" % type(value).__name__)


def _number(value):
    # The harness writes integers as CBOR integers; older writers wrote those from 2^32 up
    # (timestamps in microseconds, for one) as 64-bit floats, so an integral float is read back as
    # the integer it stands for.
    if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    return value


def _decode(body, i, depth):
    if i >= len(body):
        raise ProtocolError("truncated CBOR")
    initial = body[i]
    i += 1
    major, info = initial >> 5, initial & 31
    if major == 7:
        if info == 20:
            return False, i
        if info == 21:
            return True, i
        if info == 22:
            return None, i
        sizes = {25: (">e", 2), 26: (">f", 4), 27: (">d", 8)}
        if info not in sizes:
            raise ProtocolError("a CBOR simple value outside the protocol")
        fmt, size = sizes[info]
        if i + size > len(body):
            raise ProtocolError("truncated CBOR")
        return _number(struct.unpack(fmt, body[i:i + size])[0]), i + size
    if major == 6:
        raise ProtocolError("a CBOR tag")
    if info < 24:
        n = info
    elif info <= 27:
        size = 1 << (info - 24)
        if i + size > len(body):
            raise ProtocolError("truncated CBOR")
        n = int.from_bytes(body[i:i + size], "big")
        i += size
    else:
        raise ProtocolError("an indefinite or reserved CBOR length")
    if major == 0:
        return n, i
    if major == 1:
        return -1 - n, i
    if major in (2, 3):
        if i + n > len(body):
            raise ProtocolError("truncated CBOR")
        chunk = bytes(body[i:i + n])
        if major == 2:
            return chunk, i + n
        try:
            return chunk.decode("utf-8"), i + n
        except UnicodeDecodeError:
            raise ProtocolError("text that is not UTF-8") from None
    if depth >= MAX_DEPTH:
        raise ProtocolError("nested deeper than %d" % MAX_DEPTH)
    if major == 4:
        items = []
        for _ in range(n):
            item, i = _decode(body, i, depth + 1)
            items.append(item)
        return items, i
    result = {}
    for _ in range(n):
        key, i = _decode(body, i, depth + 1)
        if not isinstance(key, str):
            raise ProtocolError("a map key that is not text")
        if key in result:
            raise ProtocolError("a map key that appears twice")
        result[key], i = _decode(body, i, depth + 1)
    return result, i


def decode(body):
    """The one value a frame body holds."""
    value, end = _decode(body, 0, 0)
    if end != len(body):
        raise ProtocolError("bytes after the CBOR item")
    return value


class Channel:
    """Frames over a pair of byte streams: the process's stdin and stdout unless given."""

    def __init__(self, reader=None, writer=None):
        self._reader = reader if reader is not None else sys.stdin.buffer
        self._writer = writer if writer is not None else sys.stdout.buffer

    def send(self, message):
        """Sends one message: a generated message type (anything with `to_dict`) or a plain dict."""
        value = message.to_dict() if hasattr(message, "to_dict") else message
        body = encode(value)
        if len(body) > MAX_FRAME_BYTES:
            raise ProtocolError("a message larger than one frame (16 MiB)")
        self._writer.write(struct.pack(">I", len(body)) + body)
        self._writer.flush()

    def receive(self):
        """The next message as plain values, or None once the harness has closed the stream."""
        header = self._read_exact(4)
        if header is None:
            return None
        length = struct.unpack(">I", header)[0]
        if length == 0 or length > MAX_FRAME_BYTES:
            raise ProtocolError("a frame length of %d" % length)
        body = self._read_exact(length)
        if body is None:
            return None
        return decode(body)

    def _read_exact(self, n):
        chunks = []
        while n > 0:
            chunk = self._reader.read(n)
            if not chunk:
                return None
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)
