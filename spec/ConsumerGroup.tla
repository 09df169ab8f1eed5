--------------------------- MODULE ConsumerGroup ---------------------------
(***************************************************************************)
(* Apache Kafka's classic consumer-group protocol: one group, its          *)
(* coordinator, and consumers that are eager or cooperative (KIP-429),     *)
(* dynamic or static (KIP-345).                                            *)
(*                                                                         *)
(* The vocabulary is the Python reference's (reference/groupspec/):        *)
(*   - the coordinator's state is one record, group, whose fields are the  *)
(*     fields of coordinator/classic/group.py's Group (state, previous_state,      *)
(*     generation_id, leader_id, members, static_members, pending_members, *)
(*     pending_sync_members, join_timer, sync_timer ...);                  *)
(*   - each coordinator action is named as the request kind or timer the   *)
(*     reference handles (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,     *)
(*     OffsetCommit, ExpireHeartbeat, ExpirePendingMember, ExpireJoin,     *)
(*     ExpireSync: coordinator/timers.py's TimerKind) and is written as    *)
(*     the same composition of steps as the Python handler of that name,   *)
(*     each step an operator named after the Python function (and the      *)
(*     Java method it mirrors in GroupMetadataManager.java);               *)
(*   - error names are Kafka's (protocol/errors.py).                       *)
(*                                                                         *)
(* Abstractions (spec/README.md gives the reasons):                        *)
(*   - time: timers are actions that may fire at any moment.  A timer that *)
(*     fires while the member it concerns is alive and about to act is a   *)
(*     fault and spends the fault budget; one that only removes what no    *)
(*     live consumer holds is the normal passage of time;                  *)
(*   - assignment: the leader may choose any assignment its assignor's     *)
(*     contract allows (module Assignors);                                 *)
(*   - network: requests and responses are messages in flight; a consumer  *)
(*     has at most one request outstanding, so order per connection is    *)
(*     kept; messages may be lost (a fault).  A restarted consumer is a    *)
(*     new incarnation and ignores answers meant for the old one;          *)
(*   - metadata: a member's subscription metadata is the set of partitions *)
(*     it reports owning (cooperative) or last held (eager sticky user     *)
(*     data); every member subscribes to every partition.                  *)
(***************************************************************************)
EXTENDS Integers, FiniteSets, GroupStates, Assignors

CONSTANTS
    \* @type: Set(CLIENT);
    Clients,
    \* Clients with a group.instance.id (KIP-345); the instance id is the client.
    \* @type: Set(CLIENT);
    StaticClients,
    \* @type: CLIENT;
    NoClient,
    \* The member ids the coordinator may hand out.
    \* @type: Set(MEMBER);
    MemberIds,
    \* UNKNOWN_MEMBER_ID, the empty member id.
    \* @type: MEMBER;
    NoMember,
    \* @type: Set(PARTITION);
    Partitions,
    \* "eager" or "cooperative": the rebalance protocol the group selected.
    \* @type: Set(Str);
    RebalanceProtocols,
    \* "balanced" (Range, RoundRobin) or "sticky" (Sticky, CooperativeSticky).
    \* @type: Str;
    AssignorContract,
    \* JoinGroup v4+: a dynamic member first gets MEMBER_ID_REQUIRED (KIP-394).
    \* @type: Bool;
    MemberIdRequired,
    \* How many faults (crashes, restarts, leaves, losses, early timers) a behaviour may have.
    \* @type: Int;
    MaxFaults,
    \* Whether an administrator may delete the group when it is Empty (the group becomes Dead).
    \* @type: Bool;
    AllowDeleteGroup,
    \* Offsets: each partition's log holds the records 0..MaxOffset-1; 0 turns
    \* consumption, positions and OffsetFetch off (the commits then carry no
    \* offsets, and the models without offsets keep their state counts).
    \* @type: Int;
    MaxOffset,
    \* Whether a coordinator failover (unload, then reload from the persisted
    \* records) is a fault a behaviour may have.
    \* @type: Bool;
    FailoverFaults

VARIABLES
    \* The coordinator's state of the group (coordinator/classic/group.py Group).
    \* @type: {state: Str, previous_state: Str, generation_id: Int, leader_id: MEMBER, members: Set(MEMBER), static_members: CLIENT -> MEMBER, pending_members: Set(MEMBER), metadata: MEMBER -> Set(PARTITION), assignment: MEMBER -> Set(PARTITION), join_request: MEMBER -> {client: CLIENT, inc: Int}, sync_request: MEMBER -> {client: CLIENT, inc: Int}, pending_sync_members: Set(MEMBER), join_timer: Str, sync_timer: Bool, used_ids: Set(MEMBER)};
    group,
    \* The rebalance protocol this behaviour's group uses (chosen once).
    \* @type: Str;
    protocol,
    \* Requests and responses in flight.
    \* @type: Set({type: Str, client: CLIENT, inc: Int, member: MEMBER, static: Bool, generation: Int, error: Str, meta: Set(PARTITION), plan: MEMBER -> Set(PARTITION), leader: MEMBER, joined: Set(MEMBER), meta_of: MEMBER -> Set(PARTITION), skip: Bool, assigned: Set(PARTITION), offsets: PARTITION -> Int});
    msgs,
    \* "down", "unjoined", "joining", "syncing" or "stable" (client/classic/consumer.py MemberState).
    \* @type: CLIENT -> Str;
    client_state,
    \* The member id a consumer uses (NoMember: UNKNOWN_MEMBER_ID).
    \* @type: CLIENT -> MEMBER;
    client_member,
    \* The generation a consumer last joined (-1: none).
    \* @type: CLIENT -> Int;
    client_generation,
    \* A stable consumer waits on a Heartbeat or OffsetCommit.
    \* @type: CLIENT -> Bool;
    client_busy,
    \* The incarnation of a consumer process; a restart starts a new one.
    \* @type: CLIENT -> Int;
    client_inc,
    \* Partitions a consumer holds (consumes from) now.
    \* @type: CLIENT -> Set(PARTITION);
    owned,
    \* The last assignment a consumer received, and the generation it was for.
    \* @type: CLIENT -> Set(PARTITION);
    received,
    \* @type: CLIENT -> Int;
    received_generation,
    \* Faults spent so far.
    \* @type: Int;
    faults,
    \* Whether a timer fired while the member it removed was still alive and
    \* about to act (a timing fault: a consumer slower than its timeouts).
    \* @type: Bool;
    early_timer,
    \* The last action and its parameters: for readable counterexamples and
    \* trace validation; models leave it out of their VIEW.
    \* @type: {name: Str, client: CLIENT, member: MEMBER, error: Str};
    last_action,
    \* The committed offset of each partition (OffsetMetadataManager's offsets
    \* of the group; -1: none committed).
    \* @type: PARTITION -> Int;
    committed,
    \* The position of a consumer on each partition: the next offset it will
    \* consume (SubscriptionState); -1 when it does not own the partition or is
    \* still fetching the committed offset (client/consumption.py).
    \* @type: CLIENT -> (PARTITION -> Int);
    position,
    \* History: the offsets of each partition some consumer has processed, and
    \* those processed more than once (the duplicates).  They influence no step.
    \* @type: PARTITION -> Set(Int);
    processed,
    \* @type: PARTITION -> Set(Int);
    redelivered,
    \* The last group metadata record written (GroupMetadataValue): what a
    \* failover reloads.  Kept only when FailoverFaults.
    \* @type: $persisted;
    persisted

\* Apalache's name for the type of the group record (the type of variable group).
\* @typeAlias: group = {state: Str, previous_state: Str, generation_id: Int, leader_id: MEMBER, members: Set(MEMBER), static_members: CLIENT -> MEMBER, pending_members: Set(MEMBER), metadata: MEMBER -> Set(PARTITION), assignment: MEMBER -> Set(PARTITION), join_request: MEMBER -> {client: CLIENT, inc: Int}, sync_request: MEMBER -> {client: CLIENT, inc: Int}, pending_sync_members: Set(MEMBER), join_timer: Str, sync_timer: Bool, used_ids: Set(MEMBER)};
ConsumerGroup_typedefs == TRUE
\* The persisted group record (GroupCoordinatorRecordHelpers.newGroupMetadataRecord).
\* @typeAlias: persisted = {generation_id: Int, leader_id: MEMBER, members: Set(MEMBER), static_members: CLIENT -> MEMBER, metadata: MEMBER -> Set(PARTITION), assignment: MEMBER -> Set(PARTITION)};
ConsumerGroup_typedefs_persisted == TRUE
\* A message, and a coordinator step in progress (Start).
\* @typeAlias: msg = {type: Str, client: CLIENT, inc: Int, member: MEMBER, static: Bool, generation: Int, error: Str, meta: Set(PARTITION), plan: MEMBER -> Set(PARTITION), leader: MEMBER, joined: Set(MEMBER), meta_of: MEMBER -> Set(PARTITION), skip: Bool, assigned: Set(PARTITION), offsets: PARTITION -> Int};
\* @typeAlias: step = {g: $group, out: Set($msg), ok: Bool, committed: PARTITION -> Int};
ConsumerGroup_typedefs_msg == TRUE

vars == <<group, protocol, msgs, client_state, client_member, client_generation,
          client_busy, client_inc, owned, received, received_generation, faults, early_timer,
          last_action, committed, position, processed, redelivered, persisted>>
client_vars == <<client_state, client_member, client_generation, client_busy, client_inc,
                 owned, received, received_generation, position>>
\* What the coordinator persists, and the consumption history.
store_vars == <<committed, persisted>>
consumed_vars == <<processed, redelivered>>

-----------------------------------------------------------------------------
(* Values *)

\* The domain of the group's per-member functions: every id, and NoMember so
\* that a step exploring an invalid choice (pruned by ok) never leaves it.
\* @type: Set(MEMBER);
AllIds == MemberIds \cup {NoMember}

\* @type: {client: CLIENT, inc: Int};
NoConn == [client |-> NoClient, inc |-> 0]

\* @type: MEMBER -> Set(PARTITION);
NoPlan == [m \in AllIds |-> {}]

\* No offsets: a commit without offsets, an OffsetFetch answer with none committed.
\* @type: PARTITION -> Int;
NoOffsets == [p \in Partitions |-> -1]

\* A message with every field at its default; constructors override fields.
\* @type: (Str, CLIENT, Int) => {type: Str, client: CLIENT, inc: Int, member: MEMBER, static: Bool, generation: Int, error: Str, meta: Set(PARTITION), plan: MEMBER -> Set(PARTITION), leader: MEMBER, joined: Set(MEMBER), meta_of: MEMBER -> Set(PARTITION), skip: Bool, assigned: Set(PARTITION), offsets: PARTITION -> Int};
Msg(type, c, inc) ==
    [type |-> type, client |-> c, inc |-> inc, member |-> NoMember, static |-> FALSE,
     generation |-> -1, error |-> "NONE", meta |-> {}, plan |-> NoPlan, leader |-> NoMember,
     joined |-> {}, meta_of |-> NoPlan, skip |-> FALSE, assigned |-> {}, offsets |-> NoOffsets]

\* The connection a request came on, to answer it.
ConnOf(req) == [client |-> req.client, inc |-> req.inc]

\* A response of the given kind on conn.
\* @type: (Str, {client: CLIENT, inc: Int}, Str) => $msg;
Resp(type, conn, err) == [Msg(type, conn.client, conn.inc) EXCEPT !.error = err]

\* A coordinator step in progress: the group so far, the responses so far, and
\* whether the nondeterministic choices it used were valid ones.
Start == [g |-> group, out |-> {}, ok |-> TRUE, committed |-> committed]

IsStatic(g, m) == \E i \in StaticClients : g.static_members[i] = m
\* @type: ($group, MEMBER) => Bool;
AwaitingJoin(g, m) == g.join_request[m] # NoConn
\* @type: ($group, MEMBER) => Bool;
AwaitingSync(g, m) == g.sync_request[m] # NoConn

\* ClassicGroup.hasAllMembersJoined: everyone parked in JoinGroup and no pending id.
AllJoined(g) == (\A m \in g.members : AwaitingJoin(g, m)) /\ g.pending_members = {}

\* A consumer process that is up and uses member id m.
HeldByLiveClient(m) ==
    \E c \in Clients :
        /\ client_state[c] # "down"
        /\ \/ client_member[c] = m
           \* ... or is about to: the id is in a response on its way to the
           \* consumer (a KIP-394 MEMBER_ID_REQUIRED answer, say).  Expiring it
           \* then needs a consumer slower than its session timeout: a fault.
           \* (Without this, TLC found fault-free behaviours whose pending ids
           \* expire before they are used until every id is spent.)
           \/ \E x \in msgs : x.client = c /\ x.inc = client_inc[c] /\ x.member = m

-----------------------------------------------------------------------------
(* Coordinator steps: coordinator/classic/rebalance.py, one operator per function. *)

\* ClassicGroup.transitionTo.
Transition(s, target) ==
    [s EXCEPT !.g.previous_state = s.g.state, !.g.state = target]

\* Answer m's parked JoinGroup / SyncGroup (completeJoinFuture, completeSyncFuture).
AnswerJoin(s, m, resp) ==
    IF AwaitingJoin(s.g, m)
    THEN [s EXCEPT !.g.join_request[m] = NoConn, !.out = @ \cup {resp}]
    ELSE s
AnswerSync(s, m, resp) ==
    IF AwaitingSync(s.g, m)
    THEN [s EXCEPT !.g.sync_request[m] = NoConn, !.out = @ \cup {resp}]
    ELSE s

\* ClassicGroup.remove for a set of members at once; parked requests of removed
\* members are dropped unanswered (their callers time out).  If the leader goes,
\* Kafka picks the first remaining member in HashMap order: any remaining
\* member may be picked here, the one the choice ch names.
RemoveMembers(s, gone, ch) ==
    LET g == s.g
        rest == g.members \ gone
        lead == IF g.leader_id \notin gone THEN g.leader_id
                ELSE IF rest = {} THEN NoMember ELSE ch.leader
    IN [s EXCEPT
          !.g = [g EXCEPT
                   !.members = rest,
                   !.pending_members = @ \ gone,
                   !.static_members = [i \in StaticClients |->
                                          IF g.static_members[i] \in gone THEN NoMember
                                          ELSE g.static_members[i]],
                   !.metadata = [m \in AllIds |-> IF m \in gone THEN {} ELSE g.metadata[m]],
                   !.assignment = [m \in AllIds |-> IF m \in gone THEN {} ELSE g.assignment[m]],
                   !.join_request = [m \in AllIds |-> IF m \in gone THEN NoConn ELSE g.join_request[m]],
                   !.sync_request = [m \in AllIds |-> IF m \in gone THEN NoConn ELSE g.sync_request[m]],
                   !.leader_id = lead],
          !.ok = @ /\ (lead \in rest \/ rest = {})]

\* propagateAssignment: answer every parked SyncGroup.
PropagateAssignment(s, err) ==
    LET g == s.g
        parked == {m \in g.members : AwaitingSync(g, m)}
    IN [s EXCEPT
          !.g.sync_request = [m \in AllIds |-> NoConn],
          !.out = @ \cup {[Resp("SyncGroupResponse", g.sync_request[m], err)
                             EXCEPT !.member = m,
                                    !.assigned = IF err = "NONE" THEN g.assignment[m] ELSE {}]
                          : m \in parked}]

\* resetAndPropagateAssignmentWithError.
ResetAndPropagateError(s, err) ==
    PropagateAssignment([s EXCEPT !.g.assignment = [m \in AllIds |-> {}]], err)

\* completeClassicGroupJoin: dynamic members that did not rejoin are removed
\* (static ones stay, KAFKA-8220); a leader that did not rejoin is replaced by
\* a member that did (maybeElectNewJoinedLeader: any of them); the generation
\* grows and every parked JoinGroup is answered, the leader's with the members.
CompleteJoin(s, ch) ==
    LET s1 == [s EXCEPT !.g.join_timer = "none"]
        gone == {m \in s1.g.members : ~AwaitingJoin(s1.g, m) /\ ~IsStatic(s1.g, m)}
        s2 == RemoveMembers(s1, gone, ch)
        g2 == s2.g
        joined == {m \in g2.members : AwaitingJoin(g2, m)}
        leaderJoined == g2.leader_id # NoMember /\ AwaitingJoin(g2, g2.leader_id)
        lead == IF leaderJoined THEN g2.leader_id ELSE ch.leader
    IN IF g2.members = {}
       THEN Transition([s2 EXCEPT !.g.generation_id = @ + 1], "Empty")
       ELSE IF ~leaderJoined /\ joined = {}
       THEN [s2 EXCEPT !.g.join_timer = "rebalance"]
       ELSE LET g3 == [g2 EXCEPT !.generation_id = @ + 1, !.leader_id = lead]
                s3 == Transition([s2 EXCEPT !.g = g3, !.ok = @ /\ lead \in joined],
                                 "CompletingRebalance")
                answers == {[Resp("JoinGroupResponse", g3.join_request[m], "NONE")
                               EXCEPT !.member = m, !.generation = g3.generation_id,
                                      !.leader = lead,
                                      !.joined = IF m = lead THEN g3.members ELSE {},
                                      !.meta_of = IF m = lead THEN g3.metadata ELSE NoPlan]
                            : m \in joined}
            IN [s3 EXCEPT
                  !.g.join_request = [m \in AllIds |-> NoConn],
                  !.g.pending_sync_members = g3.members,
                  !.g.sync_timer = TRUE,
                  !.out = @ \cup answers]

\* maybeCompleteJoinPhase: not while the initial delay of a rebalance that
\* started from Empty runs.
MaybeCompleteJoinPhase(s, ch) ==
    IF s.g.state = "PreparingRebalance" /\ s.g.previous_state # "Empty" /\ AllJoined(s.g)
    THEN CompleteJoin(s, ch)
    ELSE s

\* prepareRebalance: from Empty the initial delay (InitialDelayedJoin) always
\* runs out; otherwise the join completes at once or DelayedJoin waits.
PrepareRebalance(s, ch) ==
    LET s1 == IF s.g.state = "CompletingRebalance"
              THEN ResetAndPropagateError(s, "REBALANCE_IN_PROGRESS") ELSE s
        s2 == [s1 EXCEPT !.g.pending_sync_members = {}, !.g.sync_timer = FALSE]
        initial == s.g.state = "Empty"
        s3 == Transition(IF initial THEN [s2 EXCEPT !.g.join_timer = "initial"] ELSE s2,
                         "PreparingRebalance")
    IN IF initial THEN s3
       ELSE IF AllJoined(s3.g) THEN CompleteJoin(s3, ch)
       ELSE [s3 EXCEPT !.g.join_timer = "rebalance"]

MaybePrepareRebalanceOrCompleteJoin(s, ch) ==
    IF CanRebalance(s.g.state) THEN PrepareRebalance(s, ch) ELSE MaybeCompleteJoinPhase(s, ch)

\* removeMemberAndUpdateClassicGroup (session expiry, LeaveGroup of a member).
RemoveMemberAndUpdateGroup(s, m, ch) ==
    LET s1 == AnswerJoin(s, m, [Resp("JoinGroupResponse", s.g.join_request[m], "UNKNOWN_MEMBER_ID")
                                  EXCEPT !.member = NoMember])
        s2 == RemoveMembers(s1, {m}, ch)
    IN IF s2.g.state \in {"Stable", "CompletingRebalance"}
       THEN MaybePrepareRebalanceOrCompleteJoin(s2, ch)
       ELSE IF s2.g.state = "PreparingRebalance" /\ AllJoined(s2.g)
       THEN CompleteJoin(s2, ch)
       ELSE s2

\* ClassicGroup.validateMember: FENCED_INSTANCE_ID for a zombie of a replaced
\* static member, UNKNOWN_MEMBER_ID for an id the group does not know.
ValidateMember(g, req) ==
    IF req.static /\ g.static_members[req.client] = NoMember THEN "UNKNOWN_MEMBER_ID"
    ELSE IF req.static /\ g.static_members[req.client] # req.member THEN "FENCED_INSTANCE_ID"
    ELSE IF req.member \notin g.members THEN "UNKNOWN_MEMBER_ID"
    ELSE "NONE"

-----------------------------------------------------------------------------
(* JoinGroup: coordinator/classic/join_group.py *)

JoinError(req, err) ==
    [Resp("JoinGroupResponse", ConnOf(req), err) EXCEPT !.member = req.member]

\* addMemberThenRebalanceOrCompleteJoin.
AddMemberThenRebalance(s, req, m, ch) ==
    LET g == s.g
        g1 == [g EXCEPT
                 !.members = @ \cup {m},
                 !.pending_members = @ \ {m},
                 !.static_members = IF req.static THEN [@ EXCEPT ![req.client] = m] ELSE @,
                 !.metadata[m] = req.meta,
                 !.join_request[m] = ConnOf(req),
                 !.leader_id = IF @ = NoMember THEN m ELSE @]
    IN MaybePrepareRebalanceOrCompleteJoin([s EXCEPT !.g = g1], ch)

\* updateMemberThenRebalanceOrCompleteJoin.
UpdateMemberThenRebalance(s, req, ch) ==
    MaybePrepareRebalanceOrCompleteJoin(
        [s EXCEPT !.g.metadata[req.member] = req.meta, !.g.join_request[req.member] = ConnOf(req)],
        ch)

\* The current generation, answered at once (the leader gets the members).
CurrentGeneration(g, req, m, withMembers) ==
    [Resp("JoinGroupResponse", ConnOf(req), "NONE")
        EXCEPT !.member = m, !.generation = g.generation_id, !.leader = g.leader_id,
               !.joined = IF withMembers /\ g.leader_id = m THEN g.members ELSE {},
               !.meta_of = IF withMembers /\ g.leader_id = m THEN g.metadata ELSE NoPlan]

\* updateStaticMemberThenRebalanceOrCompleteJoin (KIP-345, KAFKA-9801, KIP-814,
\* JoinGroup v9): the old id's parked requests are fenced and the new id takes
\* the old one's place, assignment included.  In Stable there is no rebalance:
\* the member learns the current generation (the leader with skip_assignment).
ReplaceStaticMember(s, req, old, new, ch) ==
    LET g == s.g
        s1 == AnswerSync(AnswerJoin(s, old, [Resp("JoinGroupResponse", g.join_request[old],
                                                  "FENCED_INSTANCE_ID") EXCEPT !.member = old]),
                         old, [Resp("SyncGroupResponse", g.sync_request[old], "FENCED_INSTANCE_ID")
                                 EXCEPT !.member = old])
        g1 == s1.g
        g2 == [g1 EXCEPT
                 !.members = (@ \ {old}) \cup {new},
                 !.static_members[req.client] = new,
                 !.metadata = [@ EXCEPT ![new] = req.meta, ![old] = {}],
                 !.assignment = [@ EXCEPT ![new] = g1.assignment[old], ![old] = {}],
                 !.join_request[new] = ConnOf(req),
                 !.leader_id = IF @ = old THEN new ELSE @]
        s2 == [s1 EXCEPT !.g = g2]
    IN CASE g.state = "Stable" ->
              AnswerJoin(s2, new, [CurrentGeneration(g2, req, new, TRUE)
                                     EXCEPT !.skip = (g2.leader_id = new)])
         [] g.state = "CompletingRebalance" -> PrepareRebalance(s2, ch)
         [] OTHER -> MaybeCompleteJoinPhase(s2, ch)

JoinNewMember(s, req, ch) ==
    LET g == s.g
        m == ch.id
        used == [s EXCEPT !.g.used_ids = @ \cup {m}, !.ok = @ /\ m # NoMember]
    IN IF g.state = "Dead" THEN [s EXCEPT !.out = {JoinError(req, "COORDINATOR_NOT_AVAILABLE")}]
       ELSE IF req.static /\ g.static_members[req.client] # NoMember
       THEN ReplaceStaticMember(used, req, g.static_members[req.client], m, ch)
       ELSE IF req.static \/ ~MemberIdRequired
       THEN AddMemberThenRebalance(used, req, m, ch)
       ELSE [used EXCEPT !.g.pending_members = @ \cup {m},
                         !.out = {[JoinError(req, "MEMBER_ID_REQUIRED") EXCEPT !.member = m]}]

JoinExistingMember(s, req, ch) ==
    LET g == s.g
        err == ValidateMember(g, req)
        m == req.member
    IN IF g.state = "Dead" THEN [s EXCEPT !.out = {JoinError(req, "COORDINATOR_NOT_AVAILABLE")}]
       ELSE IF m \in g.pending_members THEN AddMemberThenRebalance(s, req, m, ch)
       ELSE IF err # "NONE" THEN [s EXCEPT !.out = {JoinError(req, err)}]
       ELSE CASE g.state = "PreparingRebalance" -> UpdateMemberThenRebalance(s, req, ch)
              [] g.state = "CompletingRebalance" ->
                    IF g.metadata[m] = req.meta
                    THEN [s EXCEPT !.out = {CurrentGeneration(g, req, m, TRUE)}]
                    ELSE UpdateMemberThenRebalance(s, req, ch)
              [] g.state = "Stable" ->
                    IF g.leader_id = m \/ g.metadata[m] # req.meta
                    THEN UpdateMemberThenRebalance(s, req, ch)
                    ELSE [s EXCEPT !.out = {CurrentGeneration(g, req, m, FALSE)}]
              [] OTHER -> [s EXCEPT !.out = {JoinError(req, "UNKNOWN_MEMBER_ID")}]

\* classicGroupJoinToClassicGroup.
HandleJoinGroup(s, req, ch) ==
    IF req.member = NoMember THEN JoinNewMember(s, req, ch) ELSE JoinExistingMember(s, req, ch)

-----------------------------------------------------------------------------
(* SyncGroup: coordinator/classic/sync_group.py *)

SyncError(req, err) == [Resp("SyncGroupResponse", ConnOf(req), err) EXCEPT !.member = req.member]

\* validateSyncGroup.
ValidateSync(g, req) ==
    IF g.state = "Dead" THEN "COORDINATOR_NOT_AVAILABLE"
    ELSE IF ValidateMember(g, req) # "NONE" THEN ValidateMember(g, req)
    ELSE IF req.generation # g.generation_id THEN "ILLEGAL_GENERATION"
    ELSE "NONE"

\* removePendingSyncMember (DelayedSync is cancelled once nobody is pending).
RemovePendingSync(s, m) ==
    LET pend == s.g.pending_sync_members \ {m}
    IN [s EXCEPT !.g.pending_sync_members = pend,
                 !.g.sync_timer = @ /\ pend # {} /\ s.g.state \notin {"Dead", "Empty", "PreparingRebalance"}]

HandleSyncGroup(s, req) ==
    LET g == s.g
        m == req.member
        err == ValidateSync(g, req)
    IN IF g.state = "Empty" THEN [s EXCEPT !.out = {SyncError(req, "UNKNOWN_MEMBER_ID")}]
       ELSE IF err # "NONE" THEN [s EXCEPT !.out = {SyncError(req, err)}]
       ELSE IF g.state = "PreparingRebalance"
       THEN [s EXCEPT !.out = {SyncError(req, "REBALANCE_IN_PROGRESS")}]
       ELSE IF g.state = "CompletingRebalance"
       THEN LET s1 == RemovePendingSync([s EXCEPT !.g.sync_request[m] = ConnOf(req)], m)
            IN IF g.leader_id = m
               THEN Transition(PropagateAssignment(
                        [s1 EXCEPT !.g.assignment =
                            [x \in AllIds |-> IF x \in g.members THEN req.plan[x] ELSE {}]],
                        "NONE"), "Stable")
               ELSE s1
       ELSE \* Stable: the stored assignment.
            [RemovePendingSync(s, m) EXCEPT
                !.out = {[SyncError(req, "NONE") EXCEPT !.assigned = g.assignment[m]]}]

-----------------------------------------------------------------------------
(* Heartbeat, LeaveGroup, OffsetCommit *)

HbError(req, err) == [Resp("HeartbeatResponse", ConnOf(req), err) EXCEPT !.member = req.member]

\* classicGroupHeartbeat (coordinator/classic/heartbeat.py).
HandleHeartbeat(s, req) ==
    LET g == s.g
        err == ValidateMember(g, req)
        answer(e) == [s EXCEPT !.out = {HbError(req, e)}]
    IN IF g.state = "Dead" THEN answer("COORDINATOR_NOT_AVAILABLE")
       ELSE IF err # "NONE" THEN answer(err)
       ELSE IF req.generation # g.generation_id THEN answer("ILLEGAL_GENERATION")
       ELSE IF g.state = "Empty" THEN answer("UNKNOWN_MEMBER_ID")
       ELSE IF g.state = "PreparingRebalance" THEN answer("REBALANCE_IN_PROGRESS")
       ELSE answer("NONE")

\* classicGroupLeave for one dynamic member (coordinator/classic/leave_group.py).  As
\* in Java, removing a pending id is also a reason to rebalance.
HandleLeaveGroup(s, req, ch) ==
    LET g == s.g
        m == req.member
        answer(x, e) == [x EXCEPT !.out = @ \cup {[Resp("LeaveGroupResponse", ConnOf(req), e)
                                                  EXCEPT !.member = m]}]
        err == ValidateMember(g, req)
        removed ==
            IF m \in g.pending_members THEN RemoveMembers(s, {m}, ch)
            ELSE RemoveMembers(AnswerJoin(s, m, [Resp("JoinGroupResponse", g.join_request[m],
                                                     "UNKNOWN_MEMBER_ID")
                                                  EXCEPT !.member = NoMember]),
                               {m}, ch)
        after ==
            IF removed.g.state \in {"Stable", "CompletingRebalance"}
            THEN MaybePrepareRebalanceOrCompleteJoin(removed, ch)
            ELSE IF removed.g.state = "PreparingRebalance" THEN MaybeCompleteJoinPhase(removed, ch)
            ELSE removed
    IN IF g.state = "Dead" THEN answer(s, "COORDINATOR_NOT_AVAILABLE")
       ELSE IF m \notin g.pending_members /\ err # "NONE" THEN answer(s, err)
       ELSE answer(after, "NONE")

\* ClassicGroup.validateOffsetCommit (coordinator/offsets.py), for a member's
\* commit (generation >= 0).  The response echoes the request's generation.
CommitError(g, req) ==
    IF g.state = "Dead" THEN "COORDINATOR_NOT_AVAILABLE"
    ELSE IF ValidateMember(g, req) # "NONE" THEN ValidateMember(g, req)
    ELSE IF req.generation # g.generation_id THEN "ILLEGAL_GENERATION"
    ELSE IF g.state = "CompletingRebalance" THEN "REBALANCE_IN_PROGRESS"
    ELSE "NONE"

\* An accepted commit stores the offsets it carries (OffsetMetadataManager
\* commitOffset: one OffsetCommit record per partition, whatever the offset
\* stored before; Kafka never compares it with the new one).
HandleOffsetCommit(s, req) ==
    LET err == CommitError(s.g, req)
    IN [s EXCEPT !.out = {[Resp("OffsetCommitResponse", ConnOf(req), err)
                             EXCEPT !.member = req.member, !.generation = req.generation]},
                 !.committed = IF err = "NONE"
                               THEN [p \in Partitions |-> IF req.offsets[p] >= 0 THEN req.offsets[p]
                                                          ELSE s.committed[p]]
                               ELSE @]

\* OffsetFetch (coordinator/offsets.py handle_offset_fetch; OffsetMetadataManager
\* fetchOffsets): a classic group checks no member or generation; a Dead group
\* (ClassicGroup.validateOffsetFetch throws GroupIdNotFoundException) answers
\* -1, none committed, for every partition.
HandleOffsetFetch(s, req) ==
    [s EXCEPT !.out = {[Resp("OffsetFetchResponse", ConnOf(req), "NONE")
                          EXCEPT !.member = req.member,
                                 !.offsets = IF s.g.state = "Dead" THEN NoOffsets ELSE s.committed]}]

-----------------------------------------------------------------------------
(* Coordinator failover (coordinator/failover.py; GroupCoordinatorShard.onUnloaded /
   onLoaded, GroupMetadataManager.onUnloaded / onLoaded and the replay of a
   GroupMetadataValue, Kafka 4.1.2). *)

\* @type: $persisted;
NoPersisted == [generation_id |-> 0, leader_id |-> NoMember, members |-> {},
                static_members |-> [i \in StaticClients |-> NoMember],
                metadata |-> [m \in AllIds |-> {}], assignment |-> [m \in AllIds |-> {}]]

\* newGroupMetadataRecord: the members with the selected protocol's metadata
\* and their assignment, the generation and the leader.
Snapshot(g) ==
    [generation_id |-> g.generation_id, leader_id |-> g.leader_id, members |-> g.members,
     static_members |-> g.static_members, metadata |-> g.metadata, assignment |-> g.assignment]

\* The steps after which Kafka writes the group's record (rebalance.py persist):
\* a join phase that ends with no members (completeClassicGroupJoin, the empty
\* group's record), the leader's SyncGroup (the assignment), and a static
\* member replaced in Stable (KAFKA-10284).  A join phase that ends with
\* members writes nothing: its generation is not persisted until the leader's
\* SyncGroup.
Persists(g, g2) ==
    \/ g2.state = "Empty" /\ g2.generation_id = g.generation_id + 1
    \/ g.state = "CompletingRebalance" /\ g2.state = "Stable"
    \/ g.state = "Stable" /\ g2.state = "Stable" /\ g2.members # g.members

\* persisted after a coordinator step to group g2.
Persist(g2) ==
    persisted' = IF FailoverFaults /\ Persists(group, g2) THEN Snapshot(g2) ELSE persisted

\* onUnloaded: the group goes Dead and its parked requests are answered
\* NOT_COORDINATOR: JoinGroups if it was PreparingRebalance, SyncGroups if it
\* was CompletingRebalance or Stable.  (The consumers rediscover the
\* coordinator and rejoin.)
\* @type: ($step) => $step;
Unload(s) ==
    LET g == s.g
        joins == IF g.state = "PreparingRebalance" THEN {m \in g.members : AwaitingJoin(g, m)} ELSE {}
        syncs == IF g.state \in {"CompletingRebalance", "Stable"}
                 THEN {m \in g.members : AwaitingSync(g, m)} ELSE {}
    IN [s EXCEPT !.out = {[Resp("JoinGroupResponse", g.join_request[m], "NOT_COORDINATOR")
                             EXCEPT !.member = m] : m \in joins}
                         \cup {[Resp("SyncGroupResponse", g.sync_request[m], "NOT_COORDINATOR")
                                EXCEPT !.member = m] : m \in syncs}]

\* The replay of the persisted record (GroupMetadataManager.replay of a
\* GroupMetadataValue): Stable with the recorded members, or Empty; the
\* constructor's previous state is Dead.  Nothing else survives: no pending
\* member, parked request, pending SyncGroup or join / sync timer.  onLoaded
\* arms every member's session timer afresh (ExpireHeartbeat is enabled for
\* every member that is not parked).  Committed offsets are records too and
\* survive unchanged.  Member ids stay spent (the new coordinator's are fresh
\* UUIDs).
\* @type: ($persisted, Set(MEMBER)) => $group;
LoadGroup(snap, used) ==
    [state |-> IF snap.members = {} THEN "Empty" ELSE "Stable", previous_state |-> "Dead",
     generation_id |-> snap.generation_id,
     leader_id |-> IF snap.leader_id \in snap.members THEN snap.leader_id ELSE NoMember,
     members |-> snap.members, static_members |-> snap.static_members, pending_members |-> {},
     metadata |-> snap.metadata, assignment |-> snap.assignment,
     join_request |-> [m \in AllIds |-> NoConn], sync_request |-> [m \in AllIds |-> NoConn],
     pending_sync_members |-> {}, join_timer |-> "none", sync_timer |-> FALSE, used_ids |-> used]

-----------------------------------------------------------------------------
(* Actions *)

\* The nondeterministic choices a coordinator step may use: a fresh member id
\* and a member to lead when the leader must be replaced.
Choices == [id: (MemberIds \ group.used_ids) \cup {NoMember},
            leader: group.members \cup {NoMember}]

\* @type: (Str, CLIENT, MEMBER, Str) => Bool;
Label(name, c, m, e) == last_action' = [name |-> name, client |-> c, member |-> m, error |-> e]

\* The coordinator takes the step res for request req.
Apply(req, res, name) ==
    /\ res.ok
    /\ group' = res.g
    /\ msgs' = (msgs \ {req}) \cup res.out
    /\ Label(name, req.client, req.member,
             IF \E o \in res.out : o.client = req.client /\ o.inc = req.inc
             THEN (CHOOSE o \in res.out : o.client = req.client /\ o.inc = req.inc).error
             ELSE "PARKED")
    /\ committed' = res.committed
    /\ Persist(res.g)
    /\ UNCHANGED <<protocol, client_vars, faults, early_timer, consumed_vars>>

JoinGroup ==
    \E req \in msgs, ch \in Choices :
        /\ req.type = "JoinGroupRequest"
        /\ Apply(req, HandleJoinGroup(Start, req, ch), "JoinGroup")

SyncGroup ==
    \E req \in msgs :
        /\ req.type = "SyncGroupRequest"
        /\ Apply(req, HandleSyncGroup(Start, req), "SyncGroup")

Heartbeat ==
    \E req \in msgs :
        /\ req.type = "HeartbeatRequest"
        /\ Apply(req, HandleHeartbeat(Start, req), "Heartbeat")

LeaveGroup ==
    \E req \in msgs, ch \in Choices :
        /\ req.type = "LeaveGroupRequest"
        /\ Apply(req, HandleLeaveGroup(Start, req, ch), "LeaveGroup")

OffsetCommit ==
    \E req \in msgs :
        /\ req.type = "OffsetCommitRequest"
        /\ Apply(req, HandleOffsetCommit(Start, req), "OffsetCommit")

OffsetFetch ==
    \E req \in msgs :
        /\ req.type = "OffsetFetchRequest"
        /\ Apply(req, HandleOffsetFetch(Start, req), "OffsetFetch")

\* A timer step: the fault budget is spent when the timer fires early.
Fire(res, name, m, isFault) ==
    /\ res.ok
    /\ isFault => faults < MaxFaults
    /\ group' = res.g
    /\ msgs' = msgs \cup res.out
    /\ faults' = IF isFault THEN faults + 1 ELSE faults
    /\ early_timer' = (early_timer \/ isFault)
    /\ Label(name, NoClient, m, "NONE")
    /\ Persist(res.g)
    /\ UNCHANGED <<protocol, client_vars, committed, consumed_vars>>

\* The session timeout of a member that is not parked in JoinGroup or SyncGroup
\* (hasSatisfiedHeartbeat).  Early if a live consumer still uses the id.
ExpireHeartbeat ==
    \E m \in group.members, ch \in Choices :
        /\ group.state # "Dead"
        /\ ~AwaitingJoin(group, m) /\ ~AwaitingSync(group, m)
        /\ Fire(RemoveMemberAndUpdateGroup(Start, m, ch), "ExpireHeartbeat", m, HeldByLiveClient(m))

\* A KIP-394 pending id that was never used to rejoin.
ExpirePendingMemberStep(m, ch) ==
    LET s1 == RemoveMembers(Start, {m}, ch)
    IN IF s1.g.state = "PreparingRebalance" /\ AllJoined(s1.g) THEN CompleteJoin(s1, ch) ELSE s1

ExpirePendingMember ==
    \E m \in group.pending_members, ch \in Choices :
        Fire(ExpirePendingMemberStep(m, ch), "ExpirePendingMember", m, HeldByLiveClient(m))

\* The join phase's timer: the initial delay (always on time), or the
\* rebalance timeout (early if a member that has not rejoined is still alive).
ExpireJoin ==
    \E ch \in Choices :
        /\ group.join_timer # "none"
        /\ Fire(CompleteJoin(Start, ch), "ExpireJoin", NoMember,
                group.join_timer = "rebalance"
                /\ \E m \in group.members : ~AwaitingJoin(group, m) /\ HeldByLiveClient(m))

\* DelayedSync: members that never sent SyncGroup are removed and a rebalance starts.
ExpireSyncEnabled ==
    /\ group.sync_timer
    /\ group.state \in {"CompletingRebalance", "Stable"}
    /\ group.pending_sync_members # {}

ExpireSyncStep(ch) ==
    PrepareRebalance(RemoveMembers([Start EXCEPT !.g.sync_timer = FALSE],
                                   group.pending_sync_members, ch), ch)

ExpireSync ==
    \E ch \in Choices :
        /\ ExpireSyncEnabled
        /\ Fire(ExpireSyncStep(ch), "ExpireSync", NoMember,
                \E m \in group.pending_sync_members : HeldByLiveClient(m))

\* An administrator deletes the Empty group (DeleteGroups): it is Dead, and its
\* offsets are deleted with it (GroupCoordinatorShard.deleteGroups calls
\* OffsetMetadataManager.deleteAllOffsets).  Dead is terminal here, so the
\* group's tombstone is not modelled: a Dead group is never reloaded.
DeleteGroup ==
    /\ AllowDeleteGroup
    /\ group.state = "Empty"
    /\ faults < MaxFaults
    /\ group' = Transition(Start, "Dead").g
    /\ committed' = NoOffsets
    /\ faults' = faults + 1
    /\ Label("DeleteGroup", NoClient, NoMember, "NONE")
    /\ UNCHANGED <<protocol, msgs, client_vars, early_timer, persisted, consumed_vars>>

\* The coordinator fails over (the __consumer_offsets partition moves): the old
\* one unloads the group, the new one reloads it from its persisted records.
Failover ==
    /\ FailoverFaults
    /\ faults < MaxFaults
    /\ group.state # "Dead"
    /\ group' = LoadGroup(persisted, group.used_ids)
    /\ msgs' = msgs \cup Unload(Start).out
    /\ faults' = faults + 1
    /\ Label("Failover", NoClient, NoMember, "NOT_COORDINATOR")
    /\ UNCHANGED <<protocol, client_vars, early_timer, store_vars, consumed_vars>>

-----------------------------------------------------------------------------
(* Consumers: client/classic/consumer.py (AbstractCoordinator, ConsumerCoordinator). *)

Request(type, c) ==
    [Msg(type, c, client_inc[c]) EXCEPT !.member = client_member[c],
                                        !.static = c \in StaticClients,
                                        !.generation = client_generation[c]]

\* Offsets are modelled (MaxOffset > 0).
OffsetsOn == MaxOffset > 0

\* A consumer keeps its position only on the partitions it still owns; one it
\* gives up or loses loses its position (client/consumption.py _drop), and one
\* it is newly given has none until OffsetFetch answers.  Every step that
\* does not set positions itself takes this one.
FollowOwned ==
    position' = [c \in Clients |-> [p \in Partitions |->
                    IF p \in owned'[c] THEN position[c][p] ELSE -1]]

\* What a commit carries: the position of every owned partition that has one
\* (ConsumerCoordinator commits the positions of what poll returned, records
\* the application has processed).  Without offsets: nothing.
CommitOffsets(c) ==
    [p \in Partitions |-> IF p \in owned[c] THEN position[c][p] ELSE -1]

\* onJoinPrepare, then JoinGroup: an eager consumer gives up everything first;
\* a cooperative one keeps what it owns and reports it.
SendJoinGroup(c) ==
    /\ client_state[c] = "unjoined"
    /\ msgs' = msgs \cup {[Request("JoinGroupRequest", c) EXCEPT !.meta = owned[c]]}
    /\ owned' = IF protocol = "eager" THEN [owned EXCEPT ![c] = {}] ELSE owned
    /\ client_state' = [client_state EXCEPT ![c] = "joining"]
    /\ Label("SendJoinGroup", c, client_member[c], "NONE")
    /\ FollowOwned
    /\ UNCHANGED <<group, protocol, client_member, client_generation, client_busy, client_inc,
                   received, received_generation, faults, early_timer, store_vars, consumed_vars>>

\* Answers for an older incarnation are ignored.
Mine(resp, c) == resp.client = c /\ resp.inc = client_inc[c] /\ client_state[c] # "down"

\* resetStateAndGeneration plus onPartitionsLost.
ResetAndRejoin(c, keepMember) ==
    /\ client_state' = [client_state EXCEPT ![c] = "unjoined"]
    /\ client_member' = [client_member EXCEPT ![c] = IF keepMember THEN @ ELSE NoMember]
    /\ client_generation' = [client_generation EXCEPT ![c] = -1]
    /\ owned' = [owned EXCEPT ![c] = {}]

\* A fatal error (FENCED_INSTANCE_ID): the consumer stops.
Fatal(c) ==
    /\ client_state' = [client_state EXCEPT ![c] = "down"]
    /\ owned' = [owned EXCEPT ![c] = {}]
    /\ UNCHANGED <<client_member, client_generation>>

Rejoin(c) ==
    /\ client_state' = [client_state EXCEPT ![c] = "unjoined"]
    /\ UNCHANGED <<client_member, client_generation, owned>>

ReceiveJoinGroup(c) ==
    \E resp \in msgs :
        /\ resp.type = "JoinGroupResponse" /\ Mine(resp, c) /\ client_state[c] = "joining"
        /\ \/ /\ resp.error = "NONE"
              /\ LET lead == resp.leader = resp.member /\ ~resp.skip
                     sync(plan) == [Msg("SyncGroupRequest", c, client_inc[c])
                                      EXCEPT !.member = resp.member, !.static = c \in StaticClients,
                                             !.generation = resp.generation, !.plan = plan]
                 IN IF lead
                    THEN \E o \in [Partitions -> resp.joined] :
                           /\ IsTarget(AssignorContract, resp.joined, Partitions, resp.meta_of, o)
                           /\ msgs' = (msgs \ {resp}) \cup
                                      {sync([m \in AllIds |->
                                               IF m \in resp.joined
                                               THEN Given(protocol, resp.joined, resp.meta_of, o, m, Partitions)
                                               ELSE {}])}
                    ELSE msgs' = (msgs \ {resp}) \cup {sync(NoPlan)}
              /\ client_state' = [client_state EXCEPT ![c] = "syncing"]
              /\ client_member' = [client_member EXCEPT ![c] = resp.member]
              /\ client_generation' = [client_generation EXCEPT ![c] = resp.generation]
              /\ UNCHANGED owned
           \/ /\ resp.error = "MEMBER_ID_REQUIRED"
              /\ msgs' = msgs \ {resp}
              /\ client_state' = [client_state EXCEPT ![c] = "unjoined"]
              /\ client_member' = [client_member EXCEPT ![c] = resp.member]
              /\ UNCHANGED <<client_generation, owned>>
           \/ /\ resp.error = "UNKNOWN_MEMBER_ID"
              /\ msgs' = msgs \ {resp}
              /\ ResetAndRejoin(c, FALSE)
           \/ /\ resp.error = "FENCED_INSTANCE_ID"
              /\ msgs' = msgs \ {resp}
              /\ Fatal(c)
           \/ /\ resp.error \notin {"NONE", "MEMBER_ID_REQUIRED", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"}
              /\ msgs' = msgs \ {resp}
              /\ Rejoin(c)
        /\ Label("ReceiveJoinGroup", c, resp.member, resp.error)
        /\ FollowOwned
        /\ UNCHANGED <<group, protocol, client_busy, client_inc, received, received_generation, faults,
                       early_timer, store_vars, consumed_vars>>

\* onJoinComplete: a cooperative consumer revokes what it lost and, if it lost
\* anything, rejoins at once (KIP-429's second round).
ReceiveSyncGroup(c) ==
    \E resp \in msgs :
        /\ resp.type = "SyncGroupResponse" /\ Mine(resp, c) /\ client_state[c] = "syncing"
        /\ msgs' = msgs \ {resp}
        /\ \/ /\ resp.error = "NONE"
              /\ owned' = [owned EXCEPT ![c] = resp.assigned]
              /\ received' = [received EXCEPT ![c] = resp.assigned]
              /\ received_generation' = [received_generation EXCEPT ![c] = client_generation[c]]
              /\ client_state' = [client_state EXCEPT ![c] =
                                    IF owned[c] \ resp.assigned # {} THEN "unjoined" ELSE "stable"]
              /\ UNCHANGED <<client_member, client_generation>>
           \/ /\ resp.error \in {"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION"}
              /\ ResetAndRejoin(c, resp.error = "ILLEGAL_GENERATION")
              /\ UNCHANGED <<received, received_generation>>
           \/ /\ resp.error = "FENCED_INSTANCE_ID"
              /\ Fatal(c)
              /\ UNCHANGED <<received, received_generation>>
           \/ /\ resp.error \notin {"NONE", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID"}
              /\ Rejoin(c)
              /\ UNCHANGED <<received, received_generation>>
        /\ Label("ReceiveSyncGroup", c, resp.member, resp.error)
        /\ FollowOwned
        /\ UNCHANGED <<group, protocol, client_busy, client_inc, faults, early_timer, store_vars,
                       consumed_vars>>

\* A stable consumer heartbeats or commits the offsets of what it owns.
SendHeartbeat(c) ==
    /\ client_state[c] = "stable" /\ ~client_busy[c]
    /\ msgs' = msgs \cup {Request("HeartbeatRequest", c)}
    /\ client_busy' = [client_busy EXCEPT ![c] = TRUE]
    /\ Label("SendHeartbeat", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, protocol, client_state, client_member, client_generation, client_inc,
                   owned, received, received_generation, faults, early_timer, position, store_vars,
                   consumed_vars>>

SendOffsetCommit(c) ==
    /\ client_state[c] = "stable" /\ ~client_busy[c] /\ owned[c] # {}
    /\ msgs' = msgs \cup {[Request("OffsetCommitRequest", c) EXCEPT !.offsets = CommitOffsets(c)]}
    /\ client_busy' = [client_busy EXCEPT ![c] = TRUE]
    /\ Label("SendOffsetCommit", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, protocol, client_state, client_member, client_generation, client_inc,
                   owned, received, received_generation, faults, early_timer, position, store_vars,
                   consumed_vars>>

\* refreshCommittedOffsets: a stable consumer with owned partitions that have
\* no position asks the coordinator for their committed offsets (OffsetFetch).
SendOffsetFetch(c) ==
    /\ OffsetsOn
    /\ client_state[c] = "stable" /\ ~client_busy[c]
    /\ \E p \in owned[c] : position[c][p] = -1
    /\ msgs' = msgs \cup {Request("OffsetFetchRequest", c)}
    /\ client_busy' = [client_busy EXCEPT ![c] = TRUE]
    /\ Label("SendOffsetFetch", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, protocol, client_state, client_member, client_generation, client_inc,
                   owned, received, received_generation, faults, early_timer, position, store_vars,
                   consumed_vars>>

\* The answer sets the positions of the owned partitions still without one:
\* the committed offset, or the log's start when none is committed
\* (auto.offset.reset=earliest; consumption.py _fetched).
ReceiveOffsetFetch(c) ==
    \E resp \in msgs :
        /\ resp.type = "OffsetFetchResponse" /\ Mine(resp, c)
        /\ msgs' = msgs \ {resp}
        /\ client_busy' = [client_busy EXCEPT ![c] = FALSE]
        /\ position' = [position EXCEPT ![c] = [p \in Partitions |->
                           IF p \in owned[c] /\ position[c][p] = -1
                           THEN IF resp.offsets[p] >= 0 THEN resp.offsets[p] ELSE 0
                           ELSE position[c][p]]]
        /\ Label("ReceiveOffsetFetch", c, resp.member, resp.error)
        /\ UNCHANGED <<group, protocol, client_state, client_member, client_generation, client_inc,
                       owned, received, received_generation, faults, early_timer, store_vars,
                       consumed_vars>>

\* The consumer processes the record at its position on a partition it owns
\* (poll, then the application): the position moves past it.  A cooperative
\* consumer goes on consuming what it keeps during a rebalance.
Consume(c) ==
    \E p \in owned[c] :
        /\ OffsetsOn
        /\ client_state[c] # "down"
        /\ position[c][p] >= 0 /\ position[c][p] < MaxOffset
        /\ position' = [position EXCEPT ![c][p] = @ + 1]
        /\ processed' = [processed EXCEPT ![p] = @ \cup {position[c][p]}]
        /\ redelivered' = IF position[c][p] \in processed[p]
                          THEN [redelivered EXCEPT ![p] = @ \cup {position[c][p]}]
                          ELSE redelivered
        /\ Label("Consume", c, client_member[c], "NONE")
        /\ UNCHANGED <<group, protocol, msgs, client_state, client_member, client_generation,
                       client_busy, client_inc, owned, received, received_generation, faults,
                       early_timer, store_vars>>

\* Heartbeat and OffsetCommit answers: REBALANCE_IN_PROGRESS means rejoin;
\* ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID mean the partitions are lost (the
\* member id is kept on ILLEGAL_GENERATION); FENCED_INSTANCE_ID is fatal.
\* Answers to a request from an older generation are ignored (KAFKA-9823).
ReceiveHeartbeatOrCommit(c) ==
    \E resp \in msgs :
        /\ resp.type \in {"HeartbeatResponse", "OffsetCommitResponse"} /\ Mine(resp, c)
        /\ msgs' = msgs \ {resp}
        /\ client_busy' = [client_busy EXCEPT ![c] = FALSE]
        /\ IF client_state[c] # "stable" \/ resp.member # client_member[c]
           THEN UNCHANGED <<client_state, client_member, client_generation, owned>>
           ELSE CASE resp.error = "NONE" ->
                       UNCHANGED <<client_state, client_member, client_generation, owned>>
                  [] resp.error \in {"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION"} ->
                       ResetAndRejoin(c, resp.error = "ILLEGAL_GENERATION")
                  [] resp.error = "FENCED_INSTANCE_ID" -> Fatal(c)
                  [] OTHER -> Rejoin(c)
        /\ Label(IF resp.type = "HeartbeatResponse" THEN "ReceiveHeartbeat" ELSE "ReceiveOffsetCommit",
                 c, resp.member, resp.error)
        /\ FollowOwned
        /\ UNCHANGED <<group, protocol, client_inc, received, received_generation, faults, early_timer,
                       store_vars, consumed_vars>>

\* Leave and stale answers for a consumer that is gone are dropped.
DropStale ==
    \E resp \in msgs :
        /\ resp.type \in {"JoinGroupResponse", "SyncGroupResponse", "HeartbeatResponse",
                          "OffsetCommitResponse", "LeaveGroupResponse", "OffsetFetchResponse"}
        /\ ~Mine(resp, resp.client) \/ resp.type = "LeaveGroupResponse"
        /\ msgs' = msgs \ {resp}
        /\ Label("DropStale", resp.client, resp.member, resp.error)
        /\ UNCHANGED <<group, protocol, client_vars, faults, early_timer, store_vars, consumed_vars>>

\* The request or its answer was lost (and is not parked at the coordinator):
\* the consumer's request times out and it starts over.
RequestTimeout(c) ==
    /\ client_state[c] # "down"
    /\ client_state[c] \in {"joining", "syncing"} \/ client_busy[c]
    /\ ~\E x \in msgs : x.client = c /\ x.inc = client_inc[c]
    /\ ~\E m \in MemberIds : group.join_request[m] = [client |-> c, inc |-> client_inc[c]]
                            \/ group.sync_request[m] = [client |-> c, inc |-> client_inc[c]]
    /\ client_busy' = [client_busy EXCEPT ![c] = FALSE]
    /\ client_state' = [client_state EXCEPT ![c] = IF @ = "stable" THEN "stable" ELSE "unjoined"]
    /\ Label("RequestTimeout", c, client_member[c], "NONE")
    /\ UNCHANGED <<group, protocol, msgs, client_member, client_generation, client_inc,
                   owned, received, received_generation, faults, early_timer, position, store_vars,
                   consumed_vars>>

-----------------------------------------------------------------------------
(* Faults, each spending the budget. *)

\* A dynamic consumer closes and sends LeaveGroup (static members do not).
Leave(c) ==
    /\ faults < MaxFaults
    /\ c \notin StaticClients
    /\ client_state[c] \in {"stable", "unjoined"} /\ ~client_busy[c]
    /\ client_member[c] # NoMember
    /\ msgs' = msgs \cup {Request("LeaveGroupRequest", c)}
    /\ client_state' = [client_state EXCEPT ![c] = "down"]
    /\ owned' = [owned EXCEPT ![c] = {}]
    /\ faults' = faults + 1
    /\ Label("Leave", c, client_member[c], "NONE")
    /\ FollowOwned
    /\ UNCHANGED <<group, protocol, client_member, client_generation, client_busy, client_inc,
                   received, received_generation, early_timer, store_vars, consumed_vars>>

\* The consumer process dies; its requests in flight stay in flight.
Crash(c) ==
    /\ faults < MaxFaults
    /\ client_state[c] # "down"
    /\ client_state' = [client_state EXCEPT ![c] = "down"]
    /\ owned' = [owned EXCEPT ![c] = {}]
    /\ faults' = faults + 1
    /\ Label("Crash", c, client_member[c], "NONE")
    /\ FollowOwned
    /\ UNCHANGED <<group, protocol, msgs, client_member, client_generation, client_busy,
                   client_inc, received, received_generation, early_timer, store_vars, consumed_vars>>

\* A new incarnation of a consumer that is down.  A static one comes back with
\* its group.instance.id and no member id (KIP-345).
Restart(c) ==
    /\ faults < MaxFaults
    /\ client_state[c] = "down"
    /\ client_state' = [client_state EXCEPT ![c] = "unjoined"]
    /\ client_member' = [client_member EXCEPT ![c] = NoMember]
    /\ client_generation' = [client_generation EXCEPT ![c] = -1]
    /\ client_busy' = [client_busy EXCEPT ![c] = FALSE]
    /\ client_inc' = [client_inc EXCEPT ![c] = @ + 1]
    /\ received' = [received EXCEPT ![c] = {}]
    /\ received_generation' = [received_generation EXCEPT ![c] = -1]
    /\ faults' = faults + 1
    /\ Label("Restart", c, NoMember, "NONE")
    /\ UNCHANGED <<group, protocol, msgs, owned, early_timer, position, store_vars, consumed_vars>>

LoseMessage ==
    \E x \in msgs :
        /\ faults < MaxFaults
        /\ msgs' = msgs \ {x}
        /\ faults' = faults + 1
        /\ Label("LoseMessage", x.client, x.member, x.error)
        /\ UNCHANGED <<group, protocol, client_vars, early_timer, store_vars, consumed_vars>>

-----------------------------------------------------------------------------

Init ==
    /\ group = [state |-> "Empty", previous_state |-> "Empty", generation_id |-> 0,
                leader_id |-> NoMember, members |-> {},
                static_members |-> [i \in StaticClients |-> NoMember],
                pending_members |-> {},
                metadata |-> [m \in AllIds |-> {}],
                assignment |-> [m \in AllIds |-> {}],
                join_request |-> [m \in AllIds |-> NoConn],
                sync_request |-> [m \in AllIds |-> NoConn],
                pending_sync_members |-> {}, join_timer |-> "none", sync_timer |-> FALSE,
                used_ids |-> {}]
    /\ protocol \in RebalanceProtocols
    /\ msgs = {}
    /\ client_state = [c \in Clients |-> "unjoined"]
    /\ client_member = [c \in Clients |-> NoMember]
    /\ client_generation = [c \in Clients |-> -1]
    /\ client_busy = [c \in Clients |-> FALSE]
    /\ client_inc = [c \in Clients |-> 0]
    /\ owned = [c \in Clients |-> {}]
    /\ received = [c \in Clients |-> {}]
    /\ received_generation = [c \in Clients |-> -1]
    /\ faults = 0
    /\ early_timer = FALSE
    /\ last_action = [name |-> "Init", client |-> NoClient, member |-> NoMember, error |-> "NONE"]
    /\ committed = NoOffsets
    /\ position = [c \in Clients |-> NoOffsets]
    /\ processed = [p \in Partitions |-> {}]
    /\ redelivered = [p \in Partitions |-> {}]
    /\ persisted = NoPersisted

CoordinatorNext ==
    \/ JoinGroup \/ SyncGroup \/ Heartbeat \/ LeaveGroup \/ OffsetCommit \/ OffsetFetch
    \/ ExpireHeartbeat \/ ExpirePendingMember \/ ExpireJoin \/ ExpireSync

ClientNext(c) ==
    \/ SendJoinGroup(c) \/ ReceiveJoinGroup(c) \/ ReceiveSyncGroup(c)
    \/ SendHeartbeat(c) \/ SendOffsetCommit(c) \/ ReceiveHeartbeatOrCommit(c)
    \/ RequestTimeout(c)
    \/ SendOffsetFetch(c) \/ ReceiveOffsetFetch(c) \/ Consume(c)

FaultNext ==
    \/ DeleteGroup \/ LoseMessage \/ Failover
    \/ \E c \in Clients : Leave(c) \/ Crash(c) \/ Restart(c)

Next ==
    \/ CoordinatorNext
    \/ \E c \in Clients : ClientNext(c)
    \/ DropStale
    \/ FaultNext

\* Progress: the coordinator answers, timers that are due fire, consumers act.
\* Faults are never forced.
Fairness ==
    /\ WF_vars(JoinGroup) /\ WF_vars(SyncGroup) /\ WF_vars(Heartbeat)
    /\ WF_vars(LeaveGroup) /\ WF_vars(OffsetCommit) /\ WF_vars(DropStale)
    /\ WF_vars(OffsetFetch)
    /\ WF_vars(ExpireHeartbeat /\ faults' = faults)
    /\ WF_vars(ExpirePendingMember /\ faults' = faults)
    /\ WF_vars(ExpireJoin /\ faults' = faults)
    /\ WF_vars(ExpireSync /\ faults' = faults)
    /\ \A c \in Clients :
         /\ WF_vars(SendJoinGroup(c)) /\ WF_vars(ReceiveJoinGroup(c))
         /\ WF_vars(ReceiveSyncGroup(c)) /\ WF_vars(ReceiveHeartbeatOrCommit(c))
         /\ WF_vars(RequestTimeout(c))
         /\ WF_vars(SendOffsetFetch(c)) /\ WF_vars(ReceiveOffsetFetch(c))
         \* The heartbeat thread fires on its own timer (AbstractCoordinator.java's
         \* HeartbeatThread), whatever else the consumer does: a consumer that
         \* commits back to back still heartbeats between commits.  Weak fairness
         \* would not say so (a commit in flight disables SendHeartbeat), and TLC
         \* found a behaviour where back-to-back commits starve the heartbeat that
         \* would tell the consumer of a rebalance, which then never completes.
         /\ SF_vars(SendHeartbeat(c))

Spec == Init /\ [][Next]_vars /\ Fairness

-----------------------------------------------------------------------------
(* Type invariants, one per variable. *)

\* A connection: a client (or none) and an incarnation.
\* @type: ({client: CLIENT, inc: Int}) => Bool;
IsConn(conn) == conn.client \in Clients \cup {NoClient} /\ conn.inc >= 0
MemberOrNone == MemberIds \cup {NoMember}

GroupTypeInv ==
    /\ group.state \in GroupStateNames
    /\ group.previous_state \in GroupStateNames
    /\ group.generation_id >= 0
    /\ group.leader_id \in MemberOrNone
    /\ group.members \subseteq MemberIds
    /\ group.static_members \in [StaticClients -> MemberOrNone]
    /\ group.pending_members \subseteq MemberIds
    /\ group.metadata \in [AllIds -> SUBSET Partitions]
    /\ group.assignment \in [AllIds -> SUBSET Partitions]
    /\ DOMAIN group.join_request = AllIds /\ \A m \in AllIds : IsConn(group.join_request[m])
    /\ DOMAIN group.sync_request = AllIds /\ \A m \in AllIds : IsConn(group.sync_request[m])
    /\ group.pending_sync_members \subseteq MemberIds
    /\ group.join_timer \in {"none", "initial", "rebalance"}
    /\ group.sync_timer \in BOOLEAN
    /\ group.used_ids \subseteq MemberIds
ProtocolTypeInv == protocol \in RebalanceProtocols
MsgsTypeInv ==
    \A x \in msgs :
        /\ x.client \in Clients /\ x.inc >= 0 /\ x.member \in MemberOrNone
        /\ x.meta \subseteq Partitions /\ x.assigned \subseteq Partitions
        /\ x.plan \in [AllIds -> SUBSET Partitions]
        /\ x.offsets \in [Partitions -> -1..MaxOffset]
ClientStateTypeInv == client_state \in [Clients -> {"down", "unjoined", "joining", "syncing", "stable"}]
ClientMemberTypeInv == client_member \in [Clients -> MemberOrNone]
ClientGenerationTypeInv == client_generation \in [Clients -> Int]
ClientBusyTypeInv == client_busy \in [Clients -> BOOLEAN]
ClientIncTypeInv == DOMAIN client_inc = Clients /\ \A c \in Clients : client_inc[c] >= 0
OwnedTypeInv == owned \in [Clients -> SUBSET Partitions]
ReceivedTypeInv ==
    /\ received \in [Clients -> SUBSET Partitions]
    /\ received_generation \in [Clients -> Int]
FaultsTypeInv == faults \in 0..MaxFaults /\ early_timer \in BOOLEAN
OffsetsTypeInv ==
    /\ committed \in [Partitions -> -1..MaxOffset]
    /\ position \in [Clients -> [Partitions -> -1..MaxOffset]]
    /\ processed \in [Partitions -> SUBSET (0..MaxOffset)]
    /\ redelivered \in [Partitions -> SUBSET (0..MaxOffset)]
PersistedTypeInv ==
    /\ persisted.generation_id >= 0
    /\ persisted.leader_id \in MemberOrNone
    /\ persisted.members \subseteq MemberIds
    /\ persisted.static_members \in [StaticClients -> MemberOrNone]
    /\ persisted.metadata \in [AllIds -> SUBSET Partitions]
    /\ persisted.assignment \in [AllIds -> SUBSET Partitions]

TypeInv ==
    /\ GroupTypeInv /\ ProtocolTypeInv /\ MsgsTypeInv /\ ClientStateTypeInv
    /\ ClientMemberTypeInv /\ ClientGenerationTypeInv /\ ClientBusyTypeInv
    /\ ClientIncTypeInv /\ OwnedTypeInv /\ ReceivedTypeInv /\ FaultsTypeInv
    /\ OffsetsTypeInv /\ PersistedTypeInv

-----------------------------------------------------------------------------
(* Safety.  The Python reference checks the same properties under the same
   names (reference/groupspec/invariants.py). *)

\* A group with members has a leader among them; CompletingRebalance and
\* Stable always have members.
LeaderIsMemberInv ==
    /\ group.state \in {"CompletingRebalance", "Stable"} => group.members # {}
    /\ group.members # {} => group.leader_id \in group.members
    /\ group.members = {} => group.leader_id = NoMember

\* group.instance.id -> member id is one-to-one and points at members.
StaticMembersInv ==
    /\ \A i \in StaticClients : group.static_members[i] \in group.members \cup {NoMember}
    /\ \A i, j \in StaticClients :
         i # j /\ group.static_members[i] # NoMember => group.static_members[i] # group.static_members[j]

\* A KIP-394 pending id is never also a member.
PendingMembersInv == group.pending_members \cap group.members = {}

\* JoinGroups wait only in PreparingRebalance, SyncGroups only in CompletingRebalance.
ParkedRequestsInv ==
    \A m \in MemberIds :
        /\ AwaitingJoin(group, m) => group.state = "PreparingRebalance" /\ m \in group.members
        /\ AwaitingSync(group, m) => group.state = "CompletingRebalance" /\ m \in group.members

\* In one generation no partition is given to two members: in the stored
\* assignment, and among the assignments consumers received.
OneOwnerPerGenerationInv ==
    /\ \A m1, m2 \in group.members :
         m1 # m2 => group.assignment[m1] \cap group.assignment[m2] = {}
    /\ \A c1, c2 \in Clients :
         (c1 # c2 /\ received_generation[c1] = received_generation[c2] /\ received_generation[c1] >= 0)
            => received[c1] \cap received[c2] = {}

\* A live consumer that is a member of the group's current generation.
\* @type: CLIENT => Bool;
CurrentMember(c) ==
    /\ client_state[c] # "down"
    /\ client_member[c] \in group.members
    /\ client_generation[c] = group.generation_id

\* No partition is held by two live consumers of the current generation at
\* once.  It holds without timing faults, and not with them: after an early
\* rebalance timeout a static member stays a member (KAFKA-8220) while the
\* leader assigns its partitions to others from its stale metadata; when the
\* zombie rejoins, both are members of the next generation and both hold a
\* partition until the zombie's SyncGroup answer makes it revoke it.  Kafka's
\* claim validation by generation (KIP-792, AbstractStickyAssignor) decides
\* who keeps it afterwards, and cannot undo the overlap.  MCstatic-owners.cfg
\* (model finding-concurrent-owners) shows it; docs/findings-ownership.md.
NoConcurrentOwnersInv ==
    \A c1, c2 \in Clients :
        (c1 # c2 /\ CurrentMember(c1) /\ CurrentMember(c2)) => owned[c1] \cap owned[c2] = {}

\* The same, claimed for behaviours without timing faults (crashes, restarts,
\* leaves and lost messages allowed): the models with faults check this one.
NoConcurrentOwnersUnlessTimingFaultInv == early_timer \/ NoConcurrentOwnersInv

\* What holds under every fault: no partition is held by two consumers that
\* can both commit it.  A consumer commits only while it is stable
\* (AbstractCoordinator.generationIfStable; ConsumerCoordinator's
\* sendOffsetCommitRequest fails the commit otherwise) and the coordinator
\* accepts it only from a member of the current generation (NoStaleCommitInv).
\* A stable consumer holds exactly the assignment of its generation, and one
\* generation gives no partition twice.
\* @type: CLIENT => Bool;
CanCommit(c) == client_state[c] = "stable" /\ CurrentMember(c)

NoConcurrentCommittersInv ==
    \A c1, c2 \in Clients :
        (c1 # c2 /\ CanCommit(c1) /\ CanCommit(c2)) => owned[c1] \cap owned[c2] = {}

\* State transitions only along Kafka's table: the last transition taken (a
\* step may take several, e.g. CompletingRebalance -> PreparingRebalance ->
\* Empty when the last member's session expires) is in the table.
\* A group reloaded after a failover has Dead as its previous state (the
\* ClassicGroup constructor's): a load, not a transition.  Dead is terminal
\* otherwise, so no transition leaves it.
ValidTransitionInv ==
    \/ group.previous_state = "Empty" /\ group.state = "Empty"
    \/ IsValidTransition(group.previous_state, group.state)
    \/ group.previous_state = "Dead" /\ group.state \in {"Empty", "Stable"}

\* The failover step (for the properties that name its exceptions).
FailoverStep == last_action'.name = "Failover"

\* Generations never go back, and grow by one at a time, except by a failover
\* during CompletingRebalance: a join phase that ends with members writes no
\* record (completeClassicGroupJoin), so the reloaded group is the last
\* persisted generation, one back.  No member was given an assignment, and
\* none could commit, in the generation that is lost.
GenerationMonotonicInv ==
    \/ group'.generation_id \in {group.generation_id, group.generation_id + 1}
    \/ FailoverStep /\ group'.generation_id = persisted.generation_id

\* A commit is accepted only from a current member in the current generation.
NoStaleCommitInv ==
    \A x \in msgs' \ msgs :
        (x.type = "OffsetCommitResponse" /\ x.error = "NONE")
            => x.generation = group.generation_id /\ x.member \in group.members

\* The step that stores the leader's plan (SyncGroup of the leader, the only
\* way from CompletingRebalance to Stable), with the members and metadata the
\* leader assigned over (they cannot change while the group is in
\* CompletingRebalance without leaving it).
LeaderPlanStored == group.state = "CompletingRebalance" /\ group'.state = "Stable"

\* The leader's plan is valid and balanced: under eager every partition is
\* given; under cooperative only partitions some member reported owning may be
\* withheld (they are moving, KIP-429); and the plan extends to an assignment
\* whose counts differ by at most one.  Checked on the plan the coordinator
\* stores, whatever the leader chose (AbstractStickyAssignor.java,
\* constrainedAssign: minQuota / maxQuota; RangeAssignor and RoundRobinAssignor
\* are balanced for uniform subscriptions).
BalancedAssignmentInv ==
    LeaderPlanStored =>
        LET ms == group.members
            plan == group'.assignment
            given == UNION {plan[m] : m \in ms}
        IN /\ protocol = "eager" => given = Partitions
           /\ \A p \in Partitions \ given : Claimants(ms, group.metadata, p) # {}
           /\ PlanBalanced(ms, Partitions, plan)

\* For the sticky assignors the plan moves as few partitions as a balanced
\* assignment can: no balanced assignment leaves more claimed partitions with
\* a member that claimed them (AbstractStickyAssignor.java, assignOwnedPartitions
\* keeps owned partitions up to the quota).  Withheld partitions count as moved.
StickyAssignmentInv ==
    LeaderPlanStored /\ AssignorContract = "sticky" =>
        PlanSticky(group.members, group.metadata, Partitions, group'.assignment)

-----------------------------------------------------------------------------
(* Offsets: what is committed, what is consumed (MaxOffset > 0). *)

\* No committed offset goes backwards, but by the one Kafka behaviour the
\* model has that deletes offsets: DeleteGroups (deleteAllOffsets).  Kafka
\* itself never compares a commit with the stored offset (an application may
\* seek back and commit): the model's consumers commit their positions, and the
\* generation check keeps an old owner's commit from landing after the new
\* owner's.
OffsetsDeleted == group.state = "Empty" /\ group'.state = "Dead"

CommittedMonotonicInv ==
    OffsetsDeleted \/ \A p \in Partitions : committed'[p] >= committed[p]

\* At least once: nothing is lost.  Every record below a committed offset,
\* and below any consumer's position, has been processed by some consumer: a
\* consumer that takes over a partition resumes from the committed offset, so
\* a record processed but not committed before the partition moved is
\* consumed again (a duplicate), never skipped.
AtLeastOnceInv ==
    \A p \in Partitions, o \in 0..MaxOffset :
        /\ o < committed[p] => o \in processed[p]
        /\ \A c \in Clients : o < position[c][p] => o \in processed[p]

\* When duplicates happen: a record is processed again only if it is not
\* committed when it is (its offset is at or above the committed offset): the
\* processed-but-uncommitted tail a new owner re-consumes.  redelivered counts
\* them.  Not claimed with a timing fault: a zombie that still holds a
\* partition (docs/findings-ownership.md) may re-process what the new owner
\* has committed; its own commits are fenced.
ReconsumedOnlyUncommittedInv ==
    early_timer \/
    \A c \in Clients, p \in Partitions :
        (position[c][p] >= 0 /\ position'[c][p] = position[c][p] + 1
         /\ position[c][p] \in processed[p])
            => position[c][p] >= committed[p]

GenerationMonotonicProp == [][GenerationMonotonicInv]_vars
CommittedMonotonicProp == [][CommittedMonotonicInv]_vars
ReconsumedOnlyUncommittedProp == [][ReconsumedOnlyUncommittedInv]_vars
NoStaleCommitProp == [][NoStaleCommitInv]_vars
BalancedAssignmentProp == [][BalancedAssignmentInv]_vars
StickyAssignmentProp == [][StickyAssignmentInv]_vars

-----------------------------------------------------------------------------
(* Liveness, under Fairness and a finite fault budget. *)

\* @type: CLIENT => Bool;
Live(c) == client_state[c] # "down"
AllAssigned == UNION {owned[c] : c \in {x \in Clients : Live(x)}} = Partitions

\* Once faults stop, a group with live consumers becomes Stable with every
\* partition held, and one without becomes Empty (or stays Dead).
ConvergenceProp ==
    <>[](\/ group.state = "Dead"
         \/ (\E c \in Clients : Live(c)) /\ group.state = "Stable" /\ AllAssigned
            /\ \A c \in Clients : Live(c) => client_state[c] = "stable"
         \/ (\A c \in Clients : ~Live(c)) /\ group.state = "Empty")

\* A follower waiting in SyncGroup is eventually answered.
SyncAnsweredProp ==
    \A c \in Clients : client_state[c] = "syncing" ~> client_state[c] # "syncing"
=============================================================================
