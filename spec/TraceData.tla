----------------------------- MODULE TraceData -----------------------------
(***************************************************************************)
(* A placeholder: `groupspec crosscheck` writes the real TraceData module  *)
(* (the recorded traces and the names they use) next to a copy of the     *)
(* spec for each run of TraceConsumerGroup.tla.                            *)
(***************************************************************************)
EXTENDS Integers, TLC

TraceClients == {}
TraceStatic == {}
TraceIds == {}
TracePartitions == {}
\* One record per coordinator step, per trace.
Traces == <<>>
\* The rebalance protocol of each trace.
TraceProtocols == <<>>
\* The partitions each trace's group consumes.
TracePartitionsOf == <<>>
=============================================================================
