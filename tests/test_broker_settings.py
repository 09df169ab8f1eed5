"""Broker settings the wire does not show (group.max.size, the session bounds, offsets
retention, ...): by Kafka's names in a trace header's ``broker_config`` or on
``groupspec validate --broker-config``, and judged as Kafka 4.1.2 applies them.

The recordings under examples/validator-false-positives/group-max-size were made against a
real Kafka 4.1.2 broker started with group.max.size and group.consumer.max.size 2
(``python -m groupspec.conformance.wire_fuzz --group-max-size 2``, seeds 101, 104, 200);
the recorder wrote the settings into their headers."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from groupspec.cli.main import main
from groupspec.conformance.runner import validation_config
from groupspec.coordinator.config import BROKER_SETTINGS, CoordinatorConfig
from groupspec.validate import validate_path
from groupspec.validate.replay import ReplayConfig
from groupspec.validate.validator import validate_bytes, with_broker_config
from groupspec.validate.verdict import GroupVerdict

ROOT = Path(__file__).resolve().parents[1]
MAX_SIZE = ROOT / "examples" / "validator-false-positives" / "group-max-size"
PENDING = MAX_SIZE / "classic-pending-members-kafka-4.1.2.jsonl"
STATIC = MAX_SIZE / "classic-static-joins-a-full-group-kafka-4.1.2.jsonl"
CONSUMER = MAX_SIZE / "consumer-kafka-4.1.2.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _raw(events: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def _broker_side(report_groups: Iterable[GroupVerdict]) -> list[tuple[int, str]]:
    return [(d.line, d.rule) for g in report_groups for d in g.divergences if d.side == "broker"]


def test_settings_by_kafka_names_with_units_and_clear_errors() -> None:
    c = CoordinatorConfig().with_broker_settings({"group.max.size": "3", "offsets.retention.minutes": 2,
                                                  "group.consumer.max.size": 5})
    assert (c.group_max_size, c.offsets_retention_ms, c.consumer_group_max_size) == (3, 120_000, 5)
    with pytest.raises(ValueError, match=r"unknown broker setting 'group\.max\.sizes'"):
        CoordinatorConfig().with_broker_settings({"group.max.sizes": 3})
    with pytest.raises(ValueError, match=r"group\.max\.size: not an integer: 'three'"):
        CoordinatorConfig().with_broker_settings({"group.max.size": "three"})
    # an impossible configuration names Kafka's settings, not the reference's fields
    with pytest.raises(ValueError, match=r"group.min.session.timeout.ms \(60000\) > group.max.session.timeout.ms"):
        CoordinatorConfig().with_broker_settings({"group.min.session.timeout.ms": 60_000,
                                                  "group.max.session.timeout.ms": 30_000})
    # every name maps to a field of the configuration
    fields = {f.name for f in dataclasses.fields(CoordinatorConfig)}
    assert {f for f, _ in BROKER_SETTINGS.values()} <= fields


def test_header_settings_give_way_to_the_command_line_and_name_the_initial_delay() -> None:
    given = ReplayConfig(coordinator=CoordinatorConfig(group_max_size=5))
    merged = with_broker_config(given, {"group.max.size": 2, "group.consumer.max.size": 2,
                                        "group.initial.rebalance.delay.ms": 0, "num.partitions": 3})
    assert (merged.coordinator.group_max_size, merged.coordinator.consumer_group_max_size) == (5, 2)
    assert merged.initial_delays_ms == (0,)  # the one delay the broker runs with
    delays = ReplayConfig(initial_delays_ms=(100,))
    assert with_broker_config(delays, {"group.initial.rebalance.delay.ms": 0}).initial_delays_ms == (100,)


def test_an_impossible_header_setting_is_a_bad_event_at_the_header() -> None:
    events = _lines(PENDING)
    events[0]["broker_config"] = {"group.max.size": 0}
    report = validate_bytes(_raw(events), "bad-header")
    [problem] = [p for p in report.problems if p.kind == "bad_event"]
    assert problem.line == 1 and "group.max.size must be >= 1, got 0" in problem.message
    assert report.groups  # the groups are still judged (with Kafka's default size)


def test_a_heartbeat_interval_not_below_the_session_is_an_impossible_configuration(
        capsys: pytest.CaptureFixture[str]) -> None:
    # GroupCoordinatorConfig: group.consumer.heartbeat.interval.ms < group.consumer.session.timeout.ms
    with pytest.raises(ValueError, match=r"group.consumer.heartbeat.interval.ms \(6000\) must be less than "
                                         r"group.consumer.session.timeout.ms \(6000\)"):
        CoordinatorConfig().with_broker_settings({"group.consumer.session.timeout.ms": 6000,
                                                  "group.consumer.heartbeat.interval.ms": 6000})
    ok = CoordinatorConfig().with_broker_settings({"group.consumer.session.timeout.ms": 6000,
                                                   "group.consumer.heartbeat.interval.ms": 5999})
    assert (ok.consumer_group_session_timeout_ms, ok.consumer_group_heartbeat_interval_ms) == (6000, 5999)
    # in a header: a bad event at the header, the groups still judged
    events = _lines(PENDING)
    events[0]["broker_config"] = {"group.consumer.session.timeout.ms": 4000}
    report = validate_bytes(_raw(events), "bad-header")
    [problem] = [p for p in report.problems if p.kind == "bad_event"]
    assert problem.line == 1 and "group.consumer.heartbeat.interval.ms (5000) must be less than" in problem.message
    assert report.groups
    # on the command line: the two options are checked together, named as options
    assert main(["validate", "--consumer-session-timeout-ms", "3000", str(PENDING)]) == 2
    err = capsys.readouterr().err
    assert "--consumer-heartbeat-interval-ms (5000) must be less than --consumer-session-timeout-ms (3000)" in err
    assert main(["validate", "--consumer-session-timeout-ms", "3000", "--consumer-heartbeat-interval-ms", "1000",
                 "--initial-delay-ms", "0", str(PENDING)]) != 2
    capsys.readouterr()


def test_cli_broker_config_is_checked_and_applied(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["validate", "--broker-config", "group.max.size=x", str(PENDING)]) == 2
    assert "group.max.size: not an integer" in capsys.readouterr().err
    assert main(["validate", "--broker-config", "group.maxsize=2", str(PENDING)]) == 2
    assert "unknown broker setting 'group.maxsize'" in capsys.readouterr().err
    events = _lines(PENDING)
    events[0]["broker_config"] = {}
    stripped = tmp_path / "no-header-settings.jsonl"
    stripped.write_bytes(_raw(events))
    # without the header's group.max.size Kafka's default admits everyone: the broker's
    # GROUP_MAX_SIZE_REACHED answers are violations; given on the command line, conforming
    # on the broker's side (the fuzzer's own client findings stay)
    assert main(["validate", "--initial-delay-ms", "0", "--format", "json", str(stripped)]) == 1
    assert '"side": "broker"' in capsys.readouterr().out
    main(["validate", "--initial-delay-ms", "0", "--broker-config", "group.max.size=2", "--format", "json",
          str(stripped)])
    assert '"side": "broker"' not in capsys.readouterr().out


@pytest.mark.parametrize("path", [PENDING, STATIC, CONSUMER], ids=lambda p: p.stem)
def test_kafka_group_max_size_recordings_conform(path: Path) -> None:
    """Kafka 4.1.2 with group.max.size 2: pending members (MEMBER_ID_REQUIRED) count
    towards the size (KAFKA-9885's fix), a static member's first join of a full group is
    refused (GroupMetadataManager.acceptJoiningMember reads the request's member id, empty
    for a new static member), and a consumer group refuses a third member's joining
    heartbeat. The reference agrees on every answer."""
    protocol = "consumer" if path is CONSUMER else "classic"
    events = _lines(path)
    assert events[0]["broker_config"] == {"group.max.size": 2, "group.consumer.max.size": 2}
    assert any((e.get("response") or {}).get("error") == "GROUP_MAX_SIZE_REACHED"
               for e in events)
    report = validate_path(path, validation_config("kafka", protocol))
    assert _broker_side(report.groups) == []
    # the same answers from a broker of Kafka's default size are violations, from the first
    # GROUP_MAX_SIZE_REACHED on
    first = next(no for no, e in enumerate(events, 1)
                 if (e.get("response") or {}).get("error") == "GROUP_MAX_SIZE_REACHED")
    events[0]["broker_config"] = {}
    default = validate_bytes(_raw(events), path.name, validation_config("kafka", protocol))
    assert first in {no for no, _ in _broker_side(default.groups)}


def test_kafka_9885_a_pending_member_admitted_beyond_the_size_is_named() -> None:
    """KAFKA-9885 (docs/historical-bugs-backlog.md entry 9): the buggy broker counted only
    full members, so a member pending after MEMBER_ID_REQUIRED rejoined a full group with
    its id and was admitted. Line 23 of the recording is that rejoin (wf-c2, pending since
    line 13), which Kafka 4.1.2 refused; answered as the buggy broker did, the oracle names
    it GroupMaxSize on the broker's side."""
    events = _lines(PENDING)
    join = events[22]
    assert join["api"] == "JoinGroup" and join["response"]["error"] == "GROUP_MAX_SIZE_REACHED"
    member = join["request"]["member_id"]
    assert member and events[12]["response"]["member_id"] == member
    join["response"] = {**join["response"], "error": "NONE", "generation_id": 2,
                        "member_id": member, "leader": member, "protocol_name": "range", "members": []}
    report = validate_bytes(_raw(events), PENDING.name, validation_config("kafka"))
    assert (23, "GroupMaxSize") in _broker_side(report.groups)


def test_record_writes_the_broker_settings_into_the_header(tmp_path: Path) -> None:
    """``groupspec record --broker-config``: the trace header carries what the user says the
    broker runs with (no client connects here; the header is written at start)."""
    import signal
    import subprocess
    import sys

    out = tmp_path / "rec.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "groupspec", "record", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9",
         "--out", str(out), "--broker-config", "group.max.size=3", "--broker-config",
         "group.consumer.session.timeout.ms=10000"],
        stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        assert "recording" in proc.stderr.readline()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["broker_config"] == {"group.max.size": 3, "group.consumer.session.timeout.ms": 10000}
    bad = subprocess.run([sys.executable, "-m", "groupspec", "record", "--listen", "127.0.0.1:0", "--upstream",
                          "127.0.0.1:9", "--out", str(tmp_path / "x.jsonl"), "--broker-config", "group.max.size=0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "group.max.size must be >= 1, got 0" in bad.stderr


def test_a_kafka_broker_started_here_names_its_group_settings(tmp_path: Path) -> None:
    """What a recording made against the Kafka broker groupspec starts writes into its header
    (``groupspec conformance --broker kafka``): its settings the reference models, those it
    is given included; validated with them, a conformance trace needs no flags."""
    from groupspec.brokers import KafkaBroker
    from groupspec.brokers.kafka import (
        CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS,
        CONSUMER_GROUP_SESSION_TIMEOUT_MS,
    )

    broker = KafkaBroker(workdir=tmp_path, port=1234, properties={"group.max.size": "5"})
    assert broker.group_settings() == {
        "offsets.topic.num.partitions": 1, "group.initial.rebalance.delay.ms": 0,
        "group.consumer.session.timeout.ms": CONSUMER_GROUP_SESSION_TIMEOUT_MS,
        "group.consumer.heartbeat.interval.ms": CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS, "group.max.size": 5}
    config = with_broker_config(ReplayConfig(), broker.group_settings())
    assert config.initial_delays_ms == (0,) and config.coordinator.offsets_topic_num_partitions == 1


# ---------------------------------------------------------------- the heartbeat interval
#: a real Kafka 4.1.2 consumer-group recording (wire fuzz seed 9405) whose header names the
#: broker's group.consumer.heartbeat.interval.ms (1000): every accepted heartbeat says 1000,
#: the static member's leave (epoch -2) 0
EPOCH_ZERO = ROOT / "examples" / "validator-false-positives" / "kip848" / \
    "epoch-zero-rejoin-of-a-known-member-is-fenced-kafka-4.1.2.jsonl"


def _interval_changed(events: list[dict[str, Any]], epoch: int, to: int) -> tuple[list[dict[str, Any]], int]:
    """``events`` with the first accepted ConsumerGroupHeartbeat of a request at ``epoch``
    answered with heartbeat interval ``to``, and that event's line."""
    out = [dict(e) for e in events]
    for line, e in enumerate(out, start=1):
        if (e.get("api") == "ConsumerGroupHeartbeat" and e.get("response")
                and e["response"]["error"] == "NONE" and e["request"]["member_epoch"] == epoch):
            e["response"] = {**e["response"], "heartbeat_interval_ms": to}
            return out, line
    raise AssertionError(f"no accepted heartbeat at epoch {epoch}")


def test_kafka_answers_the_configured_heartbeat_interval_and_a_broker_that_does_not_is_named() -> None:
    events = _lines(EPOCH_ZERO)
    assert events[0]["broker_config"]["group.consumer.heartbeat.interval.ms"] == 1000
    assert _broker_side(validate_path(EPOCH_ZERO).groups) == []
    # a broker that tells a member some other interval than the one it runs with
    changed, line = _interval_changed(events, 3, 5000)
    named = _broker_side(validate_bytes(_raw(changed)).groups)
    assert named == [(line, "ConsumerHeartbeatInterval")]
    # a leave is answered with no interval (0): a broker that sends one is named too
    leave, line = _interval_changed(events, -2, 1000)
    assert _broker_side(validate_bytes(_raw(leave)).groups) == [(line, "ConsumerHeartbeatInterval")]


def test_the_heartbeat_interval_is_judged_only_where_the_broker_s_setting_is_known(tmp_path: Path) -> None:
    events = _lines(EPOCH_ZERO)
    changed, line = _interval_changed(events, 3, 5000)
    del changed[0]["broker_config"]["group.consumer.heartbeat.interval.ms"]
    # not named: the broker may run any interval; Kafka's default is assumed, not judged
    assert _broker_side(validate_bytes(_raw(changed)).groups) == []
    assert not with_broker_config(ReplayConfig(), {"group.max.size": 3}).heartbeat_interval_known
    assert with_broker_config(ReplayConfig(), {"group.consumer.heartbeat.interval.ms": 1000}).heartbeat_interval_known
    # the command line makes it known, by its setting's name or its own flag
    path = tmp_path / "t.jsonl"
    path.write_bytes(_raw(changed))
    for flags in (["--broker-config", "group.consumer.heartbeat.interval.ms=1000"],
                  ["--consumer-heartbeat-interval-ms", "1000"]):
        out = tmp_path / "r.json"
        assert main(["validate", str(path), "--format", "json", "--report", str(out), *flags]) == 1
        report = json.loads(out.read_text(encoding="utf-8"))
        rules = [(d["line"], d["rule"]) for f in report["files"] for g in f["groups"]
                 for d in g["divergences"] if d["side"] == "broker"]
        assert rules == [(line, "ConsumerHeartbeatInterval")], flags
    # and the Kafka broker groupspec starts is run with a known interval
    assert validation_config("kafka", "consumer").heartbeat_interval_known
    assert not validation_config("tansu", "consumer").heartbeat_interval_known
