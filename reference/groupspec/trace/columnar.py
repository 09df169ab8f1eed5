"""Trace files as columnar Parquet: one row per line, the decoded event in typed columns.

The *columnar layout* (schema metadata ``groupspec.layout`` = ``columnar-v1``) stores a
trace so that it is read with Arrow's bulk decoders, never by parsing JSON text per event:

``line`` (int64), ``ended`` (bool)
    The line number in the JSON Lines form (1-based) and whether a newline ended the line
    (false only for the last line of a file without a final newline). Every line has a row,
    blank and unreadable lines too.
``raw`` (binary, nullable)
    The line's exact bytes, kept only where the typed columns do not give them back: lines
    that are not UTF-8, not JSON, not an event, and events whose JSON is not in the canonical
    form the trace writer produces (``json.dumps(event_to_json(e), separators=(",", ":"))``:
    other whitespace or key order, ``\\r\\n`` endings, ``5`` for a float field). Null on
    every canonical line, which is every line a writer of this package produces.
``decoded`` (bool)
    True when the typed columns hold the line's event (the line decodes as
    :func:`groupspec.trace.jsonl.event_from_json` decodes it); false rows have only ``raw``.
Flat typed columns
    ``kind``, ``seq``, ``group_id`` (the event's group, :func:`~groupspec.trace.events.group_of`),
    ``api``, ``connection``, ``sent_ms``, ``received_ms`` (the columns of the older text
    layout, same names and types) and ``client_id``, ``api_key``, ``api_version``,
    ``correlation_id``, ``cluster``, ``rewritten``, ``peer``, ``at_ms`` and ``record_type``
    (a record event's record class). For an exchange they are its fields; for other kinds
    they are filled where the event has the field; null on rows not ``decoded``.
``req_<Api>`` / ``resp_<Api>`` (struct, nullable)
    An exchange's request and response body, one struct column per API (``req_JoinGroup``),
    null on every row of another API (and ``resp_`` null when no response was seen).
``ev_<kind>`` (struct, nullable)
    The event of the other kinds (``ev_header``, ``ev_decode_error``, ``ev_expiry``,
    ``ev_fetch``, ``ev_api_versions``, ``ev_metadata``, ``ev_record``), all its fields;
    a record event's ``record`` is in ``rec_<Type>`` (one struct column per record type).

A file holds every column above but the struct ones (``req_``, ``resp_``, ``ev_``, ``rec_``)
that are null in all its rows: the writers leave those out (:func:`file_schema`), and a
reader takes a struct column the file lacks as null in every row. A trace uses a few of the
~100 struct columns (a classic group's traffic no KIP-848 API, no transaction), and Parquet's
writer spends per row on every column it writes, null or not: leaving them out halves the
time Arrow takes to write a generated file. Files written with every column (before
2026-11-29) read the same.

The struct types are derived from the dataclasses of :mod:`groupspec.protocol` by their type
hints (:func:`arrow_type`): int -> int64, float -> float64, str -> string, bytes -> binary,
bool -> bool, enums and topic ids -> their text (as in JSON), ``tuple[X, ...]`` -> list,
fixed tuples -> struct ``f0, f1, ...``, dataclasses -> struct. A type with no such mapping
(a union of dataclasses, the header's ``broker_config`` dict) is a string column holding
its JSON value, decoded with :mod:`groupspec.trace.codec`.

Writing goes through JSON Lines semantics (:func:`classify`, :func:`lines_to_table`), so
JSON Lines -> columnar Parquet -> JSON Lines gives back the same bytes for any input
(:func:`to_jsonl_bytes`), and the validator loads the same events and problems from both
(:func:`groupspec.validate.load.loaded_from_arrow` turns batches into its ``LoadedTrace``).
Reading is bulk: the rows of one kind, API or record type are taken together and each
column is converted once; objects are made from their field dicts (:func:`_maker`).
Strings are read from the file as dictionaries (:func:`open_file`), but every row gets its own
``str`` object, as JSON Lines reading gives (:func:`_leaf` says why). Besides the events,
:func:`decode_batches` hands over the lists they were made from that grouping wants (each
event's seq, a record's group id), so that the validator need not visit every event for them.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import types
from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import Enum
from typing import Any, Union, get_args, get_origin

from groupspec.protocol.topic_id import TopicId
from groupspec.trace.codec import CodecError, decoder_for, to_json, type_hints
from groupspec.trace.events import (
    APIS,
    KINDS,
    RECORD_TYPES,
    Event,
    RecordEvent,
    WireExchange,
    group_of,
)
from groupspec.trace.jsonl import MAX_API_VERSION, event_from_json, event_to_json, parse_line

#: the schema metadata key naming the layout (the older text layout has none)
LAYOUT_KEY = b"groupspec.layout"
#: this layout's value of :data:`LAYOUT_KEY`
COLUMNAR_LAYOUT = b"columnar-v1"
#: rows per record batch / row group written
BATCH_ROWS = 65_536


class ColumnarError(ValueError):
    """A Parquet file whose columnar rows do not decode (not written by this module)."""


def _pa() -> Any:
    import pyarrow as pa

    return pa


# ---------------------------------------------------------------------------------------
# Arrow types from type hints


@dataclasses.dataclass(frozen=True)
class Conv:
    """How values of one Python type are held in Arrow: the Arrow type, the encoder of one
    value (to what ``pa.array`` takes) and the bulk decoder of an Arrow array (to a list)."""

    type: Any
    encode: Callable[[Any], Any]
    decode: Callable[[Any], list[Any]]
    #: a struct of a dataclass without some fields: ``decode_given(arr, *lists)`` with a
    #: list of values per skipped field (:func:`struct_conv`)
    decode_given: Callable[..., list[Any]] | None = None
    #: the decoder of ``X | None`` when it is not ``decode`` behind :func:`_nullable` (a
    #: leaf's decoder reads a null as None itself, :func:`_leaf`)
    decode_optional: Callable[[Any], list[Any]] | None = None
    #: a struct's decoding in two steps, for a caller that wants some fields' lists too
    #: (:func:`struct_conv`)
    parts: StructParts | None = None


@dataclasses.dataclass(frozen=True)
class StructParts:
    """Decoding a struct column of a dataclass in two steps: ``columns(arr)`` is a list of
    values per field in ``names``; ``make(n, *lists, *given)`` the ``n`` objects (given:
    lists for the fields the struct leaves out). ``decode_given`` is the two in one."""

    names: tuple[str, ...]
    columns: Callable[[Any], list[list[Any]]]
    make: Callable[..., list[Any]]


def _identity(v: Any) -> Any:
    return v


def _leaf(convert: Callable[[Any], Any] | None = None, nulls: bool = True,
          by_value: bool = False) -> Callable[[Any], list[Any]]:
    """The decoder of a leaf array: its values with ``convert`` applied to each, a null read
    as None (when ``nulls``; otherwise given to ``convert`` too, which refuses it).

    Strings may come dictionary-encoded (:func:`open_file` reads them so: fewer bytes to
    decode). Each row still gets its own ``str``, as from a plain array: the replay
    fingerprints states by pickling them, and pickle writes one object held in two places
    differently from two equal objects, so sharing values would change which states its
    search tells apart. Only when ``by_value`` (``convert`` gives one object per distinct
    value anyway: enum members) is a dictionary converted once per distinct value."""

    def each(values: list[Any]) -> list[Any]:
        if convert is None:
            return values
        if nulls:
            return [None if v is None else convert(v) for v in values]
        return [convert(v) for v in values]

    def decode(arr: Any) -> list[Any]:
        n = len(arr)
        if nulls and arr.null_count == n:
            return [None] * n
        if _pa().types.is_dictionary(arr.type):
            if by_value:
                got = _by_dictionary(arr, each, nulls)
                if got is not None:
                    return got
            arr = arr.dictionary_decode()
        return each(arr.to_pylist())

    return decode


def _by_dictionary(arr: Any, each: Callable[[list[Any]], list[Any]], nulls: bool) -> list[Any] | None:
    """:func:`_leaf`'s values of a dictionary array, ``each`` applied to the dictionary and
    the rows indexing the result; None (decode row by row) when the dictionary is longer
    than the array (a few rows of a column), when a null must reach ``each``, or when a
    value of the dictionary does not convert (it may be one no row of ``arr`` holds)."""
    values = arr.dictionary
    if len(values) > len(arr) or (arr.null_count and not nulls):
        return None
    try:
        distinct = each(values.to_pylist())
    except Exception:
        return None
    indices = arr.indices
    if arr.null_count:
        distinct.append(None)
        indices = indices.fill_null(len(distinct) - 1)
    return list(map(distinct.__getitem__, indices.to_pylist()))


def _nullable(inner: Callable[[Any], list[Any]]) -> Callable[[Any], list[Any]]:
    """A decoder of an array that may hold nulls, from one of an array that does not."""

    def decode(arr: Any) -> list[Any]:
        if arr.null_count == 0:
            return inner(arr)
        valid = arr.is_valid()
        got = iter(inner(arr.filter(valid)))
        return [next(got) if v else None for v in valid.to_pylist()]

    return decode


_CONVS: dict[Any, Conv] = {}
_BUILDING: set[Any] = set()


def conv_for(tp: Any) -> Conv:
    """The :class:`Conv` of type ``tp`` (cached)."""
    try:
        got = _CONVS.get(tp)
    except TypeError:
        return _build(tp)
    if got is None:
        got = _CONVS[tp] = _build(tp)
    return got


def arrow_type(tp: Any) -> Any:
    """The Arrow type values of Python type ``tp`` are stored as."""
    return conv_for(tp).type


def _json_leaf(tp: Any) -> Conv:
    pa = _pa()
    dec = decoder_for(tp)

    def encode(v: Any) -> Any:
        return None if v is None else json.dumps(to_json(v), separators=(",", ":"))

    def decode(arr: Any) -> list[Any]:
        return [None if s is None else dec(json.loads(s), "") for s in _leaf()(arr)]

    return Conv(pa.string(), encode, decode)


def _build(tp: Any) -> Conv:
    pa = _pa()
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1 and type(None) in get_args(tp):
            inner = conv_for(args[0])
            enc = inner.encode
            return Conv(inner.type, lambda v: None if v is None else enc(v),
                        inner.decode_optional or _nullable(inner.decode))
        return _json_leaf(tp)
    if origin is tuple:
        items = get_args(tp)
        if len(items) == 2 and items[1] is Ellipsis:
            return _list(conv_for(items[0]))
        return _fixed(tuple(conv_for(a) for a in items))
    plain = {int: pa.int64(), float: pa.float64(), str: pa.string(), bool: pa.bool_(), bytes: pa.binary()}
    if tp in plain:
        values = _leaf()
        return Conv(plain[tp], _identity, values, decode_optional=values)
    if tp is TopicId:
        return _converted(pa.string(), str, TopicId.parse)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return _converted(pa.string(), lambda v: v.name, dict(tp.__members__).__getitem__, by_value=True)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and tp not in _BUILDING:
        _BUILDING.add(tp)
        try:
            return struct_conv(tp)
        finally:
            _BUILDING.discard(tp)
    return _json_leaf(tp)


def _converted(arrow: Any, encode: Callable[[Any], Any], convert: Callable[[Any], Any],
               by_value: bool = False) -> Conv:
    """A leaf held as text and read back by ``convert`` (which refuses a null unless the
    type is optional)."""
    return Conv(arrow, encode, _leaf(convert, nulls=False, by_value=by_value),
                decode_optional=_leaf(convert, by_value=by_value))


def _list(item: Conv) -> Conv:
    pa = _pa()
    enc = item.encode

    def encode(v: Any) -> Any:
        return [enc(x) for x in v]

    def decode(arr: Any) -> list[Any]:
        offsets = arr.offsets.to_pylist()
        start = offsets[0]
        values = item.decode(arr.values.slice(start, offsets[-1] - start))
        if start:
            offsets = [o - start for o in offsets]
        return [tuple(values[a:b]) for a, b in itertools.pairwise(offsets)]

    return Conv(pa.list_(item.type), encode, decode)


def _fixed(items: tuple[Conv, ...]) -> Conv:
    pa = _pa()
    names = [f"f{i}" for i in range(len(items))]

    def encode(v: Any) -> Any:
        return {n: c.encode(x) for n, c, x in zip(names, items, v, strict=True)}

    def decode(arr: Any) -> list[Any]:
        cols = [c.decode(arr.field(i)) for i, c in enumerate(items)]
        return list(zip(*cols, strict=True)) if cols else [() for _ in range(len(arr))]

    return Conv(pa.struct([pa.field(n, c.type) for n, c in zip(names, items, strict=False)]), encode, decode)


def _generated_init(cls: type) -> bool:
    """Whether ``cls.__init__`` is the one :mod:`dataclasses` generates (no hand-written one)."""
    code = getattr(vars(cls).get("__init__"), "__code__", None)
    return code is not None and code.co_filename == "<string>"


def _maker(cls: type, names: Sequence[str]) -> Callable[..., list[Any]]:
    """``make(n, *columns)``: ``n`` objects of dataclass ``cls`` from one list per field
    named. When ``names`` are all of its fields and it keeps them in a ``__dict__``, an
    object is made as ``cls(...)`` would make it, without the keyword call: a new instance
    given its field dict (frozen dataclasses set each field through ``object.__setattr__``,
    three times slower), then ``__post_init__`` when the class has one, so its checks run."""
    if not names:
        return lambda n: [cls() for _ in range(n)]
    cols = [f"c{i}" for i in range(len(names))]
    vals = [f"v{i}" for i in range(len(names))]
    fields = dataclasses.fields(cls)
    direct = (all(f.init for f in fields) and sorted(f.name for f in fields) == sorted(names)
              and not hasattr(cls, "__slots__") and _generated_init(cls))
    env: dict[str, Any] = {"cls": cls, "new": object.__new__, "seta": object.__setattr__}
    if direct:
        items = ", ".join(f"{n!r}: {v}" for n, v in zip(names, vals, strict=True))
        post = "        o.__post_init__()\n" if hasattr(cls, "__post_init__") else ""
        src = (f"def make(n, {', '.join(cols)}):\n"
               f"    out = []\n"
               f"    app = out.append\n"
               f"    for ({', '.join(vals)},) in zip({', '.join(cols)}):\n"
               f"        o = new(cls)\n"
               f"        seta(o, '__dict__', {{{items}}})\n"
               f"{post}"
               f"        app(o)\n"
               f"    return out\n")
    else:
        call = ", ".join(f"{n}={v}" for n, v in zip(names, vals, strict=True))
        src = (f"def make(n, {', '.join(cols)}):\n"
               f"    return [cls({call}) for ({', '.join(vals)},) in zip({', '.join(cols)})]\n")
    exec(src, env)  # built from the class's own field names
    make: Callable[..., list[Any]] = env["make"]
    return make


#: the text fields of a record event and its record (``str``, ``str | None``), whose
#: values may be shared between rows (:func:`struct_conv`'s ``shared_text``)
_TEXT = (str, str | None)


def _shared_text_conv() -> Conv:
    """A text leaf decoded once per distinct value of a dictionary array, the rows sharing
    the ``str`` objects (:func:`_leaf`'s ``by_value``)."""
    values = _leaf(by_value=True)
    return Conv(_pa().string(), _identity, values, decode_optional=values)


def struct_conv(cls: type, skip: tuple[str, ...] = (), shared_text: bool = False) -> Conv:
    """The :class:`Conv` of dataclass ``cls`` as an Arrow struct of its fields but
    ``skip``; decoding builds the objects with a generated keyword call per row, the
    skipped fields' values given as lists (:attr:`Conv.decode_given`). With
    ``shared_text``, its own text fields (not those of nested structs) are decoded once per
    distinct value, rows sharing the ``str`` objects: for record events and their records,
    which the replay (whose fingerprints tell a shared object from equal ones, :func:`_leaf`)
    never holds; they are two thirds of a simulator trace's events."""
    pa = _pa()
    hints = type_hints(cls)
    fields = [f for f in dataclasses.fields(cls) if f.name not in skip]
    shared = _shared_text_conv() if shared_text else None
    convs = [shared if shared is not None and hints[f.name] in _TEXT else conv_for(hints[f.name])
             for f in fields]
    names = [f.name for f in fields]
    plain = [c.encode is _identity for c in convs]

    def encode(v: Any) -> Any:
        return {n: (getattr(v, n) if p else c.encode(getattr(v, n)))
                for n, c, p in zip(names, convs, plain, strict=True)}

    make = _maker(cls, [*names, *skip])
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}

    def columns(arr: Any) -> list[list[Any]]:
        if arr.type.num_fields == len(convs):
            return [c.decode(arr.field(i)) for i, c in enumerate(convs)]
        # a file written before a field was added (an optional field of a later vocabulary,
        # such as ListGroups v5's types, an offset's leader epoch): the field's default, as
        # a JSON Lines line without it reads (None for a field without one)
        index = arr.type.get_field_index
        return [c.decode(arr.field(index(n))) if index(n) >= 0 else [defaults.get(n)] * len(arr)
                for n, c in zip(names, convs, strict=True)]

    def decode_given(arr: Any, *given: list[Any]) -> list[Any]:
        return make(len(arr), *columns(arr), *given)

    return Conv(pa.struct([pa.field(n, c.type) for n, c in zip(names, convs, strict=True)]), encode,
                decode_given, decode_given, parts=StructParts(tuple(names), columns, make))


# ---------------------------------------------------------------------------------------
# the layout


#: flat typed columns: name -> Python type (the first eight as the text layout has them)
FLAT: tuple[tuple[str, Any], ...] = (
    ("kind", str), ("seq", int), ("group_id", str), ("api", str), ("connection", str),
    ("sent_ms", float), ("received_ms", float), ("client_id", str), ("api_key", int),
    ("api_version", int), ("correlation_id", int), ("cluster", str), ("rewritten", bool),
    ("peer", str), ("at_ms", float), ("record_type", str),
)
#: kind -> event class, for the kinds held in an ``ev_<kind>`` struct column
_OTHER_KINDS: dict[str, type] = {kind: cls for cls, kind in KINDS.items() if cls is not WireExchange}


class Layout:
    """The columnar schema and the converters of its struct columns (built once)."""

    def __init__(self) -> None:
        pa = _pa()
        self.requests = {api: conv_for(req) for api, (_, req, _) in APIS.items()}
        self.responses = {api: conv_for(resp) for api, (_, _, resp) in APIS.items()}
        #: a response is null when none was seen
        self.response_decoders = {api: _nullable(c.decode) for api, c in self.responses.items()}
        self.others = {kind: (struct_conv(cls, skip=("record",), shared_text=True) if cls is RecordEvent
                              else conv_for(cls))
                       for kind, cls in _OTHER_KINDS.items()}
        #: (records reach the record invariants, never the replay: their text is shared)
        self.records = {name: struct_conv(cls, shared_text=True) for name, cls in RECORD_TYPES.items()}
        #: an exchange's fields held in flat columns, then its request and response
        self.exchange_fields = [f.name for f in dataclasses.fields(WireExchange)
                                if f.name not in ("request", "response")]
        hints = type_hints(WireExchange)
        #: their decoders (a flat column holds the field's type)
        self.exchange_decoders = [conv_for(hints[name]).decode for name in self.exchange_fields]
        self.make_exchange = _maker(WireExchange, [*self.exchange_fields, "request", "response"])
        fields = [pa.field("line", pa.int64(), nullable=False), pa.field("ended", pa.bool_(), nullable=False),
                  pa.field("raw", pa.binary()), pa.field("decoded", pa.bool_(), nullable=False)]
        fields += [pa.field(name, conv_for(tp).type) for name, tp in FLAT]
        for api in APIS:
            fields.append(pa.field(f"req_{api}", self.requests[api].type))
            fields.append(pa.field(f"resp_{api}", self.responses[api].type))
        for kind, c in self.others.items():
            fields.append(pa.field(f"ev_{kind}", c.type))
        for name, c in self.records.items():
            fields.append(pa.field(f"rec_{name}", c.type))
        self.schema = pa.schema(fields, metadata={LAYOUT_KEY: COLUMNAR_LAYOUT})
        #: the Parquet paths of its string leaves (read as dictionaries, :func:`open_file`)
        self.string_paths = [p for f in fields for p in _string_paths(f.type, f.name)]
        #: the struct columns, which a file leaves out when no row fills them
        self.optional = frozenset(f.name for f in fields if f.name.startswith(("req_", "resp_", "ev_", "rec_")))


def _string_paths(tp: Any, path: str) -> Iterator[str]:
    """The Parquet column paths of the string leaves of a column of Arrow type ``tp``
    (lists named as pyarrow writes them, ``<name>.list.element``)."""
    pa = _pa()
    if pa.types.is_string(tp):
        yield path
    elif pa.types.is_struct(tp):
        for f in tp:
            yield from _string_paths(f.type, f"{path}.{f.name}")
    elif pa.types.is_list(tp):
        yield from _string_paths(tp.value_type, f"{path}.list.element")


_LAYOUT: list[Layout] = []


def layout() -> Layout:
    if not _LAYOUT:
        _LAYOUT.append(Layout())
    return _LAYOUT[0]


def schema() -> Any:
    """The Arrow schema of the columnar layout (with its ``groupspec.layout`` metadata)."""
    return layout().schema


def is_columnar_schema(s: Any) -> bool:
    """Whether an Arrow schema (a Parquet file's) is of the columnar layout."""
    return bool((s.metadata or {}).get(LAYOUT_KEY) == COLUMNAR_LAYOUT)


# ---------------------------------------------------------------------------------------
# writing


def canonical(event: Event) -> bytes:
    """The line the trace writer writes for ``event``."""
    return json.dumps(event_to_json(event), separators=(",", ":")).encode()


def decode_line(chunk: bytes) -> Event | None:
    """The event a JSON Lines line (without its newline) holds, read as the validator reads
    it, or None when it holds none (not UTF-8, blank, not JSON, not an event)."""
    try:
        text = chunk.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError:
        return None
    if not text.strip():
        return None
    try:
        return event_from_json(parse_line(text))
    except (CodecError, TypeError, ValueError, RecursionError):
        return None


#: a line to write: (line number, its bytes without the newline, ended by a newline, its
#: event or None, whether the event's canonical line is the line's bytes)
Line = tuple[int, bytes, bool, Event | None, bool]


def split_lines(raw: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """A JSON Lines file's lines: (line number, bytes without the newline, ended by one);
    every line, blank ones too, and no line after a final newline."""
    chunks = raw.split(b"\n")
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        if i == last and not chunk:
            break
        yield i + 1, chunk, i < last


def classify(lines: Iterable[tuple[int, bytes, bool]]) -> Iterator[Line]:
    for no, chunk, ended in lines:
        event = decode_line(chunk)
        yield no, chunk, ended, event, event is not None and canonical(event) == chunk


def _flat_values(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": KINDS[type(event)], "group_id": group_of(event)}
    for name, tp in FLAT[1:]:
        if name == "group_id":
            continue
        v = getattr(event, name, None)
        if v is None:
            continue
        if tp is float:
            v = float(v)
        out[name] = v
    if isinstance(event, RecordEvent):
        out["record_type"] = type(event.record).__name__
    return out


def _table(rows: Sequence[Line]) -> Any:
    pa = _pa()
    lay = layout()
    n = len(rows)
    cols: dict[str, list[Any]] = {}

    def col(name: str) -> list[Any]:
        c = cols.get(name)
        if c is None:
            c = cols[name] = [None] * n
        return c

    line, ended, raw, decoded = col("line"), col("ended"), col("raw"), col("decoded")
    for i, (no, chunk, end, event, exact) in enumerate(rows):
        line[i], ended[i], decoded[i] = no, end, event is not None
        if not exact:
            raw[i] = chunk
        if event is None:
            continue
        for name, v in _flat_values(event).items():
            col(name)[i] = v
        if isinstance(event, WireExchange):
            col(f"req_{event.api}")[i] = lay.requests[event.api].encode(event.request)
            if event.response is not None:
                col(f"resp_{event.api}")[i] = lay.responses[event.api].encode(event.response)
            continue
        kind = KINDS[type(event)]
        col(f"ev_{kind}")[i] = lay.others[kind].encode(event)
        if isinstance(event, RecordEvent):
            name = type(event.record).__name__
            col(f"rec_{name}")[i] = lay.records[name].encode(event.record)
    arrays = [pa.array(cols[f.name], f.type) if f.name in cols else pa.nulls(n, f.type) for f in lay.schema]
    return pa.Table.from_arrays(arrays, schema=lay.schema)


def lines_to_table(lines: Sequence[Line]) -> Any:
    """The columnar Arrow table of classified lines (:func:`classify`). A line whose event
    Arrow cannot hold (a string with a lone surrogate, which JSON escapes allow) is kept as
    raw text only, as the lines that hold no event are (found by halving the lines)."""
    pa = _pa()
    errors = (pa.ArrowException, ValueError, TypeError, OverflowError)

    def holdable(rows: Sequence[Line]) -> list[Line]:
        try:
            _table(rows)
            return list(rows)
        except errors:
            if len(rows) == 1:
                no, chunk, ended, _, _ = rows[0]
                return [(no, chunk, ended, None, False)]
            mid = len(rows) // 2
            return holdable(rows[:mid]) + holdable(rows[mid:])

    try:
        return _table(lines)
    except errors:
        return _table(holdable(lines))


def _batched(it: Iterable[Line], size: int) -> Iterator[list[Line]]:
    buf: list[Line] = []
    for x in it:
        buf.append(x)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


def file_schema(tables: Sequence[Any]) -> Any:
    """The schema of a file of ``tables`` (batches of the layout's schema): the layout's
    columns but the struct columns null in every row of every table, in the layout's order,
    with its metadata (the module's docstring)."""
    lay = layout()
    kept = [f for f in lay.schema
            if f.name not in lay.optional or any(t.column(f.name).null_count < t.num_rows for t in tables)]
    return _pa().schema(kept, metadata=lay.schema.metadata)


def write_tables(tables: Sequence[Any], path: Any) -> None:
    """Write batches of the layout's schema as one columnar Parquet file, a row group each,
    without the struct columns no row fills (:func:`file_schema`)."""
    import pyarrow.parquet as pq

    s = file_schema(tables)
    with pq.ParquetWriter(str(path), s) as writer:
        for t in tables:
            writer.write_table(t.select(s.names).replace_schema_metadata(s.metadata))


def write_lines(lines: Iterable[tuple[int, bytes, bool]], path: Any,
                progress: Callable[[int], None] | None = None) -> int:
    """Write JSON Lines lines (:func:`split_lines`) as a columnar Parquet trace; the row count.
    The batches are made first and written together, since the file's columns are those
    some batch fills (:func:`write_tables`); ``progress`` is called as each is made."""
    n = 0
    tables: list[Any] = []
    for chunk in _batched(classify(lines), BATCH_ROWS):
        tables.append(lines_to_table(chunk))
        n += len(chunk)
        if progress is not None:
            progress(n)
    write_tables(tables, path)
    return n


def write_events(events: Iterable[Event], path: Any) -> int:
    """Write events (the header first) as a columnar Parquet trace, exactly as their JSON
    Lines form would be converted."""
    return write_lines(((i, canonical(e), True) for i, e in enumerate(events, start=1)), path)


# ---------------------------------------------------------------------------------------
# reading


@dataclasses.dataclass
class DecodedRows:
    """The rows of columnar batches: the events of the rows with ``decoded`` with their line
    numbers (``lines[i]`` is ``events[i]``'s line), and the other rows' (line number, bytes,
    ended)."""

    lines: list[int] = dataclasses.field(default_factory=list)
    events: list[Event] = dataclasses.field(default_factory=list)
    #: each event's seq, and its record's group id for a record event (None for other
    #: kinds): the lists the events were made from, for a reader that groups them
    seqs: list[int] = dataclasses.field(default_factory=list)
    record_groups: list[str | None] = dataclasses.field(default_factory=list)
    undecoded: list[tuple[int, bytes, bool]] = dataclasses.field(default_factory=list)
    #: (line number, raw bytes or None, ended) of every row, only when asked for
    rows: list[tuple[int, bytes | None, bool]] = dataclasses.field(default_factory=list)
    #: every batch so far had its rows in line order, after the previous batch's
    in_order: bool = True


def _rows(mask: Any) -> Any:
    import pyarrow.compute as pc

    return pc.indices_nonzero(mask)


class _Columns:
    """A batch's columns by name; a column of the layout the batch lacks (not read, see
    :func:`iter_batches`) reads as all null."""

    def __init__(self, batch: Any) -> None:
        self.batch = batch
        self.names = set(batch.schema.names)

    def column(self, name: str) -> Any:
        if name in self.names:
            return self.batch.column(name)
        field = layout().schema.field(name)  # KeyError: not a column of the layout
        return _pa().nulls(self.batch.num_rows, field.type)

    def plain(self, name: str) -> Any:
        """A column not dictionary-encoded (comparing a dictionary array with a value
        decodes it each time): the rows' kinds, APIs and record types, compared often."""
        col = self.column(name)
        return col.dictionary_decode() if _pa().types.is_dictionary(col.type) else col

    def take(self, names: Sequence[str], idx: Any) -> list[Any]:
        """The columns ``names`` at rows ``idx`` (one ``take`` for all of them)."""
        pa = _pa()
        taken: list[Any] = pa.RecordBatch.from_arrays([self.column(n) for n in names],
                                                       names=list(names)).take(idx).columns
        return taken


def _place(idx: Any, events: list[Any], made: list[Any], seqs: list[Any], made_seqs: list[int]) -> None:
    for i, e, s in zip(idx.to_pylist(), made, made_seqs, strict=True):
        events[i] = e
        seqs[i] = s


def _ascending(col: Any) -> bool:
    """Whether an int64 column's values increase strictly from row to row."""
    import pyarrow.compute as pc

    n = len(col)
    return n < 2 or not pc.any(pc.less_equal(col.slice(1), col.slice(0, n - 1))).as_py()


def _check_exchange_header(batch: _Columns, idx: Any, api: str, lines: list[int]) -> None:
    """The rows ``idx`` of exchanges of ``api`` carry its api key and an API version the
    wire can (as :func:`groupspec.trace.jsonl.event_from_json` requires of a line: this
    layout's writer keeps a line that fails it as text); ColumnarError at the first row that
    does not (a file this layout's writer did not make)."""
    import pyarrow.compute as pc

    key = APIS[api][0]
    keys, versions = batch.column("api_key").take(idx), batch.column("api_version").take(idx)
    # (a null key or version compares as null, and a null is bad)
    bad = pc.fill_null(pc.or_kleene(pc.not_equal(keys, key),
                                    pc.or_kleene(pc.less(versions, 0), pc.greater(versions, MAX_API_VERSION))), True)
    if pc.any(bad).as_py():
        k = pc.index(bad, True).as_py()
        raise ColumnarError(f"line {lines[idx[k].as_py()]}: a {api} exchange needs api_key {key} and an api_version "
                            f"in 0..{MAX_API_VERSION}, the row has {keys[k].as_py()!r} and {versions[k].as_py()!r}")


def _check_filled(batch: _Columns, name: str, values: Any, idx: Any, lines: list[int], what: str) -> None:
    """``values`` (column ``name`` at rows ``idx``) has no null: a decoded row's struct
    column is filled by every writer of the layout; ColumnarError at the first row where it
    is null or the file lacks the column (a file this layout's writer did not make)."""
    if not values.null_count:
        return
    k = _pa().compute.index(values.is_null(), True).as_py()
    where = "the file has no such column" if name not in batch.names else "it is null"
    raise ColumnarError(f"line {lines[idx[k].as_py()]}: {what} without its {name} ({where})")


def decode_batch(batch: Any, out: DecodedRows, keep_rows: bool = False) -> None:
    """Decode one record batch of the columnar layout into ``out``, in bulk: the rows of
    each kind (and of each API, record type) are taken together, and each column is
    converted once (a list per column, structs by their fields, :class:`Conv`)."""
    import pyarrow.compute as pc

    lay = layout()
    n = batch.num_rows
    if n == 0:
        return
    batch = _Columns(batch)
    line_col = batch.column("line")
    lines = line_col.to_pylist()
    if out.in_order and not (_ascending(line_col) and (not out.lines or lines[0] > out.lines[-1])
                             and (not out.undecoded or lines[0] > out.undecoded[-1][0])):
        out.in_order = False
    dec = batch.column("decoded")
    raw_col = batch.column("raw")
    if keep_rows:
        raws = raw_col.to_pylist() if raw_col.null_count < n else [None] * n
        out.rows += zip(lines, raws, batch.column("ended").to_pylist(), strict=True)
    if dec.false_count:
        idx = _rows(pc.invert(dec))
        out.undecoded += zip([lines[i] for i in idx.to_pylist()],
                             [b"" if r is None else r for r in raw_col.take(idx).to_pylist()],
                             batch.column("ended").take(idx).to_pylist(), strict=True)
    if not dec.true_count:
        return
    events: list[Any] = [None] * n
    seqs: list[Any] = [None] * n
    groups: list[Any] = [None] * n
    kind_col = batch.plain("kind")
    for kind in pc.unique(kind_col.filter(dec)).to_pylist():
        mask = pc.and_(dec, pc.equal(kind_col, kind))
        if kind == "exchange":
            api_col = batch.plain("api")
            for api in pc.unique(api_col.filter(mask)).to_pylist():
                idx = _rows(pc.and_(mask, pc.equal(api_col, api)))
                if api not in lay.requests:
                    raise ColumnarError(f"line {lines[idx[0].as_py()]}: unknown api {api!r}")
                _check_exchange_header(batch, idx, api, lines)
                *flat, req, resp = batch.take([*lay.exchange_fields, f"req_{api}", f"resp_{api}"], idx)
                _check_filled(batch, f"req_{api}", req, idx, lines, f"a {api} exchange")
                cols = [d(c) for d, c in zip(lay.exchange_decoders, flat, strict=True)]
                made = lay.make_exchange(len(idx), *cols, lay.requests[api].decode(req),
                                         lay.response_decoders[api](resp))
                _place(idx, events, made, seqs, cols[lay.exchange_fields.index("seq")])
            continue
        conv = lay.others.get(kind) if isinstance(kind, str) else None
        if conv is None:
            raise ColumnarError(f"line {lines[_rows(mask)[0].as_py()]}: unknown event kind {kind!r}")
        if kind != "record":
            idx = _rows(mask)
            col = batch.column(f"ev_{kind}").take(idx)
            _check_filled(batch, f"ev_{kind}", col, idx, lines, f"a {kind} event")
            made = conv.decode(col)
            _place(idx, events, made, seqs, [e.seq for e in made])
            continue
        type_col = batch.plain("record_type")
        parts = conv.parts
        assert parts is not None
        seq_at = parts.names.index("seq")
        for name in pc.unique(type_col.filter(mask)).to_pylist():
            idx = _rows(pc.and_(mask, pc.equal(type_col, name)) if name is not None
                        else pc.and_(mask, pc.is_null(type_col)))
            if name not in lay.records:
                raise ColumnarError(f"line {lines[idx[0].as_py()]}: unknown record type {name!r}")
            ev, rec = batch.take(["ev_record", f"rec_{name}"], idx)
            _check_filled(batch, "ev_record", ev, idx, lines, "a record event")
            _check_filled(batch, f"rec_{name}", rec, idx, lines, f"a {name} record event")
            record = lay.records[name].parts
            assert record is not None
            rcols = record.columns(rec)
            ecols = parts.columns(ev)
            made = parts.make(len(idx), *ecols, record.make(len(idx), *rcols))
            for i, e, s, g in zip(idx.to_pylist(), made, ecols[seq_at], rcols[record.names.index("group_id")],
                                  strict=True):
                events[i] = e
                seqs[i] = s
                groups[i] = g
    if dec.true_count == n:
        out.lines += lines
        out.events += events
        out.seqs += seqs
        out.record_groups += groups
    else:  # every decoded row has its event (a kind, API or record type not known raised)
        flags = dec.to_pylist()
        out.lines += itertools.compress(lines, flags)
        out.events += itertools.compress(events, flags)
        out.seqs += itertools.compress(seqs, flags)
        out.record_groups += itertools.compress(groups, flags)


def decode_batches(batches: Iterable[Any], keep_rows: bool = False) -> DecodedRows:
    """Decode record batches (or tables) of the columnar layout (:func:`decode_batch`);
    the result's lists are in line order whatever the order of the batches."""
    out = DecodedRows()
    for b in batches:
        for batch in (b.to_batches() if hasattr(b, "to_batches") else [b]):
            decode_batch(batch, out, keep_rows)
    if not out.in_order:
        order = sorted(range(len(out.lines)), key=out.lines.__getitem__)
        out.lines = [out.lines[i] for i in order]
        out.events = [out.events[i] for i in order]
        out.seqs = [out.seqs[i] for i in order]
        out.record_groups = [out.record_groups[i] for i in order]
        out.undecoded.sort(key=lambda p: p[0])
        out.rows.sort(key=lambda p: p[0])
    return out


def open_file(source: Any) -> Any:
    """A Parquet file (``pyarrow.parquet.ParquetFile``) opened to be decoded, from a path or
    a pyarrow file object (the Spark job's file bytes in a ``BufferReader``): the string
    columns of the columnar layout the file has are read as dictionary arrays, so that each
    distinct value becomes one Python object (:func:`_leaf`). The footer is read once."""
    import pyarrow.parquet as pq

    src = source if hasattr(source, "seek") else str(source)
    pf = pq.ParquetFile(src)
    meta = pf.metadata
    has = {pf.schema.column(i).path for i in range(meta.num_columns)}
    strings = [p for p in layout().string_paths if p in has]
    if not strings:  # another layout
        return pf
    return pq.ParquetFile(src, metadata=meta, read_dictionary=strings)


def needed_columns(pf: Any) -> list[str]:
    """The columns of a columnar Parquet file (a ``pyarrow.parquet.ParquetFile``) that
    decoding it needs: the flat ones and the struct columns of the APIs, kinds and record
    types its rows have (read first, from four small columns). Reading a file is mostly a
    cost per column chunk, and most of the ~400 leaf columns are null in any one trace."""
    import pyarrow.compute as pc

    names = pf.schema_arrow.names
    missing = [c for c in ("line", "ended", "raw", "decoded", *(name for name, _ in FLAT)) if c not in names]
    if missing:  # every writer of the layout writes them all: not a file of this layout
        raise ColumnarError(
            f"the file says it has the columnar layout ({LAYOUT_KEY.decode()} = "
            f"{COLUMNAR_LAYOUT.decode()}) but lacks its column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}; "
            f"its columns: {', '.join(names[:12])}{' ...' if len(names) > 12 else ''}")
    small = pf.read(columns=["decoded", "kind", "api", "record_type"])
    dec = small.column("decoded")
    need = {"line", "ended", "raw", "decoded", *(name for name, _ in FLAT)}
    for kind in pc.unique(small.column("kind").filter(dec)).to_pylist():
        need.add(f"ev_{kind}")
    for api in pc.unique(small.column("api").filter(dec)).to_pylist():
        need |= {f"req_{api}", f"resp_{api}"}
    for rtype in pc.unique(small.column("record_type").filter(dec)).to_pylist():
        need.add(f"rec_{rtype}")
    return [n for n in names if n in need]


def iter_batches(path: Any, batch_rows: int = BATCH_ROWS) -> Iterator[Any]:
    """The record batches of a columnar Parquet file, only the columns decoding needs."""
    pf = open_file(path)
    yield from pf.iter_batches(batch_size=batch_rows, columns=needed_columns(pf))


def read_rows(path: Any) -> list[tuple[int, bytes, bool]]:
    """A columnar Parquet trace's lines as JSON Lines bytes: (line number, the line's exact
    bytes without the newline, whether a newline ended it), in line order."""
    got = decode_batches(iter_batches(path), keep_rows=True)
    events = dict(zip(got.lines, got.events, strict=True))
    return [(no, raw if raw is not None else canonical(events[no]), end) for no, raw, end in got.rows]


def to_jsonl_bytes(path: Any) -> bytes:
    """The JSON Lines form of a columnar Parquet trace, byte for byte the file it was made from."""
    return b"".join(chunk + (b"\n" if end else b"") for _, chunk, end in read_rows(path))


__all__ = [
    "BATCH_ROWS", "COLUMNAR_LAYOUT", "LAYOUT_KEY", "ColumnarError", "Conv", "DecodedRows", "Layout", "StructParts",
    "arrow_type", "canonical", "classify", "conv_for", "decode_batch", "decode_batches", "decode_line",
    "file_schema", "is_columnar_schema", "iter_batches", "layout", "lines_to_table", "open_file", "read_rows", "schema",
    "split_lines", "struct_conv", "to_jsonl_bytes", "write_events", "write_lines", "write_tables",
]
