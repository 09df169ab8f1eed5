"""The scripted scenarios of the consumer group protocol (KIP-848, ``group.protocol=consumer``).

Each scenario drives real consumers (confluent-kafka with ``group.protocol=consumer``, or
kafka-clients' Java consumer) through one story of the consumer protocol: one
``ConsumerGroupHeartbeat`` API, member epochs, a target assignment the broker computes with
its server-side assignor (``uniform``), and reconciliation in which a member releases
partitions before another receives them. The session timeout and the heartbeat interval
are the broker's (:data:`SESSION_MS`, :data:`HEARTBEAT_MS`: the broker groupspec starts
lowers Kafka's defaults, see ``groupspec.brokers.kafka``); a member's
``max.poll.interval.ms`` is its rebalance timeout. What the broker answered is judged
afterwards, from the trace, by the validator; a scenario only says what it did
(``ctx.note``) and fails (:class:`ScenarioError`) when the clients could not be driven as
scripted. docs/conformance.md describes each scenario and what it exercises in Kafka.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from groupspec.conformance.drivers import MemberConfig
from groupspec.conformance.members import Member, ScenarioError, partitions_text
from groupspec.conformance.scenarios import Context, Scenario

#: group.consumer.session.timeout.ms of the broker groupspec starts (Kafka's default 45000)
SESSION_MS = 6000
#: group.consumer.heartbeat.interval.ms of the broker groupspec starts (Kafka's default 5000)
HEARTBEAT_MS = 1000
#: max.poll.interval.ms (the rebalance timeout) of the members, unless a scenario says
REBALANCE_TIMEOUT_MS = 20000
#: the rebalance timeout of the slow-revocation scenario: shorter than the session
#: timeout, so a member that stops answering while it revokes is fenced by it (and long
#: enough for the scenario to freeze the member before its own poll timer, started when
#: it stopped polling, makes it leave)
SHORT_REBALANCE_TIMEOUT_MS = 4000

HEARTBEAT = "ConsumerGroupHeartbeat"

Partition = tuple[str, int]


@dataclass
class ConsumerContext(Context):
    """A :class:`Context` whose members speak the consumer protocol."""

    def member(  # type: ignore[override]
        self,
        name: str,
        *,
        topics: Sequence[str] | None = None,
        topic_regex: str | None = None,
        max_poll_interval_ms: int = REBALANCE_TIMEOUT_MS,
        group_instance_id: str | None = None,
    ) -> Member:
        """A member subscribed to ``topics`` (default: every topic of the scenario; an
        empty list: none until ``subscribe``) or to ``topic_regex``."""
        cfg = MemberConfig(
            client=self.client, bootstrap=self.bootstrap, group_id=self.group_id,
            client_id=name, topics=tuple(self.topics if topics is None else topics),
            max_poll_interval_ms=max_poll_interval_ms, group_instance_id=group_instance_id,
            group_protocol="consumer", topic_regex=topic_regex,
        )
        m = Member(cfg, self.log_dir)
        self.members.append(m)
        return m

    def topic(self, suffix: str) -> str:
        """The scenario's topic named by its suffix (``t1`` -> ``NAME-CLIENT-t1-TAG``)."""
        found = [t for t in self.topics if t.rsplit("-", 2)[-2] == suffix]
        if len(found) != 1:
            raise ScenarioError(f"no single topic with suffix {suffix} among {', '.join(self.topics)}")
        return found[0]

    def partitions_of(self, topics: Iterable[str]) -> set[Partition]:
        return {(t, p) for t in topics for p in range(self.topics[t])}

    def settle_on(self, members: Sequence[Member], want: set[Partition] | None = None,
                  timeout_s: float = 45.0, quiet_s: float = 1.5) -> None:
        """Wait until ``members`` together own exactly ``want`` (default: every partition
        of the scenario), each some and none twice, and that has held for ``quiet_s``."""
        target = self.partitions_of(self.topics) if want is None else want
        deadline = time.monotonic() + timeout_s
        since: float | None = None
        while True:
            owned = [tp for m in members for tp in m.assignment]
            ok = (all(m.assignment for m in members) and len(owned) == len(set(owned))
                  and set(owned) == target)
            now = time.monotonic()
            for m in members:
                if m.ended():
                    raise ScenarioError(f"{m.name}'s process ended unexpectedly: {m.log_tail()}")
            if ok:
                since = since or now
                if now - since >= quiet_s:
                    names = ", ".join(f"{m.name}: {len(m.assignment)}" for m in members)
                    self.note(f"settled: {names} partitions")
                    return
            else:
                since = None
            if now > deadline:
                state = "; ".join(f"{m.name} owns {partitions_text(m.assignment)}" for m in members)
                raise ScenarioError(f"group did not settle on {len(members)} member(s) within "
                                    f"{timeout_s:.0f} s: {state}")
            time.sleep(0.05)

    # -- the broker's side, read from the recording ------------------------------------
    def heartbeats(self, client_id: str, after_seq: int = 0) -> list[dict[str, Any]]:
        """The member's ConsumerGroupHeartbeat exchanges answered NONE, in order."""
        return [e for e in self.recorded() if e["api"] == HEARTBEAT and e["client_id"] == client_id
                and int(e["seq"]) > after_seq and (e.get("response") or {}).get("error") == "NONE"]

    def epoch_of(self, m: Member) -> tuple[str, int]:
        """The member id and epoch the broker last gave ``m`` (its last heartbeat answered
        NONE)."""
        beats = self.heartbeats(m.name)
        if not beats:
            raise ScenarioError(f"the recording shows no heartbeat of {m.name} answered NONE")
        response = beats[-1]["response"]
        return str(response["member_id"]), int(response["member_epoch"])

    def metadata_events(self) -> list[dict[str, Any]]:
        """The recording's metadata events (the topics the broker's Metadata answers
        showed), in order."""
        out: list[dict[str, Any]] = []
        if self.trace is not None and self.trace.is_file():
            for line in self.trace.read_text(encoding="utf-8").splitlines():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("kind") == "metadata":
                    out.append(event)
        return out

    def look_up(self, m: Member, topics: Sequence[str], timeout_s: float = 15.0) -> None:
        """Have ``m`` look ``topics`` up (Metadata) and wait until the recording shows them:
        the validator gives the reference the topics the recording has seen, so a topic
        must be seen before a subscription names it (Kafka's assignor sees every topic)."""
        reply = m.command("metadata", topics=list(topics))
        if not reply.get("ok"):
            raise ScenarioError(f"{m.name} could not look up {', '.join(topics)}: {reply.get('error')}")
        deadline = time.monotonic() + timeout_s
        while True:
            seen = {t["name"] for e in self.metadata_events() for t in e.get("topics", [])}
            if set(topics) <= seen:
                self.note(f"{m.name} looked up {', '.join(topics)} (Metadata)")
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"the recording shows no metadata of {', '.join(topics)} "
                                    f"within {timeout_s:.0f} s")
            time.sleep(0.1)

    def wait_epoch_above(self, m: Member, epoch: int, timeout_s: float = 30.0) -> int:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                _, now = self.epoch_of(m)
            except ScenarioError:
                now = -1
            if now > epoch:
                return now
            if time.monotonic() > deadline:
                raise ScenarioError(f"{m.name}'s member epoch did not pass {epoch} within {timeout_s:.0f} s")
            time.sleep(0.1)


def _assigned(response: dict[str, Any]) -> int | None:
    """How many partitions a heartbeat response assigns (None: no assignment in it)."""
    assignment = response.get("assignment")
    if not assignment:
        return None
    return sum(len(t["partitions"]) for t in assignment.get("topic_partitions") or [])


def _ctx(ctx: Context) -> ConsumerContext:
    if not isinstance(ctx, ConsumerContext):
        raise TypeError("a consumer-protocol scenario needs a ConsumerContext")
    return ctx


# -- the scenarios ------------------------------------------------------------------------


def join(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.member("a")
    ctx.settle_on([a])
    ctx.note("a joined alone and owns every partition")
    b = ctx.member("b")
    ctx.settle_on([a, b])
    c = ctx.member("c")
    ctx.settle_on([a, b, c])
    ctx.wait_consumed([a, b, c])
    for m in (a, b, c):
        ctx.commit(m)
    for m in (a, b, c):
        ctx.close(m)


def leave(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.member("a")
    b = ctx.member("b")
    ctx.settle_on([a, b])
    ctx.wait_consumed([a, b])
    ctx.commit(a)
    ctx.commit(b)
    ctx.close(a)  # a dynamic member leaves with member epoch -1
    ctx.settle_on([b])
    ctx.commit(b)
    ctx.close(b)


def static_restart(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.member("a", group_instance_id="instance-a")
    b = ctx.member("b", group_instance_id="instance-b")
    ctx.settle_on([a, b])
    before = sorted(a.assignment)
    ctx.commit(a)
    ctx.close(a)  # a static member leaves with member epoch -2: its partitions wait for it
    a2 = ctx.member("a-restarted", group_instance_id="instance-a")
    ctx.settle_on([a2, b])
    after = sorted(a2.assignment)
    ctx.note(f"instance-a owned {partitions_text(before)} before the restart and "
             f"{partitions_text(after)} after"
             + (" (the same)" if before == after else " (not the same)"))
    ctx.commit(a2)
    ctx.commit(b)
    ctx.close(a2)
    ctx.close(b)


def crash(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.member("a")
    b = ctx.member("b")
    ctx.settle_on([a, b])
    ctx.commit(b)
    b.kill()
    ctx.note("b killed with SIGKILL (no leave heartbeat)")
    ctx.settle_on([a], timeout_s=SESSION_MS / 1000 + 30)
    ctx.commit(a)
    ctx.close(a)


def slow_revocation(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.member("a", max_poll_interval_ms=SHORT_REBALANCE_TIMEOUT_MS)
    b = ctx.member("b", topics=[])  # started, not yet subscribed
    ctx.settle_on([a])
    b.command("resume")  # its answer says b's consumer is up
    a.command("pause")  # a revocation now waits for a poll that does not come
    mark = ctx.last_seq()
    b.command("subscribe", topics=list(ctx.topics))
    owned = len(a.assignment)
    told = ctx.wait_exchange(
        "a heartbeat answer telling a to release partitions",
        lambda e: e["api"] == HEARTBEAT and e["client_id"] == "a"
        and (e.get("response") or {}).get("error") == "NONE"
        and (_assigned(e["response"]) or owned) < owned,
        timeout_s=15, after_seq=mark)
    a.freeze()
    ctx.note(f"b subscribed; a, not polling, was told to keep {_assigned(told['response'])} of its "
             f"{owned} partitions (seq {told['seq']}) and was frozen with SIGSTOP before releasing "
             f"any (its rebalance timeout: {SHORT_REBALANCE_TIMEOUT_MS} ms; the session timeout: "
             f"{SESSION_MS} ms)")
    ctx.settle_on([b], timeout_s=SESSION_MS / 1000 + 30)
    ctx.note("b owns every partition: a was fenced")
    a.thaw()
    a.command("resume")
    ctx.note("a thawed and polls again")
    ctx.settle_on([a, b], timeout_s=60)
    ctx.commit(a)
    ctx.commit(b)
    ctx.close(a)
    ctx.close(b)


def stale_epoch_commit(context: Context) -> None:
    ctx = _ctx(context)
    a = ctx.member("a")
    b = ctx.member("b")
    ctx.settle_on([a, b])
    ctx.wait_consumed([a, b])
    a.command("remember")
    member_id, epoch = ctx.epoch_of(a)
    ctx.note(f"a noted its positions at member epoch {epoch}")
    c = ctx.member("c")
    ctx.settle_on([a, b, c])
    now = ctx.wait_epoch_above(a, epoch)
    ctx.note(f"c joined; a is at member epoch {now}")
    reply = a.command("zombie_commit", member_id=member_id, member_epoch=epoch)
    ctx.note(f"a committed its noted positions with member epoch {epoch}: "
             f"{'accepted' if reply.get('ok') else reply.get('error')}")
    ctx.commit(a)
    ctx.commit(c)
    for m in (a, b, c):
        ctx.close(m)


def subscription_change(context: Context) -> None:
    ctx = _ctx(context)
    t1, t2 = ctx.topic("t1"), ctx.topic("t2")
    a = ctx.member("a", topics=[t1])
    b = ctx.member("b", topics=[t1])
    ctx.settle_on([a, b], ctx.partitions_of([t1]))
    ctx.look_up(b, [t2])
    b.command("subscribe", topics=[t1, t2])
    ctx.note(f"b subscribed to {t1} and {t2}")
    ctx.settle_on([a, b], ctx.partitions_of([t1, t2]))
    a.command("subscribe", topics=[t2])
    ctx.note(f"a subscribed to {t2} only")
    ctx.settle_on([a, b], ctx.partitions_of([t1, t2]))
    ctx.commit(a)
    ctx.commit(b)
    ctx.close(a)
    ctx.close(b)


def regex_subscription(context: Context) -> None:
    ctx = _ctx(context)
    t1 = ctx.topic("t1")
    regex = t1.rsplit("-", 2)[0] + "-t[0-9]+-" + t1.rsplit("-", 1)[1]
    a = ctx.member("a", topics=[], topic_regex=regex)
    b = ctx.member("b", topics=[], topic_regex=regex)
    ctx.note(f"a and b subscribed to the regular expression {regex}")
    ctx.settle_on([a, b])
    ctx.commit(a)
    ctx.commit(b)
    ctx.close(a)
    ctx.close(b)


def _scenario(name: str, title: str, why: str, run: Callable[[Context], None],
              topics: dict[str, int]) -> Scenario:
    return Scenario(name, title, why, run, topics, group_protocol="consumer")


CONSUMER_SCENARIOS: tuple[Scenario, ...] = (
    _scenario(
        "join", "Members join one by one (KIP-848)",
        "One member joins (ConsumerGroupHeartbeat at member epoch 0) and gets every partition; "
        "a second and a third join: each join bumps the group epoch, the uniform assignor "
        "computes a new target, and the members already there release partitions (a "
        "heartbeat acknowledging what they own) before the newcomers receive them. Each "
        "commits at its member epoch; all close (member epoch -1).",
        join, {"t": 4}),
    _scenario(
        "leave", "A member leaves, the other takes over",
        "Two members settle and commit; one closes, sending a heartbeat with member epoch -1: "
        "the broker removes it at once, bumps the group epoch and assigns its partitions "
        "to the other.",
        leave, {"t": 4}),
    _scenario(
        "static-restart", "A static member restarts within the session timeout",
        "Two static members (group.instance.id). One closes, sending member epoch -2 (a "
        "temporary leave: its partitions stay reserved for the instance), and a new process "
        "with the same group.instance.id joins within the session timeout: it replaces the "
        "old member and gets its partitions back without a new target.",
        static_restart, {"t": 4}),
    _scenario(
        "crash", "A crash found by the session timeout",
        "Two members; one is killed with SIGKILL and sends nothing more. The broker must "
        "expire its session (group.consumer.session.timeout.ms) and assign its partitions "
        "to the survivor.",
        crash, {"t": 2}),
    _scenario(
        "slow-revocation", "A member that does not release in time is fenced",
        "One member owns every partition and stops polling, so a revocation cannot complete "
        "(its rebalance listener runs in poll). A second member subscribes; the first is told "
        "to release half and is frozen (SIGSTOP) before it does. The broker's rebalance "
        "timeout (the member's max.poll.interval.ms, shorter than the session timeout) "
        "fences it, and the second gets every partition; thawed, the first finds itself "
        "fenced and rejoins at epoch 0.",
        slow_revocation, {"t": 4}),
    _scenario(
        "stale-epoch-commit", "A commit with an old member epoch",
        "Two members settle; one notes its member epoch and positions; a third joins, so the "
        "first reconciles to a newer epoch. The first then commits its noted positions with "
        "the old epoch (OffsetCommit v9): the broker must refuse it with "
        "STALE_MEMBER_EPOCH. Its next commit, at its current epoch, is accepted.",
        stale_epoch_commit, {"t": 3}),
    _scenario(
        "subscription-change", "Members change their subscriptions",
        "Two members subscribed to one topic; one adds a second topic, then the other "
        "switches to the second topic only. Each change is a heartbeat with the new "
        "SubscribedTopicNames: the group epoch goes up, the assignor sees different "
        "subscriptions, and partitions move by reconciliation.",
        subscription_change, {"t1": 2, "t2": 2}),
    _scenario(
        "regex-subscription", "Members subscribed by a regular expression",
        "Two members subscribe with SubscribedTopicRegex (KIP-848): the broker checks the "
        "expression, resolves it against its topics off the request path (its executor), "
        "writes the resolution and bumps the group epoch, and the members are assigned the "
        "matching topics at their next heartbeats. The validator lets the resolution "
        "complete at any time the trace allows.",
        regex_subscription, {"t1": 2, "t2": 2}),
)

#: the regex scenario (part of CONSUMER_SCENARIOS), by name
REGEX_SCENARIO = CONSUMER_SCENARIOS[-1]

CONSUMER_BY_NAME: dict[str, Scenario] = {s.name: s for s in CONSUMER_SCENARIOS}
