"""Values <-> JSON: the generic codec for messages, records and trace events.

Every value in the protocol vocabulary is a frozen dataclass, an enum, bytes, or a
primitive; this module turns them into JSON-compatible values and back, driven by the
dataclasses' type hints. Encoding rules (documented in the JSON Schema):

- dataclass -> object with its field names (snake_case, as Kafka's message JSON);
- ``Error`` -> its Kafka name ("REBALANCE_IN_PROGRESS"); ``GroupState`` -> its name;
- ``bytes`` -> base64 text; tuples -> arrays; ``None`` -> null.

Decoding checks types and raises :class:`CodecError` naming the JSON path of the bad value
(``request.protocols[0].metadata``), so a malformed trace line says where it is wrong.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import types
import typing
from enum import Enum
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")


class CodecError(ValueError):
    """A JSON value that does not decode into the expected type; names the path."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path or '<root>'}: {message}")
        self.path = path


def to_json(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Enum):
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def from_json(tp: Any, data: Any, path: str = "") -> Any:
    """Decode ``data`` as type ``tp`` (a class or a typing form)."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if data is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return from_json(arg, data, path)
            except CodecError as e:
                errors.append(str(e))
        raise CodecError(path, "no alternative matched: " + "; ".join(errors))
    if origin is tuple:
        args = get_args(tp)
        if not isinstance(data, list):
            raise CodecError(path, f"expected an array, got {_kind(data)}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], v, f"{path}[{i}]") for i, v in enumerate(data))
        if len(args) != len(data):
            raise CodecError(path, f"expected {len(args)} items, got {len(data)}")
        return tuple(from_json(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True)))
    if origin in (dict, typing.Mapping) or tp is dict:
        if not isinstance(data, dict):
            raise CodecError(path, f"expected an object, got {_kind(data)}")
        args = get_args(tp) or (str, Any)
        return {k: from_json(args[1], v, f"{path}.{k}") for k, v in data.items()}
    if tp is Any:
        return data
    if tp is type(None):
        if data is not None:
            raise CodecError(path, f"expected null, got {_kind(data)}")
        return None
    if isinstance(tp, type):
        if issubclass(tp, Enum):
            if not isinstance(data, str):
                raise CodecError(path, f"expected a {tp.__name__} name, got {_kind(data)}")
            try:
                return tp[data]
            except KeyError:
                raise CodecError(path, f"unknown {tp.__name__} {data!r}") from None
        if tp is bytes:
            if not isinstance(data, str):
                raise CodecError(path, f"expected base64 text, got {_kind(data)}")
            try:
                return base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                raise CodecError(path, "invalid base64") from None
        if tp is bool:
            if not isinstance(data, bool):
                raise CodecError(path, f"expected a boolean, got {_kind(data)}")
            return data
        if tp is int:
            if isinstance(data, bool) or not isinstance(data, int):
                raise CodecError(path, f"expected an integer, got {_kind(data)}")
            return data
        if tp is float:
            if isinstance(data, bool) or not isinstance(data, int | float):
                raise CodecError(path, f"expected a number, got {_kind(data)}")
            return float(data)
        if tp is str:
            if not isinstance(data, str):
                raise CodecError(path, f"expected a string, got {_kind(data)}")
            return data
        if dataclasses.is_dataclass(tp):
            return _decode_dataclass(tp, data, path)
    raise CodecError(path, f"cannot decode type {tp!r}")


def _decode_dataclass(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise CodecError(path, f"expected a {cls.__name__} object, got {_kind(data)}")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    names = set()
    for f in dataclasses.fields(cls):
        names.add(f.name)
        sub = f"{path}.{f.name}" if path else f.name
        if f.name in data:
            kwargs[f.name] = from_json(hints[f.name], data[f.name], sub)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise CodecError(sub, "missing")
    unknown = set(data) - names
    if unknown:
        raise CodecError(path, f"unknown field(s) {sorted(unknown)} for {cls.__name__}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise CodecError(path, f"invalid {cls.__name__}: {e}") from None


def _kind(data: Any) -> str:
    if data is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(data), type(data).__name__
    )
