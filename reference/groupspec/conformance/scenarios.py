"""The scripted scenarios: what each does to a group of real consumers, and why.

Each scenario gets a :class:`Context` (the proxy's bootstrap address, the client library,
its own topics and group id) and drives members (:class:`~groupspec.conformance.members.Member`)
through one story of the classic group protocol. Scenarios are small (one or two topics
of two to four partitions, two or three members) and use short timeouts
(``session.timeout.ms`` 6000, Kafka's ``group.min.session.timeout.ms``), so each finishes
in well under a minute. What the broker answered is judged afterwards, from the trace, by
the validator; a scenario only says what it did (``ctx.note``) and fails
(:class:`ScenarioError`) when the clients could not be driven as scripted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupspec.conformance.drivers import MemberConfig
from groupspec.conformance.members import Member, ScenarioError, partitions_text

#: records produced to every partition before the members start
RECORDS_PER_PARTITION = 2
#: Kafka's group.min.session.timeout.ms default: the shortest session a broker accepts
SESSION_MS = 6000


@dataclass
class Context:
    bootstrap: str
    client: str
    group_id: str
    #: topic name -> partitions (created and filled before the scenario runs)
    topics: dict[str, int]
    log_dir: Path
    #: the trace the recorder is writing (flushed event by event)
    trace: Path | None = None
    notes: list[str] = field(default_factory=list)
    members: list[Member] = field(default_factory=list)

    def member(
        self,
        name: str,
        *,
        strategy: str = "range",
        session_timeout_ms: int = SESSION_MS,
        heartbeat_interval_ms: int = 500,
        max_poll_interval_ms: int = 10000,
        group_instance_id: str | None = None,
    ) -> Member:
        cfg = MemberConfig(
            client=self.client, bootstrap=self.bootstrap, group_id=self.group_id,
            client_id=name, topics=tuple(self.topics), strategy=strategy,
            session_timeout_ms=session_timeout_ms, heartbeat_interval_ms=heartbeat_interval_ms,
            max_poll_interval_ms=max_poll_interval_ms, group_instance_id=group_instance_id,
        )
        m = Member(cfg, self.log_dir)
        self.members.append(m)
        return m

    def note(self, text: str) -> None:
        self.notes.append(text)

    @property
    def partitions(self) -> int:
        return sum(self.topics.values())

    def settle(self, members: Sequence[Member], timeout_s: float = 45.0, quiet_s: float = 1.0) -> None:
        """Wait until ``members`` together own every partition, each some and none twice,
        and that has held for ``quiet_s`` (a few heartbeats)."""
        deadline = time.monotonic() + timeout_s
        since: float | None = None
        while True:
            owned = [tp for m in members for tp in m.assignment]
            ok = all(m.assignment for m in members) and len(owned) == len(set(owned)) == self.partitions
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
                                    f"{timeout_s:.0f} s: {state}\n{self.stall_story(members)}")
            time.sleep(0.05)

    def stall_story(self, members: Sequence[Member], last: int = 6) -> str:
        """What each member did, for a run error: its last group exchanges as the recorder
        saw them (API, member id, generation, the broker's error), what its poll raised, the
        tail of its log (the library's own account) and where each of its threads is."""
        recorded = self.recorded()
        lines = []
        for m in members:
            mine = [e for e in recorded if e.get("client_id") == m.name
                    and e.get("api") not in ("Fetch", "ListOffsets", "Metadata", "ApiVersions")]
            shown = [" ".join(str(x) for x in (
                e.get("seq"), e.get("api"), (e.get("request") or {}).get("member_id", ""),
                (e.get("request") or {}).get("generation_id", ""), "->",
                (e.get("response") or {}).get("error", "unanswered"))) for e in mine[-last:]]
            lines.append(f"{m.name}: {len(mine)} group exchange(s), last: {' | '.join(shown) or 'none'}"
                         f"; poll errors: {', '.join(m.poll_errors[-3:]) or 'none'}"
                         f"; log: {m.log_tail(8) or 'empty'}")
            lines.extend(f"  {m.name} thread: {t}" for t in m.thread_stacks())
        return "\n".join(lines)

    def recorded(self) -> list[dict[str, Any]]:
        """The exchanges recorded so far (requests with their responses, as JSON)."""
        out: list[dict[str, Any]] = []
        if self.trace is not None and self.trace.is_file():
            for line in self.trace.read_text(encoding="utf-8").splitlines():
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("kind") == "exchange":
                    out.append(event)
        return out

    def last_seq(self) -> int:
        return max((int(e["seq"]) for e in self.recorded()), default=0)

    def wait_exchange(self, what: str, pred: Callable[[dict[str, Any]], bool],
                      timeout_s: float = 30.0, after_seq: int = 0) -> dict[str, Any]:
        """Wait until the recorder has written an exchange after ``after_seq`` that
        ``pred`` accepts, and return it: the broker's side of the story, which a member's
        own status may not show (kafka-python joins inside poll)."""
        deadline = time.monotonic() + timeout_s
        while True:
            for event in self.recorded():
                if int(event["seq"]) > after_seq and pred(event):
                    return event
            if time.monotonic() > deadline:
                raise ScenarioError(f"the recording shows no {what} within {timeout_s:.0f} s")
            time.sleep(0.1)

    def wait_consumed(self, members: Sequence[Member], timeout_s: float = 30.0) -> None:
        """Wait until the members have consumed every produced record between them."""
        want = self.partitions * RECORDS_PER_PARTITION
        deadline = time.monotonic() + timeout_s
        while sum(m.consumed for m in members) < want:
            if time.monotonic() > deadline:
                raise ScenarioError(f"consumed {sum(m.consumed for m in members)} of {want} records")
            time.sleep(0.05)

    def commit(self, m: Member) -> str | None:
        reply = m.commit()
        err = reply.get("error")
        self.note(f"{m.name} committed: {'ok' if reply.get('ok') else err or 'failed'}")
        return None if reply.get("ok") else str(err)

    def close(self, m: Member) -> None:
        reply = m.close()
        self.note(f"{m.name} closed{'' if reply.get('ok') else ': ' + str(reply.get('error') or 'failed')}")


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    #: what it does and which part of the protocol it exercises
    why: str
    run: Callable[[Context], None]
    #: topic suffix -> partitions
    topics: dict[str, int]
    strategy: str = "range"
    #: the group protocol its members speak: "classic" or "consumer" (KIP-848;
    #: groupspec.conformance.consumer_scenarios)
    group_protocol: str = "classic"


# -- the scenarios -----------------------------------------------------------------------


def eager_range(ctx: Context) -> None:
    a = ctx.member("a")
    b = ctx.member("b")
    ctx.settle([a, b])
    ctx.wait_consumed([a, b])
    ctx.commit(a)
    ctx.commit(b)
    ctx.close(a)
    ctx.settle([b])
    ctx.commit(b)
    ctx.close(b)


def eager_roundrobin(ctx: Context) -> None:
    a = ctx.member("a", strategy="roundrobin")
    b = ctx.member("b", strategy="roundrobin")
    ctx.settle([a, b])
    c = ctx.member("c", strategy="roundrobin")
    ctx.settle([a, b, c])
    ctx.wait_consumed([a, b, c])
    ctx.close(b)
    ctx.settle([a, c])
    ctx.commit(a)
    ctx.commit(c)
    ctx.close(a)
    ctx.close(c)


def cooperative_sticky(ctx: Context) -> None:
    a = ctx.member("a", strategy="cooperative-sticky")
    b = ctx.member("b", strategy="cooperative-sticky")
    ctx.settle([a, b])
    c = ctx.member("c", strategy="cooperative-sticky")
    ctx.settle([a, b, c])
    ctx.wait_consumed([a, b, c])
    ctx.commit(b)
    ctx.close(a)
    ctx.settle([b, c])
    ctx.commit(b)
    ctx.commit(c)
    ctx.close(b)
    ctx.close(c)


def static_restart(ctx: Context) -> None:
    a = ctx.member("a", group_instance_id="instance-a")
    b = ctx.member("b", group_instance_id="instance-b")
    ctx.settle([a, b])
    before = list(a.assignment)
    ctx.commit(a)
    ctx.close(a)  # a static member leaves no LeaveGroup behind
    a2 = ctx.member("a-restarted", group_instance_id="instance-a")
    ctx.settle([a2, b])
    ctx.note(f"instance-a owned {partitions_text(before)} before the restart and "
             f"{partitions_text(a2.assignment)} after")
    ctx.commit(a2)
    ctx.commit(b)
    # a second process with a live member's group.instance.id: the older one is fenced
    mark = ctx.last_seq()
    a3 = ctx.member("a-duplicate", group_instance_id="instance-a")
    a3.wait_for("an assignment", a3.has_assignment(), timeout_s=30)
    try:
        fenced = ctx.wait_exchange(
            "FENCED_INSTANCE_ID for a-restarted",
            lambda e: e["client_id"] == "a-restarted"
            and "FENCED_INSTANCE_ID" in json.dumps(e.get("response")),
            timeout_s=10, after_seq=mark)
        ctx.note(f"a-restarted was fenced after a-duplicate joined with its instance id "
                 f"({fenced['api']} seq {fenced['seq']}: FENCED_INSTANCE_ID)")
    except ScenarioError:
        ctx.note("a-restarted was not fenced after a-duplicate joined with its instance id "
                 "(no FENCED_INSTANCE_ID answer within 10 s)")
    a2.kill()
    ctx.commit(a3)
    a3.kill()
    b.kill()


def session_timeout(ctx: Context) -> None:
    a = ctx.member("a")
    b = ctx.member("b")
    ctx.settle([a, b])
    ctx.commit(b)
    b.kill()
    ctx.note("b killed with SIGKILL (no LeaveGroup)")
    ctx.settle([a], timeout_s=SESSION_MS / 1000 + 30)
    ctx.commit(a)
    ctx.close(a)


def slow_poll(ctx: Context) -> None:
    poll_ms = SESSION_MS + 1000  # librdkafka wants max.poll.interval.ms >= session.timeout.ms
    a = ctx.member("a", max_poll_interval_ms=poll_ms)
    b = ctx.member("b", max_poll_interval_ms=poll_ms)
    ctx.settle([a, b])
    b.command("pause")
    ctx.note(f"b stopped polling for longer than max.poll.interval.ms ({poll_ms} ms)")
    ctx.settle([a], timeout_s=poll_ms / 1000 + 30)
    b.command("resume")
    ctx.note("b polls again")
    ctx.settle([a, b])
    ctx.commit(a)
    ctx.commit(b)
    ctx.close(a)
    ctx.close(b)


def zombie_commit(ctx: Context) -> None:
    a = ctx.member("a")
    b = ctx.member("b")
    ctx.settle([a, b])
    ctx.wait_consumed([a, b])
    for _ in range(3):
        # b must note a generation it holds in a stable group: a commit refused because a
        # rebalance is under way (kafka-python rejoins by itself when its metadata changes
        # after an assignment) means waiting for the group to settle again
        if ctx.commit(b) is None:
            break
        ctx.settle([a, b])
    noted = b.command("remember")
    ctx.note(f"b noted its generation and positions: {noted.get('generation', '?')} "
             f"{noted.get('member_id', '')}".rstrip())
    b.freeze()
    ctx.note("b frozen with SIGSTOP (heartbeats stop too)")
    ctx.settle([a], timeout_s=SESSION_MS / 1000 + 30)
    # the commit is waiting in b's input when it wakes, so it goes out before b has
    # rejoined: with the old generation and member id (the driver says how per library)
    seen = b.replies_seen()
    b.send("zombie_commit", retries=10)
    b.thaw()
    reply = b.await_reply("zombie_commit", seen)
    ctx.note(f"b thawed and committed as a zombie: "
             f"{'accepted' if reply.get('ok') else reply.get('error')}")
    b.kill()
    ctx.commit(a)
    ctx.close(a)


def commit_in_rebalance(ctx: Context) -> None:
    a = ctx.member("a")
    b = ctx.member("b")
    ctx.settle([a, b])
    ctx.wait_consumed([a, b])
    a.command("pause")
    ctx.note("a stopped polling: it heartbeats but will not rejoin until it polls again")
    before = ctx.last_seq()
    c = ctx.member("c")
    # c's JoinGroup starts a rebalance that waits for a (up to its max.poll.interval.ms);
    # a's heartbeats are answered REBALANCE_IN_PROGRESS from then on
    beat = ctx.wait_exchange(
        "heartbeat from a answered REBALANCE_IN_PROGRESS",
        lambda e: e["api"] == "Heartbeat" and e["client_id"] == "a"
        and (e.get("response") or {}).get("error") == "REBALANCE_IN_PROGRESS",
        after_seq=before,
    )
    ctx.note(f"c joined; a was told of the rebalance (seq {beat['seq']})")
    ctx.commit(a)
    rejoined = [e for e in ctx.recorded() if int(e["seq"]) > before and e["api"] == "JoinGroup"
                and e["client_id"] == "a" and (e.get("response") or {}).get("error") == "NONE"]
    if rejoined:
        # librdkafka rejoins from its own thread, polled or not
        ctx.note(f"a had already rejoined (seq {rejoined[0]['seq']}) without polling: its commit "
                 "came after the rebalance, not during it")
    else:
        ctx.note("a committed while the group was still preparing the rebalance")
    a.command("resume")
    ctx.settle([a, b, c])
    ctx.commit(a)
    ctx.commit(c)
    ctx.close(a)
    ctx.close(b)
    ctx.close(c)


def leader_departure(ctx: Context) -> None:
    a = ctx.member("a")
    a.wait_for("an assignment", a.has_assignment())
    ctx.note("a joined alone first: the leader")
    b = ctx.member("b")
    c = ctx.member("c")
    ctx.settle([a, b, c])
    ctx.commit(a)
    ctx.close(a)
    ctx.settle([b, c])
    ctx.commit(b)
    ctx.commit(c)
    ctx.close(b)
    ctx.close(c)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "eager-range", "Eager range group: join, consume, commit, leave",
        "Two members join a group with the range assignor (JoinGroup with KIP-394's "
        "MEMBER_ID_REQUIRED round trip, the leader's SyncGroup, heartbeats), consume, commit "
        "with their generation, and one closes (LeaveGroup): the other rejoins and takes every "
        "partition.",
        eager_range, {"t": 4}),
    Scenario(
        "eager-roundrobin", "Eager roundrobin group: a join and a leave",
        "Two members on two topics with the roundrobin assignor; a third joins (every member "
        "rejoins, eager: all partitions revoked first) and one of the first two leaves.",
        eager_roundrobin, {"t1": 2, "t2": 2}, "roundrobin"),
    Scenario(
        "cooperative-sticky", "Cooperative-sticky group (KIP-429)",
        "Two members with the cooperative-sticky assignor; a third joins, and the partitions it "
        "gets are first revoked by their owners in one rebalance and assigned in a second; then "
        "a member leaves. The validator checks that no partition is handed out while another "
        "member still owns it.",
        cooperative_sticky, {"t": 4}, "cooperative-sticky"),
    Scenario(
        "static-membership", "Static membership (KIP-345): restart and a duplicate instance",
        "Two static members (group.instance.id). One closes, which sends no LeaveGroup, and a "
        "new process with the same group.instance.id joins within the session timeout: it gets "
        "a new member id and its old partitions without a rebalance. Then a second process with "
        "the same id joins while the first lives: the first is fenced (FENCED_INSTANCE_ID).",
        static_restart, {"t": 4}),
    Scenario(
        "session-timeout", "A member crash detected by the session timeout",
        "Two members; one is killed with SIGKILL and sends nothing more. The coordinator must "
        "expire its session (session.timeout.ms 6000) and rebalance the group onto the survivor.",
        session_timeout, {"t": 2}),
    Scenario(
        "slow-poll", "A member slower than max.poll.interval.ms",
        "Two members; one stops polling (its heartbeat thread goes on) for longer than "
        "max.poll.interval.ms: the client leaves the group itself (LeaveGroup), the other member "
        "takes everything, and when the slow one polls again it rejoins as a new member.",
        slow_poll, {"t": 2}),
    Scenario(
        "zombie-commit", "A zombie commits with an old generation",
        "Two members; one is frozen (SIGSTOP) until its session expires and the group rebalances "
        "without it; woken, it commits at once with its old generation and member id. The "
        "coordinator must reject that commit (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION), never "
        "store it.",
        zombie_commit, {"t": 2}),
    Scenario(
        "commit-in-rebalance", "A commit while the group prepares a rebalance",
        "Two members; one stops polling (its heartbeats go on), a third joins, and the other "
        "rejoins at once: the group waits in PreparingRebalance for the paused member, which "
        "commits with its generation meanwhile. Kafka accepts a commit of the current "
        "generation while a rebalance is being prepared and refuses one only between the "
        "join and sync phases (REBALANCE_IN_PROGRESS); then the paused member polls and the "
        "rebalance completes with all three.",
        commit_in_rebalance, {"t": 3}),
    Scenario(
        "leader-departure", "The leader leaves",
        "The first member to join is the group's leader; two more join, then the leader closes. "
        "The coordinator must elect a new leader among the remaining members, and that leader "
        "computes the next assignment.",
        leader_departure, {"t": 3}),
)

BY_NAME: dict[str, Scenario] = {s.name: s for s in SCENARIOS}
