"""TLC's printed values and states, parsed (groupspec.modelcheck.values), and the -tool
message stream folded into results (groupspec.modelcheck.tlc) — no Java needed."""

from __future__ import annotations

import pytest

from groupspec.modelcheck.itf import itf_value
from groupspec.modelcheck.timeline import timeline_lines
from groupspec.modelcheck.tlc import TraceState, Violation, _Collector, messages
from groupspec.modelcheck.values import (
    Function,
    ModelValue,
    Record,
    ValueSyntaxError,
    parse_state,
    parse_value,
)


def test_scalars() -> None:
    assert parse_value("-1") == -1
    assert parse_value('"MEMBER_ID_REQUIRED"') == "MEMBER_ID_REQUIRED"
    assert parse_value("TRUE") is True and parse_value("FALSE") is False
    mv = parse_value("NoMember")
    assert isinstance(mv, ModelValue) and mv == "NoMember"


def test_records_functions_sets_and_sequences_nest() -> None:
    text = (
        "[generation_id |-> 2, static_members |-> << >>, members |-> {m1, m2}, "
        "assignment |-> (m1 :> {p1} @@ m2 :> {}), join_request |-> (m1 :> "
        "[client |-> NoClient, inc |-> 0])]"
    )
    value = parse_value(text)
    assert isinstance(value, Record)
    assert value["generation_id"] == 2
    assert value["static_members"] == ()
    assert value["members"] == frozenset({"m1", "m2"})
    assignment = value["assignment"]
    assert isinstance(assignment, Function)
    assert assignment["m1"] == frozenset({"p1"}) and assignment["m2"] == frozenset()
    join = value["join_request"]
    assert isinstance(join, Function)
    assert join["m1"] == {"client": "NoClient", "inc": 0}


def test_sets_of_records_are_hashable() -> None:
    value = parse_value('{[type |-> "A", n |-> 1], [type |-> "B", n |-> (c1 :> 2)]}')
    assert isinstance(value, frozenset) and len(value) == 2


def test_multi_line_state() -> None:
    text = (
        "/\\ faults = 0\n"
        "/\\ last_action = [ client |-> c1,\n  member |-> NoMember,\n  error |-> \"NONE\",\n"
        '  name |-> "SendJoinGroup" ]\n'
        "/\\ owned = (c1 :> {} @@ c2 :> {p1})\n"
    )
    state = parse_state(text)
    assert state["faults"] == 0
    assert state["last_action"] == {
        "client": "c1",
        "member": "NoMember",
        "error": "NONE",
        "name": "SendJoinGroup",
    }
    assert state["owned"] == Function({"c1": frozenset(), "c2": frozenset({"p1"})})


@pytest.mark.parametrize("bad", ["[a |-> ]", "{1, 2", "(a :> 1 @@ )", "1 2", "$", "<<1,, 2>>"])
def test_malformed_values_name_the_offset(bad: str) -> None:
    with pytest.raises(ValueSyntaxError, match="offset"):
        parse_value(bad)


def test_itf_encoding() -> None:
    value = parse_value('[n |-> 3, s |-> {1}, f |-> (c1 :> TRUE), q |-> <<"x">>, c |-> c1]')
    assert itf_value(value) == {
        "n": {"#bigint": "3"},
        "s": {"#set": [{"#bigint": "1"}]},
        "f": {"#map": [["c1", True]]},
        "q": ["x"],
        "c": "c1",
    }


TOOL_OUTPUT = """\
@!@!@STARTMSG 2200:0 @!@!@
Progress(3) at 2026-11-23 03:50:53: 1,363 states generated (39,204 s/min), 452 distinct states found (13,000 ds/min), 79 states left on queue.
@!@!@ENDMSG 2200 @!@!@
@!@!@STARTMSG 2110:1 @!@!@
Invariant OneOwnerPerGenerationInv is violated.
@!@!@ENDMSG 2110 @!@!@
@!@!@STARTMSG 2121:1 @!@!@
The behavior up to this point is:
@!@!@ENDMSG 2121 @!@!@
@!@!@STARTMSG 2217:4 @!@!@
1: <Initial predicate>
/\\ group = [state |-> "Empty", generation_id |-> 0]
/\\ owned = (c1 :> {} @@ c2 :> {})
/\\ last_action = [name |-> "Init", client |-> NoClient, member |-> NoMember, error |-> "NONE"]

@!@!@ENDMSG 2217 @!@!@
@!@!@STARTMSG 2217:4 @!@!@
2: <SyncGroup line 505, col 5 to line 507, col 63 of module ConsumerGroup>
/\\ group = [state |-> "Stable", generation_id |-> 1]
/\\ owned = (c1 :> {p1} @@ c2 :> {p1})
/\\ last_action = [name |-> "SyncGroup", client |-> c1, member |-> m1, error |-> "NONE"]

@!@!@ENDMSG 2217 @!@!@
@!@!@STARTMSG 2199:0 @!@!@
1363 states generated, 452 distinct states found, 79 states left on queue.
@!@!@ENDMSG 2199 @!@!@
"""


def test_tool_stream_gives_progress_violation_and_trace() -> None:
    seen: list[int] = []
    collector = _Collector(lambda p: seen.append(p.distinct), 0.0)
    for code, severity, text in messages(TOOL_OUTPUT.splitlines(keepends=True)):
        collector.feed(code, severity, text)
    assert seen == [452, 452]
    assert collector.generated == 1363
    v = collector.violation
    assert v is not None and v.kind == "invariant" and v.name == "OneOwnerPerGenerationInv"
    assert [s.action for s in v.trace] == ["Init", "SyncGroup"]
    lines = timeline_lines(v)
    assert lines[1].split() == [
        "step", "2", "coordinator", "SyncGroup", "from", "c1", "member", "m1;",
        "state", "Empty->Stable,", "generation", "0->1,", "c1", "owns", "{}->{p1},",
        "c2", "owns", "{}->{p1}",
    ]  # fmt: skip


def test_timeline_names_a_wrapper_step_after_last_action() -> None:
    """MCStorm.tla's StormNext wraps Next: TLC labels every step StormNext, the timeline
    shows the step's own name from last_action."""
    text = (
        '/\\ last_action = [name |-> "ExpireJoin", client |-> NoClient, member |-> NoMember, '
        'error |-> "NONE"]\n/\\ calm = 1'
    )
    v = Violation(
        "invariant",
        "StormBoundInv",
        "",
        [TraceState(1, "Init", parse_state(text.replace("1", "0"))),
         TraceState(2, "StormNext", parse_state(text))],
    )
    assert timeline_lines(v)[1].split()[2:4] == ["coordinator", "ExpireJoin"]


def test_simulation_progress_counts_states_but_no_distinct_ones() -> None:
    stream = (
        "@!@!@STARTMSG 2209:0 @!@!@\n"
        "Progress(-1) at 2026-11-23 21:25:42: 365 states generated, -1 distinct states found, "
        "-1 states left on queue.\n"
        "@!@!@ENDMSG 2209 @!@!@\n"
    )
    seen: list[int] = []
    collector = _Collector(lambda p: seen.append(p.queue), 0.0)
    for code, severity, text in messages(stream.splitlines(keepends=True)):
        collector.feed(code, severity, text)
    assert collector.generated == 365 and collector.distinct is None and seen == [0]
