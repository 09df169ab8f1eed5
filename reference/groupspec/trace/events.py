"""Trace format v1: the events a trace file holds.

A trace is a sequence of JSON objects, one per line (JSON Lines), each with a ``kind``:

``header`` (first line)
    ``format`` = "groupspec-trace", ``version`` = 1, ``source`` (who wrote it: "recorder",
    "simulator", "reference", or a tool name), optional ``cluster`` and ``note``.
``exchange``
    One request and its response as seen on the wire: ``connection`` (an id the recorder
    gives each TCP connection, or a member name in simulated traces), ``client_id``,
    ``api`` (Kafka's API name: "JoinGroup"), ``api_key``, ``api_version``,
    ``correlation_id``, ``group_id`` (the group the request names; "" for none, e.g. a
    ListGroups or a FindCoordinator of a transactional id), the interval ``sent_ms`` (request seen) to
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
``fetch`` (v1.1)
    A Fetch request and its response: which partitions a client fetched at which offsets
    (``partitions``: topic, partition, ``fetch_offset``, and from the response the Kafka
    error code, the high watermark and ``next_offset``, the offset after the last record
    returned). Fetch names no group: ``group_id`` and ``member_id`` are filled only by a
    writer that knows them (the simulator); the validator otherwise attributes a fetch to
    the member whose exchanges carry the same ``client_id``.
``api_versions`` (v1.1)
    An ApiVersions exchange: the client software name and version the client announced,
    the error code and the version ranges the broker offered.

Process identity (v1.1): every exchange, fetch and api_versions event names its
``connection`` (the recorder's id for the TCP connection; in simulated traces the member
and its process incarnation, ``name#2``) and ``client_id``; a recorder also writes
``peer``, the client's address and port of that TCP connection. Two events with the same
connection come from one process; the validator tells processes apart by these.

Version 1.1 only adds event kinds and optional fields: the header says ``version`` 1 and
``minor`` 1, and a v1 trace (no ``minor``) reads exactly as before.

Version 1.2 adds the consumer group protocol (KIP-848): ``exchange`` events of the APIs
``ConsumerGroupHeartbeat`` (68) and ``ConsumerGroupDescribe`` (69), topic ids in Kafka's
text form (``Uuid.toString``, 22 characters), OffsetFetch's v9 ``member_id`` and
``member_epoch`` (optional: absent reads as None and -1), the consumer group's records, and
``metadata`` events: the topics (name, id, partitions) known from a time on, the metadata
image a consumer group's assignor sees, which the validator gives the reference; and the
header's ``broker_config`` (Kafka's setting names: ``group.consumer.session.timeout.ms``,
``group.consumer.heartbeat.interval.ms``), broker settings the wire does not carry.

ListGroups v5's ``types_filter`` (request) and each listed group's ``group_type``
(response) were added to the v1.2 vocabulary as optional fields: absent (or null) they read
as not recorded, and a v5 answer leaving a group out is then not judged.

The committed leader epoch (KIP-320) was added to the v1.2 vocabulary as optional fields
with a default: OffsetCommit partitions' and OffsetFetch answer partitions'
``committed_leader_epoch``, OffsetCommitted records' ``leader_epoch`` (-1, none, when absent)
and GroupLoaded records' ``leader_epochs`` (empty when absent). So were OffsetCommit
v2-v4's ``retention_time_ms`` (-1, the broker's retention, when absent), OffsetCommitted
records' ``expire_timestamp_ms`` (null, none, when absent) and GroupLoaded records'
``expire_timestamps`` (empty when absent).

``closed`` events (the broker closed a connection with requests unanswered) were added to
the v1.2 vocabulary later, as a kind of their own (a reader older than them reports the line
as an unknown kind).

OffsetDelete (47) and TxnOffsetCommit (28) exchanges were added to the v1.2 vocabulary
without a minor version of their own (a reader older than them reports the line as an
unknown API): both change a group's committed offsets. TxnOffsetCommit is replayed for the
group coordinator's check of it; its transaction is not modelled.

Every event carries ``seq``, its position in the file (0 for the header). Order in the file
is the order the writer saw events; requests on different connections are only ordered
by their time intervals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, TypeAlias

from groupspec.protocol import consumer_group_messages as cgm
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.topic_id import TopicId

FORMAT = "groupspec-trace"
VERSION = 1
#: the minor version written (1: fetch and api_versions events, ``peer``; 2: KIP-848);
#: readers accept any minor version of :data:`VERSION` (a minor version only adds)
MINOR = 2

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
    # v1.3: offsets deleted by an admin (KIP-496), and a transactional producer's offset
    # commit (recorded so the validator knows of it; transactions are not modelled)
    "OffsetDelete": (47, m.OffsetDeleteRequest, m.OffsetDeleteResponse),
    "TxnOffsetCommit": (28, m.TxnOffsetCommitRequest, m.TxnOffsetCommitResponse),
    "ConsumerGroupHeartbeat": (68, cgm.ConsumerGroupHeartbeatRequest, cgm.ConsumerGroupHeartbeatResponse),
    "ConsumerGroupDescribe": (69, cgm.ConsumerGroupDescribeRequest, cgm.ConsumerGroupDescribeResponse),
}
API_BY_KEY: dict[int, str] = {key: name for name, (key, _, _) in APIS.items()}

#: record type name -> record class
RECORD_TYPES: dict[str, type[r.Record]] = {
    cls.__name__: cls
    for cls in [*vars(r).values(), *cr.CONSUMER_GROUP_RECORDS]
    if isinstance(cls, type) and issubclass(cls, r.Record) and cls is not r.Record
}


#: the ``source`` the recorder writes in its header (its connections are TCP connections)
RECORDER_SOURCE = "recorder"


@dataclass(frozen=True)
class Header:
    format: str = FORMAT
    version: int = VERSION
    source: str = "unknown"
    cluster: str | None = None
    note: str | None = None
    seq: int = 0
    #: 0 for a v1 trace (the field absent), 1 for v1.1, 2 for v1.2
    minor: int = 0
    #: v1.2: broker settings the wire does not show, by Kafka's names, when the writer knows
    #: them (the simulator; a recording made with them given): a consumer group's session
    #: timeout and heartbeat interval are the broker's, not the member's
    broker_config: dict[str, int] = field(default_factory=dict)


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
    #: v1.1: the client's address and port of the TCP connection (recorder)
    peer: str | None = None


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


@dataclass(frozen=True)
class FetchPartition:
    """One partition of a Fetch: the offset asked for and, once answered, what came back."""

    topic: str
    partition: int
    fetch_offset: int
    #: Kafka's error code for the partition (None: no response seen)
    error_code: int | None = None
    high_watermark: int | None = None
    #: the offset after the last record returned (None: no records, or not known)
    next_offset: int | None = None


@dataclass(frozen=True)
class FetchEvent:
    """A Fetch request (and its response): which partitions a client fetches at which offsets."""

    seq: int
    connection: str
    client_id: str
    api_version: int
    correlation_id: int
    sent_ms: float
    received_ms: float | None
    partitions: tuple[FetchPartition, ...]
    #: the group and member of the fetching consumer, when the writer knows them (simulator)
    group_id: str | None = None
    member_id: str | None = None
    cluster: str | None = None
    peer: str | None = None


@dataclass(frozen=True)
class ApiVersionRange:
    api_key: int
    min_version: int
    max_version: int


@dataclass(frozen=True)
class ApiVersionsEvent:
    """An ApiVersions exchange: who the client says it is and what the broker offers."""

    seq: int
    connection: str
    client_id: str
    api_version: int
    correlation_id: int
    sent_ms: float
    received_ms: float | None
    client_software_name: str | None = None
    client_software_version: str | None = None
    #: Kafka's error code (None: no response seen)
    error_code: int | None = None
    api_keys: tuple[ApiVersionRange, ...] = ()
    cluster: str | None = None
    peer: str | None = None


@dataclass(frozen=True)
class MetadataTopic:
    """v1.2: one topic of the cluster's metadata: its name, id and partition count."""

    name: str
    topic_id: TopicId
    partitions: int


@dataclass(frozen=True)
class MetadataEvent:
    """v1.2: the topics known from this time on (the whole image, not a delta): what a
    consumer group's server-side assignor sees. The recorder writes one whenever a Metadata
    response changes what it knows; the validator hands the image to the reference."""

    seq: int
    at_ms: float
    topics: tuple[MetadataTopic, ...]
    cluster: str | None = None


@dataclass(frozen=True)
class ClosedEvent:
    """v1.2 (added later): the broker closed a connection (the recorder saw the broker's
    side end before the client's). ``pending``: how many of the connection's group requests
    were unanswered then; they are written as exchanges without a response. Kafka closes a
    connection only for a request it cannot parse (a version it does not support, a
    malformed body), one idle for connections.max.idle.ms, or when it shuts down (then
    every connection, idle ones too)."""

    seq: int
    connection: str
    at_ms: float
    pending: int
    cluster: str | None = None
    peer: str | None = None


Event: TypeAlias = (
    Header | WireExchange | DecodeErrorEvent | RecordEvent | ExpiryEvent | FetchEvent
    | ApiVersionsEvent | MetadataEvent | ClosedEvent
)

KINDS: dict[type, str] = {
    Header: "header",
    WireExchange: "exchange",
    DecodeErrorEvent: "decode_error",
    RecordEvent: "record",
    ExpiryEvent: "expiry",
    FetchEvent: "fetch",
    ApiVersionsEvent: "api_versions",
    MetadataEvent: "metadata",
    ClosedEvent: "closed",
}


def group_of(event: Event) -> str | None:
    """The group an event belongs to (None for the header and undecodable frames)."""
    if isinstance(event, WireExchange | ExpiryEvent):
        return event.group_id
    if isinstance(event, RecordEvent):
        return event.record.group_id
    if isinstance(event, FetchEvent):
        return event.group_id
    return None


def group_getter(cls: type) -> Callable[[Any], str | None] | None:
    """:func:`group_of` for the events of class ``cls`` as one getter (None: their group is
    None), for a caller that reads the groups of many events of one class."""
    if issubclass(cls, WireExchange | ExpiryEvent):
        return attrgetter("group_id")
    if issubclass(cls, RecordEvent):
        return attrgetter("record.group_id")
    if issubclass(cls, FetchEvent):
        return attrgetter("group_id")
    return None


def request_group_id(request: m.Request) -> str:
    """The group a request is about ("" for cluster-wide requests such as ListGroups, and for
    a FindCoordinator of another key type than a group's: a transactional id's, key type 1,
    names a transaction coordinator)."""
    if isinstance(request, m.FindCoordinatorRequest):
        return request.key if request.key_type == 0 else ""
    if isinstance(request, m.DescribeGroupsRequest):
        return request.groups[0] if len(request.groups) == 1 else ""
    if isinstance(request, m.DeleteGroupsRequest):
        return request.groups_names[0] if len(request.groups_names) == 1 else ""
    if isinstance(request, cgm.ConsumerGroupDescribeRequest):
        return request.group_ids[0] if len(request.group_ids) == 1 else ""
    return getattr(request, "group_id", "")
