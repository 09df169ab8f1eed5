"""A scenario whose group does not settle says why: each member's last group exchanges as
the recorder saw them, what its poll raised and its log's tail (a CI failure must be
explainable from the message alone, since the run's files are gone)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, cast

import pytest

from groupspec.conformance.members import Member, ScenarioError
from groupspec.conformance.scenarios import Context


class _Stuck:
    """A member that never gets an assignment (the settle loop reads these fields)."""

    def __init__(self, name: str, assignment: list[tuple[str, int]], log: str) -> None:
        self.name = name
        self.assignment = assignment
        self.poll_errors = ["CommitFailedError"] if name == "a" else []
        self._log = log

    def ended(self) -> bool:
        return False

    def log_tail(self, lines: int = 5) -> str:
        return " | ".join(self._log.splitlines()[-lines:])

    def thread_stacks(self) -> list[str]:
        return ["kafka/future.py:60 in wait < consumer/group.py:700 in poll"] if self.name == "a" else []


def _exchange(seq: int, client: str, api: str, error: str | None, **req: Any) -> dict[str, Any]:
    return {"kind": "exchange", "seq": seq, "client_id": client, "api": api,
            "request": req, "response": None if error is None else {"error": error}}


def test_a_stalled_settle_names_each_members_exchanges_errors_and_log(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    events = [
        _exchange(1, "b", "JoinGroup", "NONE", member_id="b-1", generation_id=-1),
        _exchange(2, "a", "FindCoordinator", "NONE"),
        _exchange(3, "a", "Metadata", "NONE"),
        _exchange(4, "a", "JoinGroup", None, member_id="", generation_id=-1),
        _exchange(5, "b", "Heartbeat", "NONE", member_id="b-1", generation_id=1),
    ]
    trace.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    ctx = Context(bootstrap="127.0.0.1:1", client="kafka-python", group_id="g",
                  topics={"t": 2}, log_dir=tmp_path, trace=trace)
    a = _Stuck("a", [], "one\nINFO (Re-)joining group g\n")
    b = _Stuck("b", [("t", 0), ("t", 1)], "")
    with pytest.raises(ScenarioError) as caught:
        ctx.settle(cast(list[Member], [a, b]), timeout_s=0.2, quiet_s=0.05)
    text = str(caught.value)
    first, story_a, stack_a, story_b = text.splitlines()
    assert first.startswith("group did not settle on 2 member(s) within 0 s: a owns none; b owns")
    # a's FindCoordinator is a group exchange, its Metadata is not; its JoinGroup is unanswered
    assert story_a.startswith("a: 2 group exchange(s), last: 2 FindCoordinator")
    assert "4 JoinGroup  -1 -> unanswered" in story_a
    assert "poll errors: CommitFailedError" in story_a
    assert story_a.endswith("log: one | INFO (Re-)joining group g")
    assert stack_a == "  a thread: kafka/future.py:60 in wait < consumer/group.py:700 in poll"
    assert story_b == ("b: 2 group exchange(s), last: 1 JoinGroup b-1 -1 -> NONE | "
                       "5 Heartbeat b-1 1 -> NONE; poll errors: none; log: empty")


class _Net:
    """kafka-python 3's NetworkSelector as the watchdog sees it: the callers' pending waits."""

    def __init__(self) -> None:
        self._pending_waiters_lock = threading.Lock()
        self._pending_waiters: dict[threading.Event, dict[str, Any]] = {}


class _HangingConsumer:
    """A consumer whose poll waits, like kafka-python 3.0.12's now and then, for a wait that
    nothing completes, and treats a KafkaTimeoutError as no records (as its fetcher does)."""

    def __init__(self) -> None:
        self._net = _Net()

    def poll(self, timeout_ms: int) -> dict[str, list[bytes]]:
        from kafka.errors import KafkaTimeoutError

        event = threading.Event()
        state: dict[str, Any] = {"value": None, "exception": None}
        with self._net._pending_waiters_lock:
            self._net._pending_waiters[event] = state
        event.wait()
        with self._net._pending_waiters_lock:
            self._net._pending_waiters.pop(event, None)
        if isinstance(state["exception"], KafkaTimeoutError):
            return {}
        return {"t-0": [b"x"]}


def test_a_stuck_kafka_python_poll_is_released_as_its_timeout_would(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from groupspec.conformance import drivers

    monkeypatch.setattr(drivers, "POLL_STUCK_S", 0.2)
    driver = object.__new__(drivers._KafkaPython)
    driver.consumer = _HangingConsumer()
    driver._poll_started = None
    driver.released = 0
    threading.Thread(target=driver._watch_poll, daemon=True).start()
    done: list[int] = []
    poller = threading.Thread(target=lambda: done.append(driver.poll()), daemon=True)
    started = time.monotonic()
    poller.start()
    poller.join(timeout=10)
    assert done == [0], "the poll was not released"  # no records: the wait timed out
    assert 0.2 <= time.monotonic() - started < 5
    assert driver.released == 1 and driver._poll_started is None
    out, err = capsys.readouterr()
    assert json.loads(out.strip().splitlines()[-1]) == {"ev": "released", "waits": 1}
    assert "released 1 pending wait(s) as their timeout would" in err
