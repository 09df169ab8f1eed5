"""Kafka's non-flexible primitive encodings (big-endian), used by the consumer-protocol payloads.

Source: clients/src/main/java/org/apache/kafka/common/protocol/types/Type.java. Decoding
errors raise :class:`DecodeError` naming the byte offset, never a bare struct error.
"""

from __future__ import annotations

import struct


class DecodeError(ValueError):
    """A payload that does not decode; the message names the byte offset."""


class Writer:
    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def int16(self, v: int) -> None:
        self._parts.append(struct.pack(">h", v))

    def int32(self, v: int) -> None:
        self._parts.append(struct.pack(">i", v))

    def string(self, s: str) -> None:
        b = s.encode("utf-8")
        self.int16(len(b))
        self._parts.append(b)

    def nullable_string(self, s: str | None) -> None:
        if s is None:
            self.int16(-1)
        else:
            self.string(s)

    def nullable_bytes(self, b: bytes | None) -> None:
        if b is None:
            self.int32(-1)
        else:
            self.int32(len(b))
            self._parts.append(b)

    def getvalue(self) -> bytes:
        return b"".join(self._parts)


class Reader:
    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    def _take(self, n: int, what: str) -> bytes:
        if n < 0 or self._pos + n > len(self._data):
            raise DecodeError(
                f"truncated {what} at byte {self._pos}: need {n}, have {self.remaining}"
            )
        out = self._data[self._pos : self._pos + n]
        self._pos += n
        return out

    def int16(self, what: str = "int16") -> int:
        v: int = struct.unpack(">h", self._take(2, what))[0]
        return v

    def int32(self, what: str = "int32") -> int:
        v: int = struct.unpack(">i", self._take(4, what))[0]
        return v

    def string(self, what: str = "string") -> str:
        at = self._pos
        n = self.int16(what + " length")
        if n < 0:
            raise DecodeError(f"null {what} at byte {at} where a string is required")
        raw = self._take(n, what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DecodeError(f"{what} at byte {at} is not UTF-8: {e}") from None

    def nullable_string(self, what: str = "string") -> str | None:
        at = self._pos
        n = self.int16(what + " length")
        if n == -1:
            return None
        if n < 0:
            raise DecodeError(f"negative {what} length {n} at byte {at}")
        raw = self._take(n, what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DecodeError(f"{what} at byte {at} is not UTF-8: {e}") from None

    def nullable_bytes(self, what: str = "bytes") -> bytes | None:
        at = self._pos
        n = self.int32(what + " length")
        if n == -1:
            return None
        if n < 0:
            raise DecodeError(f"negative {what} length {n} at byte {at}")
        return self._take(n, what)

    def array_length(self, what: str) -> int:
        at = self._pos
        n = self.int32(what + " count")
        if n < 0:
            raise DecodeError(f"negative {what} count {n} at byte {at}")
        if n > self.remaining:
            raise DecodeError(f"{what} count {n} at byte {at} exceeds the {self.remaining} bytes left")
        return n
