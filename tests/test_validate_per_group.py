"""One DeleteGroups or DescribeGroups exchange about several groups is replayed by each
group it names (validate/grouping.py per_group)."""

from __future__ import annotations

import io

from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error
from groupspec.trace.events import APIS, WireExchange
from groupspec.trace.jsonl import TraceWriter
from groupspec.validate.grouping import group_trace, per_group
from groupspec.validate.load import load_bytes


def _exchange(req: m.Request, resp: m.Response | None, group_id: str = "") -> WireExchange:
    api = m.api_name(req)
    return WireExchange(seq=1, connection="c1", client_id="admin", api=api, api_key=APIS[api][0],
                        api_version=2, correlation_id=7, group_id=group_id, sent_ms=100.0,
                        received_ms=101.0, request=req, response=resp)


def test_a_delete_of_two_groups_is_one_exchange_per_group() -> None:
    ev = _exchange(m.DeleteGroupsRequest(groups_names=("a", "b", "a")), m.DeleteGroupsResponse(results=(
        m.DeletableGroupResult("a", Error.NONE), m.DeletableGroupResult("b", Error.NON_EMPTY_GROUP))))
    parts = per_group(ev)
    assert [(p.group_id, p.request, p.response) for p in parts] == [
        ("a", m.DeleteGroupsRequest(groups_names=("a",)),
         m.DeleteGroupsResponse(results=(m.DeletableGroupResult("a", Error.NONE),))),
        ("b", m.DeleteGroupsRequest(groups_names=("b",)),
         m.DeleteGroupsResponse(results=(m.DeletableGroupResult("b", Error.NON_EMPTY_GROUP),))),
    ]
    assert all((p.seq, p.connection, p.correlation_id, p.sent_ms) == (1, "c1", 7, 100.0) for p in parts)


def test_a_describe_of_two_groups_is_one_exchange_per_group() -> None:
    def described(gid: str) -> m.DescribedGroup:
        return m.DescribedGroup(Error.NONE, gid, "Empty", "consumer", "")

    ev = _exchange(m.DescribeGroupsRequest(groups=("x", "y")),
                   m.DescribeGroupsResponse(groups=(described("y"), described("x"))))
    parts = per_group(ev)
    assert [(p.group_id, p.request.groups, p.response) for p in parts] == [  # type: ignore[union-attr]
        ("x", ("x",), m.DescribeGroupsResponse(groups=(described("x"),))),
        ("y", ("y",), m.DescribeGroupsResponse(groups=(described("y"),))),
    ]


def test_each_named_group_gets_its_part_and_an_unanswered_one_stays_unanswered() -> None:
    out = io.StringIO()
    w = TraceWriter(out, source="recorder")
    w.write(_exchange(m.DeleteGroupsRequest(groups_names=("a", "b")), None))
    grouped = group_trace(load_bytes(out.getvalue().encode(), "t"))
    assert sorted(grouped.groups) == ["a", "b"]
    for gid in ("a", "b"):
        g = grouped.groups[gid]
        assert [x.event.request for x in g.exchanges] == [m.DeleteGroupsRequest(groups_names=(gid,))]
        assert [gap.problem.kind for gap in g.gaps] == ["missing_response"]
    # a single group stays as it was: no fan-out needed
    assert per_group(_exchange(m.DeleteGroupsRequest(groups_names=()), m.DeleteGroupsResponse())) == []
