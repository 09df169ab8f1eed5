"""Decoded Fetch and ApiVersions bodies (plain dicts, :mod:`groupspec.recorder.schema`) ->
the v1.1 trace events that say what a client consumed and who it says it is.

Fetch needs state across requests, kept here per connection as plain data:

- **Fetch sessions** (KIP-227, Fetch v7+): after a full request (session epoch 0 or -1) a
  client sends only the partitions whose offset changed, and names the ones it drops in
  ``forgotten_topics_data``. :class:`FetchSession` replays that, so every event lists the
  partitions the session holds after the request, each with the last offset the client
  asked for (FetchSessionHandler.java in kafka-clients builds these requests).
- **Topic ids** (Fetch v13+): requests and responses name topics by id; the names come
  from the Metadata responses the recorder has seen (:class:`TopicNames`). An id never seen
  in Metadata is written as its hex form.

No I/O here: the proxy feeds bodies in and writes the events out.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from groupspec.protocol.topic_id import TopicId
from groupspec.trace.events import ApiVersionRange, FetchPartition, MetadataTopic

FETCH_KEY = 1
API_VERSIONS_KEY = 18
METADATA_KEY = 3

#: FetchMetadata: a full request opens or closes a session
_FULL_EPOCHS = (0, -1)

TP = tuple[str, int]


@dataclass
class TopicNames:
    """Topic id (16 raw bytes) -> name, learnt from Metadata responses."""

    names: dict[bytes, str] = field(default_factory=dict)
    #: name -> (topic id, partition count): the metadata image as the responses showed it
    image: dict[str, tuple[bytes, int]] = field(default_factory=dict)

    def learn_metadata(self, body: Mapping[str, Any]) -> bool:
        """Learn from a Metadata response; whether the image (names, ids, partition counts
        of the topics it described without error) changed."""
        changed = False
        for t in body.get("topics", ()):
            tid, name = t.get("topic_id"), t.get("name")
            if isinstance(tid, bytes) and isinstance(name, str) and any(tid):
                self.names[tid] = name
                if t.get("error_code", 0) == 0:
                    entry = (tid, len(t.get("partitions") or ()))
                    if self.image.get(name) != entry:
                        self.image[name] = entry
                        changed = True
        return changed

    def topics(self) -> tuple[MetadataTopic, ...]:
        return tuple(MetadataTopic(name, TopicId(int.from_bytes(tid, "big")), n)
                     for name, (tid, n) in sorted(self.image.items()))

    def name(self, topic: Mapping[str, Any]) -> str:
        if isinstance(topic.get("topic"), str):
            return str(topic["topic"])
        tid = topic.get("topic_id")
        if isinstance(tid, bytes):
            return self.names.get(tid, tid.hex())
        return ""


@dataclass
class FetchSession:
    """One connection's fetch session: partition -> the last fetch offset asked for."""

    offsets: dict[TP, int] = field(default_factory=dict)

    def request(self, body: Mapping[str, Any], names: TopicNames) -> dict[TP, int]:
        """Apply a Fetch request; the partitions the session fetches after it."""
        listed = {
            (names.name(t), int(p["partition"])): int(p["fetch_offset"])
            for t in body.get("topics", ())
            for p in t.get("partitions", ())
        }
        if body.get("session_epoch", 0) in _FULL_EPOCHS:
            self.offsets = dict(listed)
        else:
            self.offsets.update(listed)
            for t in body.get("forgotten_topics_data", ()):
                name = names.name(t)
                for part in t.get("partitions", ()):
                    self.offsets.pop((name, int(part)), None)
        return dict(self.offsets)


def next_offset(records: bytes | None) -> int | None:
    """The offset after the last record of the last complete v2 batch in ``records`` (None
    if there is none): a batch starts with its base offset (int64) and length (int32); its
    last offset delta (int32) sits 23 bytes in (DefaultRecordBatch.java)."""
    if not records:
        return None
    pos, out = 0, None
    while pos + 27 <= len(records):
        base, length = struct.unpack_from(">qi", records, pos)
        end = pos + 12 + length
        if length <= 0 or end > len(records):
            break
        if records[pos + 16] == 2:  # magic
            (delta,) = struct.unpack_from(">i", records, pos + 23)
            out = base + delta + 1
        pos = end
    return out


def fetch_partitions(
    session: dict[TP, int], response: Mapping[str, Any] | None, names: TopicNames
) -> tuple[FetchPartition, ...]:
    """The session's partitions, with what the response says of each (if it says)."""
    answered: dict[TP, Mapping[str, Any]] = {}
    if response is not None:
        for t in response.get("responses", ()):
            name = names.name(t)
            for p in t.get("partitions", ()):
                answered[(name, int(p["partition_index"]))] = p
    out = []
    for tp in sorted(session):
        p = answered.get(tp)
        if p is None:
            out.append(FetchPartition(tp[0], tp[1], session[tp]))
        else:
            out.append(FetchPartition(
                tp[0], tp[1], session[tp], int(p.get("error_code", 0)),
                int(p.get("high_watermark", -1)), next_offset(p.get("records")),
            ))
    return tuple(out)


def api_versions_fields(request: Mapping[str, Any], response: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ApiVersionsEvent fields of one exchange."""
    out: dict[str, Any] = {
        "client_software_name": request.get("client_software_name"),
        "client_software_version": request.get("client_software_version"),
    }
    if response is not None:
        out["error_code"] = int(response.get("error_code", 0))
        out["api_keys"] = tuple(
            ApiVersionRange(int(k["api_key"]), int(k["min_version"]), int(k["max_version"]))
            for k in response.get("api_keys", ())
        )
    return out
