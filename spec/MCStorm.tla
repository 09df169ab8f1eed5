------------------------------- MODULE MCStorm -------------------------------
(***************************************************************************)
(* Rebalance storms.  The generation cap of MC.tla (MaxGeneration) cuts   *)
(* every behaviour at a fixed generation, so a consumer that makes the     *)
(* group rebalance forever looks, to TLC, like a behaviour that merely     *)
(* ran out of generations.  This wrapper counts the rebalances completed   *)
(* since the last fault (calm: reset by every step that spends the fault   *)
(* budget, grown by every step that starts a new generation) and bounds    *)
(* that count instead of the generation: StormBoundInv says that once      *)
(* faults stop, the group rebalances at most MaxCalmRebalances times.      *)
(* No generation cap is needed: faults are bounded by MaxFaults and the    *)
(* count by the invariant, so the generation is bounded by both, and a     *)
(* storm is reported as soon as it exceeds the bound rather than hidden.   *)
(* StormSpec adds the fairness of ConsumerGroup.tla for the liveness       *)
(* models (MCnightly-live.cfg) that use the same count as their bound.    *)
(* TLC only, like MC.tla; the core spec has no such history variable.      *)
(***************************************************************************)
EXTENDS MC

CONSTANTS
    \* How many rebalances may complete after the last fault.
    \* @type: Int;
    MaxCalmRebalances

VARIABLES
    \* Rebalances (new generations) completed since the last fault.
    \* @type: Int;
    calm

storm_vars == <<vars, calm>>

StormInit == Init /\ calm = 0

StormNext ==
    /\ Next
    /\ calm' = IF faults' # faults THEN 0
               ELSE IF group'.generation_id # group.generation_id THEN calm + 1
               ELSE calm

StormSpec == StormInit /\ [][StormNext]_storm_vars /\ Fairness

\* At most MaxCalmRebalances rebalances after the last fault.
StormBoundInv == calm <= MaxCalmRebalances

\* For liveness models: explore one rebalance past the bound, so that a storm
\* is a cycle-free path TLC reports (StormBoundInv) rather than a cut.
StormConstraint == calm <= MaxCalmRebalances + 1

StormView == <<MCView, calm>>
=============================================================================
