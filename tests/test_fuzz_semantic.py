"""Semantic fuzzing of the commands that read traces: inputs that parse and pass the schema
but say odd things, as recordings of other brokers and of buggy clients do
(tests/semantic_fuzz.py makes them from the traces under examples/).

For each: exit status 0, 1 or 2 (1 only with a violation printed, 2 saying why); no
traceback out of ``groupspec validate``, ``groupspec trace convert`` (both ways, the bytes
come back) or the conformance report's reading of the trace; the Parquet form judged as the
JSON Lines one; no hang. The regression cases below are the crashes the long run found,
each made small.

Examples: a few dozen in CI (about a minute); ``GROUPSPEC_HYPOTHESIS_PROFILE=nightly``
runs twenty times as many. The long run: ``python -m tests.semantic_fuzz --seeds 0-4999``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.conformance.findings import findings_of
from groupspec.conformance.runner import wire_summary
from groupspec.trace.jsonl import TraceLineError, read_events
from groupspec.validate import validate_bytes
from tests.semantic_fuzz import check, mutate, run_cli, time_limit

NIGHTLY = os.environ.get("GROUPSPEC_HYPOTHESIS_PROFILE") == "nightly"
GROUP = "g"
HEADER = {"kind": "header", "format": "groupspec-trace", "version": 1, "source": "recorder", "seq": 0, "minor": 2}


def exchange(seq: int, api: str, key: int, request: dict[str, Any], response: dict[str, Any] | None,
             sent: float, connection: str = "c1", version: int = 7, **extra: Any) -> dict[str, Any]:
    return {"kind": "exchange", "seq": seq, "connection": connection, "client_id": "a", "api": api,
            "api_key": key, "api_version": version, "correlation_id": seq, "group_id": GROUP,
            "sent_ms": sent, "received_ms": None if response is None else sent + 2, "request": request,
            "response": response, **extra}


def join(seq: int, member_id: str, answer_id: str, error: str = "MEMBER_ID_REQUIRED", sent: float = 1000.0,
         connection: str = "c1", **response: Any) -> dict[str, Any]:
    request = {"group_id": GROUP, "member_id": member_id, "group_instance_id": None, "protocol_type": "consumer",
               "protocols": [{"name": "range", "metadata": "AAAAAAABAAF0AAAAAA=="}], "session_timeout_ms": 6000,
               "rebalance_timeout_ms": 10000, "client_id": "a", "client_host": "/127.0.0.1", "version": 7,
               "reason": None}
    body = {"error": error, "generation_id": -1, "protocol_type": None, "protocol_name": None, "leader": "",
            "skip_assignment": False, "member_id": answer_id, "members": [], **response}
    return exchange(seq, "JoinGroup", 11, request, body, sent, connection)


def trace(*events: dict[str, Any], header: dict[str, Any] | None = HEADER) -> bytes:
    lines = ([header] if header is not None else []) + list(events)
    return "".join(json.dumps(e) + "\n" for e in lines).encode()


def validate_cli(raw: bytes, tmp_path: Path, *more: str) -> tuple[int, str, str]:
    path = tmp_path / "t.jsonl"
    path.write_bytes(raw)
    code, out, err = run_cli(["validate", str(path), *more])
    assert "Traceback" not in out + err
    assert code in (0, 1, 2), (code, out, err)
    return code, out, err


# ------------------------------------------------------------------ regressions
def test_a_lone_surrogate_in_an_id_is_printed_as_its_escape(tmp_path: Path) -> None:
    """``"\\ud800"`` is valid JSON but no UTF-8: the text report (on a UTF-8 stdout) and the
    conformance report's Markdown and HTML raised UnicodeEncodeError."""
    raw = trace(join(1, "", "\ud800x"))
    code, out, _ = validate_cli(raw, tmp_path)
    assert code == 0, out
    code, out, _ = validate_cli(trace(join(1, "", "\ud800x"), join(2, "", "\ud800x", connection="c2")), tmp_path)
    assert code == 1 and "member_id=\\ud800x" in out and "MemberIdFresh" in out, out
    assert check(trace(join(1, "", "\ud800x"), join(2, "", "\ud800x")), tmp_path) == []


def test_trace_readers_name_lines_the_json_parser_refuses(tmp_path: Path) -> None:
    """An integer of more digits than Python converts, or nesting deeper than the parser
    recurses, is refused with a ValueError or RecursionError that is no JSONDecodeError:
    read_events (the conformance report's reader) raised it."""
    long_int = '{"kind":"exchange","seq":' + "1" * 5000 + "}"
    deep = "[" * 100_000 + "]" * 100_000
    got = list(read_events([long_int + "\n", deep + "\n", json.dumps(join(3, "", "m")) + "\n"], "t"))
    assert [type(e).__name__ for e in got] == ["TraceLineError", "TraceLineError", "WireExchange"]
    assert str(got[0]).startswith("t:1: not valid JSON") and str(got[1]).startswith("t:2: not valid JSON")
    raw = trace(join(1, "", "m")) + (long_int + "\n" + deep + "\n").encode()
    path = tmp_path / "t.jsonl"
    path.write_bytes(raw)
    assert wire_summary(path)["exchanges"] == {"JoinGroup": 1}
    report = validate_bytes(raw, "t")
    assert {p.line for p in report.problems} >= {3, 4}
    findings_of(report.to_json(), raw.decode().splitlines())
    assert not [e for e in read_events(raw.decode().splitlines(keepends=True)) if not isinstance(e, TraceLineError)
                and getattr(e, "seq", 0) > 1]


def heartbeat(seq: int, sent: float = 1000.0) -> dict[str, Any]:
    """A KIP-848 member's joining heartbeat, answered with partition 0 of topic ``t``."""
    request = {"group_id": GROUP, "member_id": "m1", "member_epoch": 0, "instance_id": None, "rack_id": None,
               "rebalance_timeout_ms": 20000, "subscribed_topic_names": ["t"], "subscribed_topic_regex": None,
               "server_assignor": None, "topic_partitions": [], "version": 1, "client_id": "a",
               "client_host": "/127.0.0.1"}
    response = {"error": "NONE", "error_message": None, "member_id": "m1", "member_epoch": 1,
                "heartbeat_interval_ms": 1000, "throttle_time_ms": 0,
                "assignment": {"topic_partitions": [{"topic_id": TOPIC_ID, "partitions": [0]}]}}
    return exchange(seq, "ConsumerGroupHeartbeat", 68, request, response, sent, version=1)


TOPIC_ID = "YQFUQSJjSlagMBJods_SFw"


def metadata(seq: int, partitions: int) -> dict[str, Any]:
    return {"kind": "metadata", "seq": seq, "at_ms": 900.0,
            "topics": [{"name": "t", "topic_id": TOPIC_ID, "partitions": partitions}]}


def test_a_metadata_topic_with_a_partition_count_the_reference_cannot_assign_is_named(tmp_path: Path) -> None:
    """A metadata event's topic with -1 partitions made the replay raise ValueError (the
    reference's TopicMetadata refuses it); with 2**31 - 1 the uniform assignor took every
    byte of memory (MemoryError, or the process killed), with 100000 over a minute."""
    assert validate_bytes(trace(metadata(1, 1), heartbeat(2)), "t").worst() == "conforming"
    for bad in (-1, -(2**63), 2**31 - 1, 2**63 - 1, 100_000):
        raw = trace(metadata(1, bad), heartbeat(2))
        with time_limit(30):
            code, out, _ = validate_cli(raw, tmp_path)
        assert code == 2 and "bad_event at line 2: topics[0].partitions" in out, out
        with time_limit(30):
            assert check(raw, tmp_path) == []


OTHER_ID = "AEW4wv9-Sqym3SIeS0adyg"


def regex_heartbeat(seq: int, sent: float = 1000.0) -> dict[str, Any]:
    x = heartbeat(seq, sent)
    x["request"] = {**x["request"], "subscribed_topic_names": None, "subscribed_topic_regex": "t.*"}
    return x


def test_a_topic_id_two_metadata_topics_share_is_named_or_not_merged(tmp_path: Path) -> None:
    """Two topics with one topic id made the reference's set_topics raise ValueError: in one
    metadata event (now a bad_event naming the second), or across a recording's events,
    which a regex-subscribed group's image merges (the second is no topic of its own)."""
    t = {"name": "t", "topic_id": TOPIC_ID, "partitions": 1}
    one = {"kind": "metadata", "seq": 1, "at_ms": 900.0, "topics": [t, {**t, "name": "t2"}]}
    code, out, _ = validate_cli(trace(one, heartbeat(2)), tmp_path)
    assert code == 2 and "bad_event at line 2: topics[1].topic_id" in out, out
    twice = {**one, "topics": [t, {**t, "topic_id": OTHER_ID}]}
    code, out, _ = validate_cli(trace(twice, heartbeat(2)), tmp_path)
    assert code == 2 and "bad_event at line 2: topics[1].name" in out, out
    later = {**metadata(3, 1), "at_ms": 2000.0, "topics": [{"name": "u", "topic_id": TOPIC_ID, "partitions": 1}]}
    raw = trace(metadata(1, 1), regex_heartbeat(2), later)
    report = validate_bytes(raw, "t")
    assert report.worst() != "violation" and not report.problems, report.to_json()
    assert not [d for g in report.groups for d in g.divergences if "cannot process" in d.detail]
    assert check(raw, tmp_path) == []


# ------------------------------------------------------------------ the fuzz
@settings(max_examples=24 * (20 if NIGHTLY else 1), deadline=None, derandomize=not NIGHTLY, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_semantically_odd_traces(seed: int, tmp_path_factory: Any) -> None:
    _, raw, done = mutate(seed)
    work = tmp_path_factory.mktemp("fuzz")
    with time_limit(60):
        problems = check(raw, work, parquet=seed % 3 == 0)
    assert problems == [], (seed, done, problems)
