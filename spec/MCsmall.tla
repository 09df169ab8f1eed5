------------------------------ MODULE MCsmall ------------------------------
(* The small model: two dynamic consumers, two partitions, both protocols,  *)
(* the sticky contract, one fault.  Finishes in seconds; runs in CI.       *)
EXTENDS ConsumerGroup, TLC

CONSTANTS c1, c2, m1, m2, m3, m4, p1, p2

MCClients == {c1, c2}
MCStaticClients == {}
MCMemberIds == {m1, m2, m3, m4}
MCPartitions == {p1, p2}
MCRebalanceProtocols == {"eager", "cooperative"}

\* Member ids, partitions and (identical) consumers are interchangeable.
MCSymmetry ==
    {a @@ b @@ c : a \in Permutations(MCMemberIds), b \in Permutations(MCPartitions),
                   c \in Permutations(MCClients)}

MCConstraint == group.generation_id <= 3

\* last_action names the step; it is not part of the state.
MCView == <<group, protocol, msgs, client_state, client_member, client_generation,
            client_busy, client_inc, owned, received, received_generation, faults>>
=============================================================================
