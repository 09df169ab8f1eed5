"""``groupspec assign --assignor NAME INPUT.json [--previous PREV.json]``: run an assignor.

INPUT.json holds the leader's view of a rebalance::

    {
      "topics": {"orders": 6, "payments": 3},          # partition counts from metadata
      "members": [                                     # in JoinGroup order
        {"member_id": "c1", "group_instance_id": null, # group_instance_id is optional
         "topics": ["orders", "payments"],
         "owned": {"orders": [0, 1]},                 # optional, default {}
         "generation": 4}                              # optional, default -1
      ]
    }

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
from groupspec.assignors.moves import count_moves, minimum_moves_from
from groupspec.assignors.registry import ASSIGNOR_NAMES, get_assignor
from groupspec.assignors.sticky import StickyAssignor
from groupspec.assignors.sticky import encode_user_data as sticky_user_data
from groupspec.cli.inputs import MAX_MEMBERS, MAX_PARTITIONS, InputError, fail, read_text
from groupspec.protocol.consumer_protocol import Subscription, normalize

#: the fields an input file may hold (others are rejected, as `simulate` rejects them)
_INPUT_KEYS = frozenset({"topics", "members"})
_MEMBER_KEYS = frozenset({"member_id", "group_instance_id", "topics", "owned", "generation"})


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
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        assignor = get_assignor(args.assignor)
    except ValueError as e:
        return fail("--assignor", str(e))
    topics, members = parse_input(_load(args.input), args.input)
    previous = parse_previous(_load(args.previous), args.previous) if args.previous else None
    subs = [_subscription(assignor.name, m) for m in members]
    result = assignor.assign(topics, subs)
    parts = {k: v.partitions for k, v in result.items()}
    out: dict[str, Any] = {"assignor": assignor.name}
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


def parse_input(doc: Any, path: str) -> tuple[dict[str, int], list[dict[str, Any]]]:
    if not isinstance(doc, dict):
        raise InputError(path, "expected an object with 'topics' and 'members'")
    _no_unknown(doc, _INPUT_KEYS, path)
    for key in ("topics", "members"):
        if key not in doc:
            raise InputError(path, f"missing field '{key}'")
    topics = doc["topics"]
    if not isinstance(topics, dict):
        raise InputError(f"{path}: topics", "expected an object mapping topic to partition count")
    for t, n in topics.items():
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_PARTITIONS:
            shown = repr(n) if len(repr(n)) < 40 else repr(n)[:30] + "..."
            raise InputError(f"{path}: topics.{t}", f"expected a partition count from 0 to {MAX_PARTITIONS:,}, got {shown}")
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
        members.append(
            {"member_id": mid, "group_instance_id": iid, "topics": tuple(ts), "owned": owned, "generation": gen}
        )
    return dict(topics), members


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
    topics, owned, gen = m["topics"], m["owned"], m["generation"]
    if name == "sticky":
        data = sticky_user_data(owned, gen) if owned or gen >= 0 else None
        sub = Subscription(topics, data, {}, gen)
    elif name == "cooperative-sticky":
        sub = Subscription(topics, coop_user_data(gen), owned, gen)
    else:
        sub = Subscription(topics, None, owned, gen)
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
    best = StickyAssignor().assign(topics, subs)
    moved = count_moves(previous, {k: v.partitions for k, v in best.items()})
    return moved, "optimum among the most balanced assignments (different subscriptions)"
