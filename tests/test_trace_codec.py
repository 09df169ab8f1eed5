"""The trace codec encodes by type: each type's encoder is chosen once and reused, and it
gives what the encoding rules applied value by value give, on every kind of event."""

from __future__ import annotations

import base64
import dataclasses
import json
from enum import Enum
from typing import Any

import pytest

from groupspec.protocol import messages as m
from groupspec.protocol import records as r
from groupspec.protocol.added_fields import OMITTED_AT_DEFAULT
from groupspec.protocol.topic_id import TopicId
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import parse_scenario
from groupspec.trace.codec import to_json
from groupspec.trace.events import KINDS, Event, WireExchange
from groupspec.trace.jsonl import event_to_json


def _to_json_by_value(value: Any) -> Any:
    """The codec's encoding rules applied to each value in turn (what trace/codec.to_json
    did before it chose an encoder once per type)."""
    if isinstance(value, TopicId):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Enum):
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # a field added to the vocabulary later is left out at its default
        return {f.name: _to_json_by_value(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not (f.metadata.get(OMITTED_AT_DEFAULT) and type(getattr(value, f.name)) is type(f.default)
                        and getattr(value, f.name) == f.default)}
    if isinstance(value, tuple | list):
        return [_to_json_by_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_json_by_value(v) for k, v in value.items()}
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def test_the_codecs_json_is_its_rules_applied_value_by_value() -> None:
    # the codec (which the generator writes its lines with) chooses each type's encoder
    # once: every kind of event, classic and KIP-848 (topic ids, metadata events), encodes
    # as the rules applied to each value give
    from groupspec.cli.simulate import bundled_scenarios
    from groupspec.sim.scenario import apply_overrides
    from groupspec.trace.events import Header

    events: list[Event] = [Header(source="s", cluster="c", note="n")]
    for protocol in ("classic", "consumer"):
        data = apply_overrides(json.loads(bundled_scenarios()["failover"]), group_protocol=protocol)
        events += simulate(parse_scenario(data, "failover")).trace
    assert len({type(e) for e in events}) >= 6
    for e in events:
        expected: dict[str, Any] = {"kind": KINDS[type(e)]}
        for f in dataclasses.fields(e):
            value = getattr(e, f.name)
            expected[f.name] = ({"type": type(value).__name__, **_to_json_by_value(value)}
                                if f.name == "record" else _to_json_by_value(value))
        assert event_to_json(e) == expected
        assert json.dumps(event_to_json(e)) == json.dumps(expected)
    for bad in (object(), Header, {1, 2}):
        with pytest.raises(TypeError, match="cannot encode"):
            to_json(bad)
        with pytest.raises(TypeError, match="cannot encode"):
            _to_json_by_value(bad)


def test_fields_added_later_are_written_only_away_from_their_default() -> None:
    """protocol/added_fields.py: an OffsetCommit line as written before the leader epochs
    and retention times existed is still the line written for its event (its canonical
    line), and those fields are written, and read back, when they are set; a value of
    another type than the default's (a float -1.0) is written, not taken for it."""
    from pathlib import Path

    from groupspec.pipeline.generate import _event_line
    from groupspec.trace.jsonl import event_from_json
    # a real client's commits, recorded before the fields existed (2026-11-24)
    recording = (Path(__file__).resolve().parent.parent / "examples" / "conformance" / "kafka-4.1.2"
                 / "cooperative-sticky--kafka-python.jsonl")
    old = [x for x in recording.read_text(encoding="utf-8").splitlines() if '"api":"OffsetCommit"' in x]
    assert old and not any("committed_leader_epoch" in x or "retention_time_ms" in x for x in old)
    for line in old:
        event = event_from_json(json.loads(line))
        assert json.dumps(event_to_json(event), separators=(",", ":"), ensure_ascii=False) == line
        assert _event_line(event) == line
    assert isinstance(event, WireExchange)
    set_ = dataclasses.replace(event, request=m.OffsetCommitRequest(
        group_id="g", version=2, retention_time_ms=1234,
        partitions=(m.OffsetCommitPartition("t", 0, 5, "", 9),)))
    text = event_to_json(set_)
    assert text["request"]["retention_time_ms"] == 1234
    assert text["request"]["partitions"][0]["committed_leader_epoch"] == 9
    assert event_from_json(json.loads(json.dumps(text))) == set_
    assert _event_line(set_) == json.dumps(text, separators=(",", ":"), ensure_ascii=False)
    assert to_json(r.OffsetCommitted("g", "t", 0, 5, "", 0, -1, "")) == {
        "group_id": "g", "topic": "t", "partition": 0, "committed_offset": 5, "metadata": "",
        "commit_timestamp_ms": 0, "generation_id": -1, "member_id": ""}
    assert to_json(r.OffsetCommitted("g", "t", 0, 5, "", 0, -1, "", -1, -1))["expire_timestamp_ms"] == -1
    assert to_json(r.OffsetCommitted("g", "t", 0, 5, "", 0, -1, "", -1.0))["leader_epoch"] == -1.0  # type: ignore[arg-type]
