"""The columnar Parquet layout (issue 20 item 1): JSON Lines -> columnar Parquet -> JSON
Lines gives back the same bytes for any input; the validator loads the same events and
problems, and gives the same verdicts, from both; text-layout files still read; and
``groupspec trace convert`` reports bad input without a traceback."""

from __future__ import annotations

import dataclasses
import gzip
import json
import types
from enum import Enum
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.cli.main import main
from groupspec.protocol.messages import OffsetCommitRequest, OffsetFetchResponse
from groupspec.protocol.records import Record
from groupspec.protocol.topic_id import TopicId
from groupspec.trace import columnar, parquet
from groupspec.trace.codec import type_hints
from groupspec.trace.events import (
    APIS,
    FORMAT,
    KINDS,
    RECORD_TYPES,
    VERSION,
    ApiVersionsEvent,
    DecodeErrorEvent,
    Event,
    ExpiryEvent,
    FetchEvent,
    Header,
    MetadataEvent,
    RecordEvent,
    WireExchange,
)
from groupspec.validate import validate_path
from groupspec.validate.load import (
    EventColumns,
    LoadedTrace,
    load_bytes,
    load_path,
    loaded_from_arrow,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").rglob("*.jsonl"))
INJECTED = sorted((ROOT / "examples" / "injected").glob("cluster-*.jsonl.gz"))


def _bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


def _round_trip(raw: bytes, tmp: Path) -> Path:
    src, dst = tmp / "in.jsonl", tmp / "out.parquet"
    src.write_bytes(raw)
    parquet.jsonl_to_parquet(src, dst)
    assert columnar.is_columnar_schema(pq.read_schema(dst)) and parquet.layout_of(dst) == parquet.COLUMNAR
    assert parquet.parquet_to_jsonl_bytes(dst) == raw
    return dst


def _same_load(a: LoadedTrace, b: LoadedTrace) -> None:
    assert a.lines == b.lines
    assert a.events == b.events
    assert [dataclasses.replace(p, source="") for p in a.problems] == \
        [dataclasses.replace(p, source="") for p in b.problems]
    for t in (a, b):  # the loader's columns, when it gives them, are the events' own
        if t.columns is not None:
            assert t.columns == EventColumns.of(t.events)
            assert all(g is None or g is x.event.record.group_id  # type: ignore[union-attr]
                       for g, x in zip(t.columns.record_groups, t.events, strict=True))


def _strings(value: object, out: list[str]) -> None:
    """Every str an event holds (not the enum members' names), depth first."""
    if isinstance(value, str) and not isinstance(value, Enum):
        out.append(value)
    elif isinstance(value, tuple | list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            _strings(k, out)
            _strings(v, out)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _strings(getattr(value, f.name), out)


def test_decoded_rows_share_no_strings_as_json_lines_does_not(tmp_path: Path) -> None:
    """Each event's strings are its own objects, as :mod:`json` makes them, though Parquet
    holds them as dictionaries: the replay fingerprints its states by pickling them, and
    pickle writes one object held twice differently from two equal ones (sharing changed
    which states its search told apart, and its reported search counts). Record events are
    the exception: the replay never holds them, and their text is decoded once per value."""
    loaded = load_path(_round_trip(_bytes(INJECTED[0]), tmp_path))
    found: list[str] = []
    for x in loaded.events:
        if not isinstance(x.event, RecordEvent):
            _strings(x.event, found)
    long = [s for s in found if len(s) > 1]  # CPython keeps one object per 1-character str
    assert len(long) > 1000
    assert len({id(s) for s in long}) == len(long)


def _loads_the_same(raw: bytes, tmp: Path) -> Path:
    dst = _round_trip(raw, tmp)
    _same_load(load_bytes(raw, "t"), load_path(dst))
    return dst


@pytest.mark.parametrize("path", EXAMPLES + INJECTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_round_trip_byte_identical(path: Path, tmp_path: Path) -> None:
    _loads_the_same(_bytes(path), tmp_path)


def _generated(tmp: Path) -> bytes:
    """A cluster file the generator writes today (3,000 events, an injected violation)."""
    from groupspec.pipeline.generate import generate

    generate(3000, tmp / "gen", seed=5, fmt="jsonl", inject_k=1)
    return _bytes(sorted((tmp / "gen").glob("cluster-*.jsonl"))[0])


def test_generated_lines_are_all_typed(tmp_path: Path) -> None:
    """Lines the trace writer wrote are canonical: no raw text is stored for them. (The
    committed injected collection was written before the offsets' leader epochs: its
    OffsetCommit and OffsetFetch lines now differ from their canonical form and are kept as
    text, byte for byte, as test_examples_round_trip_byte_identical checks.)"""
    dst = _loads_the_same(_generated(tmp_path), tmp_path)
    t = pq.read_table(dst, columns=["raw", "decoded", "kind", "group_id", "seq", "line"])
    assert t.column("raw").null_count == t.num_rows
    assert all(t.column("decoded").to_pylist())
    assert t.column("kind").to_pylist()[0] == "header"
    assert t.column("line").to_pylist() == list(range(1, t.num_rows + 1))


def _damaged() -> list[tuple[str, bytes]]:
    good = _bytes(EXAMPLES[0]).split(b"\n")
    exchange = next(x for x in good if b'"kind":"exchange"' in x)
    obj = json.loads(exchange)
    return [
        ("empty", b""),
        ("one newline", b"\n"),
        ("blank lines", b"\n\n" + good[0] + b"\n\n  \n\t\n" + good[1] + b"\n\n"),
        ("no final newline", b"\n".join(good[:5])),
        ("crlf", b"\r\n".join(good[:5]) + b"\r\n"),
        ("not utf-8", good[0] + b"\n\xff\xfe\x00 bad\n" + good[1] + b"\n\xc3"),
        ("not json", good[0] + b"\nnot json at all\n{\"kind\":\n" + good[1] + b"\n"),
        ("cut short", b"\n".join(good[:4]) + b"\n" + good[4][:37]),
        ("spaced json", good[0] + b"\n" + json.dumps(obj).encode() + b"\n"),
        ("keys reordered", good[0] + b"\n" + json.dumps(dict(reversed(list(obj.items())))).encode() + b"\n"),
        ("int for a float", good[0] + b"\n" + exchange.replace(b'"sent_ms":', b'"sent_ms":1,"x":', 1)
         .replace(b',"x":' + exchange.split(b'"sent_ms":')[1].split(b",")[0], b"", 1) + b"\n"),
        ("unicode escapes", good[0] + b"\n" + json.dumps({**obj, "client_id": "\u00e9\u4e2d"}).encode() + b"\n"
         + json.dumps({**obj, "client_id": "\u00e9"}, ensure_ascii=False).encode() + b"\n"),
        ("lone surrogate", good[0] + b"\n" + exchange.replace(b'"client_id":"', b'"client_id":"\\ud800', 1) + b"\n"),
        ("unknown kind and api", good[0] + b"\n" + json.dumps({**obj, "api": "Nope"}).encode() + b"\n"
         + b'{"kind":"nope","seq":3}\n'),
        ("huge int", good[0] + b"\n" + exchange.replace(b'"seq":', b'"seq":1' + b"0" * 30, 1) + b"\n"),
        ("deep nesting", good[0] + b"\n" + b"[" * 100_000 + b"\n"),
        ("bom", b"\xef\xbb\xbf" + good[0] + b"\n" + good[1] + b"\n"),
        ("nul and controls", good[0] + b"\n\x00\x01\n" + good[1] + b"\n"),
        ("duplicate line", good[0] + b"\n" + good[1] + b"\n" + good[1] + b"\n"),
        ("json scalar", b"42\n\"x\"\nnull\n[]\n"),
    ]


@pytest.mark.parametrize(("name", "raw"), _damaged(), ids=[n for n, _ in _damaged()])
def test_damaged_inputs_round_trip_and_load_the_same(name: str, raw: bytes, tmp_path: Path) -> None:
    _loads_the_same(raw, tmp_path)


def test_non_canonical_lines_keep_raw_only_for_them(tmp_path: Path) -> None:
    good = _bytes(INJECTED[0]).split(b"\n")
    spaced = json.dumps(json.loads(good[1])).encode()
    dst = _loads_the_same(good[0] + b"\n" + spaced + b"\n" + good[2] + b"\n", tmp_path)
    t = pq.read_table(dst, columns=["raw", "decoded"])
    assert t.column("raw").to_pylist() == [None, spaced, None]
    assert t.column("decoded").to_pylist() == [True, True, True]


def test_verdicts_identical_on_jsonl_and_columnar_parquet(tmp_path: Path) -> None:
    for f in INJECTED:
        src = tmp_path / f.name.removesuffix(".gz")
        src.write_bytes(_bytes(f))
        dst = tmp_path / (src.stem + ".parquet")
        parquet.jsonl_to_parquet(src, dst)
        a, b = validate_path(src).to_json(), validate_path(dst).to_json()
        a.pop("source")
        b.pop("source")
        assert a == b


def test_text_layout_still_reads_and_validates_the_same(tmp_path: Path) -> None:
    raw = _bytes(EXAMPLES[0])
    lines = raw.split(b"\n")
    raw = b"\n".join([*lines[:3], b"not json", b"\xff", *lines[3:]])
    src = tmp_path / "t.jsonl"
    src.write_bytes(raw)
    old, new = tmp_path / "old.parquet", tmp_path / "new.parquet"
    parquet.jsonl_to_parquet(src, old, layout=parquet.TEXT)
    parquet.jsonl_to_parquet(src, new)
    assert parquet.layout_of(old) == parquet.TEXT and b"groupspec.layout" not in (pq.read_schema(old).metadata or {})
    assert "text" in pq.read_schema(old).names
    _same_load(load_path(src), load_path(old))
    _same_load(load_path(old), load_path(new))
    verdicts = [validate_path(p).to_json() for p in (src, old, new)]
    for v in verdicts:
        v.pop("source")
        for p in v["problems"]:
            p["message"] = p["message"].replace(str(tmp_path), "")
    assert verdicts[0] == verdicts[1] == verdicts[2]
    assert list(parquet.read_lines(old)) == list(parquet.read_lines(new))[: len(list(parquet.read_lines(old)))]
    with pytest.raises(parquet.LostBytes, match="line 5 was not UTF-8"):
        parquet.parquet_to_jsonl_bytes(old)


def test_old_typed_columns_keep_their_names_and_types(tmp_path: Path) -> None:
    dst = _round_trip(_bytes(INJECTED[0]), tmp_path)
    s = pq.read_schema(dst)
    for name, tp in (("line", "int64"), ("kind", "string"), ("seq", "int64"), ("group_id", "string"),
                     ("api", "string"), ("connection", "string"), ("sent_ms", "double"),
                     ("received_ms", "double"), ("ended", "bool")):
        assert str(s.field(name).type) == tp, name
    groups = set(pq.read_table(dst, columns=["group_id"]).column("group_id").to_pylist())
    assert {"cluster-000-g0000"} <= groups


def test_loaded_from_arrow_takes_tables_batches_and_any_order(tmp_path: Path) -> None:
    raw = _bytes(INJECTED[1])
    dst = _round_trip(raw, tmp_path)
    want = load_bytes(raw, "x")
    table = pq.read_table(dst)
    _same_load(want, loaded_from_arrow(table, "x"))
    batches = table.to_batches(max_chunksize=777)
    _same_load(want, loaded_from_arrow(list(reversed(batches)), "x"))
    _same_load(want, loaded_from_arrow(iter(batches), "x"))
    assert loaded_from_arrow(table, "x").source == "x"


def test_events_written_directly_equal_their_jsonl_conversion(tmp_path: Path) -> None:
    raw = _bytes(INJECTED[2])
    events = [x.event for x in load_bytes(raw).events]
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    parquet.write_events(events, a)
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(columnar.canonical(e) + b"\n" for e in events))
    parquet.jsonl_to_parquet(src, b)
    assert pq.read_table(a).equals(pq.read_table(b))
    assert [x.event for x in load_path(a).events] == events


# --------------------------------------------------------------------------- a property


def _strategy(tp: Any) -> st.SearchStrategy[Any]:
    """Values of a protocol type, from its type hints (the codec's vocabulary)."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        inner = st.one_of(*[_strategy(a) for a in args])
        return st.none() | inner if type(None) in get_args(tp) else inner
    if origin is tuple:
        items = get_args(tp)
        if len(items) == 2 and items[1] is Ellipsis:
            return st.lists(_strategy(items[0]), max_size=3).map(tuple)
        return st.tuples(*[_strategy(a) for a in items])
    if origin is dict:
        return st.dictionaries(st.text(max_size=5), st.integers(-5, 2**40), max_size=2)
    if tp is int:
        return st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3)
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if tp is str:
        return st.text(max_size=6)
    if tp is bytes:
        return st.binary(max_size=6)
    if tp is bool:
        return st.booleans()
    if tp is TopicId:
        return st.integers(0, 2**128 - 1).map(TopicId)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return st.sampled_from(list(tp))
    if tp is Record:
        return st.sampled_from(sorted(RECORD_TYPES)).flatmap(lambda n: _strategy(RECORD_TYPES[n]))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(tp)
    raise TypeError(f"no strategy for {tp!r}")


def _dataclass(cls: type, **fixed: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    hints = type_hints(cls)

    def lazy(tp: Any) -> st.SearchStrategy[Any]:
        return st.deferred(lambda: _strategy(tp))

    fields = {f.name: fixed[f.name] if f.name in fixed else lazy(hints[f.name])
              for f in dataclasses.fields(cls) if f.init}

    def build(values: dict[str, Any]) -> Any:
        try:
            return cls(**values)
        except (TypeError, ValueError):  # a value the class's own checks refuse
            return None

    return st.fixed_dictionaries(fields).map(build).filter(lambda v: v is not None)


def _exchange(api: str) -> st.SearchStrategy[WireExchange]:
    key, req, resp = APIS[api]
    return _dataclass(WireExchange, api=st.just(api), api_key=st.just(key), request=_strategy(req),
                      response=st.none() | _strategy(resp))


EVENTS: st.SearchStrategy[Event] = st.one_of(
    st.sampled_from(sorted(APIS)).flatmap(_exchange),
    _dataclass(Header, format=st.just(FORMAT), version=st.just(VERSION)),
    *[_dataclass(c) for c in (DecodeErrorEvent, ExpiryEvent, FetchEvent, ApiVersionsEvent, MetadataEvent)],
    _dataclass(RecordEvent, record=_strategy(Record)),
)
JUNK = st.one_of(st.binary(max_size=12).filter(lambda b: b"\n" not in b),
                 st.sampled_from([b"", b" ", b"{}", b"\r", b'{"kind":"exchange"}', b"[1,2", b"\xff"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.one_of(EVENTS.map(columnar.canonical), JUNK), max_size=12), final_newline=st.booleans())
def test_any_events_and_junk_round_trip(lines: list[bytes], final_newline: bool, tmp_path_factory: Any) -> None:
    raw = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    _loads_the_same(raw, tmp_path_factory.mktemp("prop"))


# --------------------------------------------------------------------------- the command


def test_convert_command_both_ways(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = _bytes(EXAMPLES[0]) + b"not json\n\xff\xfe"
    src = tmp_path / "a.jsonl"
    src.write_bytes(raw)
    assert main(["trace", "convert", str(src), str(tmp_path / "a.parquet")]) == 0
    assert main(["trace", "convert", str(tmp_path / "a.parquet"), str(tmp_path / "b.jsonl")]) == 0
    assert (tmp_path / "b.jsonl").read_bytes() == raw
    assert main(["trace", "convert", "--to", "jsonl", str(tmp_path / "a.parquet"), str(tmp_path / "c.out")]) == 0
    assert (tmp_path / "c.out").read_bytes() == raw
    gz = tmp_path / "g.jsonl.gz"
    gz.write_bytes(gzip.compress(raw))
    assert main(["trace", "convert", "--quiet", str(gz), str(tmp_path / "g.parquet")]) == 0
    assert parquet.parquet_to_jsonl_bytes(tmp_path / "g.parquet") == raw
    err = capsys.readouterr().err
    assert "a.jsonl ->" in err and "kept as raw text" in err


@pytest.mark.parametrize(("args", "message"), [
    (["{d}/missing.jsonl", "{d}/x.parquet"], "missing.jsonl: cannot read: No such file"),
    (["{d}/a.jsonl", "{d}/x.txt"], "--to: cannot tell the format of"),
    (["{d}/a.jsonl", "{d}/x.jsonl"], "a.jsonl: not a Parquet trace"),
    (["{d}/a.parquet", "{d}/x.parquet"], "a.parquet: already a Parquet trace"),
    (["{d}/bad.parquet", "{d}/x.jsonl"], "bad.parquet: not a readable Parquet trace"),
    (["{d}/bad.gz", "{d}/x.parquet"], "bad.gz: not a readable gzip file"),
    (["{d}/old.parquet", "{d}/x.jsonl"], "old.parquet: line 2 was not UTF-8"),
    (["{d}/a.parquet", "{d}/no/such/dir/x.jsonl"], "x.jsonl: cannot write"),
    (["{d}/a.jsonl", "{d}/a.jsonl", "--to", "parquet"], "OUT is IN"),
])
def test_convert_command_errors(args: list[str], message: str, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.jsonl").write_bytes(_bytes(EXAMPLES[0]))
    parquet.jsonl_to_parquet(tmp_path / "a.jsonl", tmp_path / "a.parquet")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 this is no parquet file PAR1")
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b not gzip")
    (tmp_path / "u.jsonl").write_bytes(b"{}\n\xff\n")
    parquet.jsonl_to_parquet(tmp_path / "u.jsonl", tmp_path / "old.parquet", layout=parquet.TEXT)
    capsys.readouterr()
    assert main(["trace", "convert", *[a.format(d=tmp_path) for a in args]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert not list(tmp_path.rglob(".*.partial"))


def test_an_event_arrow_cannot_hold_is_kept_as_raw_text_alone(tmp_path: Path) -> None:
    """A lone surrogate (a JSON escape no UTF-8 string holds) demotes its line only."""
    good = _generated(tmp_path).split(b"\n")[:3000]
    bad = good[1500].replace(b'"group_id":"', b'"group_id":"\\udc80', 1)
    assert columnar.decode_line(bad) is not None  # the JSON reader takes it
    lines = [*good[:1500], bad, *good[1501:]]
    dst = _loads_the_same(b"\n".join(lines) + b"\n", tmp_path)
    t = pq.read_table(dst, columns=["raw", "decoded"])
    assert [i for i, d in enumerate(t.column("decoded").to_pylist()) if not d] == [1500]
    assert t.column("raw").to_pylist()[1500] == bad and t.column("raw").null_count == len(lines) - 1


@pytest.mark.parametrize(("name", "raw"), _damaged(), ids=[n for n, _ in _damaged()])
def test_read_lines_of_both_forms_agree(name: str, raw: bytes, tmp_path: Path) -> None:
    """The line-by-line readers (the pipeline's by-path scan) give the same lines for a
    JSON Lines file and its columnar copy."""
    from groupspec.validate.load import read_lines

    src = tmp_path / "t.jsonl"
    src.write_bytes(raw)
    dst = _round_trip(raw, tmp_path)
    assert read_lines(dst) == read_lines(src)


def test_a_row_the_classes_refuse_is_an_unreadable_file_not_a_traceback(tmp_path: Path) -> None:
    """A hand-made columnar file whose struct holds a value the dataclass's own checks
    refuse (JoinGroup version 99) is bad input: the loader names the file."""
    import pyarrow as pa

    from groupspec.validate.problems import TraceInputError

    raw = _bytes(INJECTED[0])
    dst = _round_trip(raw, tmp_path)
    t = pq.read_table(dst)
    col = t.column("req_JoinGroup").combine_chunks()
    i = col.type.get_field_index("version")
    fields = [col.field(k) for k in range(col.type.num_fields)]
    fields[i] = pa.array([None if v is None else 99 for v in fields[i].to_pylist()], pa.int64())
    bad = pa.StructArray.from_arrays(fields, fields=list(col.type), mask=col.is_null())
    t = t.set_column(t.schema.get_field_index("req_JoinGroup"), t.schema.field("req_JoinGroup"), bad)
    out = tmp_path / "bad.parquet"
    pq.write_table(t, out)
    with pytest.raises(TraceInputError, match=r"bad\.parquet: not a readable Parquet trace: JoinGroup version 99"):
        load_path(out)


def test_a_file_claiming_the_layout_without_its_columns_is_named_not_read_as_empty(tmp_path: Path) -> None:
    """The layout's metadata on a file that lacks the layout's own columns (another writer):
    an unreadable file naming what is missing, from the loader and from the Spark job's
    reader of file bytes; before, a file without ``decoded`` read as a trace of no events."""
    import pyarrow as pa

    from groupspec.pipeline.validate_rows import validate_parquet_buffer
    from groupspec.validate.problems import TraceInputError

    path = tmp_path / "claims.parquet"
    table = pa.table({"line": pa.array([1, 2], pa.int64()), "text": pa.array(["{}", "{}"])})
    pq.write_table(table.replace_schema_metadata({columnar.LAYOUT_KEY: columnar.COLUMNAR_LAYOUT}), path)
    with pytest.raises(TraceInputError) as caught:
        load_path(path)
    message = str(caught.value)
    assert "says it has the columnar layout (groupspec.layout = columnar-v1) but lacks its columns ended, raw, decoded, kind" in message
    assert message.endswith("its columns: line, text")
    rows = list(validate_parquet_buffer(pa.py_buffer(path.read_bytes()), str(path)))
    assert [r["reason"] for r in rows if r["role"] == "problem"] == [message]


def _without(arr: Any, drop: str) -> Any:
    """``arr`` (a struct array, or a list of structs) without its field ``drop``, at any depth."""
    import pyarrow as pa

    if pa.types.is_list(arr.type):
        return pa.ListArray.from_arrays(arr.offsets, _without(arr.flatten(), drop), mask=arr.is_null())
    if not pa.types.is_struct(arr.type):
        return arr
    kept = [(f.name, _without(arr.field(i), drop)) for i, f in enumerate(arr.type) if f.name != drop]
    return pa.StructArray.from_arrays([a for _, a in kept], names=[n for n, _ in kept], mask=arr.is_null())


def _written_before(new: Path, drops: tuple[tuple[str, str], ...], path: Path) -> Path:
    """Columnar file ``new`` as a writer before a field was added wrote it: each (struct
    column, field) of ``drops`` left out of that column's structs; written to ``path``."""
    import pyarrow as pa

    table = old = pq.read_table(new)
    for name, drop in drops:
        i = old.schema.get_field_index(name)
        col = pa.chunked_array([_without(c, drop) for c in old.column(i).chunks])
        old = old.set_column(i, pa.field(name, col.type), col)
    pq.write_table(old.replace_schema_metadata(table.schema.metadata), path)
    return path


def test_a_file_written_before_an_optional_field_was_added_still_reads(tmp_path: Path) -> None:
    """ListGroups v5's ``types_filter`` and ``group_type`` joined the v1.2 vocabulary after
    columnar files were written: a struct column without them (as such a file has it) reads
    them as None (not recorded), every other field as written."""
    src = ROOT / "examples" / "validator-false-positives" / "delete-groups-naming-a-group-twice-kafka-4.1.2.jsonl"
    new = _round_trip(src.read_bytes(), tmp_path)
    path = _written_before(new, (("req_ListGroups", "types_filter"), ("resp_ListGroups", "group_type")),
                           tmp_path / "old.parquet")
    assert pq.read_schema(path).field("req_ListGroups").type.num_fields == 1
    _same_load(load_path(path), load_path(new))
    listed = [x.event for x in load_path(path).events if isinstance(x.event, WireExchange) and x.event.api == "ListGroups"]
    assert len(listed) == 3
    assert all(e.request.types_filter is None for e in listed)  # type: ignore[union-attr]


def test_a_file_written_before_the_leader_epochs_reads_them_as_none(tmp_path: Path) -> None:
    """The offsets' committed leader epochs joined the vocabulary later still, with a
    default (-1, none): a columnar file whose OffsetCommit and OffsetFetch structs lack
    them reads that default, as a JSON Lines line without them does."""
    new = _round_trip((ROOT / "examples" / "conformance" / "wire" / "offset-leader-epochs-kafka-4.1.2.jsonl")
                      .read_bytes(), tmp_path)
    path = _written_before(new, (("req_OffsetCommit", "committed_leader_epoch"),
                                 ("resp_OffsetFetch", "committed_leader_epoch")), tmp_path / "old.parquet")
    events = [x.event for x in load_path(path).events if isinstance(x.event, WireExchange)]
    commits = [p for e in events if isinstance(e.request, OffsetCommitRequest) for p in e.request.partitions]
    fetched = [p for e in events if isinstance(e.response, OffsetFetchResponse) for p in e.response.partitions]
    assert commits and fetched
    assert {p.committed_leader_epoch for p in commits + fetched} == {-1}
    # and the file as written keeps them
    kept = [x.event for x in load_path(new).events if isinstance(x.event, WireExchange)]
    assert {p.committed_leader_epoch for e in kept if isinstance(e.request, OffsetCommitRequest)
            for p in e.request.partitions} == {5, -1, 7}


def test_a_file_holds_the_struct_columns_its_rows_fill_and_one_with_all_reads_the_same(tmp_path: Path) -> None:
    """A writer leaves out the struct columns no row fills (the module's docstring): a
    classic trace has no KIP-848 request column, but one for each API, kind and record type
    it holds, with every flat column. A file holding every column of the layout (as those
    written before 2026-11-29 do) loads the same events, and the strings of either are read
    as dictionaries (each distinct value decoded once)."""
    import pyarrow as pa

    raw = _bytes(INJECTED[0])
    new = _round_trip(raw, tmp_path)
    names = set(pq.read_schema(new).names)
    loaded = load_path(new)
    apis = {x.event.api for x in loaded.events if isinstance(x.event, WireExchange)}
    records = {type(x.event.record).__name__ for x in loaded.events if isinstance(x.event, RecordEvent)}
    kinds = {KINDS[type(x.event)] for x in loaded.events if not isinstance(x.event, WireExchange)}
    assert {"header", "record"} <= kinds
    lay = columnar.layout()
    assert names - lay.optional == {f.name for f in lay.schema} - lay.optional
    assert names & lay.optional == ({f"req_{a}" for a in apis} | {f"resp_{a}" for a in apis}
                                    | {f"rec_{r}" for r in records} | {f"ev_{k}" for k in kinds})
    assert "req_ConsumerGroupHeartbeat" not in names and "req_JoinGroup" in names
    # the same rows with every column, as an older writer wrote them
    table = pq.read_table(new)
    full = pa.Table.from_arrays(
        [table.column(f.name) if f.name in names else pa.nulls(table.num_rows, f.type) for f in lay.schema],
        schema=lay.schema)
    old = tmp_path / "every-column.parquet"
    pq.write_table(full, old)
    assert set(pq.read_schema(old).names) == {f.name for f in lay.schema}
    _same_load(load_path(old), loaded)
    _same_load(load_bytes(raw, "t"), loaded)
    for path in (new, old):
        arrow = columnar.open_file(path).schema_arrow
        assert pa.types.is_dictionary(arrow.field("group_id").type)
        assert pa.types.is_dictionary(arrow.field("req_JoinGroup").type.field("member_id").type)


@pytest.mark.parametrize("column", ["req_Heartbeat", "rec_HeartbeatScheduled", "ev_record", "ev_header"])
@pytest.mark.parametrize("how", ["absent", "null"])
def test_a_decoded_row_whose_struct_column_is_missing_is_named_not_read_as_defaults(
        column: str, how: str, tmp_path: Path) -> None:
    """A struct column is left out only when no row fills it: a file whose decoded rows
    need a column it lacks (or hold null there) was not made by the layout's writers. The
    loader names the first such line and the column; before, a Heartbeat's request read as
    one of no member and the validator reported the broker's answers as violations."""
    import pyarrow as pa

    from groupspec.validate.problems import TraceInputError

    new = _round_trip(_bytes(INJECTED[0]), tmp_path)
    t = pq.read_table(new)
    i = t.schema.get_field_index(column)
    t = (t.remove_column(i) if how == "absent"
         else t.set_column(i, t.schema.field(column), pa.nulls(t.num_rows, t.schema.field(column).type)))
    out = tmp_path / "bad.parquet"
    pq.write_table(t, out)
    kind = t.column("kind").to_pylist()
    rows = {"req_Heartbeat": [k for k, a in enumerate(t.column("api").to_pylist()) if a == "Heartbeat"],
            "rec_HeartbeatScheduled": [k for k, r in enumerate(t.column("record_type").to_pylist())
                                       if r == "HeartbeatScheduled"],
            "ev_record": [k for k, x in enumerate(kind) if x == "record"],
            "ev_header": [k for k, x in enumerate(kind) if x == "header"]}[column]
    line = t.column("line")[rows[0]].as_py()
    where = "the file has no such column" if how == "absent" else "it is null"
    with pytest.raises(TraceInputError, match=rf"bad\.parquet: not a readable Parquet trace: line {line}: "
                                              rf"an? .* without its {column} \({where}\)"):
        load_path(out)
