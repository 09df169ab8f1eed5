"""The trace codec encodes by type: each type's encoder is chosen once and reused, and it
gives what the encoding rules applied value by value give, on every kind of event."""

from __future__ import annotations

import base64
import dataclasses
import json
from enum import Enum
from typing import Any

import pytest

from groupspec.protocol.topic_id import TopicId
from groupspec.sim.runner import simulate
from groupspec.sim.scenario import parse_scenario
from groupspec.trace.codec import to_json
from groupspec.trace.events import KINDS, Event
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
        return {f.name: _to_json_by_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
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
