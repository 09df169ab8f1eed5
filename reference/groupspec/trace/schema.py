"""The JSON Schema of trace format v1 (v1.1 included: a minor version only adds), generated from the same type hints the codec uses.

``trace_schema()`` builds it; ``schema/trace-v1.schema.json`` in the package is this
output, and a test keeps the two equal, so the documented format cannot drift from the code.
"""

from __future__ import annotations

import dataclasses
import types
from enum import Enum
from typing import Any, Union, get_args, get_origin

from groupspec.protocol.topic_id import TopicId
from groupspec.trace.codec import type_hints
from groupspec.trace.events import (
    APIS,
    KINDS,
    RECORD_TYPES,
    ApiVersionsEvent,
    ClosedEvent,
    DecodeErrorEvent,
    ExpiryEvent,
    FetchEvent,
    Header,
    MetadataEvent,
    RecordEvent,
    WireExchange,
)

SCHEMA_ID = "https://groupspec.invalid/schema/trace-v1.schema.json"


def _type_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        alts = [_type_schema(a, defs) for a in get_args(tp)]
        return {"anyOf": alts}
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _type_schema(args[0], defs)}
        return {
            "type": "array",
            "prefixItems": [_type_schema(a, defs) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }
    if tp is type(None):
        return {"type": "null"}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(get_args(tp)[1], defs)}
    if tp is TopicId:
        return {"type": "string", "pattern": "^[A-Za-z0-9_-]{22}$",
                "description": "a Kafka topic id as Uuid.toString writes it"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if tp is bytes:
        return {"type": "string", "contentEncoding": "base64"}
    if isinstance(tp, type) and issubclass(tp, Enum):
        return {"enum": [e.name for e in tp]}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}
            defs[name] = _object_schema(tp, defs)
        return {"$ref": f"#/$defs/{name}"}
    raise TypeError(f"no schema for {tp!r}")


def _object_schema(cls: type, defs: dict[str, Any], extra: dict[str, Any] | None = None,
                   skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """``cls``'s fields as an object schema, ``extra`` properties first; fields in ``skip``
    are left for the caller to describe (an exchange's bodies depend on its api)."""
    hints = type_hints(cls)
    props: dict[str, Any] = dict(extra or {})
    required = list(extra or {})
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        props[f.name] = _type_schema(hints[f.name], defs)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    if doc and not doc.startswith(cls.__name__ + "("):
        out["description"] = " ".join(doc.split())
    return out


def trace_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    variants: list[dict[str, Any]] = []
    kind = {v: k for k, v in KINDS.items()}

    def const(value: Any) -> dict[str, Any]:
        return {"const": value}

    variants.append(_object_schema(Header, defs, {"kind": const("header")}))
    for api, (key, req, resp) in sorted(APIS.items()):
        head = _object_schema(WireExchange, defs, {"kind": const("exchange")}, skip=("request", "response"))
        head["properties"]["api"] = const(api)
        head["properties"]["api_key"] = const(key)
        head["properties"]["request"] = _type_schema(req, defs)
        head["properties"]["response"] = {"anyOf": [_type_schema(resp, defs), {"type": "null"}]}
        head["required"] = [*head["required"], "request", "response"]
        head["title"] = f"{api} exchange"
        variants.append(head)
    variants.append(_object_schema(DecodeErrorEvent, defs, {"kind": const("decode_error")}))
    record_alts = []
    for name, cls in sorted(RECORD_TYPES.items()):
        obj = _object_schema(cls, defs, {"type": const(name)})
        record_alts.append(obj)
    rec = _object_schema(RecordEvent, defs, {"kind": const("record")}, skip=("record",))
    rec["properties"]["record"] = {"oneOf": record_alts}
    rec["required"] = [*rec["required"], "record"]
    variants.append(rec)
    variants.append(_object_schema(ExpiryEvent, defs, {"kind": const("expiry")}))
    variants.append(_object_schema(FetchEvent, defs, {"kind": const("fetch")}))
    variants.append(_object_schema(ApiVersionsEvent, defs, {"kind": const("api_versions")}))
    variants.append(_object_schema(MetadataEvent, defs, {"kind": const("metadata")}))
    variants.append(_object_schema(ClosedEvent, defs, {"kind": const("closed")}))
    assert set(kind) == {"header", "exchange", "decode_error", "record", "expiry", "fetch", "api_versions",
                         "metadata", "closed"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "groupspec trace format v1 (v1.1): one JSON object per line",
        "description": (
            "Each line of a trace file is one event. The first is the header. Field names are "
            "those of groupspec.protocol.messages / records; Kafka errors and group states are "
            "written by name; bytes (member metadata, assignments) are base64."
        ),
        "oneOf": variants,
        "$defs": dict(sorted(defs.items())),
    }
