"""Bad input: every kind of damage is a named problem with its line number, the rest of the
file is still validated, and no corruption makes the validator raise (Hypothesis fuzz)."""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.cli.main import main
from groupspec.cli.simulate import bundled_scenarios
from groupspec.sim.render import write_trace
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import apply_overrides, load_scenario_text
from groupspec.validate import (
    CONFORMING,
    INCONCLUSIVE,
    PROBLEM_KINDS,
    VIOLATION,
    FileReport,
    TraceInputError,
    validate_bytes,
    validate_path,
)


@functools.cache
def short_trace() -> bytes:
    """Forty simulated seconds of the eager scenario: two rebalances, commits, heartbeats."""
    data = apply_overrides(json.loads(bundled_scenarios()["eager"]), until_ms=40_000)
    out = io.StringIO()
    write_trace(simulate(load_scenario_text(json.dumps(data), "eager.json")), out)
    return out.getvalue().encode()


def lines() -> list[bytes]:
    return short_trace().split(b"\n")


def _kinds(r: FileReport) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for p in r.problems:
        out.setdefault(p.kind, []).append(p.line)
    return out


def test_malformed_json_line_is_named_with_its_line_and_the_group_is_inconclusive() -> None:
    ls = lines()
    ls[10] = ls[10][: len(ls[10]) // 2] + b"}}"
    r = validate_bytes(b"\n".join(ls), "t.jsonl")
    assert _kinds(r)["malformed_json"] == [11]
    [g] = r.groups
    assert g.verdict == INCONCLUSIVE
    assert any(m.line == 11 for m in g.missing)


def test_unknown_api_key() -> None:
    ls = lines()
    i = next(i for i, line in enumerate(ls) if b'"api":"Heartbeat"' in line)
    ls[i] = ls[i].replace(b'"api":"Heartbeat","api_key":12', b'"api":"Produce","api_key":0')
    r = validate_bytes(b"\n".join(ls))
    assert _kinds(r)["unknown_api"] == [i + 1]
    assert "Produce" in next(p.message for p in r.problems if p.kind == "unknown_api")


def test_wrong_api_key_for_the_api_name() -> None:
    ls = lines()
    i = next(i for i, line in enumerate(ls) if b'"api":"Heartbeat"' in line)
    ls[i] = ls[i].replace(b'"api_key":12', b'"api_key":99')
    assert _kinds(validate_bytes(b"\n".join(ls)))["unknown_api"] == [i + 1]


def test_truncated_file() -> None:
    raw = short_trace()
    cut = raw[: len(raw) - 40]
    r = validate_bytes(cut)
    n = cut.count(b"\n") + 1
    assert _kinds(r)["truncated"] == [n]
    assert r.groups and r.groups[0].verdict == INCONCLUSIVE


def test_out_of_order_and_duplicated_events() -> None:
    ls = lines()
    ls[20], ls[21] = ls[21], ls[20]
    ls.insert(30, ls[29])
    r = validate_bytes(b"\n".join(ls))
    kinds = _kinds(r)
    assert 22 in kinds["out_of_order"]
    assert kinds["duplicate_event"] == [31]
    # reordered lines in the file do not change the replay (it orders by time intervals)
    assert r.groups[0].verdict == CONFORMING


def test_dropped_line_is_reported_and_makes_the_group_inconclusive() -> None:
    ls = lines()
    del ls[40]
    r = validate_bytes(b"\n".join(ls))
    assert _kinds(r)["missing_events"] == [41]
    assert r.groups[0].verdict in (INCONCLUSIVE, CONFORMING)
    assert r.worst() == INCONCLUSIVE


def test_missing_response_is_named_and_replayed_unchecked() -> None:
    objs = [json.loads(x) for x in lines() if x.strip()]
    i = max(i for i, o in enumerate(objs) if o["kind"] == "exchange" and o["api"] == "Heartbeat")
    objs[i]["response"] = None
    objs[i]["received_ms"] = None
    raw = "".join(json.dumps(o) + "\n" for o in objs).encode()
    r = validate_bytes(raw)
    assert _kinds(r)["missing_response"] == [i + 1]
    [g] = r.groups
    assert g.verdict == CONFORMING
    assert any(f"line {i + 1}" in n for n in g.notes)


def test_other_groups_still_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Two groups in one file: damage in one leaves the other's verdict intact.
    objs = [json.loads(x) for x in lines() if x.strip()]
    other = [json.loads(json.dumps(o).replace('"billing"', '"billing-2"')) for o in objs[1:]]
    seq = len(objs)
    for o in other:
        o["seq"] = seq
        seq += 1
    text = "".join(json.dumps(o) + "\n" for o in objs + other).splitlines(keepends=True)
    j = next(k for k in range(len(objs), len(text)) if '"billing-2"' in text[k] and '"JoinGroup"' in text[k])
    text[j] = text[j][:-40] + "\n"  # cut short, but the group id is still legible
    r = validate_bytes("".join(text).encode())
    verdicts = {g.group_id: g.verdict for g in r.groups}
    assert verdicts["billing"] == CONFORMING
    assert verdicts["billing-2"] == INCONCLUSIVE
    path = tmp_path / "two.jsonl"
    path.write_text("".join(text))
    assert main(["validate", str(path)]) == 2
    assert f"malformed_json at line {j + 1}" in capsys.readouterr().out


def test_unreadable_path_raises_the_named_error(tmp_path: Path) -> None:
    with pytest.raises(TraceInputError):
        validate_path(tmp_path)
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(TraceInputError):
        validate_path(bad)


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("flip"), st.integers(0, 10**9), st.integers(0, 255)),
        st.tuples(st.just("drop"), st.integers(0, 10**9), st.just(0)),
        st.tuples(st.just("dup"), st.integers(0, 10**9), st.just(0)),
        st.tuples(st.just("swap"), st.integers(0, 10**9), st.just(0)),
        st.tuples(st.just("truncate"), st.integers(0, 10**9), st.just(0)),
    ),
    min_size=1,
    max_size=6,
)


def _corrupt(raw: bytes, ops: list[tuple[str, int, int]]) -> bytes:
    for op, where, value in ops:
        if not raw:
            break
        if op == "flip":
            b = bytearray(raw)
            b[where % len(b)] = value
            raw = bytes(b)
            continue
        if op == "truncate":
            raw = raw[: where % len(raw)]
            continue
        ls = raw.split(b"\n")
        k = where % len(ls)
        if op == "drop":
            del ls[k]
        elif op == "dup":
            ls.insert(k, ls[k])
        elif op == "swap" and k + 1 < len(ls):
            ls[k], ls[k + 1] = ls[k + 1], ls[k]
        raw = b"\n".join(ls)
    return raw


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ops)
def test_fuzz_corrupted_traces_never_raise(ops: list[tuple[str, int, int]]) -> None:
    raw = _corrupt(short_trace(), ops)
    r = validate_bytes(raw, "fuzz.jsonl")
    for p in r.problems:
        assert p.kind in PROBLEM_KINDS and p.line >= 1
    for g in r.groups:
        assert g.verdict in (CONFORMING, VIOLATION, INCONCLUSIVE)
        if g.verdict == INCONCLUSIVE:
            assert g.missing
        if g.verdict == VIOLATION:
            assert g.violation is not None and g.violation.kafka_source


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_arbitrary_bytes_never_raise(raw: bytes) -> None:
    r = validate_bytes(raw, "noise")
    assert all(p.kind in PROBLEM_KINDS for p in r.problems)


#: a real recording (Apache Kafka 4.1.2, three kafka-python members), with the recorder's
#: field shapes (base64 metadata, epoch times, broker-chosen ids) rather than the simulator's
RECORDED = (Path(__file__).resolve().parents[1] / "examples" / "validator-false-positives"
            / "kafka-leader-reelection.jsonl")

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats(allow_nan=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _set_path(obj: object, path: list[int], value: object) -> None:
    """Replace one value somewhere inside ``obj``, the path's numbers choosing at each level."""
    for k, step in enumerate(path):
        if isinstance(obj, dict) and obj:
            key = sorted(obj)[step % len(obj)]
            if k == len(path) - 1 or not isinstance(obj[key], (dict, list)) or not obj[key]:
                obj[key] = value
                return
            obj = obj[key]
        elif isinstance(obj, list) and obj:
            i = step % len(obj)
            if k == len(path) - 1 or not isinstance(obj[i], (dict, list)) or not obj[i]:
                obj[i] = value
                return
            obj = obj[i]
        else:
            return


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10**6), st.lists(st.integers(0, 50), min_size=1, max_size=5),
                          _json_values), min_size=1, max_size=4),
       _ops)
def test_fuzz_recorded_trace_fields_never_raise(
    edits: list[tuple[int, list[int], object]], ops: list[tuple[str, int, int]],
) -> None:
    """Wrong types and values inside the events of a real recording, then line damage:
    every problem is named, every verdict is one of the three, nothing raises."""
    events = [json.loads(line) for line in RECORDED.read_text(encoding="utf-8").splitlines()]
    for where, path, value in edits:
        _set_path(events[where % len(events)], path, value)
    raw = _corrupt("".join(json.dumps(e) + "\n" for e in events).encode(), ops)
    r = validate_bytes(raw, "recorded.jsonl")
    for p in r.problems:
        assert p.kind in PROBLEM_KINDS and p.line >= 1
    for g in r.groups:
        assert g.verdict in (CONFORMING, VIOLATION, INCONCLUSIVE)
        if g.verdict == INCONCLUSIVE:
            assert g.missing or g.divergence is not None
        if g.verdict == VIOLATION:
            assert g.violation is not None and g.violation.kafka_source
