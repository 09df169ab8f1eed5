------------------------- MODULE TraceConsumerData -------------------------
(***************************************************************************)
(* A placeholder: `groupspec crosscheck --group-protocol consumer` writes  *)
(* the real TraceConsumerData module (the recorded traces and the names    *)
(* they use) next to a copy of the spec for each run of                    *)
(* TraceConsumerProtocol.tla.                                              *)
(***************************************************************************)
EXTENDS Integers, TLC

TraceConsumers == {}
TraceIds == {}
TracePartitions == {}
NewMemberF == [x \in TraceIds |-> {}]
NoTargetF == [x \in TraceIds |-> {}]
NoGroup == [group_epoch |-> -1]
\* One record per coordinator step, per trace.
Traces == <<>>
=============================================================================
