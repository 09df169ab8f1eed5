"""What the validator does not judge in a broker's answer, listed and kept so.

Each response field of the real Kafka 4.1.2 recordings in examples/conformance is changed in
turn, as another broker might answer (a number one more or -1, a text changed or emptied,
a null filled, a boolean flipped, a list's last entry dropped or its first repeated, an
error made another), a few instances of each (API, version, field, change), and the
recording validated again. A change that leaves every verdict as it was is a blind spot:
the test requires the blind spots to be exactly the ones :data:`BLIND_SPOTS` lists, each
with why the field is not judged (docs/validator.md, "What an answer is compared on"). A
change the validator stops naming fails the test, and so does one it starts naming (then
remove it from the list).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from groupspec.validate import validate_bytes

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "conformance"
RECORDINGS = sorted([*(EXAMPLES / "kafka-4.1.2").glob("*.jsonl"), *(EXAMPLES / "wire").glob("*kafka-4.1.2.jsonl"),
                     *(EXAMPLES / "mixed").glob("kafka-4.1.2-*.jsonl")])
#: changed instances per (API, version, field, change)
PER_KIND = 1

#: (API, field path with list indices as *, change) patterns (regular expressions, matched
#: whole) -> why such a change is not judged
BLIND_SPOTS: dict[tuple[str, str, str], str] = {
    ("FindCoordinator", ".*", ".*"):
        "the coordinator's placement, its address and FindCoordinator's errors are the cluster's, not the "
        "group protocol's: the validator does not model FindCoordinator beyond its key type",
    (".*", "throttle_time_ms", ".*"): "quotas are not modelled",
    ("JoinGroup", "skip_assignment", "flip"):
        "carried from JoinGroup v9 only; these recordings are older versions, whose wire has no such field",
    ("OffsetFetch", r"partitions/\*/committed_leader_epoch", r"\+1|=-1"):
        "carried from OffsetFetch v5 only (changed here on v4); or a partition a TxnOffsetCommit named with "
        "no leader epoch (-1 in the trace, which also stands for a recording made before the trace had the "
        "field)",
    ("ConsumerGroupHeartbeat", "heartbeat_interval_ms", r"\+1|=-1"):
        "the broker's group.consumer.heartbeat.interval.ms is not in these recordings' headers: only a "
        "leave's 0 and a positive interval otherwise are required; an error answer's interval is not judged",
    ("ConsumerGroupHeartbeat", "member_epoch|member_id|error_message", ".*"):
        "error answers are compared by their error alone (the service layer's error response leaves the "
        "other fields at their defaults, which ones a broker fills is not a rule, and a message is free text)",
    ("JoinGroup", "generation_id|leader|protocol_name|protocol_type|member_id", ".*"):
        "error answers are compared by their error alone (MEMBER_ID_REQUIRED's member id excepted)",
    ("SyncGroup", "protocol_name|protocol_type", "notnull"):
        "carried from SyncGroup v5 only (changed here on v3); on v5, error answers are compared by their "
        "error alone",
}


def _leaves(obj: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list):
        yield path, obj
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))
    else:
        yield path, obj


def _changes(path: tuple[str | int, ...], v: Any) -> list[tuple[str, Any]]:
    if isinstance(v, bool):
        return [("flip", not v)]
    if isinstance(v, int):
        return [("+1", v + 1)] + ([("=-1", -1)] if v != -1 else [])
    if isinstance(v, float):
        return [("+1", v + 1)]
    if isinstance(v, str):
        if path and path[-1] == "error":
            return [("err", "UNKNOWN_SERVER_ERROR" if v != "UNKNOWN_SERVER_ERROR" else "NONE")]
        return [("+x", v + "x"), ("empty", "")] if v else [("x", "x")]
    if v is None:
        return [("notnull", "x")]
    if isinstance(v, list) and v:
        return [("droplast", v[:-1]), ("dupfirst", [*v, v[0]])]
    return []


def _set(obj: Any, path: tuple[str | int, ...], value: Any) -> None:
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value


def _verdicts(raw: bytes, source: str) -> list[tuple[str, str]]:
    return [(g.group_id, g.verdict) for g in validate_bytes(raw, source).groups]


def _blind(api: str, field: str, change: str) -> bool:
    return any(re.fullmatch(a, api) and re.fullmatch(f, field) and re.fullmatch(c, change)
               for a, f, c in BLIND_SPOTS)


def sweep() -> tuple[set[tuple[str, int, str, str]], set[tuple[str, int, str, str]]]:
    """(the changes left unnamed, the changes named), by (API, version, field, change)."""
    unnamed: set[tuple[str, int, str, str]] = set()
    named: set[tuple[str, int, str, str]] = set()
    for path in RECORDINGS:
        lines = path.read_text().splitlines()
        base = _verdicts("\n".join(lines).encode(), path.name)
        conforming = {g for g, v in base if v == "conforming"}
        tried: dict[tuple[str, int, str, str], int] = {}
        for i, line in enumerate(lines):
            o = json.loads(line)
            if o.get("kind") != "exchange" or not o.get("response"):
                continue
            if o.get("group_id") and o["group_id"] not in conforming:
                continue
            for where, value in list(_leaves(o["response"])):
                field = "/".join("*" if isinstance(p, int) else p for p in where)
                for change, new in _changes(where, value):
                    key = (o["api"], o["api_version"], field, change)
                    if tried.get(key, 0) >= PER_KIND:
                        continue
                    tried[key] = tried.get(key, 0) + 1
                    o2 = json.loads(line)
                    _set(o2["response"], where, new)
                    raw = "\n".join([*lines[:i], json.dumps(o2), *lines[i + 1:]]).encode()
                    (unnamed if _verdicts(raw, path.name) == base else named).add(key)
    return unnamed, named


def test_the_validator_s_blind_spots_are_the_listed_ones() -> None:
    unnamed, named = sweep()
    assert named, "the sweep changed nothing the validator names"
    unlisted = sorted(k for k in unnamed if not _blind(k[0], k[2], k[3]))
    assert not unlisted, f"answers changed without the validator naming it: {unlisted}"
    # every listed blind spot is still one (named everywhere now: remove it from the list)
    for spot in BLIND_SPOTS:
        assert any(re.fullmatch(spot[0], k[0]) and re.fullmatch(spot[1], k[2]) and re.fullmatch(spot[2], k[3])
                   for k in unnamed), f"no longer a blind spot: {spot}"
