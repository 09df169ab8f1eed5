"""Kafka 4.1.2's ConsumerHeartbeatRequestManagerTest, ported to the reference KIP-848 client.

Each test names the Kafka test method it ports (clients/src/test/java/org/apache/kafka/
clients/consumer/internals/ConsumerHeartbeatRequestManagerTest.java); inputs and expected
outcomes are taken as facts about the Java client. The test answers every request by hand.
"""

from __future__ import annotations

import pytest

from groupspec.client.classic.consumer import ClusterView
from groupspec.client.config import ConsumerConfig
from groupspec.client.consumer.consumer import MemberState
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from groupspec.protocol.errors import Error
from tests.consumer_protocol_driver import ClientDriver

E = Error
INTERVAL_MS = 1_000
BACKOFF_MS = 100
CLUSTER = ClusterView({"topic": 1}, {("topic", 0): 0})


class Driver(ClientDriver):
    def __init__(self, *, instance: str | None = None) -> None:
        super().__init__(ConsumerConfig(
            group_id="group", client_id="c", group_instance_id=instance, topics=("topic",),
            group_protocol="consumer", heartbeat_interval_ms=INTERVAL_MS, session_timeout_ms=45_000,
            max_poll_interval_ms=10_000, retry_backoff_ms=BACKOFF_MS, remote_assignor="uniform"),
            CLUSTER)

    def beats(self, reqs: list[m.Request]) -> list[ConsumerGroupHeartbeatRequest]:
        return [r for r in reqs if isinstance(r, ConsumerGroupHeartbeatRequest)]

    def find_coordinator(self) -> None:
        self.tick()
        for _ in range(5):  # looked up from the next application poll
            if any(isinstance(r, m.FindCoordinatorRequest) for _, r in self.pending):
                break
            self.tick(self.config.poll_interval_ms)
        self.answer(m.FindCoordinatorRequest, m.FindCoordinatorResponse(error=E.NONE, node_id=1))

    def reply(self, error: Error = E.NONE, epoch: int = 1) -> None:
        self.answer(ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse(
            error=error, member_id=self.c.member_id, member_epoch=epoch if error is E.NONE else -1,
            heartbeat_interval_ms=INTERVAL_MS if error is E.NONE else 0))

    def joined(self) -> None:
        """The first heartbeat answered: a member at epoch 1 with nothing assigned."""
        self.find_coordinator()
        assert len(self.beats(self.tick())) == 1
        self.reply()
        assert self.c.state is MemberState.STABLE


@pytest.fixture
def d() -> Driver:
    return Driver()


# Kafka: testHeartbeatOnStartup, testNoCoordinator
def test_first_heartbeat_once_the_coordinator_is_known(d: Driver) -> None:
    assert d.beats(d.tick()) == []  # no coordinator: no heartbeat
    d.answer(m.FindCoordinatorRequest, m.FindCoordinatorResponse(error=E.NONE, node_id=1))
    assert len(d.beats(d.tick())) == 1
    assert d.beats(d.tick()) == []  # not again while the first is in flight


# Kafka: testFirstHeartbeatIncludesRequiredInfoToJoinGroupAndGetAssignments
def test_first_heartbeat_carries_what_joining_needs() -> None:
    d = Driver(instance="group-instance-id")
    d.find_coordinator()
    beat = d.beats(d.tick())[0]
    assert beat.member_epoch == 0
    assert beat.subscribed_topic_names == ("topic",)
    assert beat.rebalance_timeout_ms == 10_000
    assert (beat.group_id, beat.instance_id) == ("group", "group-instance-id")


# Kafka: testValidateConsumerGroupHeartbeatRequest
def test_full_heartbeat_then_only_what_changed(d: Driver) -> None:
    d.joined()
    beat = d.beats(d.tick(INTERVAL_MS))[0]
    assert (beat.member_id, beat.member_epoch) == (d.c.member_id, 1)
    # the subscription, rebalance timeout and assignor were sent and did not change
    assert beat.subscribed_topic_names is None and beat.rebalance_timeout_ms == -1
    assert beat.server_assignor is None and beat.topic_partitions is None


# Kafka: testSuccessfulHeartbeatTiming
def test_heartbeat_interval_runs_from_the_send(d: Driver) -> None:
    d.joined()
    sent_at = d.now + INTERVAL_MS
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    d.tick(INTERVAL_MS // 3)
    d.reply()  # answered a third of an interval later
    d.tick(sent_at + INTERVAL_MS - 1 - d.now)
    assert d.beats([r for _, r in d.pending]) == []
    assert len(d.beats(d.tick(1))) == 1  # one interval after the send, not after the answer


# Kafka: testHeartbeatNotSentIfAnotherOneInFlight
def test_no_heartbeat_while_one_is_in_flight_then_after_the_backoff(d: Driver) -> None:
    d.joined()
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    assert d.beats(d.tick(INTERVAL_MS)) == []
    assert d.beats(d.tick(INTERVAL_MS)) == []
    d.reply()  # answered late: the interval has long expired
    assert d.beats(d.tick(BACKOFF_MS - 1)) == []
    assert len(d.beats(d.tick(1))) == 1  # only the backoff after the answer


# Kafka: testHeartbeatResponseOnErrorHandling
@pytest.mark.parametrize(("error", "fatal"), [
    (E.NONE, False), (E.COORDINATOR_NOT_AVAILABLE, False), (E.COORDINATOR_LOAD_IN_PROGRESS, False),
    (E.NOT_COORDINATOR, False), (E.GROUP_AUTHORIZATION_FAILED, True), (E.INVALID_REQUEST, True),
    (E.UNKNOWN_MEMBER_ID, False), (E.FENCED_MEMBER_EPOCH, False), (E.UNSUPPORTED_ASSIGNOR, True),
    (E.UNSUPPORTED_VERSION, True), (E.UNRELEASED_INSTANCE_ID, True), (E.FENCED_INSTANCE_ID, True),
    (E.GROUP_MAX_SIZE_REACHED, True),
])
def test_heartbeat_error_handling(error: Error, fatal: bool) -> None:
    d = Driver()
    d.joined()
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    d.reply(error)
    if fatal:
        assert d.c.fatal == error.name and d.tick(INTERVAL_MS) == []
        return
    assert d.c.fatal is None
    if error is E.NONE:
        wait = INTERVAL_MS
    elif error is E.COORDINATOR_LOAD_IN_PROGRESS:
        wait = BACKOFF_MS
        assert d.c.coordinator_known
    else:
        wait = 0
    if error in (E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR):
        assert not d.c.coordinator_known
        d.find_coordinator()
        wait = 0
    if wait:
        assert d.beats(d.tick(wait - 1)) == []
        assert len(d.beats(d.tick(1))) == 1
    else:
        assert len(d.beats(d.tick(0))) == 1
    if error in (E.UNKNOWN_MEMBER_ID, E.FENCED_MEMBER_EPOCH):
        beat = d.beats([r for _, r in d.pending])[-1]
        assert beat.member_epoch == 0 and beat.subscribed_topic_names == ("topic",)


# Kafka: testSendingLeaveGroupHeartbeatWhenPreviousOneInFlight
def test_leave_heartbeat_goes_out_with_another_in_flight(d: Driver) -> None:
    d.joined()
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    leave = d.beats([r for _, r in d.c.close(d.now)])
    assert len(leave) == 1 and leave[0].member_epoch == -1


# Kafka: testPollTimerExpiration
def test_poll_timer_expiry_sends_a_leave_heartbeat(d: Driver) -> None:
    d.joined()
    d.c.poll_blocked_until_ms = 10**9
    leaves = []
    for _ in range(12):
        leaves += [b for b in d.beats(d.tick(INTERVAL_MS)) if b.member_epoch < 0]
        if d.beats([r for _, r in d.pending]) and not leaves:
            d.reply()
    assert len(leaves) == 1 and leaves[0].member_epoch == -1
