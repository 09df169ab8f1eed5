"""The scripted scenarios of mixed groups: classic-protocol and consumer-protocol (KIP-848)
members in one group, as in an online migration.

Kafka 4.1.2 lets the two protocols share a group (``group.consumer.migration.policy``,
``bidirectional`` by default): a ConsumerGroupHeartbeat that joins a classic group of the
consumer embedded protocol converts it to a consumer group
(GroupMetadataManager.java, getOrMaybeCreateConsumerGroup -> convertToConsumerGroup); a
classic member of a consumer group is served by the coordinator, whose server-side
assignor computes its partitions, through JoinGroup, SyncGroup and Heartbeat
(classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
classicGroupHeartbeatToConsumerGroup), with its member epoch as its generation; and when
the last consumer-protocol member leaves a group of classic members, the group goes back
to a classic group, which rebalances (validateOnlineDowngradeWithFencedMembers ->
convertToClassicGroup).

A mixed scenario's *client* names two libraries, ``CLASSIC+CONSUMER``
(:data:`MIXED_CLIENTS`): the classic members are ``CLASSIC`` (kafka-python or
confluent-kafka with ``group.protocol=classic``, the classic suite's drivers), the
consumer-protocol members ``CONSUMER`` (confluent-kafka with ``group.protocol=consumer``,
or the Java consumer). docs/conformance.md describes each scenario.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from groupspec.conformance.consumer_scenarios import (
    HEARTBEAT,
    REBALANCE_TIMEOUT_MS,
    ConsumerContext,
)
from groupspec.conformance.drivers import CLIENTS, CONSUMER_CLIENTS, MemberConfig
from groupspec.conformance.members import Member, ScenarioError, partitions_text
from groupspec.conformance.scenarios import SESSION_MS, Context, Scenario

#: the library pairs a mixed scenario runs with: classic members' + consumer members'
MIXED_CLIENTS = ("kafka-python+confluent-kafka", "confluent-kafka+java")
#: every pair the drivers can run
MIXED_PAIRS = tuple(f"{a}+{b}" for a in CLIENTS for b in CONSUMER_CLIENTS)

#: max.poll.interval.ms of the classic members: their rebalance timeout, which is how long
#: a classic group (after a downgrade) waits for its members to rejoin
CLASSIC_POLL_MS = 10000


def split_client(client: str) -> tuple[str, str]:
    """``CLASSIC+CONSUMER`` -> (the classic members' library, the consumer members')."""
    classic, sep, consumer = client.partition("+")
    if not sep or classic not in CLIENTS or consumer not in CONSUMER_CLIENTS:
        raise ValueError(f"a mixed client is CLASSIC+CONSUMER (known: {', '.join(MIXED_PAIRS)}), not {client}")
    return classic, consumer


@dataclass
class MixedContext(ConsumerContext):
    """A :class:`ConsumerContext` whose members may speak either protocol: ``member``
    starts a consumer-protocol member, ``classic`` a classic one."""

    def member(  # type: ignore[override]
        self,
        name: str,
        *,
        max_poll_interval_ms: int = REBALANCE_TIMEOUT_MS,
        group_instance_id: str | None = None,
    ) -> Member:
        """A consumer-protocol member subscribed to every topic of the scenario."""
        _, library = split_client(self.client)
        cfg = MemberConfig(
            client=library, bootstrap=self.bootstrap, group_id=self.group_id, client_id=name,
            topics=tuple(self.topics), max_poll_interval_ms=max_poll_interval_ms,
            group_instance_id=group_instance_id, group_protocol="consumer",
        )
        return self._start(cfg)

    def classic(
        self,
        name: str,
        *,
        strategy: str = "range",
        max_poll_interval_ms: int = CLASSIC_POLL_MS,
        group_instance_id: str | None = None,
    ) -> Member:
        """A classic-protocol member (JoinGroup/SyncGroup) subscribed to every topic."""
        library, _ = split_client(self.client)
        cfg = MemberConfig(
            client=library, bootstrap=self.bootstrap, group_id=self.group_id, client_id=name,
            topics=tuple(self.topics), strategy=strategy, session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=500, max_poll_interval_ms=max_poll_interval_ms,
            group_instance_id=group_instance_id, group_protocol="classic",
        )
        return self._start(cfg)

    def _start(self, cfg: MemberConfig) -> Member:
        m = Member(cfg, self.log_dir)
        self.members.append(m)
        return m

    # -- the broker's side, read from the recording ------------------------------------
    def classic_answers(self, api: str, client_id: str | None = None, after_seq: int = 0,
                        error: str = "NONE") -> list[dict[str, Any]]:
        """The recording's ``api`` exchanges (JoinGroup, SyncGroup, Heartbeat) answered
        ``error``, of ``client_id`` (default any), after ``after_seq``, in order."""
        return [e for e in self.recorded() if e["api"] == api and int(e["seq"]) > after_seq
                and (client_id is None or e["client_id"] == client_id)
                and (e.get("response") or {}).get("error") == error]

    def generation(self, m: Member) -> int:
        """The generation of ``m``'s last JoinGroup answered NONE."""
        joins = self.classic_answers("JoinGroup", m.name)
        if not joins:
            raise ScenarioError(f"the recording shows no JoinGroup of {m.name} answered NONE")
        return int(joins[-1]["response"]["generation_id"])

    def wait_consumer_joined(self, name: str, after_seq: int) -> dict[str, Any]:
        """The first ConsumerGroupHeartbeat of consumer-protocol member ``name`` after
        ``after_seq`` that the broker answered NONE (its join)."""
        return self.wait_exchange(
            f"a ConsumerGroupHeartbeat of {name} answered NONE",
            lambda e: e["api"] == HEARTBEAT and e["client_id"] == name
            and (e.get("response") or {}).get("error") == "NONE", after_seq=after_seq)

    def wait_rejoined(self, members: list[Member], after_seq: int, what: str,
                      timeout_s: float = 30.0) -> dict[str, int]:
        """Wait until each classic member has had a JoinGroup answered NONE after
        ``after_seq``; return each one's generation in the first such answer."""
        out: dict[str, int] = {}
        for m in members:
            join = self.wait_exchange(f"JoinGroup of {m.name} answered NONE {what}",
                                      _joined(m.name), timeout_s=timeout_s, after_seq=after_seq)
            out[m.name] = int(join["response"]["generation_id"])
        return out


def _joined(name: str) -> Callable[[dict[str, Any]], bool]:
    """Whether an exchange is a JoinGroup of client ``name`` answered NONE."""
    return lambda e: (e["api"] == "JoinGroup" and e["client_id"] == name
                      and (e.get("response") or {}).get("error") == "NONE")


def _ctx(ctx: Context) -> MixedContext:
    if not isinstance(ctx, MixedContext):
        raise TypeError("a mixed-group scenario needs a MixedContext")
    return ctx


# -- the scenarios ------------------------------------------------------------------------


def online_upgrade(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.classic("a")
    b = ctx.classic("b")
    ctx.settle_on([a, b])
    gen = max(ctx.generation(a), ctx.generation(b))
    ctx.note(f"a and b (classic) formed a Stable classic group at generation {gen}")
    ctx.wait_consumed([a, b])
    mark = ctx.last_seq()
    c = ctx.member("c")
    joined = ctx.wait_consumer_joined("c", mark)
    ctx.note(f"c (consumer protocol) joined the classic group: member epoch "
             f"{joined['response']['member_epoch']} (seq {joined['seq']}); the group is now a "
             "consumer group")
    ctx.settle_on([a, b, c])
    rejoined = ctx.wait_rejoined([a, b], mark, "after c joined")
    _, epoch = ctx.epoch_of(c)
    ctx.note("a and b rejoined the consumer group: generations "
             + ", ".join(f"{n} {g}" for n, g in sorted(rejoined.items()))
             + f"; c's member epoch {epoch}")
    for m in (a, b, c):
        ctx.commit(m)
    mark = ctx.last_seq()
    ctx.close(a)  # a classic member's LeaveGroup, inside the consumer group
    ctx.settle_on([b, c])
    left = ctx.classic_answers("LeaveGroup", "a", after_seq=mark)
    ctx.note("a left with LeaveGroup" + (f" (seq {left[0]['seq']}, answered NONE)" if left else
                                         " (no LeaveGroup answered NONE in the recording)"))
    ctx.commit(b)
    ctx.commit(c)
    ctx.close(b)  # the last classic member leaves: c alone, still a consumer group
    ctx.settle_on([c])
    ctx.commit(c)
    ctx.close(c)


def downgrade(context: Context) -> None:
    ctx = _ctx(context)
    c = ctx.member("c")
    ctx.settle_on([c])
    ctx.note("c (consumer protocol) created the group: a consumer group")
    a = ctx.classic("a")
    b = ctx.classic("b")
    ctx.settle_on([a, b, c])
    ctx.note(f"a and b (classic) joined the consumer group: generations "
             f"{ctx.generation(a)}, {ctx.generation(b)}")
    ctx.commit(a)
    ctx.commit(c)
    mark = ctx.last_seq()
    ctx.close(c)  # the last consumer-protocol member leaves: Kafka converts back to classic
    told = ctx.wait_exchange(
        "a classic member told to rejoin after c left",
        lambda e: e["api"] in ("Heartbeat", "SyncGroup", "OffsetCommit") and e["client_id"] in ("a", "b")
        and "REBALANCE_IN_PROGRESS" in str(e.get("response")), after_seq=mark)
    ctx.note(f"c left; {told['client_id']}'s {told['api']} was answered REBALANCE_IN_PROGRESS "
             f"(seq {told['seq']}): the group went back to classic and rebalances")
    ctx.settle_on([a, b])
    rejoined = ctx.wait_rejoined([a, b], mark, "after c left")
    ctx.note("a and b rejoined the classic group: generations "
             + ", ".join(f"{n} {g}" for n, g in sorted(rejoined.items())))
    ctx.commit(a)
    ctx.commit(b)
    ctx.close(a)
    ctx.settle_on([b])
    ctx.commit(b)
    ctx.close(b)


def classic_rejoin(context: Context) -> None:
    ctx = _ctx(context)
    c = ctx.member("c")
    # the consumer group first: a ConsumerGroupHeartbeat that meets a classic group still in
    # its first join phase is answered UNKNOWN_SERVER_ERROR (docs/conformance.md), which
    # librdkafka takes as fatal
    ctx.settle_on([c])
    a = ctx.classic("a")
    ctx.settle_on([a, c])
    ctx.note(f"c (consumer protocol) and a (classic, generation {ctx.generation(a)}) share "
             "the consumer group")
    ctx.commit(a)
    a.kill()
    ctx.note("a killed with SIGKILL (no LeaveGroup): its classic session timeout "
             f"({SESSION_MS} ms) must expire it")
    ctx.settle_on([c], timeout_s=SESSION_MS / 1000 + 30)
    a2 = ctx.classic("a-again")
    ctx.settle_on([a2, c])
    ctx.note(f"a-again (classic) joined the consumer group: generation {ctx.generation(a2)}")
    ctx.commit(a2)
    ctx.commit(c)
    ctx.close(a2)
    ctx.settle_on([c])
    ctx.close(c)


def cooperative_classic(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.classic("a", strategy="cooperative-sticky")
    # a alone first, so that it rejoins when b comes: a sticky assignor that keeps state
    # between generations (librdkafka's) then has it, and whether Kafka converts the group
    # below does not depend on whether a and b happened to join in one generation
    ctx.settle_on([a])
    b = ctx.classic("b", strategy="cooperative-sticky")
    ctx.settle_on([a, b])
    ctx.note(f"a and b (classic, cooperative-sticky) formed a classic group at generation "
             f"{max(ctx.generation(a), ctx.generation(b))}")
    ctx.wait_consumed([a, b])
    mark = ctx.last_seq()
    c = ctx.member("c")
    first = ctx.wait_exchange(
        "an answered ConsumerGroupHeartbeat of c",
        lambda e: e["api"] == HEARTBEAT and e["client_id"] == "c" and bool(e.get("response")),
        after_seq=mark)
    if first["response"]["error"] == "GROUP_ID_NOT_FOUND":
        # Kafka refuses to convert a classic group whose assignments carry user data
        # (ConsumerGroup.fromClassicGroup: "userData from a custom assignor would be lost"),
        # as librdkafka's cooperative-sticky assignments do from a member's second
        # generation on (it copies the member's sticky state, the previous assignment and
        # its generation, which it has only after a first one, into the assignment); the
        # consumer-protocol member cannot join, and the classic group goes on
        # (docs/conformance.md)
        ctx.note(f"Kafka refused the upgrade: c's ConsumerGroupHeartbeat was answered "
                 f"GROUP_ID_NOT_FOUND (seq {first['seq']}: {first['response'].get('error_message')})")
        c.kill()
        ctx.settle_on([a, b])
        ctx.commit(a)
        ctx.commit(b)
        ctx.close(a)
        ctx.close(b)
        return
    ctx.settle_on([a, b, c])
    syncs = ctx.classic_answers("SyncGroup", after_seq=mark)
    ctx.note(f"c (consumer protocol) joined: the group is a consumer group; a and b synced "
             f"{len(syncs)} time(s) since, at generations "
             + ", ".join(f"{e['client_id']} {e['request']['generation_id']}" for e in syncs))
    for m in (a, b, c):
        ctx.commit(m)
    ctx.close(c)  # only cooperative classic members remain: the group goes back to classic
    ctx.settle_on([a, b])
    ctx.note(f"c left; a and b are a classic group again: generations {ctx.generation(a)}, "
             f"{ctx.generation(b)}")
    ctx.commit(a)
    ctx.commit(b)
    ctx.close(a)
    ctx.settle_on([b])
    ctx.close(b)


def static_downgrade(context: Context) -> None:
    ctx = _ctx(context)
    c = ctx.member("c", group_instance_id="instance-c")
    ctx.settle_on([c])  # the consumer group first (see classic_rejoin)
    b = ctx.classic("b", group_instance_id="instance-b")
    ctx.settle_on([b, c])
    before = sorted(c.assignment)
    ctx.note(f"b (classic, static) and c (consumer protocol, static) share the consumer group; "
             f"c owns {partitions_text(before)}")
    ctx.commit(c)
    mark = ctx.last_seq()
    ctx.close(c)  # a static member's leave: member epoch -2, its partitions wait for it
    c2 = ctx.classic("c-classic", group_instance_id="instance-c")
    joined = ctx.wait_exchange("a JoinGroup of c-classic answered NONE", _joined("c-classic"),
                               after_seq=mark)
    ctx.note(f"c-classic (classic, instance-c) replaced c: JoinGroup answered generation "
             f"{joined['response']['generation_id']}, leader "
             f"{'(none)' if not joined['response']['leader'] else joined['response']['leader']} "
             f"(seq {joined['seq']})")
    ctx.settle_on([b, c2])
    after = sorted(c2.assignment)
    ctx.note(f"instance-c owned {partitions_text(before)} before and {partitions_text(after)} after"
             + (" (the same)" if before == after else " (not the same)"))
    ctx.commit(b)
    ctx.commit(c2)
    # what shows the group is classic again: a newcomer's join starts a classic rebalance,
    # with a leader that assigns (a consumer group's JoinGroup names no leader)
    mark = ctx.last_seq()
    # static too: kafka-python 3.0.12's range assignor drops a static member when the
    # JoinGroup's member list puts a dynamic one between two static ones (it groups the
    # members with itertools.groupby, which groups runs), and the leader then assigns
    # nothing to it (docs/conformance.md)
    d = ctx.classic("d", group_instance_id="instance-d")
    ctx.settle_on([b, c2, d])
    joins = ctx.classic_answers("JoinGroup", after_seq=mark)
    leaders = sorted({str(e["response"]["leader"]) for e in joins})
    ctx.note("d (classic) joined: " + ("a classic rebalance, leader " + ", ".join(leaders)
                                                if all(leaders) else "JoinGroup answered without a leader"))
    ctx.commit(d)
    ctx.close(d)
    ctx.close(b)
    ctx.close(c2)


def static_upgrade(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.classic("a", group_instance_id="instance-a")
    b = ctx.classic("b", group_instance_id="instance-b")
    ctx.settle_on([a, b])
    before = sorted(a.assignment)
    ctx.note(f"a and b (classic, static) formed a Stable classic group at generation "
             f"{max(ctx.generation(a), ctx.generation(b))}; a owns {partitions_text(before)}")
    ctx.commit(a)
    ctx.commit(b)
    mark = ctx.last_seq()
    # a static member's process ends without a LeaveGroup (a crash; a classic static
    # consumer's close sends none either): instance-a stays held by the classic member
    a.kill()
    ctx.note("a killed with SIGKILL: instance-a is still a classic member of the group")
    a2 = ctx.member("a-consumer", group_instance_id="instance-a")
    joined = ctx.wait_consumer_joined("a-consumer", mark)
    ctx.note(f"a-consumer (consumer protocol, instance-a) replaced the classic member: member "
             f"epoch {joined['response']['member_epoch']} (seq {joined['seq']}); the group is now "
             "a consumer group")
    ctx.settle_on([a2, b])
    after = sorted(a2.assignment)
    ctx.note(f"instance-a owned {partitions_text(before)} before and {partitions_text(after)} after"
             + (" (the same)" if before == after else " (not the same)"))
    ctx.commit(a2)
    ctx.commit(b)
    ctx.close(b)
    ctx.settle_on([a2])
    ctx.close(a2)


def _scenario(name: str, title: str, why: str, run: Callable[[Context], None],
              topics: dict[str, int]) -> Scenario:
    return Scenario(name, title, why, run, topics, group_protocol="mixed")


MIXED_SCENARIOS: tuple[Scenario, ...] = (
    _scenario(
        "online-upgrade", "A consumer-protocol member joins a classic group",
        "Two classic members (range) form a Stable classic group; a consumer-protocol member "
        "joins with ConsumerGroupHeartbeat, and Kafka converts the group to a consumer group "
        "(the classic members keep their partitions at member epochs equal to the classic "
        "generation). The target assignment changes, so the classic members are told to "
        "rejoin (REBALANCE_IN_PROGRESS) and get their partitions from the coordinator's "
        "assignor in JoinGroup and SyncGroup, with their member epoch as the generation. "
        "Then the classic members leave with LeaveGroup, one by one, and the "
        "consumer-protocol member takes every partition.",
        online_upgrade, {"t": 4}),
    _scenario(
        "downgrade", "The last consumer-protocol member leaves",
        "A consumer-protocol member creates a consumer group; two classic members join it "
        "(classic JoinGroup to a consumer group). When the consumer-protocol member leaves "
        "(member epoch -1), only classic members remain, and Kafka converts the group back "
        "to a classic group and starts a rebalance: the classic members rejoin, one leads "
        "and assigns, and they carry on as a classic group.",
        downgrade, {"t": 4}),
    _scenario(
        "classic-rejoin", "A classic member crashes and another joins a consumer group",
        "A consumer-protocol member and a classic member share a consumer group. The classic "
        "member is killed (SIGKILL): the coordinator expires it by its classic session "
        "timeout and the consumer-protocol member takes its partitions. A new classic member "
        "joins the consumer group and then leaves with LeaveGroup.",
        classic_rejoin, {"t": 2}),
    _scenario(
        "cooperative-classic", "Cooperative classic members through an upgrade and a downgrade",
        "Two classic members with the cooperative-sticky assignor form a classic group; a "
        "consumer-protocol member joins, so the group becomes a consumer group and one "
        "classic member must give up a partition: the coordinator tells it at its current "
        "member epoch (its SyncGroup assigns less; it revokes and rejoins for the next "
        "epoch) rather than by an eager revocation of everything. Then the "
        "consumer-protocol member leaves and the two carry on as a classic group. Kafka "
        "refuses the upgrade when the classic assignments carry user data (librdkafka's "
        "cooperative-sticky does): then the consumer-protocol member is answered "
        "GROUP_ID_NOT_FOUND and the classic group carries on.",
        cooperative_classic, {"t": 4}),
    _scenario(
        "static-downgrade", "A static consumer-protocol member comes back as a classic one",
        "A classic static member and a consumer-protocol static member share a consumer "
        "group. The consumer-protocol member closes (member epoch -2: a static member's "
        "temporary leave) and a classic consumer with the same group.instance.id joins "
        "within the session timeout, as in a rolling downgrade: it replaces the static "
        "member, and since every member now speaks the classic protocol, Kafka converts "
        "the group back to a classic group, with the replaced member's partitions and no "
        "rebalance when the subscription is the same. Another classic member then joins: "
        "a classic rebalance, with a leader that assigns.",
        static_downgrade, {"t": 4}),
    _scenario(
        "static-upgrade", "A static classic member comes back as a consumer-protocol one",
        "Two classic static members form a classic group. One of them crashes (SIGKILL: no "
        "LeaveGroup, as a classic static consumer sends none on close either) and a "
        "consumer-protocol consumer with the same group.instance.id joins within the "
        "session timeout, as in a rolling upgrade: Kafka 4 lets it replace the classic "
        "member, converting the group to a consumer group (KAFKA-17228: before 4.0 it was "
        "answered UNRELEASED_INSTANCE_ID). Then the other classic member leaves and the "
        "consumer-protocol member carries on alone.",
        static_upgrade, {"t": 4}),
)

MIXED_BY_NAME: dict[str, Scenario] = {s.name: s for s in MIXED_SCENARIOS}
