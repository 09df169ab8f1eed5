"""Kafka's message schemas, interpreted: any request or response body <-> a plain dict.

Apache Kafka defines every request and response in a JSON schema
(clients/src/main/resources/common/message/*.json): fields with the versions they exist
in, which versions may be null, which are tagged, and the versions from which the message
is *flexible* (KIP-482: compact lengths as unsigned varints plus one, and a tagged-field
section closing every struct). kafka-python 3 carries those schema files as package data;
this module reads them from there and walks them directly, so one small interpreter
decodes every version of every API the schemas describe, and encodes the result back.

A decoded body is a dict with snake_case keys (``GenerationIdOrMemberEpoch`` ->
``generation_id_or_member_epoch``) holding ints, bools, str, bytes, None, lists and nested
dicts. Fields that do not exist in the decoded version are absent; tagged fields are
present only when they were on the wire; tagged fields the schema does not know are kept
under ``_unknown_tagged`` as ``[tag, raw bytes]`` pairs. So ``encode(decode(b)) == b`` for
every frame that decodes, which is what lets the recorder re-encode a response it edits
while keeping everything else in it byte for byte.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
import struct
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: where kafka-python keeps Kafka's message schemas
SCHEMA_PACKAGE = "kafka.protocol.schemas.resources"
UNKNOWN_TAGGED = "_unknown_tagged"
_MAX_VERSION = 0x7FFF

Versions = tuple[int, int] | None


class SchemaError(ValueError):
    """A body that does not match its schema (truncated, trailing bytes, bad length), or an
    API or version the schemas do not describe; the message names the field path."""


def parse_versions(text: str | None) -> Versions:
    """``"3+"`` -> (3, 32767), ``"1-4"`` -> (1, 4), ``"2"`` -> (2, 2), ``"none"`` -> None."""
    if text is None or text == "none":
        return None
    if text.endswith("+"):
        return (int(text[:-1]), _MAX_VERSION)
    lo, sep, hi = text.partition("-")
    return (int(lo), int(hi)) if sep else (int(lo), int(lo))


def _within(versions: Versions, version: int) -> bool:
    return versions is not None and versions[0] <= version <= versions[1]


def snake(name: str) -> str:
    """Kafka's CamelCase field name in snake_case, as groupspec's messages spell it."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s).lower()


_PRIMITIVES = {
    "bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
    "string", "bytes", "records", "uuid",
}


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    #: a field's own flexibleVersions (only the request header's ClientId has one: "none")
    flexible: Versions | str
    fields: tuple[Field, ...]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element(self) -> str:
        return self.type[2:] if self.is_array else self.type


@dataclass(frozen=True)
class MessageSpec:
    name: str
    api_key: int
    kind: str  # "request" or "response"
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]

    def is_flexible(self, version: int) -> bool:
        return _within(self.flexible, version)

    def check_version(self, version: int) -> None:
        # kafka-python's copies of the schemas keep the fields of versions that Kafka 4
        # no longer accepts, so every version from 0 to the highest decodes.
        if self.valid is None or not 0 <= version <= self.valid[1]:
            top = self.valid[1] if self.valid else -1
            raise SchemaError(f"{self.name} version {version} is not described (0..{top})")


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def _build_fields(raw: Iterable[Mapping[str, Any]], common: Mapping[str, Any]) -> tuple[Field, ...]:
    out = []
    for f in raw:
        ftype: str = f["type"]
        element = ftype[2:] if ftype.startswith("[]") else ftype
        sub = f.get("fields")
        if sub is None and element not in _PRIMITIVES:
            if element not in common:
                raise SchemaError(f"field {f['name']} has unknown type {ftype}")
            sub = common[element]
        out.append(
            Field(
                name=snake(f["name"]),
                type=ftype,
                versions=parse_versions(f.get("versions")),
                nullable=parse_versions(f.get("nullableVersions")),
                tagged=parse_versions(f.get("taggedVersions")),
                tag=f.get("tag"),
                flexible=parse_versions(f["flexibleVersions"]) if "flexibleVersions" in f else "message",
                fields=_build_fields(sub, common) if sub is not None else (),
            )
        )
    return tuple(out)


def _spec_from_json(data: Mapping[str, Any]) -> MessageSpec:
    common = {c["name"]: c["fields"] for c in data.get("commonStructs", [])}
    return MessageSpec(
        name=data["name"],
        api_key=data["apiKey"],
        kind=data["type"],
        valid=parse_versions(data.get("validVersions")),
        flexible=parse_versions(data.get("flexibleVersions")),
        fields=_build_fields(data.get("fields", []), common),
    )


@functools.cache
def all_specs() -> dict[tuple[int, str], MessageSpec]:
    """(api key, "request"|"response") -> schema, for every API kafka-python describes."""
    try:
        root = importlib.resources.files(SCHEMA_PACKAGE)
    except ModuleNotFoundError as e:
        raise SchemaError(
            "Kafka's message schemas come with kafka-python 3 (pip install kafka-python==3.0.12)"
        ) from e
    out: dict[tuple[int, str], MessageSpec] = {}
    for entry in root.iterdir():
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(_strip_comments(entry.read_text(encoding="utf-8")))
        if data.get("type") in ("request", "response") and "apiKey" in data:
            spec = _spec_from_json(data)
            out[(spec.api_key, spec.kind)] = spec
    for text in _kafka_clients_schemas():
        data = json.loads(_strip_comments(text))
        if data.get("type") in ("request", "response") and "apiKey" in data:
            spec = _spec_from_json(data)
            # kafka-python's schemas first; the jar adds the APIs it lacks (KIP-848's)
            out.setdefault((spec.api_key, spec.kind), spec)
    return out


def _kafka_clients_schemas() -> list[str]:
    """The message schemas inside the kafka-clients jar ``ci/setup`` installs
    (``common/message/*.json``), or none when it is not there."""
    from groupspec.brokers.common import BrokerError
    from groupspec.brokers.kafka import KAFKA_VERSION, kafka_libs

    try:
        jar = kafka_libs() / f"kafka-clients-{KAFKA_VERSION}.jar"
    except BrokerError:
        return []
    if not jar.is_file():
        return []
    with zipfile.ZipFile(jar) as z:
        return [z.read(n).decode("utf-8") for n in z.namelist()
                if n.startswith("common/message/") and n.endswith(("Request.json", "Response.json"))]


def spec_for(api_key: int, kind: str) -> MessageSpec | None:
    return all_specs().get((api_key, kind))


# -- decoding ----------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.pos = 0

    def take(self, n: int, path: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise SchemaError(
                f"{path}: truncated at byte {self.pos} (need {n}, have {len(self.data) - self.pos})"
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def fixed(self, fmt: str, path: str) -> Any:
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size, path))[0]

    def uvarint(self, path: str) -> int:
        value = shift = 0
        while True:
            if shift > 63:
                raise SchemaError(f"{path}: varint longer than 10 bytes at byte {self.pos}")
            (b,) = self.take(1, path)
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7


_FIXED = {
    "bool": ">b", "int8": ">b", "int16": ">h", "uint16": ">H", "int32": ">i",
    "uint32": ">I", "int64": ">q", "float64": ">d",
}


def _read_length(r: _Reader, compact: bool, wide: bool, path: str) -> int:
    """Length of a string (int16), bytes/array (int32), or compact (uvarint - 1); -1 = null."""
    if compact:
        return r.uvarint(path) - 1
    n: int = r.fixed(">i" if wide else ">h", path)
    return n


def _compact(field: Field, flexible: bool, version: int) -> bool:
    if field.flexible == "message":
        return flexible
    return _within(field.flexible if not isinstance(field.flexible, str) else None, version)


def _read_value(
    r: _Reader, field: Field, elem_type: str, version: int, flexible: bool, nullable: bool, path: str
) -> Any:
    compact = _compact(field, flexible, version)
    if elem_type in _FIXED:
        v = r.fixed(_FIXED[elem_type], path)
        return bool(v) if elem_type == "bool" else v
    if elem_type == "uuid":
        return r.take(16, path)
    if elem_type == "string":
        n = _read_length(r, compact, False, path)
        if n < 0:
            if not nullable:
                raise SchemaError(f"{path}: null where the schema wants a string")
            return None
        raw = r.take(n, path)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SchemaError(f"{path}: not UTF-8 ({e})") from None
    if elem_type in ("bytes", "records"):
        n = _read_length(r, compact, True, path)
        if n < 0:
            if not nullable:
                raise SchemaError(f"{path}: null where the schema wants bytes")
            return None
        return r.take(n, path)
    # a struct
    if nullable:
        marker = r.fixed(">b", path)
        if marker < 0:
            return None
    return _read_struct(r, field.fields, version, flexible, path)


def _read_field(r: _Reader, field: Field, version: int, flexible: bool, path: str) -> Any:
    nullable = _within(field.nullable, version)
    if not field.is_array:
        return _read_value(r, field, field.type, version, flexible, nullable, path)
    n = _read_length(r, _compact(field, flexible, version), True, path)
    if n < 0:
        if not nullable:
            raise SchemaError(f"{path}: null where the schema wants an array")
        return None
    if n > len(r.data) - r.pos:
        raise SchemaError(f"{path}: array of {n} items exceeds the {len(r.data) - r.pos} bytes left")
    return [
        _read_value(r, field, field.element, version, flexible, False, f"{path}[{i}]")
        for i in range(n)
    ]


def _read_struct(
    r: _Reader, fields: tuple[Field, ...], version: int, flexible: bool, path: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if not _within(f.versions, version) or (flexible and _within(f.tagged, version)):
            continue
        out[f.name] = _read_field(r, f, version, flexible, f"{path}.{f.name}" if path else f.name)
    if flexible:
        count = r.uvarint(f"{path}<tagged count>")
        for _ in range(count):
            tag = r.uvarint(f"{path}<tag>")
            size = r.uvarint(f"{path}<tag {tag} size>")
            raw = r.take(size, f"{path}<tag {tag}>")
            known = next(
                (f for f in fields if f.tag == tag and _within(f.tagged, version)), None
            )
            if known is None:
                out.setdefault(UNKNOWN_TAGGED, []).append([tag, raw])
                continue
            sub = _Reader(raw)
            sub_path = f"{path}.{known.name}" if path else known.name
            out[known.name] = _read_field(sub, known, version, flexible, sub_path)
            if sub.pos != len(raw):
                raise SchemaError(f"{sub_path}: {len(raw) - sub.pos} bytes left in the tagged field")
    return out


def decode_body(spec: MessageSpec, version: int, data: bytes, offset: int = 0) -> dict[str, Any]:
    """Decode a whole body (from ``offset`` to the end of ``data``); every byte must be used."""
    spec.check_version(version)
    r = _Reader(data)
    r.pos = offset
    out = _read_struct(r, spec.fields, version, spec.is_flexible(version), "")
    if r.pos != len(data):
        raise SchemaError(
            f"{spec.name} v{version}: {len(data) - r.pos} bytes left after the last field"
        )
    return out


def skip_tagged_fields(data: bytes, offset: int) -> int:
    """The offset after a tagged-field section starting at ``offset`` (request/response
    header v2/v1)."""
    r = _Reader(data)
    r.pos = offset
    for _ in range(r.uvarint("header<tagged count>")):
        r.uvarint("header<tag>")
        r.take(r.uvarint("header<tag size>"), "header<tag>")
    return r.pos


# -- encoding ----------------------------------------------------------------------------


def uvarint(n: int) -> bytes:
    if n < 0:
        raise SchemaError(f"cannot write {n} as an unsigned varint")
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _write_length(n: int, compact: bool, wide: bool) -> bytes:
    if compact:
        return uvarint(n + 1)
    return struct.pack(">i" if wide else ">h", n)


def _write_value(
    out: bytearray, field: Field, elem_type: str, version: int, flexible: bool, value: Any, path: str
) -> None:
    compact = _compact(field, flexible, version)
    nullable = _within(field.nullable, version)
    if elem_type in _FIXED:
        try:
            out += struct.pack(_FIXED[elem_type], int(value))
        except (struct.error, TypeError, ValueError) as e:
            raise SchemaError(f"{path}: {value!r} is not a valid {elem_type} ({e})") from None
        return
    if elem_type == "uuid":
        if not isinstance(value, bytes) or len(value) != 16:
            raise SchemaError(f"{path}: a uuid is 16 bytes")
        out += value
        return
    if elem_type in ("string", "bytes", "records"):
        wide = elem_type != "string"
        if value is None:
            if not nullable:
                raise SchemaError(f"{path}: null is not allowed here")
            out += _write_length(-1, compact, wide)
            return
        raw = value.encode("utf-8") if elem_type == "string" else bytes(value)
        out += _write_length(len(raw), compact, wide)
        out += raw
        return
    if nullable and not field.is_array:
        if value is None:
            out += struct.pack(">b", -1)
            return
        out += struct.pack(">b", 1)
    _write_struct(out, field.fields, version, flexible, value, path)


def _write_field(out: bytearray, field: Field, version: int, flexible: bool, value: Any, path: str) -> None:
    if not field.is_array:
        _write_value(out, field, field.type, version, flexible, value, path)
        return
    compact = _compact(field, flexible, version)
    if value is None:
        if not _within(field.nullable, version):
            raise SchemaError(f"{path}: null is not allowed here")
        out += _write_length(-1, compact, True)
        return
    out += _write_length(len(value), compact, True)
    for i, item in enumerate(value):
        _write_value(out, field, field.element, version, flexible, item, f"{path}[{i}]")


def _write_struct(
    out: bytearray, fields: tuple[Field, ...], version: int, flexible: bool, value: Any, path: str
) -> None:
    if not isinstance(value, Mapping):
        raise SchemaError(f"{path}: expected a struct (dict), got {type(value).__name__}")
    tagged: list[tuple[int, bytes]] = []
    for f in fields:
        if not _within(f.versions, version):
            continue
        sub = f"{path}.{f.name}" if path else f.name
        if flexible and _within(f.tagged, version):
            if f.name in value:
                buf = bytearray()
                _write_field(buf, f, version, flexible, value[f.name], sub)
                assert f.tag is not None
                tagged.append((f.tag, bytes(buf)))
            continue
        if f.name not in value:
            raise SchemaError(f"{sub}: missing")
        _write_field(out, f, version, flexible, value[f.name], sub)
    if flexible:
        tagged += [(int(t), bytes(raw)) for t, raw in value.get(UNKNOWN_TAGGED, [])]
        tagged.sort(key=lambda item: item[0])
        out += uvarint(len(tagged))
        for tag, raw in tagged:
            out += uvarint(tag) + uvarint(len(raw)) + raw


def encode_body(spec: MessageSpec, version: int, body: Mapping[str, Any]) -> bytes:
    spec.check_version(version)
    out = bytearray()
    _write_struct(out, spec.fields, version, spec.is_flexible(version), body, "")
    return bytes(out)
