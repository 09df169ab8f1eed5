"""Kafka's topic ids (``org.apache.kafka.common.Uuid``), as the consumer protocol carries them.

Source: clients/.../common/Uuid.java. A topic id is 128 bits; its text form
(``Uuid.toString`` / ``fromString``) is URL-safe base64 without padding, 22 characters.
Held as an ``int`` subclass so that dicts keyed by topic id hash in C (``uuid.UUID`` hashes
in Python, which costs seconds at a million partitions).
"""

from __future__ import annotations

import base64
import hashlib


class TopicId(int):
    """A Kafka topic id (``org.apache.kafka.common.Uuid``) as its 128 bits; ``str`` gives
    Kafka's text form (``Uuid.toString``), :meth:`parse` reads it."""

    __slots__ = ()

    def __new__(cls, value: int) -> TopicId:
        if not 0 <= value < 1 << 128:
            raise ValueError(f"a topic id is 128 bits, got {value}")
        return super().__new__(cls, value)

    @classmethod
    def for_name(cls, name: str) -> TopicId:
        """A deterministic id for a topic known only by name (simulated clusters; Kafka
        gives a new topic a random id)."""
        return cls(int.from_bytes(hashlib.blake2b(name.encode(), digest_size=16).digest(), "big"))

    @classmethod
    def parse(cls, text: str) -> TopicId:
        """``Uuid.fromString``; ValueError unless ``text`` is 16 bytes in URL-safe base64."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except ValueError as e:
            raise ValueError(f"topic id {text!r}: not URL-safe base64") from e
        if len(raw) != 16:
            raise ValueError(f"topic id {text!r}: decodes to {len(raw)} bytes, expected 16")
        return cls(int.from_bytes(raw, "big"))

    def __str__(self) -> str:
        raw = int(self).to_bytes(16, "big")
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    def __repr__(self) -> str:
        return f"TopicId.parse({str(self)!r})"
