"""A request the broker closed its connection on without answering (rule AnsweredBeforeClose),
on a recording the wire fuzzer made against Tansu (examples/conformance/tansu-wire-fuzz-consumer-9800.jsonl):
each of the four clients' first ConsumerGroupHeartbeat (lines 5, 7, 9, 11) made Tansu close
the connection (the recorder's ``closed`` events, lines 4, 6, 8, 10). Tansu does not offer
ConsumerGroupHeartbeat (its ApiVersions answer leaves out API key 68, examples/conformance/
tansu-kip848-crash-java.jsonl), and that recording has no ApiVersions exchange: as recorded,
nothing is named (Kafka too closes a connection on a request it does not support). The tests
add the ApiVersions answer of a broker that does offer it, which makes the closes a broker
that crashed on requests it said it takes. Kafka answers every request it can parse, and
closes a connection otherwise only when it is idle or the broker shuts down (then every
connection, idle ones too); those cases are not judged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groupspec.conformance.runner import validation_config
from groupspec.validate.validator import validate_bytes

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "examples" / "conformance" / "tansu-wire-fuzz-consumer-9800.jsonl"

Edit = Callable[[list[dict[str, Any]]], None]


def _offers(events: list[dict[str, Any]], versions: tuple[int, int] = (0, 1)) -> None:
    """An ApiVersions answer on connection c1, before its heartbeat, offering
    ConsumerGroupHeartbeat at ``versions``."""
    beat = events[4]
    assert beat["api"] == "ConsumerGroupHeartbeat" and beat["connection"] == "c1" and beat["api_version"] == 0
    _add(events, {"kind": "api_versions", "connection": "c1", "client_id": "wf-c0", "api_version": 3,
                  "correlation_id": 0, "sent_ms": beat["sent_ms"] - 5, "received_ms": beat["sent_ms"] - 4,
                  "error_code": 0, "api_keys": [{"api_key": 68, "min_version": versions[0],
                                                 "max_version": versions[1]}]})


def _named(edit: Edit | None = None, offered: tuple[int, int] | None = (0, 1)) -> list[tuple[int, str]]:
    events = [json.loads(x) for x in RECORDING.read_text(encoding="utf-8").splitlines()]
    if offered is not None:
        _offers(events, offered)
    if edit is not None:
        edit(events)
    raw = "".join(json.dumps(e) + "\n" for e in events).encode()
    report = validate_bytes(raw, RECORDING.name, validation_config("tansu", "consumer"))
    return sorted((d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker")


def _add(events: list[dict[str, Any]], event: dict[str, Any]) -> None:
    events.append({**event, "seq": max(e["seq"] for e in events) + 1})


def test_requests_the_broker_closed_the_connection_on_are_named() -> None:
    """The other connections asked no ApiVersions: the trace's first answer stands for the
    broker's (one recorder, one upstream broker)."""
    assert _named() == [(5, "AnsweredBeforeClose"), (7, "AnsweredBeforeClose"),
                        (9, "AnsweredBeforeClose"), (11, "AnsweredBeforeClose")]


def test_a_broker_closing_an_idle_connection_too_is_shutting_down() -> None:
    """An idle connection closed by the broker 0.6 s before the first two closes: those
    are taken as a shutdown, the two later ones (1.2 and 1.8 s after it) are still named."""
    def edit(events: list[dict[str, Any]]) -> None:
        first = next(e for e in events if e["kind"] == "closed")
        _add(events, {"kind": "closed", "connection": "c9", "at_ms": first["at_ms"] - 600, "pending": 0})
    assert _named(edit) == [(9, "AnsweredBeforeClose"), (11, "AnsweredBeforeClose")]


def test_a_coordinator_error_after_the_close_is_a_restart() -> None:
    """A broker that answers NOT_COORDINATOR after closing the connections has moved or
    restarted its coordinator: the closes are not judged."""
    def edit(events: list[dict[str, Any]]) -> None:
        last = [e for e in events if e["kind"] == "closed"][-1]
        beat = next(e for e in events if e.get("api") == "ConsumerGroupHeartbeat")
        _add(events, {**beat, "connection": "c5", "correlation_id": 1, "sent_ms": last["at_ms"] + 100,
                      "received_ms": last["at_ms"] + 101,
                      "response": {"error": "NOT_COORDINATOR", "error_message": None, "member_id": None,
                                   "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}})
    assert [rule for _, rule in _named(edit)].count("AnsweredBeforeClose") == 0


def test_a_request_at_a_version_the_broker_did_not_offer_is_the_client_s_fault() -> None:
    """The broker's ApiVersions answer offers ConsumerGroupHeartbeat v1 only: its close on
    the v0 heartbeat (line 5) is not judged, those on the v1 heartbeats are."""
    assert _named(offered=(1, 1)) == [(7, "AnsweredBeforeClose"), (9, "AnsweredBeforeClose"),
                                      (11, "AnsweredBeforeClose")]


def test_what_the_broker_offers_unknown_nothing_is_judged() -> None:
    """The recording as made: no ApiVersions answer, so a close may be the broker refusing a
    request it does not support, as Kafka does (and Tansu does not offer the API)."""
    assert _named(offered=None) == []


def test_a_trace_without_closes_judges_a_missing_response_as_before() -> None:
    """Recorded before the recorder wrote ``closed`` events, or the client closed first:
    an unanswered request is a gap, not a finding."""
    def edit(events: list[dict[str, Any]]) -> None:
        events[:] = [e for e in events if e["kind"] != "closed"]
    assert _named(edit) == []
