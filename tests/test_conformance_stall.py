"""A scenario whose group does not settle says why: each member's last group exchanges as
the recorder saw them, what its poll raised and its log's tail (a CI failure must be
explainable from the message alone, since the run's files are gone)."""

from __future__ import annotations

import json
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
