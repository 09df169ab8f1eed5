"""Static membership fenced by process (issue 16, item 3): when a new process joins with a
static member's group.instance.id and no member id, Kafka hands it a fresh member id and
fences the old process (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin).
A broker that hands the new process the old id lets two processes act as one member: the
verdict names the id, both connections and the instance. Kafka's own recording of a static
restart stays conforming."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groupspec.validate import CONFORMING, VIOLATION, validate_bytes

RECORDING = Path(__file__).parents[1] / "examples/conformance/kafka-4.1.2/static-membership--kafka-python.jsonl"


def _events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines() if line]


def _restart(objs: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The JoinGroup of a process restarting a static member (no member id, an instance id
    already mapped) and the id the instance had before."""
    held: dict[str, str] = {}
    for o in objs:
        if o.get("kind") != "exchange" or o["api"] != "JoinGroup" or o["response"] is None:
            continue
        inst, new = o["request"]["group_instance_id"], o["response"]["member_id"]
        if inst in held and not o["request"]["member_id"] and held[inst] != new:
            return o, held[inst]
        held[inst] = new
    raise AssertionError("the recording has no static restart")


def test_kafkas_static_restart_is_conforming() -> None:
    objs = _events()
    join, old = _restart(objs)
    assert join["response"]["member_id"] != old  # Kafka gave the new process a fresh id
    assert all(g.verdict == CONFORMING for g in validate_bytes(RECORDING.read_bytes()).groups)


def test_the_old_id_handed_to_the_new_process_is_a_violation_naming_both_processes() -> None:
    objs = _events()
    join, old = _restart(objs)
    text = "\n".join(json.dumps(o) for o in objs).replace(join["response"]["member_id"], old)
    [g] = validate_bytes(text.encode()).groups
    assert g.verdict == VIOLATION
    d = g.divergences[0]
    assert (d.seq, d.rule, d.definite) == (join["seq"], "MemberIdFresh", True), g.divergences
    assert old in d.detail and f"connection {join['connection']}" in d.detail
    assert join["request"]["group_instance_id"] in d.detail
