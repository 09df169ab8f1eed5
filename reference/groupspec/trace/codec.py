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

import ast
import base64
import binascii
import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from enum import Enum
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from groupspec.protocol.added_fields import added_defaults
from groupspec.protocol.topic_id import TopicId

T = TypeVar("T")


class CodecError(ValueError):
    """A JSON value that does not decode into the expected type; names the path."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path or '<root>'}: {message}")
        self.path = path


def to_json(value: Any) -> Any:
    """``value`` as JSON data. The rules go by the value's type alone, so each type's
    encoder is chosen once (:func:`_encoder_for`) and reused for every value of it."""
    t = type(value)
    enc = _ENCODERS.get(t)
    if enc is None:
        enc = _ENCODERS[t] = _encoder_for(t)
    return enc(value)


#: exact type -> the encoder of its values (:func:`_encoder_for`)
_ENCODERS: dict[type, Callable[[Any], Any]] = {}


def _same(value: Any) -> Any:
    return value


#: the exact types whose values :func:`_encoder_for` encodes as themselves (``_same``)
_PLAIN = frozenset({str, int, float, bool, type(None)})


def fields_encoder(names: tuple[str, ...], prefix: str = "",
                   special: dict[str, str] | None = None,
                   omitted: dict[str, Any] | None = None) -> str:
    """The source of a function body that reads attributes ``names`` of ``v`` and returns
    them as a dict of their :func:`to_json` values in that order, a plain value
    (:data:`_PLAIN`, encoded as itself) taken without the call. ``prefix`` is entries put
    first; ``special`` gives a field another expression of its value ``{x}``; a field in
    ``omitted`` (name -> default: ``added_fields.added_defaults``) is left out while its value
    is that default. The body runs with ``_type`` (``type``), ``_P`` (:data:`_PLAIN`) and
    ``_tj`` (:func:`to_json`)."""
    special = special or {}
    omitted = omitted or {}
    lines = [f"    x{i} = v.{name}" for i, name in enumerate(names)]

    def value(i: int, name: str) -> str:
        return (special[name].format(x=f"x{i}") if name in special
                else f"x{i} if _type(x{i}) in _P else _tj(x{i})")

    cut = next((i for i, name in enumerate(names) if name in omitted), len(names))
    values = ", ".join(f"{name!r}: {value(i, name)}" for i, name in enumerate(names[:cut]))
    if cut == len(names):
        return "\n".join([*lines, f"    return {{{prefix}{values}}}"])
    lines.append(f"    d = {{{prefix}{values}}}")
    for i, name in enumerate(names[cut:], start=cut):
        put = f"d[{name!r}] = {value(i, name)}"
        if name in omitted:
            lines.append(f"    if not {default_test(f'x{i}', omitted[name])}:\n        {put}")
        else:
            lines.append(f"    {put}")
    return "\n".join([*lines, "    return d"])


def default_test(x: str, default: Any) -> str:
    """An expression: whether variable ``x`` is ``default`` (a literal: None, an int, the
    empty tuple), of its very type (a float -1.0 or a list is not the int -1 or ())."""
    if default is None:
        return f"({x} is None)"
    literal = repr(default)
    if ast.literal_eval(literal) != default:
        raise ValueError(f"a default written only as a literal, not {default!r}")
    return f"(_type({x}) is {type(default).__name__} and {x} == {literal})"


def compile_encoder(body: str, **names: Any) -> Callable[[Any], Any]:
    """``def enc(v):`` with :func:`fields_encoder`'s ``body``, run with its names and
    ``names``."""
    scope: dict[str, Any] = {"_type": type, "_P": _PLAIN, "_tj": to_json, **names}
    exec(f"def enc(v):\n{body}\n", scope)  # the source is built from field names alone
    enc: Callable[[Any], Any] = scope["enc"]
    return enc


def _encoder_for(t: type) -> Callable[[Any], Any]:
    """How values of type ``t`` are encoded; the rules are tried in this order."""
    if issubclass(t, TopicId):
        # Kafka's text form (Uuid.toString), as its tools print topic ids
        return str
    if t is type(None) or issubclass(t, bool | int | float | str):
        return _same
    if issubclass(t, bytes):
        return lambda v: base64.b64encode(v).decode("ascii")
    if issubclass(t, Enum):
        return lambda v: v.name
    if dataclasses.is_dataclass(t):  # an instance's type (a class passed as a value is not)
        # {name: to_json(getattr(v, name)) for name in field_names(t)}, written out
        return compile_encoder(fields_encoder(field_names(t), omitted=added_defaults(t)))
    if issubclass(t, tuple | list):
        return lambda v: [to_json(x) for x in v]
    if issubclass(t, dict):
        return lambda v: {str(k): to_json(x) for k, x in v.items()}

    def refuse(v: Any) -> Any:
        raise TypeError(f"cannot encode {t.__name__} as JSON")

    return refuse


@functools.cache
def field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, in order (read once per class, not per value)."""
    return tuple(f.name for f in dataclasses.fields(cls))


@functools.cache
def type_hints(cls: type) -> dict[str, Any]:
    """A class's type hints, evaluated once per class (the writers and the generator's
    line encoders read them per field)."""
    return get_type_hints(cls)


#: A compiled decoder: (JSON value, path of the value) -> the decoded value.
Decoder = Callable[[Any, str], Any]


def from_json(tp: Any, data: Any, path: str = "") -> Any:
    """Decode ``data`` as type ``tp`` (a class or a typing form)."""
    return decoder_for(tp)(data, path)


def decoder_for(tp: Any) -> Decoder:
    """The decoder of type ``tp``, built once per type: the type hints are read when it is
    built, not for every value (a trace holds millions of values of a few dozen types)."""
    try:
        return _cached_decoder(tp)
    except TypeError:  # an unhashable typing form: build it every time
        return _build(tp)


@functools.cache
def _cached_decoder(tp: Any) -> Decoder:
    return _build(tp)


def _sub(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _build(tp: Any) -> Decoder:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        return _union(get_args(tp))
    if origin is tuple:
        return _tuple(get_args(tp))
    if origin in (dict, typing.Mapping) or tp is dict:
        value_tp = (get_args(tp) or (str, Any))[1]
        return _mapping(value_tp)
    if tp is Any:
        return _any
    if tp is type(None):
        return _none
    if isinstance(tp, type):
        if issubclass(tp, Enum):
            return _enum(tp)
        primitive = _PRIMITIVES.get(tp)
        if primitive is not None:
            return primitive
        if dataclasses.is_dataclass(tp):
            return dataclass_decoder(tp)

    def cannot(data: Any, path: str) -> Any:
        raise CodecError(path, f"cannot decode type {tp!r}")

    return cannot


def _union(args: tuple[Any, ...]) -> Decoder:
    nullable = type(None) in args
    alternatives = [arg for arg in args if arg is not type(None)]

    def decode(data: Any, path: str) -> Any:
        if data is None and nullable:
            return None
        errors = []
        for arg in alternatives:
            try:
                return decoder_for(arg)(data, path)
            except CodecError as e:
                errors.append(str(e))
        raise CodecError(path, "no alternative matched: " + "; ".join(errors))

    return decode


def _tuple(args: tuple[Any, ...]) -> Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        item = args[0]

        def decode_many(data: Any, path: str) -> Any:
            if not isinstance(data, list):
                raise CodecError(path, f"expected an array, got {_kind(data)}")
            d = decoder_for(item)
            return tuple(d(v, f"{path}[{i}]") for i, v in enumerate(data))

        return decode_many

    def decode_fixed(data: Any, path: str) -> Any:
        if not isinstance(data, list):
            raise CodecError(path, f"expected an array, got {_kind(data)}")
        if len(args) != len(data):
            raise CodecError(path, f"expected {len(args)} items, got {len(data)}")
        return tuple(
            decoder_for(a)(v, f"{path}[{i}]")
            for i, (a, v) in enumerate(zip(args, data, strict=True))
        )

    return decode_fixed


def _mapping(value_tp: Any) -> Decoder:
    def decode(data: Any, path: str) -> Any:
        if not isinstance(data, dict):
            raise CodecError(path, f"expected an object, got {_kind(data)}")
        d = decoder_for(value_tp)
        return {k: d(v, f"{path}.{k}") for k, v in data.items()}

    return decode


def _any(data: Any, path: str) -> Any:
    return data


def _none(data: Any, path: str) -> Any:
    if data is not None:
        raise CodecError(path, f"expected null, got {_kind(data)}")
    return None


def _enum(tp: type[Enum]) -> Decoder:
    def decode(data: Any, path: str) -> Any:
        if not isinstance(data, str):
            raise CodecError(path, f"expected a {tp.__name__} name, got {_kind(data)}")
        try:
            return tp[data]
        except KeyError:
            raise CodecError(path, f"unknown {tp.__name__} {data!r}") from None

    return decode


def _bytes(data: Any, path: str) -> Any:
    if not isinstance(data, str):
        raise CodecError(path, f"expected base64 text, got {_kind(data)}")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise CodecError(path, "invalid base64") from None


def _bool(data: Any, path: str) -> Any:
    if not isinstance(data, bool):
        raise CodecError(path, f"expected a boolean, got {_kind(data)}")
    return data


#: Every integer a trace carries fits a signed 64-bit integer (Kafka's widest, INT64; the
#: Parquet form stores them as int64), so a larger one is bad input, not a value.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_INF = float("inf")


def _int(data: Any, path: str) -> Any:
    if isinstance(data, bool) or not isinstance(data, int):
        raise CodecError(path, f"expected an integer, got {_kind(data)}")
    if not INT64_MIN <= data <= INT64_MAX:
        raise CodecError(path, f"integer out of the 64-bit range: {_digits(data)}")
    return data


def _float(data: Any, path: str) -> Any:
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise CodecError(path, f"expected a number, got {_kind(data)}")
    if isinstance(data, int) and not INT64_MIN <= data <= INT64_MAX:
        raise CodecError(path, f"number out of the 64-bit range: {_digits(data)}")
    value = float(data)
    if not -_INF < value < _INF:  # NaN fails both comparisons
        raise CodecError(path, f"expected a finite number, got {value}")
    return value


def _digits(n: int) -> str:
    """A huge integer for a message: its first digits and its length, not all of it."""
    text = str(n) if n.bit_length() < 4000 else f"{n:#x}"
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} digits)"


def _str(data: Any, path: str) -> Any:
    if not isinstance(data, str):
        raise CodecError(path, f"expected a string, got {_kind(data)}")
    return data


def _topic_id(data: Any, path: str) -> Any:
    if not isinstance(data, str):
        raise CodecError(path, f"expected a topic id (22 characters of base64), got {_kind(data)}")
    try:
        return TopicId.parse(data)
    except ValueError as e:
        raise CodecError(path, str(e)) from None


_PRIMITIVES: dict[type, Decoder] = {
    TopicId: _topic_id,
    bytes: _bytes, bool: _bool, int: _int, float: _float, str: _str,
}

#: Field types whose JSON value, when its type is exactly this, already is the decoded
#: value: the generated decoders take such values as they are, without a call.
_AS_IS: dict[Any, tuple[type, bool]] = {
    str: (str, False), int: (int, False), bool: (bool, False), float: (float, False),
    str | None: (str, True), int | None: (int, True), bool | None: (bool, True),
    float | None: (float, True),
}

_MISSING = object()


def dataclass_decoder(
    cls: type, given: tuple[str, ...] = (), extra: tuple[str, ...] = ()
) -> Callable[..., Any]:
    """The decoder of dataclass ``cls``: ``decoder(data, path, *values_of_given)``.

    ``given`` names fields the caller decodes itself and passes after ``path`` (an event's
    request body, whose type depends on another field); ``extra`` names keys the object may
    hold that are no field (an event's ``kind``). The decoder is Python source generated
    for the class, built at its first value (a dataclass may refer to itself): one local
    per field and a keyword call of the class, instead of a loop over the fields and a
    dict of arguments (a trace holds millions of these objects). Fields are checked in
    declaration order, then unknown keys, so the first error named is the same as a
    field-by-field reading would give."""
    built: list[Callable[..., Any]] = []

    def decode(data: Any, path: str, *values: Any) -> Any:
        if not built:
            built.append(_generate(cls, given, extra))
        return built[0](data, path, *values)

    return decode


def _generate(cls: type, given: tuple[str, ...], extra: tuple[str, ...]) -> Callable[..., Any]:
    hints = type_hints(cls)
    fields = dataclasses.fields(cls)
    unknown_given = set(given) - {f.name for f in fields}
    if unknown_given:
        raise TypeError(f"{cls.__name__} has no field(s) {sorted(unknown_given)}")
    env: dict[str, Any] = {
        "cls": cls, "CodecError": CodecError, "MISSING": _MISSING, "_sub": _sub, "_kind": _kind,
        "NAMES": frozenset([f.name for f in fields] + list(extra)), "NAME": cls.__name__,
        "INF": _INF,
    }
    params = ", ".join(["data", "path"] + [f"g_{name}" for name in given])
    body = [
        f"def decode({params}):",
        "    if not isinstance(data, dict):",
        "        raise CodecError(path, f'expected a {NAME} object, got {_kind(data)}')",
        "    get = data.get",
    ]
    args: list[str] = []
    for i, f in enumerate(fields):
        if f.name in given:
            args.append(f"{f.name}=g_{f.name}")
            continue
        v, key = f"v{i}", repr(f.name)
        env[f"d{i}"] = decoder_for(hints[f.name])
        body.append(f"    {v} = get({key}, MISSING)")
        if f.default is not dataclasses.MISSING:
            env[f"default{i}"] = f.default
            body.append(f"    if {v} is MISSING: {v} = default{i}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"factory{i}"] = f.default_factory
            body.append(f"    if {v} is MISSING: {v} = factory{i}()")
        else:
            body.append(f"    if {v} is MISSING: raise CodecError(_sub(path, {key}), 'missing')")
        fast = _AS_IS.get(hints[f.name])
        if fast is None:
            cond = "True"
        else:
            env[f"t{i}"] = fast[0]
            cond = f"type({v}) is not t{i}" + (f" and {v} is not None" if fast[1] else "")
            if fast[0] is int:  # as is only within the 64-bit range (else _int names it)
                cond = f"({cond} or {v} is not None and not {INT64_MIN} <= {v} <= {INT64_MAX})"
            elif fast[0] is float:  # as is only when finite (else _float names it)
                cond = f"({cond} or {v} is not None and not -INF < {v} < INF)"
        body.append(f"    elif {cond}: {v} = d{i}({v}, _sub(path, {key}))")
        args.append(f"{f.name}={v}")
    body += [
        "    if not data.keys() <= NAMES:",
        "        raise CodecError(path, f'unknown field(s) {sorted(set(data) - NAMES)} for {NAME}')",
        "    try:",
        f"        return cls({', '.join(args)})",
        "    except (TypeError, ValueError) as e:",
        "        raise CodecError(path, f'invalid {NAME}: {e}') from None",
    ]
    exec("\n".join(body), env)  # the source is built above from the class's own fields
    generated: Callable[..., Any] = env["decode"]
    return generated


def _kind(data: Any) -> str:
    if data is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(data), type(data).__name__
    )
