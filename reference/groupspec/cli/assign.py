"""``groupspec assign --assignor NAME INPUT.json [--previous PREV.json]``: run an assignor.

INPUT.json holds the leader's view of a rebalance::

    {
      "topics": {"orders": 6,                          # partition counts from metadata,
                 "payments": {"partitions": 3,         # or with replica racks (KIP-881):
                              "racks": [["a", "b"], ["b", "c"], ["c", "a"]]}},
      "members": [                                     # in JoinGroup order
        {"member_id": "c1", "group_instance_id": null, # group_instance_id is optional
         "topics": ["orders", "payments"],
         "owned": {"orders": [0, 1]},                 # optional, default {}
         "generation": 4,                              # optional, default -1
         "rack": "a"}                                  # optional client.rack
      ]
    }

``sticky`` and ``cooperative-sticky`` give Kafka 4.1.2's answer. ``--optimal`` runs
groupspec's own variant instead (the most balanced assignment with the fewest moves, see
``sticky-optimal``) and prints it with a comparison against Kafka's answer.

``owned`` and ``generation`` reach the assignor where Kafka's clients put them: in the
StickyAssignor user data (sticky), in the subscription fields (cooperative-sticky); Range and
RoundRobin ignore them. The output is JSON: the assignment, and with ``--previous`` (a file
mapping member id -> topic -> partitions, or a previous output of this command) the number
of moves against it and the fewest moves any most-balanced assignment could make.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from groupspec.assignors.base import MemberSubscription
from groupspec.assignors.cooperative_sticky import encode_user_data as coop_user_data
from groupspec.assignors.kafka_sticky import KafkaAssignorError
from groupspec.assignors.moves import count_moves, minimum_moves_from
from groupspec.assignors.registry import ASSIGNOR_NAMES, OPTIMAL_VARIANTS, get_assignor
from groupspec.assignors.sticky import StickyOptimalAssignor
from groupspec.assignors.sticky import encode_user_data as sticky_user_data
from groupspec.cli.inputs import MAX_MEMBERS, MAX_PARTITIONS, InputError, fail, read_text
from groupspec.protocol.consumer_protocol import Subscription, normalize

#: the fields an input file may hold (others are rejected, as `simulate` rejects them)
_INPUT_KEYS = frozenset({"topics", "members"})
_MEMBER_KEYS = frozenset({"member_id", "group_instance_id", "topics", "owned", "generation", "rack"})


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "assign",
        help="run a partition assignor on members and topic sizes given as JSON",
        description=(
            "Run Kafka's Range, RoundRobin, Sticky or CooperativeSticky assignor on the "
            "members and topic sizes in INPUT.json and print the assignment as JSON; with "
            "--previous, also the moves against that assignment and the minimum possible."
        ),
    )
    p.add_argument("input", metavar="INPUT.json")
    p.add_argument(
        "--assignor", required=True, metavar="NAME", help=f"one of: {', '.join(ASSIGNOR_NAMES)}"
    )
    p.add_argument("--previous", metavar="PREV.json", help="the assignment before this rebalance")
    p.add_argument(
        "--optimal",
        action="store_true",
        help="sticky / cooperative-sticky only: print groupspec's optimum (most balanced, "
        "then fewest moves) and how it compares with Kafka's answer",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        assignor = get_assignor(args.assignor)
    except ValueError as e:
        return fail("--assignor", str(e))
    kafka = None
    if args.optimal:
        variant = OPTIMAL_VARIANTS.get(assignor.name)
        if variant is None:
            return fail("--optimal", f"only for {', '.join(OPTIMAL_VARIANTS)}, not {assignor.name}")
        kafka, assignor = assignor, get_assignor(variant)
    topics, racks, members = parse_input(_load(args.input), args.input)
    previous = parse_previous(_load(args.previous), args.previous) if args.previous else None
    subs = [_subscription(assignor.name, m) for m in members]
    try:
        result = assignor.assign(topics, subs, racks)
        kafka_parts = (
            {k: v.partitions for k, v in kafka.assign(topics, subs, racks).items()}
            if kafka is not None
            else None
        )
    except KafkaAssignorError as e:
        return fail(args.input, f"Kafka's assignor fails on this input: {e}")
    parts = {k: v.partitions for k, v in result.items()}
    out: dict[str, Any] = {"assignor": assignor.name}
    if kafka_parts is not None:
        out["kafka"] = _compare(parts, kafka_parts, previous)
    if previous is not None:
        try:
            out["moves"] = count_moves(previous, parts)
        except ValueError as e:
            return fail(args.previous, str(e))
        out["minimum_moves"], out["minimum_basis"] = _minimum(topics, members, previous)
        # Cooperative hand-overs: previously owned, now assigned to nobody until the owner
        # has revoked them; they move in the follow-up rebalance.
        assigned = {(t, p) for ps in parts.values() for t, tps in ps.items() for p in tps}
        live = {t: n for t, n in topics.items()}
        out["withheld"] = sum(
            1
            for tps in previous.values()
            for t, ps in tps.items()
            for p in ps
            if p < live.get(t, 0) and (t, p) not in assigned
            and any(t in m["topics"] for m in members)
        )
    print(_render(out, {m["member_id"]: parts[m["member_id"]] for m in members}))
    return 0


def _shape(parts: Mapping[str, Mapping[str, tuple[int, ...]]]) -> dict[str, int]:
    sizes = [sum(map(len, tps.values())) for tps in parts.values()] or [0]
    return {"spread": max(sizes) - min(sizes), "sum_of_squares": sum(n * n for n in sizes)}


def _compare(
    optimal: Mapping[str, Mapping[str, tuple[int, ...]]],
    kafka: Mapping[str, Mapping[str, tuple[int, ...]]],
    previous: Mapping[str, Mapping[str, tuple[int, ...]]] | None,
) -> dict[str, Any]:
    """How the optimum compares with Kafka's answer: sizes (max - min and the sum of
    squares, lower is more balanced), moves against --previous, and Kafka's assignment."""
    out: dict[str, Any] = {
        "same": {m: dict(p) for m, p in optimal.items()} == {m: dict(p) for m, p in kafka.items()},
        "optimal": _shape(optimal),
        "kafka": _shape(kafka),
    }
    if previous is not None:
        out["optimal"]["moves"] = count_moves(previous, optimal)
        out["kafka"]["moves"] = count_moves(previous, kafka)
    out["kafka_assignment"] = {
        m: {t: list(ps) for t, ps in sorted(tps.items())} for m, tps in kafka.items()
    }
    return out


def _render(summary: Mapping[str, Any], parts: Mapping[str, Mapping[str, tuple[int, ...]]]) -> str:
    """JSON with one line per member, so that assignments read at a glance."""
    lines = ["{"]
    for key, value in summary.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    lines.append('  "assignment": {')
    rows = [
        f"    {json.dumps(mid)}: "
        + json.dumps({t: list(ps) for t, ps in sorted(tps.items())})
        for mid, tps in parts.items()
    ]
    lines.append(",\n".join(rows))
    lines.append("  }")
    lines.append("}")
    return "\n".join(line for line in lines if line)


def _load(path: str) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(path, f"line {e.lineno} column {e.colno}: invalid JSON: {e.msg}") from None
    except (ValueError, RecursionError) as e:  # nested too deep, a number too long
        raise InputError(path, f"not readable JSON: {e}") from None


def _partitions(value: Any, where: str) -> dict[str, tuple[int, ...]]:
    if not isinstance(value, dict):
        raise InputError(where, "expected an object mapping topic to partition numbers")
    for t, ps in value.items():
        if not isinstance(ps, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and 0 <= p < MAX_PARTITIONS for p in ps
        ):
            raise InputError(f"{where}.{t}", f"expected a list of partition numbers from 0 to {MAX_PARTITIONS - 1:,}")
    return normalize(value)


def _count(n: Any, where: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_PARTITIONS:
        shown = repr(n) if len(repr(n)) < 40 else repr(n)[:30] + "..."
        raise InputError(where, f"expected a partition count from 0 to {MAX_PARTITIONS:,}, got {shown}")
    return n


def _topic(value: Any, where: str) -> tuple[int, list[list[str | None]] | None]:
    """A topic's partition count, and its replicas' racks when given (KIP-881)."""
    if not isinstance(value, dict):
        return _count(value, where), None
    _no_unknown(value, frozenset({"partitions", "racks"}), where)
    if "partitions" not in value:
        raise InputError(where, "missing field 'partitions'")
    n = _count(value["partitions"], f"{where}.partitions")
    racks = value.get("racks")
    if racks is None:
        return n, None
    if not isinstance(racks, list) or len(racks) != n:
        raise InputError(f"{where}.racks", f"expected a list of {n} replica rack lists, one per partition")
    for p, rs in enumerate(racks):
        if not isinstance(rs, list) or not all(r is None or isinstance(r, str) for r in rs):
            raise InputError(f"{where}.racks[{p}]", "expected a list of rack ids (or null)")
    return n, [list(rs) for rs in racks]


def parse_input(
    doc: Any, path: str
) -> tuple[dict[str, int], dict[str, list[list[str | None]]], list[dict[str, Any]]]:
    if not isinstance(doc, dict):
        raise InputError(path, "expected an object with 'topics' and 'members'")
    _no_unknown(doc, _INPUT_KEYS, path)
    for key in ("topics", "members"):
        if key not in doc:
            raise InputError(path, f"missing field '{key}'")
    raw_topics = doc["topics"]
    if not isinstance(raw_topics, dict):
        raise InputError(f"{path}: topics", "expected an object mapping topic to partition count")
    topics: dict[str, int] = {}
    racks: dict[str, list[list[str | None]]] = {}
    for t, value in raw_topics.items():
        n, rs = _topic(value, f"{path}: topics.{t}")
        topics[t] = n
        if rs is not None:
            racks[t] = rs
    total = sum(topics.values())
    if total > MAX_PARTITIONS:
        raise InputError(f"{path}: topics", f"{total:,} partitions in all; the limit is {MAX_PARTITIONS:,}")
    if not isinstance(doc["members"], list):
        raise InputError(f"{path}: members", "expected a list")
    if len(doc["members"]) > MAX_MEMBERS:
        raise InputError(f"{path}: members", f"{len(doc['members']):,} members; the limit is {MAX_MEMBERS:,}")
    members: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, m in enumerate(doc["members"]):
        where = f"{path}: members[{i}]"
        if not isinstance(m, dict):
            raise InputError(where, "expected an object")
        _no_unknown(m, _MEMBER_KEYS, where)
        for key in ("member_id", "topics"):
            if key not in m:
                raise InputError(where, f"missing field '{key}'")
        mid = m["member_id"]
        if not isinstance(mid, str):
            raise InputError(f"{where}.member_id", "expected a string")
        if mid in seen:
            raise InputError(f"{where}.member_id", f"duplicate member id {mid[:80]!r}")
        seen.add(mid)
        iid = m.get("group_instance_id")
        if iid is not None and not isinstance(iid, str):
            raise InputError(f"{where}.group_instance_id", "expected a string or null")
        ts = m["topics"]
        if not isinstance(ts, list) or not all(isinstance(t, str) for t in ts):
            raise InputError(f"{where}.topics", "expected a list of topic names")
        gen = m.get("generation", -1)
        # the generation travels as an INT32 (ConsumerProtocolSubscription.generationId)
        if not isinstance(gen, int) or isinstance(gen, bool) or not -(2**31) <= gen < 2**31:
            raise InputError(f"{where}.generation", "expected a 32-bit integer")
        owned = _partitions(m.get("owned", {}), f"{where}.owned")
        rack = m.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise InputError(f"{where}.rack", "expected a string or null")
        members.append(
            {
                "member_id": mid,
                "group_instance_id": iid,
                "topics": tuple(ts),
                "owned": owned,
                "generation": gen,
                "rack": rack,
            }
        )
    return topics, racks, members


def _no_unknown(obj: Mapping[str, Any], known: frozenset[str], where: str) -> None:
    unknown = sorted(set(obj) - known)
    if unknown:
        raise InputError(where, f"unknown field(s) {unknown}; known: {sorted(known)}")


def parse_previous(doc: Any, path: str) -> dict[str, dict[str, tuple[int, ...]]]:
    if isinstance(doc, dict) and isinstance(doc.get("assignment"), dict):
        doc = doc["assignment"]  # a previous output of this command
    if not isinstance(doc, dict):
        raise InputError(path, "expected an object mapping member id to its partitions")
    return {mid: _partitions(parts, f"{path}: {mid}") for mid, parts in doc.items()}


def _subscription(name: str, m: Mapping[str, Any]) -> MemberSubscription:
    topics, owned, gen, rack = m["topics"], m["owned"], m["generation"], m.get("rack")
    if name in ("sticky", "sticky-optimal"):
        data = sticky_user_data(owned, gen) if owned or gen >= 0 else None
        sub = Subscription(topics, data, {}, gen, rack)
    elif name in ("cooperative-sticky", "cooperative-sticky-optimal"):
        sub = Subscription(topics, coop_user_data(gen), owned, gen, rack)
    else:
        sub = Subscription(topics, None, owned, gen, rack)
    return MemberSubscription(m["member_id"], sub, m["group_instance_id"])


def _minimum(
    topics: Mapping[str, int],
    members: list[dict[str, Any]],
    previous: Mapping[str, Mapping[str, tuple[int, ...]]],
) -> tuple[int, str]:
    subscribed = {t for m in members for t in m["topics"] if topics.get(t, 0) > 0}
    known = {t: n for t, n in topics.items() if t in subscribed}
    if len({frozenset(m["topics"]) for m in members}) <= 1:
        ids = [m["member_id"] for m in members]
        return minimum_moves_from(known, ids, previous), "closed form (identical subscriptions)"
    # Different subscriptions: the eager sticky assignor's general path is the optimum among
    # the most balanced assignments (checked against z3 by properties/assignors.py).
    subs = [
        MemberSubscription(
            m["member_id"],
            Subscription(m["topics"], sticky_user_data(previous.get(m["member_id"], {}), 0)),
        )
        for m in members
    ]
    best = StickyOptimalAssignor().assign(topics, subs)
    moved = count_moves(previous, {k: v.partitions for k, v in best.items()})
    return moved, "optimum among the most balanced assignments (different subscriptions)"
