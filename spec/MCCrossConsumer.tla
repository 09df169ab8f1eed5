-------------------------- MODULE MCCrossConsumer --------------------------
(* The state graph `groupspec crosscheck --group-protocol consumer` replays  *)
(* (spec/MCcross-consumer-small.cfg): MCConsumer with a narrower CONSTRAINT *)
(* that keeps every coordinator input of the fault-free model while cutting  *)
(* what multiplies states without reaching the coordinator in new ways:     *)
(* only consumer c1 commits, and faults (a crash, a leave, an early timer,  *)
(* a lost message) hit consumer c2's process.  A coordinator step never    *)
(* changes either (it changes group and msgs' answers only), so the bound  *)
(* never hides a coordinator step from the comparison.                     *)
EXTENDS MCConsumer

CONSTANTS
    \* The consumer that commits and never fails.
    \* @type: CONSUMER;
    CrossStable

MCCrossConstraint ==
    /\ MCConstraint
    /\ client_state[CrossStable] # "down"
    /\ \A x \in msgs : x.type = "OffsetCommitRequest" => x.client = CrossStable

=============================================================================
