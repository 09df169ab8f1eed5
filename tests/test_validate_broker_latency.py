"""A loaded broker reads a request long after the recorder stamped it: the validator must
allow any moment of the request's [sent, received] interval, not only the replay's slack.

Found in CI (two workers, TLC beside a real Kafka): a surviving member's heartbeat, sent
while another member's session still ran and answered after it ran out, came back
REBALANCE_IN_PROGRESS; the validator handled the heartbeat at most ``slack_ms`` after its
send time and called Kafka's answer a HeartbeatAnswer violation.

The cases edit one committed Kafka 4.1.2 recording: member b is killed, and a's heartbeats
go on until one is answered REBALANCE_IN_PROGRESS once b's session (6 s) has expired.
Here a's last heartbeats before that answer are dropped and the one sent about 600 ms
before the expiry gets the rebalance answer, received either after the expiry (a broker
that read it late: conforming) or before it (no broker could have known: a violation).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groupspec.validate.validator import validate_path

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "examples" / "conformance" / "kafka-4.1.2" / "session-timeout--confluent-kafka.jsonl"
#: a's heartbeat sent about 600 ms before b's session expired, and the two after it (the
#: second of which Kafka answered REBALANCE_IN_PROGRESS)
READ_LATE, DROPPED = 60, (62, 64)


def _edited(tmp_path: Path, received_after_sent_ms: float) -> Path:
    events: list[dict[str, Any]] = [
        json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    [hb] = [e for e in events if e.get("seq") == READ_LATE]
    [answered] = [e for e in events if e.get("seq") == DROPPED[-1]]
    assert hb["api"] == "Heartbeat" and hb["response"] == {"error": "NONE"}
    assert answered["response"] == {"error": "REBALANCE_IN_PROGRESS"}
    hb["response"] = answered["response"]
    hb["received_ms"] = hb["sent_ms"] + received_after_sent_ms
    kept = [e for e in events if e.get("seq") not in DROPPED]
    for seq, e in enumerate(kept):
        e["seq"] = seq  # a gap in seq would say events were lost
    out = tmp_path / "edited.jsonl"
    out.write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")
    return out


def test_a_heartbeat_read_late_sees_a_session_that_ran_out_in_its_interval(tmp_path: Path) -> None:
    # answered 730 ms after it was sent: b's session ran out meanwhile
    [group] = validate_path(_edited(tmp_path, 730.0)).groups
    assert group.verdict == "conforming", group


def test_a_rebalance_answer_before_the_session_ran_out_is_a_violation(tmp_path: Path) -> None:
    # answered 400 ms after it was sent: b's session still ran whenever the broker read it
    [group] = validate_path(_edited(tmp_path, 400.0)).groups
    assert group.verdict == "violation", group
    assert group.violation is not None
    assert (group.violation.rule, group.violation.api) == ("HeartbeatAnswer", "Heartbeat")
    assert group.violation.broker_answered == "Heartbeat REBALANCE_IN_PROGRESS"


def _commit_read_late(tmp_path: Path, commit_answered_after_ms: float) -> Path:
    """b's last OffsetCommit (which sets b's session deadline) answered
    ``commit_answered_after_ms`` after it was sent, and a's heartbeat sent 124 ms after the
    deadline the commit's send time gives answered NONE."""
    events: list[dict[str, Any]] = [
        json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    [commit] = [e for e in events if e.get("seq") == B_LAST_COMMIT]
    [hb] = [e for e in events if e.get("seq") == DROPPED[0]]
    assert commit["api"] == "OffsetCommit" and commit["client_id"] == "b"
    assert hb["api"] == "Heartbeat" and hb["response"] == {"error": "NONE"}
    commit["received_ms"] = commit["sent_ms"] + commit_answered_after_ms
    hb["sent_ms"] = commit["sent_ms"] + SESSION_MS + 124.0
    hb["received_ms"] = hb["sent_ms"] + 1.0
    out = tmp_path / "commit-late.jsonl"
    out.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return out


#: b's last request before it is killed, and b's session timeout
B_LAST_COMMIT, SESSION_MS = 38, 6000


def test_a_session_set_by_a_request_read_late_runs_out_late(tmp_path: Path) -> None:
    # the commit answered 600 ms after it was sent: the broker may have set b's deadline
    # up to 600 ms later than the send time says
    [group] = validate_path(_commit_read_late(tmp_path, 600.0)).groups
    assert group.verdict == "conforming", group


def test_a_session_set_by_a_request_read_at_once_runs_out_on_time(tmp_path: Path) -> None:
    # answered 8 ms after it was sent: b's session had run out when a's heartbeat came
    [group] = validate_path(_commit_read_late(tmp_path, 8.0)).groups
    assert group.verdict == "violation", group
    assert group.violation is not None
    # (b expired: a's heartbeat should have been told to rejoin)
    assert (group.violation.rule, group.violation.broker_answered) == (
        "HeartbeatSignalsRebalance", "Heartbeat NONE")
