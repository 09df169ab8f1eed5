------------------------- MODULE ConsumerProtocol -------------------------
(***************************************************************************)
(* Apache Kafka 4.1's consumer group protocol (KIP-848): one consumer      *)
(* group, its coordinator, and consumers that heartbeat with              *)
(* ConsumerGroupHeartbeat.  The coordinator owns the assignment: a group   *)
(* epoch bumped on every change of membership or subscription, a target    *)
(* assignment computed by the server-side assignor for that epoch, and     *)
(* each member reconciled towards its target incrementally: a partition is *)
(* given to a member only when no other member holds it, at any epoch.     *)
(*                                                                         *)
(* The vocabulary is the Python reference's (reference/groupspec/):        *)
(*   - the coordinator's state is one record, group, whose fields are      *)
(*     those of coordinator/consumer/group.py's ConsumerGroup (group_epoch,*)
(*     assignment_epoch, members, target) and, per member, those of        *)
(*     coordinator/consumer/member.py's ConsumerMember (member_epoch,      *)
(*     previous_member_epoch, state, assigned, pending_revocation,         *)
(*     subscription: subscribed_topic_names) plus its rebalance timer;     *)
(*   - the coordinator's actions are named after the Python functions:     *)
(*     HandleHeartbeat and HandleLeave (coordinator/consumer/heartbeat.py  *)
(*     _heartbeat and _leave: GroupMetadataManager.consumerGroupHeartbeat  *)
(*     and consumerGroupLeave), ExpireSession and ExpireRebalance          *)
(*     (expire_session, expire_rebalance), HandleCommit (offsets.py        *)
(*     validate_consumer_offset_commit: ConsumerGroup.validateOffsetCommit),*)
(*     and their steps are operators named after the Python / Java         *)
(*     functions (EpochError: throwIfConsumerGroupMemberEpochIsInvalid,    *)
(*     BuildAssignment and ComputeNextAssignment: reconciliation.py's      *)
(*     reconcile and _next, CurrentAssignmentBuilder.build and             *)
(*     computeNextAssignment, FenceMember: fence_members);                 *)
(*   - member states and error names are Kafka's.                          *)
(*                                                                         *)
(* Abstractions (spec/README.md, "The consumer protocol", gives reasons):  *)
(*   - topics: each partition stands for a topic of its own, so a          *)
(*     subscription is a set of partitions;                                *)
(*   - assignment: the target is any assignment the assignor's contract    *)
(*     allows (TargetValid), not the uniform assignor's algorithm;         *)
(*   - time: the session and rebalance timeouts are actions that may fire  *)
(*     whenever armed.  One that fires while the member's consumer is      *)
(*     alive and still acting as that member (it would heartbeat or revoke *)
(*     in time) is early: a fault that spends the budget;                  *)
(*   - network: messages in flight are a set; a consumer has at most one   *)
(*     heartbeat and one commit outstanding per connection; messages may   *)
(*     be lost, and a consumer may give up a request and reconnect, which  *)
(*     leaves the old request in flight (delayed, processed after newer    *)
(*     ones) and drops its answer;                                         *)
(*   - heartbeat fields: the owned partitions are sent as the Kafka client *)
(*     sends them (when joining, after a reconciliation completed, after a *)
(*     failed heartbeat; null otherwise); the subscription is always sent  *)
(*     and the assignment always answered;                                 *)
(*   - consumers reconcile towards the latest assignment they received,    *)
(*     one callback at a time (Revoke, then Assign).                       *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

CONSTANTS
    \* The consumer processes.
    \* @type: Set(CONSUMER);
    Consumers,
    \* No consumer (the client of a timer's step).
    \* @type: CONSUMER;
    NoConsumer,
    \* The member ids consumers may pick (a consumer generates its own, once
    \* per process, KIP-1082: ConsumerGroupHeartbeat v1).
    \* @type: Set(MEMBER);
    MemberIds,
    \* No member id yet.
    \* @type: MEMBER;
    NoMember,
    \* The partitions; each stands for a topic of its own.
    \* @type: Set(PARTITION);
    Partitions,
    \* The subscriptions a consumer may have (non-empty sets of partitions).
    \* @type: Set(Set(PARTITION));
    Subscriptions,
    \* How many subscription changes (after joining) a behaviour may have.
    \* @type: Int;
    MaxSubscriptionChanges,
    \* The kinds of fault a behaviour may have, among "crash", "restart",
    \* "leave", "lose", "reconnect", "hang", "early_session", "early_rebalance".
    \* @type: Set(Str);
    FaultKinds,
    \* How many faults a behaviour may have.
    \* @type: Int;
    MaxFaults

VARIABLES
    \* The coordinator's consumer group (coordinator/consumer/group.py ConsumerGroup):
    \* group_epoch, assignment_epoch (targetAssignmentEpoch), members, each
    \* member's record (ConsumerMember, plus the epoch its rebalance timer was
    \* armed for, -1: none) and the target assignment.
    \* @type: {group_epoch: Int, assignment_epoch: Int, members: Set(MEMBER), member: MEMBER -> {member_epoch: Int, previous_member_epoch: Int, state: Str, assigned: Set(PARTITION), pending_revocation: Set(PARTITION), subscription: Set(PARTITION), rebalance_timer: Int}, target: MEMBER -> Set(PARTITION)};
    group,
    \* Requests and responses in flight.
    \* @type: Set({type: Str, client: CONSUMER, conn: Int, member: MEMBER, epoch: Int, full: Bool, owned: Set(PARTITION), subscription: Set(PARTITION), error: Str, assigned: Set(PARTITION)});
    msgs,
    \* "unsubscribed", "joining" (heartbeats with epoch 0), "member", "down".
    \* @type: CONSUMER -> Str;
    client_state,
    \* The member id a consumer uses (NoMember before it first subscribes).
    \* @type: CONSUMER -> MEMBER;
    client_member,
    \* The member epoch a consumer knows (0 while joining).
    \* @type: CONSUMER -> Int;
    client_epoch,
    \* The assignment the consumer last received: what it reconciles towards.
    \* @type: CONSUMER -> Set(PARTITION);
    client_target,
    \* The partitions a consumer owns (consumes from) now.
    \* @type: CONSUMER -> Set(PARTITION);
    owned,
    \* The subscription a consumer sends.
    \* @type: CONSUMER -> Set(PARTITION);
    client_subscription,
    \* The consumer's connection; a reconnect or a restart opens a new one,
    \* and answers on an older one are dropped.
    \* @type: CONSUMER -> Int;
    client_conn,
    \* The revocation callback hangs (longer than the rebalance timeout).
    \* @type: CONSUMER -> Bool;
    stuck,
    \* The consumer's last heartbeat reported its current owned partitions
    \* (HeartbeatState.sentFields.localAssignment): the next one sends none
    \* (null) unless they change, it joins, or a heartbeat failed.
    \* @type: CONSUMER -> Bool;
    owned_sent,
    \* A heartbeat was sent and its answer not received (if nothing of it is
    \* in flight any more, it failed: the next heartbeat is a full one).
    \* @type: CONSUMER -> Bool;
    hb_pending,
    \* Member ids already picked by some consumer process.
    \* @type: Set(MEMBER);
    used_ids,
    \* Faults spent so far.
    \* @type: Int;
    faults,
    \* Subscription changes so far.
    \* @type: Int;
    subscription_changes,
    \* Whether a session or rebalance timeout fenced a member whose consumer
    \* was still acting as that member (InUse: a consumer slower than its timeouts).
    \* @type: Bool;
    timing_fault,
    \* Whether a heartbeat made the coordinator release a partition that the
    \* member's consumer still held or was about to take: the heartbeat's
    \* owned partitions were out of date (a full heartbeat after a failed one
    \* during the assignment callback, or a delayed one).
    \* @type: Bool;
    stale_report,
    \* The committed offset of each partition: the member and epoch of the
    \* commit stored last (NoMember, -1: none).  It influences no step;
    \* models leave it out of their VIEW (declared last with last_action, so
    \* that TLC's symmetry reduction never depends on it).
    \* @type: PARTITION -> {member: MEMBER, epoch: Int};
    committed,
    \* The last action and its parameters: for readable counterexamples;
    \* models leave it out of their VIEW.
    \* @type: {name: Str, client: CONSUMER, member: MEMBER, error: Str};
    last_action

\* Apalache's names for the member record, the group record and a message.
\* @typeAlias: member = {member_epoch: Int, previous_member_epoch: Int, state: Str, assigned: Set(PARTITION), pending_revocation: Set(PARTITION), subscription: Set(PARTITION), rebalance_timer: Int};
\* @typeAlias: group = {group_epoch: Int, assignment_epoch: Int, members: Set(MEMBER), member: MEMBER -> $member, target: MEMBER -> Set(PARTITION)};
\* @typeAlias: msg = {type: Str, client: CONSUMER, conn: Int, member: MEMBER, epoch: Int, full: Bool, owned: Set(PARTITION), subscription: Set(PARTITION), error: Str, assigned: Set(PARTITION)};
ConsumerProtocol_typedefs == TRUE

vars == <<group, msgs, client_state, client_member, client_epoch, client_target, owned,
          client_subscription, client_conn, stuck, owned_sent, hb_pending, committed, used_ids,
          faults, subscription_changes, timing_fault, stale_report, last_action>>
client_vars == <<client_state, client_member, client_epoch, client_target, owned,
                 client_subscription, client_conn, stuck, owned_sent, hb_pending>>

-----------------------------------------------------------------------------
(* Values *)

\* ConsumerGroupMember.Builder's defaults: epoch 0, previous epoch -1, STABLE,
\* nothing assigned; no rebalance timer.  A removed member's record is reset to it.
\* @type: $member;
NewMember ==
    [member_epoch |-> 0, previous_member_epoch |-> -1, state |-> "STABLE",
     assigned |-> {}, pending_revocation |-> {}, subscription |-> {}, rebalance_timer |-> -1]

\* @type: {member: MEMBER, epoch: Int};
NoCommit == [member |-> NoMember, epoch |-> -1]

MemberOrNone == MemberIds \cup {NoMember}

\* @type: PARTITION -> MEMBER;
NoOwner == [p \in Partitions |-> NoMember]

\* A consumer that is in the group, or joining it.
\* @type: CONSUMER => Bool;
Live(c) == client_state[c] \in {"joining", "member"}

\* ConsumerGroup.state (maybeUpdateGroupState), for reading counterexamples.
\* @type: $group => Str;
GroupState(g) ==
    IF g.members = {} THEN "Empty"
    ELSE IF g.group_epoch > g.assignment_epoch THEN "Assigning"
    ELSE IF \E m \in g.members : g.member[m].state # "STABLE"
                                \/ g.member[m].member_epoch # g.assignment_epoch
         THEN "Reconciling"
    ELSE "Stable"

-----------------------------------------------------------------------------
(* The assignor's contract.  The uniform assignor (UniformHomogeneous- and  *)
(* UniformHeterogeneousAssignmentBuilder) is abstracted to what it          *)
(* guarantees: every subscribed partition goes to exactly one member that   *)
(* subscribes to it, nothing else is assigned, and no partition could move  *)
(* to another subscriber with two fewer partitions (balanced: for equal     *)
(* subscriptions the counts differ by at most one).                         *)

\* The target assignment an owner function gives (NoMember: unassigned).
\* @type: (PARTITION -> MEMBER) => (MEMBER -> Set(PARTITION));
NewTarget(o) == [m \in MemberIds |-> {p \in Partitions : o[p] = m}]

\* @type: (Set(MEMBER), MEMBER -> Set(PARTITION), MEMBER -> Set(PARTITION)) => Bool;
TargetValid(ms, sub, tgt) ==
    /\ \A m \in MemberIds \ ms : tgt[m] = {}
    /\ \A m \in ms : tgt[m] \subseteq sub[m]
    /\ \A m1, m2 \in ms : m1 # m2 => tgt[m1] \cap tgt[m2] = {}
    /\ UNION {tgt[m] : m \in ms} = UNION {sub[m] : m \in ms}
    /\ \A m1, m2 \in ms :
         tgt[m1] \cap sub[m2] # {} => Cardinality(tgt[m1]) <= Cardinality(tgt[m2]) + 1

-----------------------------------------------------------------------------
(* Coordinator steps: coordinator/consumer/heartbeat.py and               *)
(* reconciliation.py, one operator per function.                           *)

\* throwIfConsumerGroupMemberEpochIsInvalid (heartbeat.py _check_epoch): an
\* epoch ahead is fenced; one behind is fenced unless it is the previous
\* epoch and the member reports a subset of its assignment (the response
\* that bumped the epoch may have been lost; owned partitions not reported,
\* full = FALSE, are no subset: member.py is_subset).
\* @type: ($member, Int, Bool, Set(PARTITION)) => Str;
EpochError(mem, epoch, full, ownedParts) ==
    IF epoch > mem.member_epoch THEN "FENCED_MEMBER_EPOCH"
    ELSE IF epoch < mem.member_epoch
            /\ (epoch # mem.previous_member_epoch \/ ~full \/ ~(ownedParts \subseteq mem.assigned))
         THEN "FENCED_MEMBER_EPOCH"
    ELSE "NONE"

\* getOrMaybeSubscribeDynamicConsumerGroupMember: a known member's epoch is
\* checked; an unknown one may only join (epoch 0).
\* @type: ($group, $msg) => Str;
HeartbeatError(g, req) ==
    IF req.member \in g.members
    THEN EpochError(g.member[req.member], req.epoch, req.full, req.owned)
    ELSE IF req.epoch = 0 THEN "NONE"
    ELSE "UNKNOWN_MEMBER_ID"

\* The member before the request (ConsumerGroup.getOrMaybeCreateMember).
\* @type: ($group, MEMBER) => $member;
Before(g, m) == IF m \in g.members THEN g.member[m] ELSE NewMember

\* The member with the request's subscription (ConsumerGroupMemberMetadata).
\* @type: ($group, $msg) => $member;
Updated(g, req) == [Before(g, req.member) EXCEPT !.subscription = req.subscription]

\* A new group's first epoch, or hasMemberSubscriptionChanged (always, for a
\* new member): the group epoch is bumped.  (The metadata hash changes only
\* with the subscribed topics, so only with a member's subscription here.)
\* @type: ($group, $msg) => Int;
NewGroupEpoch(g, req) ==
    IF g.group_epoch = 0 \/ req.subscription # Before(g, req.member).subscription
    THEN g.group_epoch + 1 ELSE g.group_epoch

\* @type: ($group, $msg) => Set(MEMBER);
MembersAfter(g, req) == g.members \cup {req.member}

\* @type: ($group, $msg) => (MEMBER -> Set(PARTITION));
SubscriptionsAfter(g, req) ==
    [x \in MemberIds |-> IF x = req.member THEN req.subscription ELSE g.member[x].subscription]

\* updateTargetAssignment is due: the group epoch is ahead of the target's.
\* @type: ($group, $msg) => Bool;
NeedsTarget(g, req) == NewGroupEpoch(g, req) > g.assignment_epoch

\* ConsumerGroup.currentPartitionEpoch(p) # -1 for a partition that member m
\* does not hold pending revocation: another member holds p, assigned or
\* pending revocation (the partition epochs are derived from the members'
\* records; RecordsNoTwoOwnersInv says they are well defined).
\* @type: ($group, MEMBER, PARTITION) => Bool;
HeldByOther(g, m, p) ==
    \E x \in g.members \ {m} : p \in g.member[x].assigned \cup g.member[x].pending_revocation

\* ownsRevokedPartitions (reconciliation.py _owns_any): a heartbeat that does
\* not report its owned partitions (null) still owns them.
\* @type: ($msg, Set(PARTITION)) => Bool;
OwnsAny(req, parts) == ~req.full \/ req.owned \cap parts # {}

\* CurrentAssignmentBuilder.computeNextAssignment (reconciliation.py _next):
\* keep what stays, revoke what goes (the member stays in its epoch, in
\* UNREVOKED_PARTITIONS, while its heartbeat still reports any of it), and
\* add what no other member holds; what another member still holds is
\* unreleased (UNRELEASED_PARTITIONS) and added at a later heartbeat.
\* @type: ($group, MEMBER, $member, Int, Int, Set(PARTITION), $msg) => $member;
ComputeNextAssignment(g, m, mem, epoch, te, tgt, req) ==
    LET keep == mem.assigned \cap tgt
        revoke == mem.assigned \ keep
        wanted == tgt \ keep
        unreleased == {p \in wanted : HeldByOther(g, m, p) /\ p \notin mem.pending_revocation}
    IN IF revoke # {} /\ OwnsAny(req, revoke)
       THEN [mem EXCEPT !.state = "UNREVOKED_PARTITIONS",
                        !.member_epoch = epoch, !.previous_member_epoch = mem.member_epoch,
                        !.assigned = keep, !.pending_revocation = revoke]
       ELSE [mem EXCEPT !.state = IF unreleased # {} THEN "UNRELEASED_PARTITIONS" ELSE "STABLE",
                        !.member_epoch = te, !.previous_member_epoch = mem.member_epoch,
                        !.assigned = keep \cup (wanted \ unreleased),
                        !.pending_revocation = {}]

\* CurrentAssignmentBuilder.build (reconciliation.py reconcile): the member
\* after its heartbeat, given the target epoch te and its target tgt.
\* @type: ($group, MEMBER, $member, Int, Set(PARTITION), $msg) => $member;
BuildAssignment(g, m, mem, te, tgt, req) ==
    CASE mem.state = "STABLE" ->
           IF mem.member_epoch # te
           THEN ComputeNextAssignment(g, m, mem, mem.member_epoch, te, tgt, req)
           ELSE mem
      [] mem.state = "UNREVOKED_PARTITIONS" ->
           IF OwnsAny(req, mem.pending_revocation) THEN mem
           ELSE ComputeNextAssignment(g, m, mem, mem.member_epoch + 1, te, tgt, req)
      [] OTHER ->
           ComputeNextAssignment(g, m, mem, mem.member_epoch, te, tgt, req)

\* The rebalance timer after reconciliation: armed with the member epoch when
\* the member must revoke, cancelled when it changes otherwise.
\* @type: ($member, $member) => Int;
RebalanceTimer(before, after) ==
    IF after = before THEN before.rebalance_timer
    ELSE IF after.state = "UNREVOKED_PARTITIONS" THEN after.member_epoch
    ELSE -1

\* consumerGroupHeartbeat (heartbeat.py _heartbeat) for a heartbeat that
\* passed HeartbeatError: 1. the member and the group epoch; 2. the target
\* assignment (newTarget, the assignor's, when the group epoch is ahead of
\* the target's); 3. reconciliation (maybeReconcile).
\* @type: ($group, $msg, MEMBER -> Set(PARTITION)) => $group;
HeartbeatStep(g, req, newTarget) ==
    LET m == req.member
        ge == NewGroupEpoch(g, req)
        fresh == ge > g.assignment_epoch
        target == IF fresh THEN newTarget ELSE g.target
        te == IF fresh THEN ge ELSE g.assignment_epoch
        before == Updated(g, req)
        after == BuildAssignment(g, m, before, te, target[m], req)
    IN [g EXCEPT !.group_epoch = ge, !.assignment_epoch = te, !.target = target,
                 !.members = @ \cup {m},
                 !.member[m] = [after EXCEPT !.rebalance_timer = RebalanceTimer(before, after)]]

\* consumerGroupFenceMembers / removeMember (heartbeat.py fence_members) for
\* one member: its records are deleted (its partitions released, its target
\* and timers gone) and the group epoch is bumped; the target is recomputed
\* at the next heartbeat.
\* @type: ($group, MEMBER) => $group;
FenceMember(g, m) ==
    [g EXCEPT !.members = @ \ {m},
              !.member[m] = NewMember,
              !.target[m] = {},
              !.group_epoch = @ + 1]

\* ConsumerGroup.validateOffsetCommit (offsets.py validate_consumer_offset_commit):
\* a member, at its current member epoch.
\* @type: ($group, $msg) => Str;
CommitError(g, req) ==
    IF req.member \notin g.members THEN "UNKNOWN_MEMBER_ID"
    ELSE IF req.epoch # g.member[req.member].member_epoch THEN "STALE_MEMBER_EPOCH"
    ELSE "NONE"

-----------------------------------------------------------------------------
(* Messages *)

\* A consumer's request on its current connection.
\* @type: (Str, CONSUMER) => $msg;
Request(type, c) ==
    [type |-> type, client |-> c, conn |-> client_conn[c], member |-> client_member[c],
     epoch |-> client_epoch[c], full |-> TRUE, owned |-> owned[c],
     subscription |-> client_subscription[c], error |-> "NONE", assigned |-> {}]

\* The answer to req.
\* @type: (Str, $msg, Str, Int, Set(PARTITION)) => $msg;
Response(type, req, err, epoch, assigned) ==
    [type |-> type, client |-> req.client, conn |-> req.conn, member |-> req.member,
     epoch |-> epoch, full |-> TRUE, owned |-> {}, subscription |-> {}, error |-> err,
     assigned |-> assigned]

\* A request or answer of one of types on c's current connection is in flight.
\* @type: (CONSUMER, Set(Str)) => Bool;
InFlight(c, types) == \E x \in msgs : x.client = c /\ x.conn = client_conn[c] /\ x.type \in types

Label(name, c, m, e) == last_action' = [name |-> name, client |-> c, member |-> m, error |-> e]

\* The partitions consumer c owns or is about to take: its assignment not yet
\* reconciled, and the assignment of a successful answer on its way to it.
\* @type: CONSUMER => Set(PARTITION);
HeldOrComing(c) ==
    owned[c] \cup client_target[c]
    \cup UNION {x.assigned : x \in {y \in msgs : /\ y.type = "HeartbeatResponse"
                                                /\ y.error = "NONE" /\ y.client = c
                                                /\ y.conn = client_conn[c]}}

\* A step from g to g2 takes from member m's records a partition that the
\* live consumer acting as m holds or is about to take.
\* @type: ($group, $group, MEMBER) => Bool;
StaleRelease(g, g2, m) ==
    LET released == (g.member[m].assigned \cup g.member[m].pending_revocation)
                    \ (g2.member[m].assigned \cup g2.member[m].pending_revocation)
    IN \E c \in Consumers :
         Live(c) /\ client_member[c] = m /\ released \cap HeldOrComing(c) # {}

\* A fault of this kind is allowed, and spent.
Fault(kind) == kind \in FaultKinds /\ faults < MaxFaults /\ faults' = faults + 1

-----------------------------------------------------------------------------
(* Coordinator actions *)

\* A ConsumerGroupHeartbeat to join or stay (epoch >= 0) from consumer c.  A
\* new target is any the assignor's contract allows (an explicit choice of
\* owner function); otherwise the target stays.
HandleHeartbeat(c) ==
    \E req \in msgs :
        /\ req.type = "HeartbeatRequest" /\ req.client = c /\ req.epoch >= 0
        /\ LET err == HeartbeatError(group, req)
           IN IF err # "NONE"
              THEN /\ msgs' = (msgs \ {req}) \cup {Response("HeartbeatResponse", req, err, 0, {})}
                   /\ UNCHANGED group
                   /\ Label("HandleHeartbeat", c, req.member, err)
              ELSE /\ IF NeedsTarget(group, req)
                      THEN \E o \in [Partitions -> MemberOrNone] :
                             /\ TargetValid(MembersAfter(group, req),
                                            SubscriptionsAfter(group, req), NewTarget(o))
                             /\ group' = HeartbeatStep(group, req, NewTarget(o))
                      ELSE group' = HeartbeatStep(group, req, group.target)
                   /\ msgs' = (msgs \ {req}) \cup
                              {Response("HeartbeatResponse", req, "NONE",
                                        group'.member[req.member].member_epoch,
                                        group'.member[req.member].assigned)}
                   /\ Label("HandleHeartbeat", c, req.member, "NONE")
        /\ stale_report' = (stale_report \/ StaleRelease(group, group', req.member))
        /\ UNCHANGED <<client_vars, committed, used_ids, faults, subscription_changes,
                       timing_fault>>

\* A ConsumerGroupHeartbeat with epoch -1 (heartbeat.py _leave,
\* consumerGroupLeave): the member is fenced.  The consumer has closed: its
\* answer is not modelled.
HandleLeave(c) ==
    \E req \in msgs :
        /\ req.type = "HeartbeatRequest" /\ req.client = c /\ req.epoch = -1
        /\ msgs' = msgs \ {req}
        /\ group' = IF req.member \in group.members THEN FenceMember(group, req.member) ELSE group
        /\ Label("HandleLeave", c, req.member,
                 IF req.member \in group.members THEN "NONE" ELSE "UNKNOWN_MEMBER_ID")
        /\ UNCHANGED <<client_vars, committed, used_ids, faults, subscription_changes, timing_fault,
                       stale_report>>

\* An OffsetCommit from consumer c, for the partitions it owns.
HandleCommit(c) ==
    \E req \in msgs :
        /\ req.type = "OffsetCommitRequest" /\ req.client = c
        /\ LET err == CommitError(group, req)
           IN /\ msgs' = (msgs \ {req}) \cup
                         {Response("OffsetCommitResponse", req, err, req.epoch, req.owned)}
              /\ committed' = IF err = "NONE"
                              THEN [p \in Partitions |->
                                      IF p \in req.owned
                                      THEN [member |-> req.member, epoch |-> req.epoch]
                                      ELSE committed[p]]
                              ELSE committed
              /\ Label("HandleCommit", c, req.member, err)
        /\ UNCHANGED <<group, client_vars, used_ids, faults, subscription_changes, timing_fault,
                       stale_report>>

\* A live consumer acts as member m: it holds partitions as m, its
\* heartbeats are accepted (each refreshes m's session), or the answer to
\* one that was is on its way to it.  A timeout that fences m then needs a
\* consumer slower than its timeouts.
\* @type: MEMBER => Bool;
InUse(m) ==
    \E c \in Consumers :
        /\ Live(c) /\ client_member[c] = m
        /\ \/ owned[c] # {}
           \/ m \in group.members
              /\ EpochError(group.member[m], client_epoch[c], TRUE, owned[c]) = "NONE"
           \/ \E x \in msgs : /\ x.type = "HeartbeatResponse" /\ x.error = "NONE"
                             /\ x.client = c /\ x.conn = client_conn[c]

\* The consumer acting as m hangs in its revocation callback.
\* @type: MEMBER => Bool;
StuckAs(m) == \E c \in Consumers : Live(c) /\ client_member[c] = m /\ stuck[c]

\* A timer step: early ones spend the budget.
FireTimer(g2, name, m, early, kind) ==
    /\ early => (kind \in FaultKinds /\ faults < MaxFaults)
    /\ group' = g2
    /\ faults' = IF early THEN faults + 1 ELSE faults
    /\ timing_fault' = (timing_fault \/ (g2.members # group.members /\ InUse(m)))
    /\ Label(name, NoConsumer, m, IF early THEN "EARLY" ELSE "NONE")
    /\ UNCHANGED <<msgs, client_vars, committed, used_ids, subscription_changes, stale_report>>

\* The session timeout (heartbeat.py expire_session): the member is fenced.
\* On time when no live consumer acts as the member (it crashed, restarted
\* with a new id, left, or its heartbeats are all rejected).
ExpireSession(m) ==
    /\ m \in group.members
    /\ FireTimer(FenceMember(group, m), "ExpireSession", m, InUse(m), "early_session")

\* The rebalance timeout (heartbeat.py expire_rebalance): a member still in
\* the epoch it had to revoke in is fenced.  On time when its consumer is
\* stuck in its revocation callback or no longer acts as the member.
ExpireRebalance(m) ==
    /\ m \in group.members
    /\ group.member[m].rebalance_timer # -1
    /\ FireTimer(IF group.member[m].member_epoch = group.member[m].rebalance_timer
                 THEN FenceMember(group, m)
                 ELSE [group EXCEPT !.member[m].rebalance_timer = -1],
                 "ExpireRebalance", m, InUse(m) /\ ~StuckAs(m), "early_rebalance")

-----------------------------------------------------------------------------
(* Consumers: Kafka's ConsumerMembershipManager (AbstractMembershipManager, *)
(* ConsumerHeartbeatRequestManager, CommitRequestManager), abstracted.     *)

\* KafkaConsumer.subscribe: the consumer picks a member id of its own and a
\* subscription, and starts joining.
Join(c) ==
    /\ client_state[c] = "unsubscribed"
    /\ \E m \in MemberIds \ used_ids, s \in Subscriptions :
         /\ client_member' = [client_member EXCEPT ![c] = m]
         /\ client_subscription' = [client_subscription EXCEPT ![c] = s]
         /\ used_ids' = used_ids \cup {m}
         /\ Label("Join", c, m, "NONE")
    /\ client_state' = [client_state EXCEPT ![c] = "joining"]
    /\ client_epoch' = [client_epoch EXCEPT ![c] = 0]
    /\ UNCHANGED <<group, msgs, client_target, owned, client_conn, stuck, owned_sent, hb_pending,
                   committed, faults, subscription_changes, timing_fault, stale_report>>

\* The heartbeat (HeartbeatState.buildRequestData): member id, epoch (0 to
\* join), subscription, and the owned partitions only when joining, after a
\* reconciliation completed (the local assignment changed), or after a
\* heartbeat failed (resetHeartbeatState); otherwise none (null).
SendHeartbeat(c) ==
    /\ Live(c)
    /\ ~InFlight(c, {"HeartbeatRequest", "HeartbeatResponse"})
    /\ LET full == client_state[c] = "joining" \/ ~owned_sent[c] \/ hb_pending[c]
       IN msgs' = msgs \cup {[Request("HeartbeatRequest", c)
                                EXCEPT !.full = full, !.owned = IF full THEN owned[c] ELSE {}]}
    /\ owned_sent' = [owned_sent EXCEPT ![c] = TRUE]
    /\ hb_pending' = [hb_pending EXCEPT ![c] = TRUE]
    /\ Label("SendHeartbeat", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, client_state, client_member, client_epoch, client_target, owned,
                   client_subscription, client_conn, stuck, committed, used_ids, faults,
                   subscription_changes, timing_fault, stale_report>>

\* onHeartbeatSuccess: the new epoch and assignment (reconciled by Revoke and
\* Assign); FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: transitionToFenced,
\* the partitions are lost (onPartitionsLost) and the consumer rejoins with
\* epoch 0 and the same member id.
ReceiveHeartbeat(c) ==
    \E resp \in msgs :
        /\ resp.type = "HeartbeatResponse" /\ resp.client = c /\ resp.conn = client_conn[c]
        /\ Live(c)
        /\ msgs' = msgs \ {resp}
        /\ hb_pending' = [hb_pending EXCEPT ![c] = FALSE]
        /\ IF resp.error = "NONE"
           THEN /\ client_state' = [client_state EXCEPT ![c] = "member"]
                /\ client_epoch' = [client_epoch EXCEPT ![c] = resp.epoch]
                /\ client_target' = [client_target EXCEPT ![c] = resp.assigned]
                \* A new target equal to what it owns: reconciled at once, and
                \* acknowledged (the local epoch is bumped).
                /\ owned_sent' = [owned_sent EXCEPT ![c] =
                                    IF resp.assigned # client_target[c] /\ resp.assigned = owned[c]
                                    THEN FALSE ELSE @]
                /\ UNCHANGED <<owned, stuck>>
           ELSE /\ client_state' = [client_state EXCEPT ![c] = "joining"]
                /\ client_epoch' = [client_epoch EXCEPT ![c] = 0]
                /\ client_target' = [client_target EXCEPT ![c] = {}]
                /\ owned' = [owned EXCEPT ![c] = {}]
                /\ stuck' = [stuck EXCEPT ![c] = FALSE]
                /\ owned_sent' = [owned_sent EXCEPT ![c] = FALSE]
        /\ Label("ReceiveHeartbeat", c, resp.member, resp.error)
        /\ UNCHANGED <<group, client_member, client_subscription, client_conn, committed,
                       used_ids, faults, subscription_changes, timing_fault, stale_report>>

\* The revocation callback (onPartitionsRevoked) returns: the consumer gives
\* up what its assignment no longer has; if nothing is left to add, the
\* reconciliation is complete and the local assignment changes.  It takes
\* its time: heartbeats and timers may come before it.
Revoke(c) ==
    /\ client_state[c] = "member" /\ ~stuck[c]
    /\ owned[c] \ client_target[c] # {}
    /\ owned' = [owned EXCEPT ![c] = @ \cap client_target[c]]
    \* Reconciled (nothing to add): acknowledged by the next heartbeat.
    /\ owned_sent' = [owned_sent EXCEPT ![c] =
                        @ /\ owned[c] \cap client_target[c] # client_target[c]]
    /\ Label("Revoke", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, msgs, client_state, client_member, client_epoch, client_target,
                   client_subscription, client_conn, stuck, hb_pending, committed, used_ids,
                   faults, subscription_changes, timing_fault, stale_report>>

\* Nothing left to revoke: the new partitions are taken (onPartitionsAssigned
\* returns; they become fetchable and the local assignment changes).
Assign(c) ==
    /\ client_state[c] = "member"
    /\ owned[c] \subseteq client_target[c] /\ owned[c] # client_target[c]
    /\ owned' = [owned EXCEPT ![c] = client_target[c]]
    /\ owned_sent' = [owned_sent EXCEPT ![c] = FALSE]
    /\ Label("Assign", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, msgs, client_state, client_member, client_epoch, client_target,
                   client_subscription, client_conn, stuck, hb_pending, committed, used_ids,
                   faults, subscription_changes, timing_fault, stale_report>>

\* The consumer commits the offsets of what it owns, with its member epoch.
SendOffsetCommit(c) ==
    /\ client_state[c] = "member" /\ owned[c] # {}
    /\ ~InFlight(c, {"OffsetCommitRequest", "OffsetCommitResponse"})
    /\ msgs' = msgs \cup {[Request("OffsetCommitRequest", c) EXCEPT !.subscription = {}]}
    /\ Label("SendOffsetCommit", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, client_vars, committed, used_ids, faults, subscription_changes,
                   timing_fault, stale_report>>

\* The commit's answer; an error fails the commit, nothing more (the
\* heartbeat is what fences a consumer).
ReceiveCommit(c) ==
    \E resp \in msgs :
        /\ resp.type = "OffsetCommitResponse" /\ resp.client = c /\ resp.conn = client_conn[c]
        /\ Live(c)
        /\ msgs' = msgs \ {resp}
        /\ Label("ReceiveCommit", c, resp.member, resp.error)
        /\ UNCHANGED <<group, client_vars, committed, used_ids, faults, subscription_changes,
                       timing_fault, stale_report>>

\* Answers on an older connection, or for a consumer that is not live.
DropStale ==
    \E resp \in msgs :
        /\ resp.type \in {"HeartbeatResponse", "OffsetCommitResponse"}
        /\ resp.conn # client_conn[resp.client] \/ ~Live(resp.client)
        /\ msgs' = msgs \ {resp}
        /\ Label("DropStale", resp.client, resp.member, resp.error)
        /\ UNCHANGED <<group, client_vars, committed, used_ids, faults, subscription_changes,
                       timing_fault, stale_report>>

\* The application changes the subscription; the next heartbeat carries it.
Subscribe(c) ==
    /\ subscription_changes < MaxSubscriptionChanges
    /\ Live(c)
    /\ \E s \in Subscriptions \ {client_subscription[c]} :
         client_subscription' = [client_subscription EXCEPT ![c] = s]
    /\ subscription_changes' = subscription_changes + 1
    /\ Label("Subscribe", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, msgs, client_state, client_member, client_epoch, client_target, owned,
                   client_conn, stuck, owned_sent, hb_pending, committed, used_ids, faults,
                   timing_fault, stale_report>>

-----------------------------------------------------------------------------
(* Faults, each spending the budget. *)

\* The consumer closes: it revokes everything and sends a heartbeat with epoch -1.
Leave(c) ==
    /\ Fault("leave")
    /\ Live(c) /\ ~stuck[c]
    /\ msgs' = msgs \cup {[Request("HeartbeatRequest", c) EXCEPT !.epoch = -1, !.owned = {}]}
    /\ client_state' = [client_state EXCEPT ![c] = "down"]
    /\ owned' = [owned EXCEPT ![c] = {}]
    /\ Label("Leave", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, client_member, client_epoch, client_target, client_subscription,
                   client_conn, stuck, owned_sent, hb_pending, committed, used_ids,
                   subscription_changes, timing_fault, stale_report>>

\* The process dies; its requests in flight stay in flight.
Crash(c) ==
    /\ Fault("crash")
    /\ client_state[c] # "down"
    /\ client_state' = [client_state EXCEPT ![c] = "down"]
    /\ owned' = [owned EXCEPT ![c] = {}]
    /\ stuck' = [stuck EXCEPT ![c] = FALSE]
    /\ Label("Crash", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, msgs, client_member, client_epoch, client_target, client_subscription,
                   client_conn, owned_sent, hb_pending, committed, used_ids,
                   subscription_changes, timing_fault, stale_report>>

\* A new process: a new connection, and a new member id when it subscribes.
Restart(c) ==
    /\ Fault("restart")
    /\ client_state[c] = "down"
    /\ client_state' = [client_state EXCEPT ![c] = "unsubscribed"]
    /\ client_member' = [client_member EXCEPT ![c] = NoMember]
    /\ client_epoch' = [client_epoch EXCEPT ![c] = 0]
    /\ client_target' = [client_target EXCEPT ![c] = {}]
    /\ client_subscription' = [client_subscription EXCEPT ![c] = {}]
    /\ client_conn' = [client_conn EXCEPT ![c] = @ + 1]
    /\ owned_sent' = [owned_sent EXCEPT ![c] = FALSE]
    /\ hb_pending' = [hb_pending EXCEPT ![c] = FALSE]
    /\ Label("Restart", c, NoMember, "NONE")
    /\ UNCHANGED <<group, msgs, owned, stuck, committed, used_ids, subscription_changes,
                   timing_fault, stale_report>>

\* A request or an answer is lost.
LoseMessage ==
    \E x \in msgs :
        /\ Fault("lose")
        /\ msgs' = msgs \ {x}
        /\ Label("LoseMessage", x.client, x.member, x.type)
        /\ UNCHANGED <<group, client_vars, committed, used_ids, subscription_changes,
                       timing_fault, stale_report>>

\* The consumer gives up waiting and reconnects: its requests in flight stay
\* in flight (the coordinator may still process them, after newer ones) and
\* their answers are dropped; it sends again (a full heartbeat).
Reconnect(c) ==
    /\ Fault("reconnect")
    /\ Live(c)
    /\ InFlight(c, {"HeartbeatRequest", "HeartbeatResponse", "OffsetCommitRequest",
                    "OffsetCommitResponse"})
    /\ client_conn' = [client_conn EXCEPT ![c] = @ + 1]
    /\ Label("Reconnect", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, msgs, client_state, client_member, client_epoch, client_target, owned,
                   client_subscription, stuck, owned_sent, hb_pending, committed, used_ids,
                   subscription_changes, timing_fault, stale_report>>

\* The revocation callback hangs for longer than the rebalance timeout (the
\* heartbeat thread goes on).
Hang(c) ==
    /\ Fault("hang")
    /\ client_state[c] = "member" /\ ~stuck[c]
    /\ owned[c] \ client_target[c] # {}
    /\ stuck' = [stuck EXCEPT ![c] = TRUE]
    /\ Label("Hang", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, msgs, client_state, client_member, client_epoch, client_target, owned,
                   client_subscription, client_conn, owned_sent, hb_pending, committed, used_ids,
                   subscription_changes, timing_fault, stale_report>>
-----------------------------------------------------------------------------

Init ==
    /\ group = [group_epoch |-> 0, assignment_epoch |-> 0, members |-> {},
                member |-> [m \in MemberIds |-> NewMember],
                target |-> [m \in MemberIds |-> {}]]
    /\ msgs = {}
    /\ client_state = [c \in Consumers |-> "unsubscribed"]
    /\ client_member = [c \in Consumers |-> NoMember]
    /\ client_epoch = [c \in Consumers |-> 0]
    /\ client_target = [c \in Consumers |-> {}]
    /\ owned = [c \in Consumers |-> {}]
    /\ client_subscription = [c \in Consumers |-> {}]
    /\ client_conn = [c \in Consumers |-> 0]
    /\ stuck = [c \in Consumers |-> FALSE]
    /\ owned_sent = [c \in Consumers |-> FALSE]
    /\ hb_pending = [c \in Consumers |-> FALSE]
    /\ committed = [p \in Partitions |-> NoCommit]
    /\ used_ids = {}
    /\ faults = 0
    /\ subscription_changes = 0
    /\ timing_fault = FALSE
    /\ stale_report = FALSE
    /\ last_action = [name |-> "Init", client |-> NoConsumer,
                      member |-> NoMember, error |-> "NONE"]

CoordinatorNext ==
    \/ \E c \in Consumers : HandleHeartbeat(c) \/ HandleLeave(c) \/ HandleCommit(c)
    \/ \E m \in MemberIds : ExpireSession(m) \/ ExpireRebalance(m)

ClientNext(c) ==
    \/ Join(c) \/ SendHeartbeat(c) \/ ReceiveHeartbeat(c) \/ Revoke(c) \/ Assign(c)
    \/ SendOffsetCommit(c) \/ ReceiveCommit(c) \/ Subscribe(c)

FaultNext ==
    \/ LoseMessage
    \/ \E c \in Consumers : Leave(c) \/ Crash(c) \/ Restart(c) \/ Reconnect(c) \/ Hang(c)

Next ==
    \/ CoordinatorNext
    \/ \E c \in Consumers : ClientNext(c)
    \/ DropStale
    \/ FaultNext

\* Progress: the coordinator answers each consumer, timers that are due (not
\* early ones) fire, consumers heartbeat, reconcile and join.  A revocation
\* callback that hangs never returns on its own (Revoke is disabled while
\* stuck): only the rebalance timeout ends it.  Commits, subscription
\* changes and faults are never forced.
Fairness ==
    /\ WF_vars(DropStale)
    /\ \A c \in Consumers :
         /\ WF_vars(HandleHeartbeat(c)) /\ WF_vars(HandleLeave(c)) /\ WF_vars(HandleCommit(c))
         /\ WF_vars(Join(c)) /\ WF_vars(SendHeartbeat(c)) /\ WF_vars(ReceiveHeartbeat(c))
         /\ WF_vars(Revoke(c)) /\ WF_vars(Assign(c)) /\ WF_vars(ReceiveCommit(c))
    /\ \A m \in MemberIds :
         /\ WF_vars(ExpireSession(m) /\ faults' = faults)
         /\ WF_vars(ExpireRebalance(m) /\ faults' = faults)

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Type invariants, one per variable. *)

\* @type: $member => Bool;
MemberTypeOK(mem) ==
    /\ mem.member_epoch \in Int /\ mem.previous_member_epoch \in Int
    /\ mem.state \in {"STABLE", "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS"}
    /\ mem.assigned \subseteq Partitions /\ mem.pending_revocation \subseteq Partitions
    /\ mem.subscription \subseteq Partitions
    /\ mem.rebalance_timer \in Int

GroupTypeInv ==
    /\ group.group_epoch >= 0 /\ group.assignment_epoch >= 0
    /\ group.members \subseteq MemberIds
    /\ DOMAIN group.member = MemberIds /\ \A m \in MemberIds : MemberTypeOK(group.member[m])
    /\ group.target \in [MemberIds -> SUBSET Partitions]
MsgsTypeInv ==
    \A x \in msgs :
        /\ x.type \in {"HeartbeatRequest", "HeartbeatResponse", "OffsetCommitRequest",
                       "OffsetCommitResponse"}
        /\ x.client \in Consumers /\ x.conn >= 0 /\ x.member \in MemberIds
        /\ x.owned \subseteq Partitions /\ x.assigned \subseteq Partitions
        /\ x.subscription \subseteq Partitions
ClientStateTypeInv == client_state \in [Consumers -> {"unsubscribed", "joining", "member", "down"}]
ClientMemberTypeInv == client_member \in [Consumers -> MemberOrNone]
ClientEpochTypeInv == DOMAIN client_epoch = Consumers /\ \A c \in Consumers : client_epoch[c] >= 0
ClientTargetTypeInv == client_target \in [Consumers -> SUBSET Partitions]
OwnedTypeInv == owned \in [Consumers -> SUBSET Partitions]
ClientSubscriptionTypeInv == client_subscription \in [Consumers -> SUBSET Partitions]
ClientConnTypeInv == DOMAIN client_conn = Consumers /\ \A c \in Consumers : client_conn[c] >= 0
StuckTypeInv ==
    /\ stuck \in [Consumers -> BOOLEAN]
    /\ owned_sent \in [Consumers -> BOOLEAN]
    /\ hb_pending \in [Consumers -> BOOLEAN]
CommittedTypeInv ==
    /\ DOMAIN committed = Partitions
    /\ \A p \in Partitions : committed[p].member \in MemberOrNone /\ committed[p].epoch >= -1
CountersTypeInv ==
    /\ used_ids \subseteq MemberIds
    /\ faults \in 0..MaxFaults /\ subscription_changes \in 0..MaxSubscriptionChanges
    /\ timing_fault \in BOOLEAN /\ stale_report \in BOOLEAN

TypeInv ==
    /\ GroupTypeInv /\ MsgsTypeInv /\ ClientStateTypeInv /\ ClientMemberTypeInv
    /\ ClientEpochTypeInv /\ ClientTargetTypeInv /\ OwnedTypeInv /\ ClientSubscriptionTypeInv
    /\ ClientConnTypeInv /\ StuckTypeInv /\ CommittedTypeInv /\ CountersTypeInv

-----------------------------------------------------------------------------
(* Safety *)

\* The partitions the coordinator's records give member m: assigned, or
\* pending revocation (what the partition epochs record for it).
\* @type: MEMBER => Set(PARTITION);
Holds(m) == group.member[m].assigned \cup group.member[m].pending_revocation

\* In the coordinator's records no partition is held by two members at once,
\* at any epochs: the partition epochs (ConsumerGroup.addPartitionEpochs
\* throws otherwise) are well defined.
RecordsNoTwoOwnersInv ==
    \A m1, m2 \in group.members : m1 # m2 => Holds(m1) \cap Holds(m2) = {}

\* No partition is owned by two consumers at once, whatever their epochs,
\* and no partition is held by two members in the coordinator's records:
\* the guarantee of incremental reconciliation.  Checked without faults.
\* It fails (spec/README.md, findings) when a timeout fences a member whose
\* consumer still holds partitions (timing_fault: the zombie owns them until
\* its next heartbeat is answered, while their new owner already has them),
\* and when a consumer reports a stale assignment in a full heartbeat
\* (stale_report: after a failed heartbeat, while its onPartitionsAssigned
\* callback runs; the coordinator releases partitions the consumer is about
\* to take).
NoTwoOwnersInv ==
    /\ \A c1, c2 \in Consumers : c1 # c2 => owned[c1] \cap owned[c2] = {}
    /\ RecordsNoTwoOwnersInv

\* The same, for behaviours without either: crashes, restarts, leaves, lost
\* and delayed messages allowed.  The models with faults check this one.
NoTwoOwnersUnlessTimingFaultOrStaleReportInv ==
    timing_fault \/ stale_report \/ NoTwoOwnersInv

\* A live consumer whose epoch is its member's current epoch: the only
\* consumers whose commits the coordinator accepts.
\* @type: CONSUMER => Bool;
CanCommit(c) ==
    /\ Live(c) /\ client_member[c] \in group.members
    /\ client_epoch[c] = group.member[client_member[c]].member_epoch

\* No partition is owned by two consumers that can both commit it.  It holds
\* under timing faults (a fenced zombie's commits are refused), not after a
\* stale report: both owners are then members at their current epochs.
NoTwoCommittersInv ==
    \A c1, c2 \in Consumers :
        (c1 # c2 /\ CanCommit(c1) /\ CanCommit(c2)) => owned[c1] \cap owned[c2] = {}

NoTwoCommittersUnlessStaleReportInv == stale_report \/ NoTwoCommittersInv

\* A consumer that can commit owns only what the coordinator's records give
\* its member (assigned or pending revocation).
OwnedInRecordsInv ==
    \A c \in Consumers : CanCommit(c) => owned[c] \subseteq Holds(client_member[c])

OwnedInRecordsUnlessStaleReportInv == stale_report \/ OwnedInRecordsInv

\* Epochs are ordered: a member's previous epoch <= its epoch <= the target
\* assignment's epoch <= the group epoch, and no consumer knows an epoch
\* ahead of the group epoch.
MemberEpochBoundInv ==
    /\ group.assignment_epoch <= group.group_epoch
    /\ \A m \in group.members :
         /\ group.member[m].previous_member_epoch <= group.member[m].member_epoch
         /\ group.member[m].member_epoch <= group.assignment_epoch
    /\ \A c \in Consumers : client_epoch[c] <= group.group_epoch

\* The target assignment is valid for the members' subscriptions whenever it
\* is current (its epoch is the group epoch).
TargetValidInv ==
    group.assignment_epoch = group.group_epoch =>
        TargetValid(group.members, [m \in MemberIds |-> group.member[m].subscription], group.target)

\* Every commit stored in a step carries the committing member's current
\* epoch (STALE_MEMBER_EPOCH otherwise, UNKNOWN_MEMBER_ID for a non-member).
CommitEpochInv ==
    /\ \A x \in msgs' \ msgs :
         (x.type = "OffsetCommitResponse" /\ x.error = "NONE")
            => x.member \in group.members /\ x.epoch = group.member[x.member].member_epoch
    /\ \A p \in Partitions :
         committed'[p] # committed[p]
            => /\ committed'[p].member \in group.members
               /\ committed'[p].epoch = group.member[committed'[p].member].member_epoch

\* The group epoch and the target's epoch never go back.
EpochMonotonicInv ==
    /\ group'.group_epoch >= group.group_epoch
    /\ group'.assignment_epoch >= group.assignment_epoch

CommitEpochProp == [][CommitEpochInv]_vars
EpochMonotonicProp == [][EpochMonotonicInv]_vars

-----------------------------------------------------------------------------
(* Liveness, under Fairness and finite budgets. *)

\* Every live consumer's member is STABLE at the target epoch, which is the
\* group epoch, with its target assigned, and the consumer knows that epoch
\* and owns exactly its target; the members are the live consumers'.
Converged ==
    LET live == {c \in Consumers : Live(c)}
    IN /\ group.members = {client_member[c] : c \in live}
       /\ group.assignment_epoch = group.group_epoch
       /\ \A c \in live :
            LET m == client_member[c]
            IN /\ group.member[m].state = "STABLE"
               /\ group.member[m].member_epoch = group.assignment_epoch
               /\ group.member[m].assigned = group.target[m]
               /\ client_state[c] = "member"
               /\ client_epoch[c] = group.member[m].member_epoch
               /\ owned[c] = group.target[m]

\* Once faults and subscription changes stop, the group reaches its target
\* and stays there.
ConvergenceProp == <>[]Converged
=============================================================================
