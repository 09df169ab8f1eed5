"""A TLC counterexample as a timeline a person can read, in the layout of
``groupspec simulate``: one line per step, *when* (the step number; the spec has no
clock), *who* (the client, or the coordinator), *what* (the action, its member and error,
and what changed in the group and in the clients' ownership).

The spec's auxiliary variable ``last_action`` (outside the VIEW, so it does not split
states) names the action that ran, its client, member and error; the changes come from
comparing each state with the one before.
"""

from __future__ import annotations

from groupspec.modelcheck.tlc import CheckResult, TraceState, Violation
from groupspec.modelcheck.values import Function, Record, Value

#: Actions the coordinator takes on its own (timers) or on a request.
COORDINATOR_ACTIONS = frozenset(
    {
        "JoinGroup",
        "SyncGroup",
        "Heartbeat",
        "LeaveGroup",
        "OffsetCommit",
        "ExpireHeartbeat",
        "ExpirePendingMember",
        "ExpireJoin",
        "ExpireSync",
        "DeleteGroup",
    }
)


def show(value: Value | None) -> str:
    """``value`` in compact TLA+-like notation (``-`` for none)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, frozenset):
        return "{" + ",".join(sorted(show(v) for v in value)) + "}"
    if isinstance(value, tuple):
        return "<<" + ",".join(show(v) for v in value) + ">>"
    if isinstance(value, Function):
        return "(" + " ".join(f"{show(k)}:{show(v)}" for k, v in value.items()) + ")"
    if isinstance(value, Record):
        return "[" + " ".join(f"{k}={show(v)}" for k, v in value.items()) + "]"
    if isinstance(value, str) and not isinstance(value, int):
        return str(value)
    return str(value)


def _field(state: dict[str, Value], var: str, name: str) -> Value | None:
    rec = state.get(var)
    if isinstance(rec, dict):
        return rec.get(name)
    return None


def _changed(before: Value | None, after: Value | None, label: str) -> str | None:
    if before == after or after is None:
        return None
    if before is None:
        return f"{label}={show(after)}"
    return f"{label} {show(before)}->{show(after)}"


def changes(before: dict[str, Value], after: dict[str, Value]) -> list[str]:
    """What a step changed that a reader cares about: the group's state, generation,
    leader and members, and each client's state and owned partitions."""
    out: list[str] = []
    for name, label in (
        ("state", "state"),
        ("generation_id", "generation"),
        ("leader_id", "leader"),
        ("members", "members"),
    ):
        text = _changed(_field(before, "group", name), _field(after, "group", name), label)
        if text:
            out.append(text)
    for var, label in (("client_state", ""), ("owned", "owns ")):
        b, a = before.get(var), after.get(var)
        if isinstance(b, Function) and isinstance(a, Function):
            for client, value in a.items():
                if b.get(client) != value:
                    out.append(f"{show(client)} {label}{show(b.get(client))}->{show(value)}")
    if before.get("early_timer") is False and after.get("early_timer") is True:
        out.append("(a timer fired early: timing fault)")
    return out


#: Next-state relations of model wrappers (MCStorm.tla's StormNext conjoins Next with a
#: history variable): TLC labels every step with the wrapper's name, so the step's own
#: name is taken from ``last_action``.
WRAPPER_ACTIONS = frozenset({"StormNext"})


def _action(state: TraceState) -> str:
    last = state.values.get("last_action")
    if state.action in WRAPPER_ACTIONS and isinstance(last, dict):
        name = last.get("name")
        if isinstance(name, str):
            return name
    return state.action


def _who(state: TraceState) -> str:
    action = _action(state)
    last = state.values.get("last_action")
    client = last.get("client") if isinstance(last, dict) else None
    if action in COORDINATOR_ACTIONS:
        return "coordinator"
    if client is not None and str(client) != "NoClient":
        return str(client)
    return "-"


def _what(state: TraceState) -> str:
    last = state.values.get("last_action")
    action = _action(state)
    parts = [action]
    if isinstance(last, dict):
        client = last.get("client")
        member = last.get("member")
        error = last.get("error")
        if action in COORDINATOR_ACTIONS and client is not None and str(client) != "NoClient":
            parts.append(f"from {show(client)}")
        if member is not None and str(member) != "NoMember":
            parts.append(f"member {show(member)}")
        if error is not None and error != "NONE":
            parts.append(f"-> {show(error)}")
    return " ".join(parts)


def timeline_lines(violation: Violation) -> list[str]:
    """The counterexample, one line per step."""
    lines: list[str] = []
    previous: dict[str, Value] = {}
    for state in violation.trace:
        what = _what(state)
        delta = changes(previous, state.values) if previous else []
        if delta:
            what += "; " + ", ".join(delta)
        lines.append(f"step {state.index:4d}  {_who(state):<12} {what}")
        if violation.loop_to is not None and state is violation.trace[-1]:
            lines.append(f"{'':>9}  {'':<12} (loops back to step {violation.loop_to} forever)")
        previous = state.values
    if violation.stutters:
        lines.append(f"{'':>9}  {'':<12} (then nothing happens forever)")
    return lines


def verdict_line(result: CheckResult) -> str:
    """One line: the model, its verdict, and the numbers."""
    stats = []
    if result.distinct is not None:
        stats.append(f"{result.distinct:,} distinct states")
    if result.generated is not None:
        stats.append(f"{result.generated:,} generated")
    if result.depth is not None:
        stats.append(f"depth {result.depth}")
    stats.append(f"{result.seconds:.1f} s")
    rate = result.distinct_per_second
    if rate is not None:
        stats.append(f"{rate:,.0f} distinct/s")
    if result.verdict == "violation" and result.violation is not None:
        v = result.violation
        what = f"VIOLATED {v.name or v.kind} ({v.kind})"
    elif result.verdict == "pass":
        what = "PASS"
    else:
        what = f"ERROR: {result.explanation}"
    return f"{result.model}: {what}; " + ", ".join(stats)


def render(result: CheckResult) -> str:
    """The verdict line, and for a violation the counterexample timeline."""
    lines = [verdict_line(result)]
    if result.violation is not None:
        lines += ["", "Counterexample:", *timeline_lines(result.violation)]
        lines.append(f"{'':>9}  {'':<12} => {result.violation.name or result.violation.kind} "
                     "does not hold")
    if result.verdict == "error" and result.errors:
        lines += ["", *result.errors[:20]]
    return "\n".join(lines)
