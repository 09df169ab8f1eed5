"""Kafka 4.1.2's ConsumerHeartbeatRequestManagerTest, ported to the reference KIP-848 client.

Each test names the Kafka test method it ports (clients/src/test/java/org/apache/kafka/
clients/consumer/internals/ConsumerHeartbeatRequestManagerTest.java); inputs and expected
outcomes are taken as facts about the Java client. The test answers every request by hand.
docs/kafka-tests/kip848-client.md maps each of the Kafka file's methods to its port or says
why it is not ported.
"""

from __future__ import annotations

import pytest

from groupspec.client.classic.consumer import ClusterView
from groupspec.client.config import ConsumerConfig, GroupMembershipOperation
from groupspec.client.consumer.consumer import MemberState
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatAssignment,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.errors import Error
from tests.consumer_protocol_driver import ClientDriver

E = Error
INTERVAL_MS = 1_000
BACKOFF_MS = 100
CLUSTER = ClusterView({"topic": 1}, {("topic", 0): 0})


class Driver(ClientDriver):
    def __init__(self, *, instance: str | None = None, pattern: str | None = None,
                 rack: str | None = None) -> None:
        super().__init__(ConsumerConfig(
            group_id="group", client_id="c", group_instance_id=instance,
            topics=() if pattern is not None else ("topic",), pattern=pattern, client_rack=rack,
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

    def reply(self, error: Error = E.NONE, epoch: int = 1,
              assignment: tuple[int, ...] | None = None) -> None:
        """Answer the oldest heartbeat pending (``assignment``: topic's partitions, or none)."""
        hb = None if assignment is None else HeartbeatAssignment(
            (HeartbeatTopicPartitions(CLUSTER.topic_id("topic"), assignment),) if assignment else ())
        self.answer(ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse(
            error=error, member_id=self.c.member_id, member_epoch=epoch if error is E.NONE else -1,
            heartbeat_interval_ms=INTERVAL_MS if error is E.NONE else 0, assignment=hb))

    def state(self) -> MemberState:
        """The member's state (read through a call: each read is a new one)."""
        return self.c.state

    def pending_beats(self) -> list[ConsumerGroupHeartbeatRequest]:
        return self.beats([r for _, r in self.pending])

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


# Kafka: testSkippingHeartbeat (shouldSkipHeartbeat: true for a member out of the group, here
# a stale one after its poll timer expired; false for a joining member, sent at once)
@pytest.mark.parametrize("skip", [True, False])
def test_skipping_heartbeat(skip: bool) -> None:
    d = Driver()
    if not skip:
        d.find_coordinator()
        assert len(d.beats(d.tick())) == 1  # joining: no interval to wait for
        return
    d.joined()
    d.c.poll_blocked_until_ms = 10**9
    d.tick(10_000 + INTERVAL_MS)  # the poll timer expires: the leave heartbeat
    assert d.state() is MemberState.UNJOINED and d.pending_beats()[-1].member_epoch == -1
    for _ in range(5):
        assert d.beats(d.tick(INTERVAL_MS)) == []


# Kafka: testTimerNotDue
def test_timer_not_due(d: Driver) -> None:
    d.joined()
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    d.reply()
    assert d.beats(d.tick(100)) == []  # less than an interval since the last heartbeat
    assert d.c.next_heartbeat_ms - d.now == INTERVAL_MS - 100
    assert d.beats(d.tick(INTERVAL_MS - 101)) == []
    assert len(d.beats(d.tick(1))) == 1
    # a member that must not heartbeat any more (FATAL): nothing left to wait for
    d.reply(E.GROUP_AUTHORIZATION_FAILED)
    assert d.c.next_deadline() is None and d.tick(INTERVAL_MS) == []


# Kafka: testHeartbeatOutsideInterval (shouldHeartbeatNow: an ACKNOWLEDGING member's
# heartbeat goes out at once, and the interval restarts from it)
def test_heartbeat_outside_interval(d: Driver) -> None:
    d.joined()
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    d.reply(epoch=2, assignment=(0,))
    assert d.state() is MemberState.RECONCILING
    beats = d.beats(d.tick(d.config.poll_interval_ms))  # the poll reconciles: the ack at once
    assert len(beats) == 1 and beats[0].topic_partitions is not None
    assert d.state() is MemberState.STABLE  # onHeartbeatRequestGenerated
    assert d.c.next_heartbeat_ms == d.now + INTERVAL_MS
    d.reply(epoch=2)
    assert d.beats(d.tick(INTERVAL_MS - 1)) == []
    assert len(d.beats(d.tick(1))) == 1


# Kafka: testHeartbeatState (HeartbeatState.buildRequestData: everything when joining, then
# only what changed; the assignment again once a new one was reconciled, even empty)
def test_heartbeat_state(d: Driver) -> None:
    d.find_coordinator()
    join = d.beats(d.tick())[0]
    assert (join.group_id, join.member_id, join.member_epoch) == ("group", d.c.member_id, 0)
    assert join.instance_id is None and join.rebalance_timeout_ms == 10_000
    assert join.subscribed_topic_names == ("topic",) and join.server_assignor == "uniform"
    assert join.topic_partitions == ()
    d.reply(epoch=1, assignment=())
    ack = d.beats(d.tick(d.config.poll_interval_ms))[0]  # the empty assignment reconciled
    assert (ack.member_epoch, ack.instance_id, ack.rebalance_timeout_ms) == (1, None, -1)
    assert ack.subscribed_topic_names is None and ack.server_assignor is None
    assert ack.topic_partitions == ()  # LocalAssignment.NONE -> an empty assignment: sent
    d.reply(epoch=1)
    regular = d.beats(d.tick(INTERVAL_MS))[0]
    assert regular.topic_partitions is None and regular.subscribed_topic_names is None
    # rejoining (fenced): every field again
    d.reply(E.FENCED_MEMBER_EPOCH)
    rejoin = d.beats(d.tick())[0]
    assert (rejoin.member_epoch, rejoin.rebalance_timeout_ms) == (0, 10_000)
    assert rejoin.subscribed_topic_names == ("topic",) and rejoin.server_assignor == "uniform"
    assert rejoin.topic_partitions == ()


CLOSE_MATRIX = [(None, "DEFAULT"), (None, "LEAVE_GROUP"), (None, "REMAIN_IN_GROUP"),
                ("groupInstanceId", "DEFAULT"), ("groupInstanceId", "LEAVE_GROUP"),
                ("groupInstanceId", "REMAIN_IN_GROUP")]


# Kafka: testPollOnLeaving, testPollOnCloseGeneratesRequestIfNeeded (pollOnLeavingMatrix:
# CloseOptions.GroupMembershipOperation; only a dynamic member remaining in the group sends
# no leave heartbeat)
@pytest.mark.parametrize(("instance", "operation"), CLOSE_MATRIX)
def test_poll_on_leaving(instance: str | None, operation: str) -> None:
    d = Driver(instance=instance)
    d.joined()
    leaves = d.beats([r for _, r in d.c.close(d.now, membership_operation=GroupMembershipOperation(operation))])
    if instance is None and operation == "REMAIN_IN_GROUP":
        assert leaves == [] and d.state() is MemberState.LEAVING
    else:
        assert len(leaves) == 1 and leaves[0].member_id == d.c.member_id
        assert d.state() is MemberState.UNSUBSCRIBED  # onHeartbeatRequestGenerated
    assert d.tick(INTERVAL_MS) == []


# Kafka: testPollTimerExpirationShouldNotMarkMemberStaleIfMemberAlreadyLeaving (the leave
# started before the expired poll timer was noticed: a plain leave, not a stale member's)
def test_poll_timer_expiration_should_not_mark_member_stale_if_member_already_leaving(d: Driver) -> None:
    d.joined()
    d.c.poll_blocked_until_ms = 10**9
    d.now += 10_000 + 1  # the poll timer has expired, and no tick has run since
    leaves = d.beats([r for _, r in d.c.close(d.now)])
    assert len(leaves) == 1 and leaves[0].member_epoch == -1
    assert d.state() is MemberState.UNSUBSCRIBED  # not STALE (UNJOINED)
    assert [e.kind for e in d.c.events if e.kind == "lost"] == []


# Kafka: testFencedMemberStopHeartbeatUntilItReleasesAssignmentToRejoin (with no listener,
# onPartitionsLost takes no time: FENCED ends at once, and the rejoin heartbeat is not held
# back by the failed attempt's backoff, which the fencing resets)
def test_fenced_member_stop_heartbeat_until_it_releases_assignment_to_rejoin(d: Driver) -> None:
    d.joined()
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    d.reply(E.FENCED_MEMBER_EPOCH)
    assert d.state() is MemberState.JOINING and d.c.member_epoch == 0
    beats = d.beats(d.tick())
    assert len(beats) == 1 and beats[0].member_epoch == 0


# Kafka: testConsumerAcksReconciledAssignmentAfterAckLost (the ack fails: HeartbeatState.reset,
# so the next heartbeat carries the assignment again. Kafka's test fails the request with a
# TimeoutException; here the request times out in flight, a disconnection, so the coordinator
# is looked up again first)
def test_consumer_acks_reconciled_assignment_after_ack_lost(d: Driver) -> None:
    d.joined()
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    d.reply(epoch=2, assignment=(0,))
    ack = d.beats(d.tick(d.config.poll_interval_ms))[0]
    assert ack.topic_partitions is not None and ack.topic_partitions[0].partitions == (0,)
    d.pending = [(rid, r) for rid, r in d.pending if not isinstance(r, ConsumerGroupHeartbeatRequest)]
    d.tick(d.config.request_timeout_ms)  # the ack is lost
    assert not d.c.coordinator_known
    d.find_coordinator()
    again = d.beats(d.tick(BACKOFF_MS))
    assert len(again) == 1 and again[0].topic_partitions is not None
    assert again[0].topic_partitions[0].partitions == (0,)
    assert again[0].subscribed_topic_names == ("topic",)


# Kafka: testRegexInHeartbeatLifecycle (the first steps: the pattern in the first heartbeat,
# not in the next ones while it is unchanged; the reference's subscription never changes, so
# the steps that change or remove the pattern are not ported)
def test_regex_in_heartbeat_lifecycle() -> None:
    d = Driver(pattern="t1.*")
    d.find_coordinator()
    join = d.beats(d.tick())[0]
    assert join.subscribed_topic_regex == "t1.*" and join.subscribed_topic_names is None
    d.reply()
    beat = d.beats(d.tick(INTERVAL_MS))[0]
    assert beat.subscribed_topic_regex is None


# Kafka: testDisconnect (the heartbeat's connection is lost, here by the request timing out in
# flight: a failed attempt, the coordinator looked up again, and the next heartbeat only after
# the backoff)
def test_disconnect(d: Driver) -> None:
    d.joined()
    assert len(d.beats(d.tick(INTERVAL_MS))) == 1
    d.tick(d.config.request_timeout_ms)
    assert not d.c.coordinator_known and d.c.heartbeat_rid is None
    d.find_coordinator()  # answered at once: no time has passed
    assert d.beats(d.tick(BACKOFF_MS - 1)) == []
    assert len(d.beats(d.tick(1))) == 1


# Kafka: testRackIdInHeartbeatLifecycle (client.rack: sent while JOINING only; none configured,
# none sent)
def test_rack_id_in_heartbeat_lifecycle() -> None:
    d = Driver(rack="rack1")
    d.find_coordinator()
    assert d.beats(d.tick())[0].rack_id == "rack1"
    d.reply()
    assert d.beats(d.tick(INTERVAL_MS))[0].rack_id is None  # STABLE
    d.reply(E.FENCED_MEMBER_EPOCH)
    assert d.beats(d.tick())[0].rack_id == "rack1"  # JOINING again
    d2 = Driver()
    d2.find_coordinator()
    assert d2.beats(d2.tick())[0].rack_id is None
