---------------------- MODULE TraceConsumerProtocol ----------------------
(***************************************************************************)
(* Trace validation for the consumer protocol (KIP-848): is a recorded run *)
(* of the Python reference coordinator a behaviour of the spec's           *)
(* coordinator (ConsumerProtocol.tla)?                                     *)
(*                                                                         *)
(* Traces (module TraceConsumerData, which crosscheck/consumer/traces.py   *)
(* writes; the one in spec/ is an empty placeholder) holds runs, one       *)
(* record per coordinator step, in the spec's vocabulary (the abstraction  *)
(* function of reference/groupspec/crosscheck/consumer/vocabulary.py):     *)
(*   action  HandleHeartbeat, HandleLeave, HandleCommit, ExpireSession or  *)
(*           ExpireRebalance;                                              *)
(*   req     the request handled, as the spec's message (requests only);   *)
(*   member  the member a timer concerns (timers only);                    *)
(*   group   the reference's group after the step;                         *)
(*   same    TRUE when that group is the one before (group is then a       *)
(*           placeholder: most steps change nothing);                      *)
(*   out     the answers the step sent, as the spec's messages.            *)
(* Each step has two halves: Deliver puts the recorded request alone in    *)
(* flight, then Take runs the spec's own coordinator action on it, which   *)
(* must reach the recorded group and answers.  A new target is any the     *)
(* spec allows (TargetValid), so the reference's assignor must pick a      *)
(* valid balanced one.  The consumers are not modelled here: the recorded  *)
(* requests are the environment, and the consumer variables keep their    *)
(* initial values (no consumer is live, so no timer counts as early).      *)
(*                                                                         *)
(* Every trace is explored from its own initial state (t); the runner      *)
(* reads the largest i reached for each t from TLC's state dump.  With     *)
(* Explain > 0, step Explain is taken without comparing its outcome, so    *)
(* the states at i = Explain are what the spec allows there.  TLC only.    *)
(***************************************************************************)
EXTENDS ConsumerProtocol, Sequences, TraceConsumerData

CONSTANTS
    \* 0, or the step whose outcome is left open (the divergence report).
    Explain

VARIABLES
    \* Which trace this behaviour follows.
    t,
    \* How many of its steps are matched.
    i,
    \* The recorded input of step i + 1 is in flight.
    ready

trace_vars == <<vars, t, i, ready>>

TraceInit ==
    /\ Init
    /\ t \in 1..Len(Traces)
    /\ i = 0
    /\ ready = FALSE

\* The group record e says the step leads to.
Expected(e) == IF e.same THEN group ELSE e.group

Requests == {"HandleHeartbeat", "HandleLeave", "HandleCommit"}

Deliver ==
    /\ ~ready
    /\ i < Len(Traces[t])
    /\ LET e == Traces[t][i + 1]
       IN msgs' = IF e.action \in Requests THEN {e.req} ELSE {}
    /\ ready' = TRUE
    /\ UNCHANGED <<group, client_vars, committed, used_ids, faults, subscription_changes,
                   timing_fault, stale_report, last_action, t, i>>

\* The spec's coordinator action a record names.
CoordinatorStep(e) ==
    \/ e.action = "HandleHeartbeat" /\ HandleHeartbeat(e.req.client)
    \/ e.action = "HandleLeave" /\ HandleLeave(e.req.client)
    \/ e.action = "HandleCommit" /\ HandleCommit(e.req.client)
    \/ e.action = "ExpireSession" /\ ExpireSession(e.member)
    \/ e.action = "ExpireRebalance" /\ ExpireRebalance(e.member)

Take ==
    /\ ready
    /\ LET e == Traces[t][i + 1]
       IN /\ CoordinatorStep(e)
          /\ i + 1 # Explain => (group' = Expected(e) /\ msgs' = e.out)
    /\ ready' = FALSE
    /\ i' = i + 1
    /\ UNCHANGED t

TraceNext == Deliver \/ Take

TraceSpec == TraceInit /\ [][TraceNext]_trace_vars

\* The view: the consumer variables never change; last_action, committed and
\* the counters are bookkeeping.
TraceView == <<group, msgs, t, i, ready>>
=============================================================================
