----------------------------- MODULE MCConsumer -----------------------------
(* The model-checking wrapper of ConsumerProtocol.tla (TLC only): the bound *)
(* on the group epoch, symmetry and VIEW.  MCconsumer-*.cfg give the        *)
(* constants and what to check.                                            *)
EXTENDS ConsumerProtocol, TLC

CONSTANTS
    \* The highest group epoch explored (a state constraint).
    \* @type: Int;
    MaxGroupEpoch

\* Member ids and consumers are interchangeable.
MCSymmetry ==
    {a @@ b : a \in Permutations(MemberIds), b \in Permutations(Consumers)}

\* ... and partitions too, when every consumer may subscribe to any set of
\* them that Subscriptions holds, whatever their names (e.g. {Partitions}).
MCSymmetryPartitions ==
    {a @@ b @@ d : a \in Permutations(MemberIds), b \in Permutations(Consumers),
                   d \in Permutations(Partitions)}

MCConstraint == group.group_epoch <= MaxGroupEpoch

\* Behaviours without commits (the finding models: commits do not change who owns
\* what, and NoTwoCommittersInv reads epochs, not commits).
MCNoCommits == \A x \in msgs : x.type # "OffsetCommitRequest"

\* The fix checked by model fix-consumer-report-assigning (spec/README.md, finding 2):
\* with it, only a timing fault leaves two owners.
MCNoTwoOwnersUnlessTimingFaultInv == timing_fault \/ NoTwoOwnersInv

\* committed and last_action influence no step; they are not part of the state.
MCView == <<group, msgs, client_state, client_member, client_epoch, client_target, owned,
            client_subscription, client_conn, stuck, owned_sent, hb_pending, used_ids, faults,
            subscription_changes, timing_fault, stale_report>>
=============================================================================
