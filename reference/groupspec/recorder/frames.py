"""Kafka frames as the recorder sees them: request and response headers, and the rewriting
of the addresses a broker advertises.

Every Kafka message travels as a frame: a 4-byte big-endian size, then the message. A
request message starts with header v1 (api key, api version, correlation id, client id as
a nullable int16 string) or, for the flexible versions of its API, header v2 (the same
plus a tagged-field section; the client id stays non-compact). A response starts with its
correlation id, then — for flexible versions, except ApiVersions, whose response header
is always v0 — a tagged-field section. Only the request says which API and version a
response answers, so responses are matched to requests by correlation id per connection.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.recorder.schema import (
    SchemaError,
    decode_body,
    encode_body,
    skip_tagged_fields,
    spec_for,
)

API_VERSIONS_KEY = 18
METADATA_KEY = 3
FIND_COORDINATOR_KEY = 10
DESCRIBE_CLUSTER_KEY = 60
#: responses that carry broker addresses a client then connects to
ADDRESS_APIS = frozenset({METADATA_KEY, FIND_COORDINATOR_KEY, DESCRIBE_CLUSTER_KEY})


@dataclass(frozen=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    #: where the body starts in the frame; None when the API's schema is unknown (so
    #: whether a tagged-field section follows the client id is unknown too)
    body_offset: int | None


def parse_request_header(frame: bytes) -> RequestHeader:
    """The header of a request frame (the size prefix already removed)."""
    if len(frame) < 10:
        raise SchemaError(f"a request of {len(frame)} bytes is shorter than any request header")
    api_key, api_version, correlation_id, n = struct.unpack_from(">hhih", frame, 0)
    offset = 10
    client_id: str | None = None
    if n >= 0:
        if offset + n > len(frame):
            raise SchemaError(f"client id of {n} bytes runs past the {len(frame)}-byte frame")
        try:
            client_id = frame[offset : offset + n].decode("utf-8")
        except UnicodeDecodeError as e:
            raise SchemaError(f"client id is not UTF-8 ({e})") from None
        offset += n
    elif n != -1:
        raise SchemaError(f"negative client id length {n}")
    spec = spec_for(api_key, "request")
    body_offset: int | None = None
    if spec is not None:
        body_offset = skip_tagged_fields(frame, offset) if spec.is_flexible(api_version) else offset
    return RequestHeader(api_key, api_version, correlation_id, client_id, body_offset)


def response_body_offset(frame: bytes, api_key: int, api_version: int) -> int:
    """Where the body of a response to (api key, version) starts in its frame."""
    if len(frame) < 4:
        raise SchemaError(f"a response of {len(frame)} bytes has no correlation id")
    spec = spec_for(api_key, "response")
    flexible = spec is not None and spec.is_flexible(api_version) and api_key != API_VERSIONS_KEY
    return skip_tagged_fields(frame, 4) if flexible else 4


def correlation_id_of(frame: bytes) -> int | None:
    if len(frame) < 4:
        return None
    value: int = struct.unpack_from(">i", frame, 0)[0]
    return value


def decode_response(frame: bytes, api_key: int, api_version: int) -> dict[str, Any]:
    spec = spec_for(api_key, "response")
    if spec is None:
        raise SchemaError(f"no schema for responses of api key {api_key}")
    return decode_body(spec, api_version, frame, response_body_offset(frame, api_key, api_version))


def decode_request(frame: bytes, header: RequestHeader) -> dict[str, Any]:
    spec = spec_for(header.api_key, "request")
    if spec is None or header.body_offset is None:
        raise SchemaError(f"no schema for requests of api key {header.api_key}")
    return decode_body(spec, header.api_version, frame, header.body_offset)


#: (advertised host, port) -> the address to advertise instead, or None to leave it
AddressMap = Callable[[str, int], tuple[str, int] | None]


def _rewrite_entries(entries: list[dict[str, Any]], mapping: AddressMap) -> bool:
    changed = False
    for entry in entries:
        host, port = entry.get("host"), entry.get("port")
        if not isinstance(host, str) or not isinstance(port, int):
            continue
        new = mapping(host, port)
        if new is not None and new != (host, port):
            entry["host"], entry["port"] = new
            changed = True
    return changed


def rewrite_addresses(
    frame: bytes, api_key: int, api_version: int, mapping: AddressMap
) -> bytes | None:
    """A copy of a Metadata, FindCoordinator or DescribeCluster response frame with broker
    addresses replaced by ``mapping``; None when nothing changes. The header bytes are
    kept as they were; the body is re-encoded with the same version (so tagged fields,
    known or not, survive)."""
    if api_key not in ADDRESS_APIS:
        return None
    spec = spec_for(api_key, "response")
    if spec is None:
        return None
    offset = response_body_offset(frame, api_key, api_version)
    body = decode_body(spec, api_version, frame, offset)
    if api_key == FIND_COORDINATOR_KEY:
        entries = body.get("coordinators", [body])
    else:
        entries = body["brokers"]
    if not _rewrite_entries(entries, mapping):
        return None
    return frame[:offset] + encode_body(spec, api_version, body)
