------------------------ MODULE TraceConsumerGroup -------------------------
(***************************************************************************)
(* Trace validation (the etcd-raft / CCF method): is a recorded run of the *)
(* Python reference coordinator a behaviour of the spec's coordinator?     *)
(*                                                                         *)
(* Traces (module TraceData, which crosscheck/traces.py writes; the one    *)
(* in spec/ is an empty placeholder) holds runs, one record per            *)
(* coordinator step, in the spec's vocabulary (the abstraction function of *)
(* reference/groupspec/crosscheck/vocabulary.py):                          *)
(*   action  the spec action (a request kind or a timer);                  *)
(*   req     the request handled, as the spec's message (requests only);   *)
(*   member  the member a timer concerns (ExpireHeartbeat, ...Pending...); *)
(*   group   the reference's group after the step, used_ids left empty;    *)
(*   same    TRUE when that group is the one before (group is then empty:  *)
(*           most steps answer a heartbeat or a commit and change nothing);*)
(*   out     the responses the step sent, as the spec's messages.          *)
(* Step k is matched when the spec's coordinator, from the group matched   *)
(* at step k-1, can take that action on that input, with some choice of    *)
(* fresh member id and new leader, and reach that group and those          *)
(* responses.  Every trace is explored from its own initial state (t);     *)
(* the runner reads the largest i reached for each t from TLC's state      *)
(* dump: i = Len(Traces[t]) means the trace is a behaviour of the spec's   *)
(* coordinator, a smaller i that it diverged at step i + 1.  (The data is  *)
(* a module of definitions, not a CONSTANT: TLC evaluates a definition     *)
(* once, where a large constant substituted with <- is re-evaluated on     *)
(* every use.)                                                             *)
(*                                                                         *)
(* The consumers are not modelled here: the recorded requests are the      *)
(* environment (the reference client is what sent them).  What the client  *)
(* side must respect is checked on the leader's SyncGroup: the plan must   *)
(* keep the assignors' contract (AssignmentContractOK).                    *)
(*                                                                         *)
(* With Explain > 0, step Explain is taken without the recorded outcome    *)
(* and without the contract check, its responses kept in msgs, so that the *)
(* states at i = Explain show what the spec allows there (the divergence   *)
(* report prints them).  Not part of the core spec: TLC only.             *)
(***************************************************************************)
EXTENDS ConsumerGroup, Sequences, TraceData

CONSTANTS
    \* 0, or the step whose outcome is left open (the divergence report).
    Explain

VARIABLES
    \* Which trace this behaviour follows.
    t,
    \* How many of its steps are matched.
    i

trace_vars == <<vars, t, i>>

TraceInit ==
    /\ Init
    /\ t \in 1..Len(Traces)
    /\ protocol = TraceProtocols[t]
    /\ i = 0

\* The leader's plan keeps the contract every assignor shares: no partition
\* twice; under eager every partition given; under cooperative (KIP-429) no
\* partition handed to a member other than one that reported owning it.
AssignmentContractOK(plan) ==
    LET ms == group.members
    IN /\ \A m1, m2 \in ms : m1 # m2 => plan[m1] \cap plan[m2] = {}
       /\ protocol = "eager" => UNION {plan[m] : m \in ms} = TracePartitionsOf[t]
       /\ protocol = "cooperative" =>
             \A m \in ms : \A p \in plan[m] :
                 Claimants(ms, group.metadata, p) # {} => m \in Claimants(ms, group.metadata, p)

LeaderPlan(e) ==
    /\ e.action = "SyncGroup"
    /\ group.state = "CompletingRebalance"
    /\ e.req.member = group.leader_id
    /\ e.req.generation = group.generation_id

\* The coordinator step a trace record names, for a choice ch.
Outcome(e, ch) ==
    CASE e.action = "JoinGroup" -> HandleJoinGroup(Start, e.req, ch)
      [] e.action = "SyncGroup" -> HandleSyncGroup(Start, e.req)
      [] e.action = "Heartbeat" -> HandleHeartbeat(Start, e.req)
      [] e.action = "LeaveGroup" -> HandleLeaveGroup(Start, e.req, ch)
      [] e.action = "OffsetCommit" -> HandleOffsetCommit(Start, e.req)
      [] e.action = "ExpireHeartbeat" -> RemoveMemberAndUpdateGroup(Start, e.member, ch)
      [] e.action = "ExpirePendingMember" -> ExpirePendingMemberStep(e.member, ch)
      [] e.action = "ExpireJoin" -> CompleteJoin(Start, ch)
      [] e.action = "ExpireSync" -> ExpireSyncStep(ch)

\* When the timer a record names may fire (the actions' enabling conditions).
TimerEnabled(e) ==
    CASE e.action = "ExpireHeartbeat" ->
            /\ e.member \in group.members /\ group.state # "Dead"
            /\ ~AwaitingJoin(group, e.member) /\ ~AwaitingSync(group, e.member)
      [] e.action = "ExpirePendingMember" -> e.member \in group.pending_members
      [] e.action = "ExpireJoin" -> group.join_timer # "none"
      [] e.action = "ExpireSync" -> ExpireSyncEnabled
      [] OTHER -> TRUE

\* The group record e says the step leads to.
Expected(e) == IF e.same THEN [group EXCEPT !.used_ids = {}] ELSE e.group

\* The choices worth trying for record e: the fresh id must be one the
\* recorded group shows for the first time and a replacement leader must be
\* the recorded leader (any other choice cannot reach the recorded group).
\* This only prunes: it is a subset of Choices.  The explained step tries
\* every choice.
TraceChoices(e) ==
    IF i + 1 = Explain THEN Choices
    ELSE [id: (((Expected(e).members \cup Expected(e).pending_members)
                \ (group.members \cup group.pending_members \cup group.used_ids)) \cup {NoMember}),
          leader: ({Expected(e).leader_id} \cap group.members) \cup {NoMember}]

TraceNext ==
    /\ i < Len(Traces[t])
    /\ LET e == Traces[t][i + 1]
       IN /\ TimerEnabled(e)
          /\ LeaderPlan(e) /\ i + 1 # Explain => AssignmentContractOK(e.req.plan)
          /\ \E ch \in TraceChoices(e) :
                LET res == Outcome(e, ch)
                IN /\ res.ok
                   /\ i + 1 # Explain =>
                         /\ [res.g EXCEPT !.used_ids = {}] = Expected(e)
                         /\ res.out = e.out
                   /\ group' = res.g
                   /\ msgs' = IF i + 1 = Explain THEN res.out ELSE msgs
                   /\ last_action' = [name |-> e.action, client |-> e.req.client,
                                      member |-> IF e.action \in {"ExpireHeartbeat", "ExpirePendingMember"}
                                                 THEN e.member ELSE e.req.member,
                                      error |-> "NONE"]
    /\ i' = i + 1
    /\ UNCHANGED <<protocol, client_vars, faults, early_timer, t, store_vars, consumed_vars>>

TraceSpec == TraceInit /\ [][TraceNext]_trace_vars

\* The view: last_action names the step and is not part of the state.
TraceView == <<group, msgs, t, i>>
=============================================================================
