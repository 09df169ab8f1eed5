---------------------------- MODULE GroupStates ----------------------------
(***************************************************************************)
(* The five classic group states and Kafka's table of valid previous       *)
(* states.  Source: group-coordinator/.../classic/ClassicGroupState.java    *)
(* (validPreviousStates) and core/.../coordinator/group/GroupMetadata.scala.*)
(* The Python reference holds the same table in                           *)
(* reference/groupspec/protocol/group_state.py (VALID_PREVIOUS_STATES); a  *)
(* test checks that the two agree.                                         *)
(***************************************************************************)

\* @type: Set(Str);
GroupStateNames ==
    {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

\* target state -> the states a group may be in just before entering it.
\* @type: Str -> Set(Str);
ValidPreviousStates ==
    [t \in GroupStateNames |->
        CASE t = "Empty" -> {"PreparingRebalance"}
          [] t = "PreparingRebalance" -> {"Stable", "CompletingRebalance", "Empty"}
          [] t = "CompletingRebalance" -> {"PreparingRebalance"}
          [] t = "Stable" -> {"CompletingRebalance"}
          [] OTHER -> {"Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead"}]

\* ClassicGroup.canRebalance: the states PreparingRebalance may be entered from.
\* @type: Str => Bool;
CanRebalance(s) == s \in ValidPreviousStates["PreparingRebalance"]

\* @type: (Str, Str) => Bool;
IsValidTransition(from, to) == from \in ValidPreviousStates[to]
=============================================================================
