"""A join timer that re-arms itself with no delay (docs/deviations.md, "A join timer
re-armed with no delay").

GroupMetadataManager.completeClassicGroupJoin, finding that no member rejoined (a static
member that has not, the dynamic ones gone), re-arms the join timer at the group's rebalance
timeout: 0 when every member's is 0 or negative (JoinGroup v1+ carries -1 as sent). Kafka's
timer then fires again at once, over and over, until a member rejoins or a session expires.
The reference's clock moves 1 ms a firing, and skips the firings that can change nothing;
before that, ``Coordinator.advance`` (and with it ``groupspec validate`` on a trace holding
such a group) never returned. tests/test_coordinator_kafka_jar.py compares the same story
with Kafka's own coordinator.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from groupspec.coordinator.config import CoordinatorConfig
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Subscription
from groupspec.protocol.errors import Error
from groupspec.protocol.group_state import GroupState
from tests.deadline import within

GID = "g"
PROTOCOLS = (m.JoinGroupProtocol("range", Subscription(("t",)).encode()),)


@pytest.fixture(autouse=True)
def _bounded() -> Iterator[None]:
    """A hang is the failure this file is about: fail after 10 s instead of waiting (the file takes about 1 s)."""
    with within(10, "the coordinator"):
        yield


def _join(instance: str | None, member_id: str = "", rebalance_ms: int = -1) -> m.JoinGroupRequest:
    return m.JoinGroupRequest(group_id=GID, member_id=member_id, group_instance_id=instance,
                              protocols=PROTOCOLS, session_timeout_ms=10_000,
                              rebalance_timeout_ms=rebalance_ms, version=5)


class Story:
    def __init__(self) -> None:
        self.coord = Coordinator(CoordinatorConfig(group_initial_rebalance_delay_ms=3_000))
        self.rid = 0

    def send(self, req: m.Request, now: int) -> None:
        self.rid += 1
        self.coord.handle(self.rid, req, now)

    def join(self, req: m.JoinGroupRequest, now: int) -> m.JoinGroupResponse:
        """The JoinGroup's answer, given at once."""
        self.rid += 1
        (answer,) = [resp for rid, resp in self.coord.handle(self.rid, req, now).responses if rid == self.rid]
        assert isinstance(answer, m.JoinGroupResponse)
        return answer

    def spinning(self) -> int:
        """A Stable group of a static member whose rebalance timeout is -1, a dynamic member
        joined and left: the group waits for the static member, its join timer due at 3,000
        with a delay of 0. Returns the static member's id."""
        self.send(_join("i1", rebalance_ms=20_000), 0)
        (joined,) = [resp for _, resp in self.coord.advance(3_000).responses]
        assert isinstance(joined, m.JoinGroupResponse)
        static = joined.member_id
        self.send(m.SyncGroupRequest(group_id=GID, generation_id=1, member_id=static, group_instance_id="i1"), 3_000)
        # its rejoin with -1 completes at once (it is the only member); its sync comes before
        # the sync timer, due now, is fired
        rejoined = self.join(_join("i1", static), 3_000)
        self.send(m.SyncGroupRequest(group_id=GID, generation_id=rejoined.generation_id, member_id=static,
                                     group_instance_id="i1"), 3_000)
        required = self.join(_join(None), 3_000)
        assert required.error is Error.MEMBER_ID_REQUIRED
        self.send(_join(None, required.member_id), 3_000)
        self.send(m.LeaveGroupRequest(group_id=GID, members=(m.MemberIdentity(required.member_id),)), 3_000)
        g = self.coord.state.groups[GID]
        assert g.state is GroupState.PreparingRebalance and list(g.members) == [static]
        assert g.join_timer is not None and g.join_timer.deadline_ms == 3_000
        return rejoined.generation_id


def test_the_join_timer_fires_on_as_the_clock_moves() -> None:
    """Advancing past the timer returns; the timer is then due 1 ms after the advance's
    time, as if it had fired at every millisecond on the way, and the group still waits."""
    s = Story()
    generation = s.spinning()
    s.coord.advance(3_001)
    g = s.coord.state.groups[GID]
    assert g.join_timer is not None and g.join_timer.deadline_ms == 3_002
    s.coord.advance(8_000)
    g = s.coord.state.groups[GID]
    assert g.state is GroupState.PreparingRebalance and g.generation_id == generation
    assert g.join_timer is not None and g.join_timer.deadline_ms == 8_001


def test_the_static_member_s_session_ends_the_wait() -> None:
    """The firings stop where something else happens: the static member's session (its
    last heartbeat at 3,000, 10 s) expires at 13,000, the group is left Empty in the next
    generation, and an advance far past it returns."""
    s = Story()
    generation = s.spinning()
    s.coord.advance(300_000)
    g = s.coord.state.groups.get(GID)
    assert g is None or (g.state is GroupState.Empty and g.generation_id == generation + 1 and not g.members)


def test_a_rejoin_completes_the_join_at_once() -> None:
    s = Story()
    generation = s.spinning()
    s.coord.advance(5_000)
    static = next(iter(s.coord.state.groups[GID].members))
    answer = s.join(_join("i1", static), 5_000)
    assert answer.error is Error.NONE and answer.generation_id == generation + 1
