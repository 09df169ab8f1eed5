"""Fuzzing the inputs of every command with Hypothesis (issue 21): malformed trace lines,
scenario and assign files, command lines and wire frames. For each: the exit status is 0, 1
or 2, and 1 only with a finding printed; no traceback; bounded time (a deadline per
example) and memory (tracemalloc peak); and nothing valid lost (every valid line of a mixed
trace is still judged).

Examples per test: a few dozen in CI (the whole file within about a minute);
``GROUPSPEC_HYPOTHESIS_PROFILE=nightly`` (ci/nightly) runs twenty times as many.
"""

from __future__ import annotations

import functools
import io
import json
import math
import os
import struct
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorResponse

from groupspec.cli.main import build_parser, main
from groupspec.cli.simulate import bundled_scenarios
from groupspec.recorder.proxy import Recorder, _Connection
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import apply_overrides, load_scenario_text
from groupspec.trace.codec import CodecError
from groupspec.trace.jsonl import (
    TraceLineError,
    TraceWriter,
    event_from_json,
    parse_line,
    read_events,
)
from groupspec.validate import validate_bytes
from groupspec.validate.load import load_bytes

T = TypeVar("T")
NIGHTLY = os.environ.get("GROUPSPEC_HYPOTHESIS_PROFILE") == "nightly"
#: the memory one example may take (tracemalloc peak), and the time (Hypothesis deadline)
MAX_BYTES = 256 * 1024 * 1024
DEADLINE_MS = 20_000


def fuzz(examples: int) -> Callable[[T], T]:
    return settings(
        max_examples=examples * (20 if NIGHTLY else 1),
        deadline=DEADLINE_MS,
        derandomize=not NIGHTLY,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                               HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    )


def bounded(fn: Callable[[], T]) -> T:
    """Run ``fn`` and check the memory it took."""
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MAX_BYTES, f"{peak:,} bytes"
    return result


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code in (0, 1, 2), (argv, code, err)
    if code == 2:
        assert "error: " in err or "inconclusive" in out or "bad input" in out or "unreadable" in out, (argv, out, err)
    return code, out, err


# ------------------------------------------------------------------ JSON values
#: integers at the edges: of Kafka's int16/int32/int64, of Python's digit limit, and small
EDGE_INTS = st.sampled_from([0, -1, 1, 2**15, 2**31 - 1, 2**31, -(2**31) - 1, 2**63 - 1, 2**63, -(2**63) - 1,
                             2**64, 10**30, -(10**30)])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 50), EDGE_INTS,
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["", "\x00", "\ud800", "\U0001F600", "NONE", "JoinGroup", "c1"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


def replace_at(doc: Any, path: list[int], value: Any) -> Any:
    """``doc`` with the node a path of choices leads to replaced by ``value``."""
    if not path or not isinstance(doc, dict | list) or not doc:
        return value
    keys = list(doc) if isinstance(doc, dict) else list(range(len(doc)))
    key = keys[path[0] % len(keys)]
    out = dict(doc) if isinstance(doc, dict) else list(doc)
    out[key] = replace_at(doc[key], path[1:], value)
    return out


PATHS = st.lists(st.integers(0, 1000), min_size=0, max_size=5)


def dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=True)


# ------------------------------------------------------------------ trace lines
@functools.cache
def valid_trace() -> bytes:
    """Forty simulated seconds of the eager scenario (as tests/test_bad_inputs.py)."""
    data = apply_overrides(json.loads(bundled_scenarios()["eager"]), until_ms=40_000)
    out = io.StringIO()
    write_trace(simulate(load_scenario_text(json.dumps(data), "eager.json")), out)
    return out.getvalue().encode()


@functools.cache
def lines() -> list[bytes]:
    return [x for x in valid_trace().split(b"\n") if x]


def decodes(line: bytes) -> bool:
    try:
        event_from_json(parse_line(line.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError, CodecError, TypeError):
        return False
    return True


@st.composite
def bad_line(draw: st.DrawFn) -> bytes:
    base = draw(st.sampled_from(lines()))
    kind = draw(st.sampled_from(["bytes", "mutate", "cut", "deep", "json", "field"]))
    if kind == "bytes":
        line = draw(st.binary(max_size=120)).replace(b"\n", b" ")
    elif kind == "mutate":
        line = dumps(replace_at(json.loads(base), draw(PATHS), draw(JSON))).encode()
    elif kind == "cut":
        line = base[: draw(st.integers(1, len(base) - 1))]
    elif kind == "deep":
        depth = draw(st.sampled_from([990, 1000, 5_000, 100_000]))
        open_, close = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        line = open_ * depth + b"1" + close * depth
    elif kind == "json":
        line = dumps(draw(JSON)).encode()
    else:  # a valid line with one field set to an edge value
        obj = json.loads(base)
        key = draw(st.sampled_from(sorted(obj)))
        obj[key] = draw(st.one_of(EDGE_INTS, st.sampled_from([math.nan, math.inf, -math.inf, "x", None, [], {}])))
        line = dumps(obj).encode()
    line = line.replace(b"\n", b" ").replace(b"\r", b" ")
    assume(line.strip() and not decodes(line))
    return line


@fuzz(40)
@given(st.lists(st.tuples(st.integers(0, 10_000), bad_line()), min_size=1, max_size=4))
def test_bad_trace_lines_never_lose_a_valid_line(inserts: list[tuple[int, bytes]]) -> None:
    valid = lines()
    out = list(valid)
    for pos, line in sorted(inserts, key=lambda x: -x[0]):
        out.insert(pos % (len(out) + 1), line)
    raw = b"\n".join(out) + b"\n"
    bad_numbers = {i + 1 for i, line in enumerate(out) if not decodes(line)}
    loaded = bounded(lambda: load_bytes(raw, "fuzz.jsonl"))
    assert {e.line for e in loaded.events} == set(range(1, len(out) + 1)) - bad_numbers
    assert bad_numbers <= {p.line for p in loaded.problems}
    report = bounded(lambda: validate_bytes(raw, "fuzz.jsonl"))
    reference = validate_bytes(valid_trace(), "valid")
    assert [(g.group_id, g.exchanges, g.records) for g in report.groups] == [
        (g.group_id, g.exchanges, g.records) for g in reference.groups
    ]
    assert all(g.verdict != "violation" for g in report.groups)


@fuzz(10)
@given(bad=bad_line())
def test_validate_command_on_a_bad_line(bad: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ls = lines()
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join([*ls[:30], bad, *ls[30:]]) + b"\n")
    code, out, _ = run_cli(["validate", str(path)], capsys)
    assert code == 2 and "line 31" in out


# ------------------------------------------------------------------ scenario files
@fuzz(30)
@given(path=PATHS, value=JSON, name=st.sampled_from(["eager", "default"]))
def test_scenario_files(path: list[int], value: Any, name: str, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    doc = replace_at(json.loads(bundled_scenarios()[name]), path, value)
    f = tmp_path / "s.json"
    f.write_text(dumps(doc))
    # --until keeps the work of a valid mutation small; the scenario's own until_ms is
    # still checked by the parser
    code, out, err = bounded(lambda: run_cli(["simulate", str(f), "--until", "3000"], capsys))
    if code == 1:
        assert "FAIL" in out or "VIOLATED" in out, out  # a finding, and it says so
    if code == 2:
        assert (err.startswith("error: ") and "s.json" in err) or "--" in err, err


# ------------------------------------------------------------------ assign files
def assign_doc() -> st.SearchStrategy[Any]:
    member = st.fixed_dictionaries(
        {"member_id": st.one_of(st.text(max_size=6), JSON), "topics": st.one_of(st.lists(st.sampled_from(["a", "b"]), max_size=2), JSON)},
        optional={"owned": st.one_of(st.dictionaries(st.sampled_from(["a", "b"]), st.lists(st.integers(-2, 8), max_size=3)), JSON),
                  "generation": st.one_of(st.integers(-2, 5), EDGE_INTS, JSON),
                  "group_instance_id": st.one_of(st.none(), st.text(max_size=4), JSON),
                  "extra": JSON},
    )
    return st.one_of(
        JSON,
        st.fixed_dictionaries({"topics": st.dictionaries(st.sampled_from(["a", "b"]), st.one_of(st.integers(-1, 12), EDGE_INTS), max_size=2),
                               "members": st.lists(member, max_size=4)}),
    )


@fuzz(40)
@given(doc=assign_doc(), assignor=st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky"]),
       previous=st.one_of(st.none(), JSON))
def test_assign_files(doc: Any, assignor: str, previous: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "in.json"
    f.write_text(dumps(doc))
    argv = ["assign", "--assignor", assignor, str(f)]
    if previous is not None:
        (tmp_path / "prev.json").write_text(dumps(previous))
        argv += ["--previous", str(tmp_path / "prev.json")]
    code, out, _ = bounded(lambda: run_cli(argv, capsys))
    assert code in (0, 2)
    if code == 0:
        assert "assignment" in json.loads(out)


# ------------------------------------------------------------------ command lines
WORDS = st.sampled_from([
    "-1", "0", "1", "3", "99999", "1e3", "nan", "inf", "10000000000000000000000000000000", "", "x", "-",
    "/", "/nonexistent/x", "127.0.0.1:99999", "local[0]", "default", "eager", "--help", "--", "mutants",
])
OPTIONS = st.sampled_from([
    "--until", "--members", "--seed", "--partitions", "--workers", "--timeout", "--itf", "--trace",
    "--out", "--master", "--seeds", "--clusters", "--events", "--slack-ms", "--initial-delay-ms",
    "--listen", "--upstream", "--port", "--report", "--model", "--assignor", "--fault", "--traces",
    "--mutants", "--no-exhaustive", "--json", "--format", "--previous", "--length", "--kind",
])
COMMANDS = st.sampled_from([
    ["simulate"], ["validate"], ["assign"], ["spec", "check"], ["crosscheck"], ["pipeline", "validate"],
    ["pipeline", "sweep"], ["pipeline", "check"], ["pipeline", "generate"], ["record"], ["broker", "start"],
    ["coordinator-partition"], ["states"], ["conformance"], ["check"], ["spec"], ["pipeline"], ["nope"], [],
])


@fuzz(150)
@given(command=COMMANDS, rest=st.lists(st.one_of(OPTIONS, WORDS), max_size=6))
def test_every_command_line_parses_or_is_refused(command: list[str], rest: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every command's parser, on random arguments: a namespace, or exit 0 (help) or 2 with
    the house message; never a traceback. (Running them would start TLC, Spark, brokers.)"""
    try:
        build_parser().parse_args([*command, *rest])
    except SystemExit as e:
        _, err = capsys.readouterr()
        assert e.code in (0, 2)
        assert "Traceback" not in err
        if e.code == 2:
            assert err.rstrip().splitlines()[-1].startswith("error: "), err


@fuzz(60)
@given(command=st.sampled_from([["coordinator-partition", "g"], ["states"], ["assign", "--assignor", "range"],
                                ["validate"], ["pipeline", "check"]]),
       rest=st.lists(st.one_of(OPTIONS, WORDS), max_size=5))
def test_cheap_commands_run_on_random_arguments(command: list[str], rest: list[str], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The commands that do no heavy work, run for real on random arguments (in a scratch
    directory, so that nothing is written elsewhere)."""
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        bounded(lambda: run_cli([*command, *rest], capsys))
    finally:
        os.chdir(here)
    assert not Path("/nonexistent").exists()


# ------------------------------------------------------------------ wire frames
def _request(msg: Any, correlation_id: int) -> bytes:
    msg.with_header(correlation_id=correlation_id, client_id="fuzz")
    return bytes(msg.encode(header=True, framed=False))


def _response(msg: Any, correlation_id: int) -> bytes:
    msg.with_header(correlation_id=correlation_id)
    return bytes(msg.encode(header=True, framed=False))


_PROTO = JoinGroupRequest.JoinGroupRequestProtocol
REQUESTS = [
    _request(JoinGroupRequest(group_id="g", session_timeout_ms=1000, rebalance_timeout_ms=1000, member_id="",
                              protocol_type="consumer", protocols=[_PROTO(name="range", metadata=b"\x00\x01")],
                              version=5), 1),
    _request(HeartbeatRequest(group_id="g", generation_id=1, member_id="m", version=4), 2),
    _request(SyncGroupRequest(group_id="g", generation_id=1, member_id="m", assignments=[], version=3), 3),
]
RESPONSES = [
    _response(JoinGroupResponse(throttle_time_ms=0, error_code=0, generation_id=1, protocol_name="range",
                                leader="m", member_id="m", members=[], version=5), 1),
    _response(HeartbeatResponse(throttle_time_ms=0, error_code=27, version=4), 2),
    _response(FindCoordinatorResponse(throttle_time_ms=0, error_code=0, error_message=None, node_id=1,
                                      host="localhost", port=9092, version=2), 3),
]


@st.composite
def frame(draw: st.DrawFn, pool: list[bytes]) -> bytes:
    base = bytearray(draw(st.sampled_from(pool)))
    kind = draw(st.sampled_from(["flip", "cut", "grow", "random", "as is"]))
    if kind == "flip" and base:
        for _ in range(draw(st.integers(1, 4))):
            base[draw(st.integers(0, len(base) - 1))] = draw(st.integers(0, 255))
    elif kind == "cut":
        base = base[: draw(st.integers(0, len(base)))]
    elif kind == "grow":
        base += draw(st.binary(max_size=40))
    elif kind == "random":
        base = bytearray(draw(st.binary(max_size=80)))
    return bytes(base)


@fuzz(150)
@given(st.lists(st.tuples(st.booleans(), st.data()), min_size=1, max_size=6))
def test_wire_frames_become_events_or_decode_errors(steps: list[tuple[bool, st.DataObject]]) -> None:
    """Requests and responses, valid or damaged, through the recorder's frame handling: it
    never raises, and everything it writes is a valid trace line."""
    out = io.StringIO()
    recorder = Recorder(("127.0.0.1", 9092), TraceWriter(out, source="fuzz"))
    conn = _Connection(id="c1", client_host="/127.0.0.1")
    for is_request, data in steps:
        if is_request:
            recorder._on_request(conn, data.draw(frame(REQUESTS)), 1.0)
        else:
            recorder._on_response(conn, data.draw(frame(RESPONSES)), 2.0)
    parsed = list(read_events(out.getvalue().splitlines(keepends=True), "fuzz"))
    assert not [e for e in parsed if isinstance(e, TraceLineError)], [str(e) for e in parsed if isinstance(e, TraceLineError)]


def test_frame_sizes_at_the_edges() -> None:
    """Frames too short for a header, and header fields at their limits."""
    out = io.StringIO()
    recorder = Recorder(("127.0.0.1", 9092), TraceWriter(out, source="fuzz"))
    conn = _Connection(id="c1", client_host="")
    for raw in (b"", b"\x00", b"\x00\x0b", struct.pack(">hhi", 11, 5, 1), struct.pack(">hhih", 11, 5, 1, -1),
                struct.pack(">hhih", 11, 5, 1, 32767), struct.pack(">hhih", 11, 32767, -1, 0)):
        recorder._on_request(conn, raw, 0.0)
        recorder._on_response(conn, raw, 0.0)
    assert not [e for e in read_events(out.getvalue().splitlines(keepends=True)) if isinstance(e, TraceLineError)]
