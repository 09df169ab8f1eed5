"""Trace format v1: the events a trace file holds.

A trace is a sequence of JSON objects, one per line (JSON Lines), each with a ``kind``:

``header`` (first line)
    ``format`` = "groupspec-trace", ``version`` = 1, ``source`` (who wrote it: "recorder",
    "simulator", "reference", or a tool name), optional ``cluster`` and ``note``.
``exchange``
    One request and its response as seen on the wire: ``connection`` (an id the recorder
    gives each TCP connection, or a member name in simulated traces), ``client_id``,
    ``api`` (Kafka's API name: "JoinGroup"), ``api_key``, ``api_version``,
    ``correlation_id``, ``group_id``, the interval ``sent_ms`` (request seen) to
    ``received_ms`` (response seen), and the decoded ``request`` and ``response`` bodies
    (``response`` null when none was seen). Bodies use the field names of
    :mod:`groupspec.protocol.messages`; bytes are base64.
``decode_error``
    A frame the recorder could not decode: ``connection``, ``direction``, ``api_key``,
    ``api_version``, ``correlation_id``, ``at_ms``, ``error``, ``size``.
``record``
    A reference-level record (``record`` with its ``type`` and fields, as
    :mod:`groupspec.protocol.records`), at ``at_ms``.
``expiry``
    A reference-level timer input (``timer``: ExpireHeartbeat, ExpireJoin, ...), at ``at_ms``.

Every event carries ``seq``, its position in the file (0 for the header). Order in the file
is the order the writer saw events; requests on different connections are only ordered
by their time intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from groupspec.protocol import messages as m
from groupspec.protocol import records as r

FORMAT = "groupspec-trace"
VERSION = 1

#: Kafka API name -> (api key, request class, response class)
APIS: dict[str, tuple[int, type, type]] = {
    "OffsetCommit": (8, m.OffsetCommitRequest, m.OffsetCommitResponse),
    "OffsetFetch": (9, m.OffsetFetchRequest, m.OffsetFetchResponse),
    "FindCoordinator": (10, m.FindCoordinatorRequest, m.FindCoordinatorResponse),
    "JoinGroup": (11, m.JoinGroupRequest, m.JoinGroupResponse),
    "Heartbeat": (12, m.HeartbeatRequest, m.HeartbeatResponse),
    "LeaveGroup": (13, m.LeaveGroupRequest, m.LeaveGroupResponse),
    "SyncGroup": (14, m.SyncGroupRequest, m.SyncGroupResponse),
    "DescribeGroups": (15, m.DescribeGroupsRequest, m.DescribeGroupsResponse),
    "ListGroups": (16, m.ListGroupsRequest, m.ListGroupsResponse),
    "DeleteGroups": (42, m.DeleteGroupsRequest, m.DeleteGroupsResponse),
}
API_BY_KEY: dict[int, str] = {key: name for name, (key, _, _) in APIS.items()}

#: record type name -> record class
RECORD_TYPES: dict[str, type[r.Record]] = {
    cls.__name__: cls
    for cls in vars(r).values()
    if isinstance(cls, type) and issubclass(cls, r.Record) and cls is not r.Record
}


@dataclass(frozen=True)
class Header:
    format: str = FORMAT
    version: int = VERSION
    source: str = "unknown"
    cluster: str | None = None
    note: str | None = None
    seq: int = 0


@dataclass(frozen=True)
class WireExchange:
    seq: int
    connection: str
    client_id: str
    api: str
    api_key: int
    api_version: int
    correlation_id: int
    group_id: str
    sent_ms: float
    received_ms: float | None
    request: m.Request
    response: m.Response | None
    cluster: str | None = None
    #: the recorder re-encoded this frame (advertised-address rewriting)
    rewritten: bool = False


@dataclass(frozen=True)
class DecodeErrorEvent:
    seq: int
    connection: str
    direction: str
    api_key: int | None
    api_version: int | None
    correlation_id: int | None
    at_ms: float
    error: str
    size: int
    cluster: str | None = None


@dataclass(frozen=True)
class RecordEvent:
    seq: int
    at_ms: int
    record: r.Record
    cluster: str | None = None


@dataclass(frozen=True)
class ExpiryEvent:
    seq: int
    at_ms: int
    timer: str
    group_id: str
    member_id: str = ""
    cluster: str | None = None


Event: TypeAlias = Header | WireExchange | DecodeErrorEvent | RecordEvent | ExpiryEvent

KINDS: dict[type, str] = {
    Header: "header",
    WireExchange: "exchange",
    DecodeErrorEvent: "decode_error",
    RecordEvent: "record",
    ExpiryEvent: "expiry",
}


def group_of(event: Event) -> str | None:
    """The group an event belongs to (None for the header and undecodable frames)."""
    if isinstance(event, WireExchange | ExpiryEvent):
        return event.group_id
    if isinstance(event, RecordEvent):
        return event.record.group_id
    return None


def request_group_id(request: m.Request) -> str:
    """The group a request is about ("" for cluster-wide requests such as ListGroups)."""
    if isinstance(request, m.FindCoordinatorRequest):
        return request.key
    if isinstance(request, m.DescribeGroupsRequest):
        return request.groups[0] if len(request.groups) == 1 else ""
    if isinstance(request, m.DeleteGroupsRequest):
        return request.groups_names[0] if len(request.groups_names) == 1 else ""
    return getattr(request, "group_id", "")
