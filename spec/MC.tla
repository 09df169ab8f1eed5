--------------------------------- MODULE MC ---------------------------------
(* The model-checking wrapper shared by every model: MCsmall.cfg, MCci.cfg, *)
(* MCnightly.cfg and MClive.cfg give the constants and the bounds.          *)
EXTENDS ConsumerGroup, TLC

CONSTANTS
    \* The deepest generation explored (a state constraint).
    \* @type: Int;
    MaxGeneration

\* Member ids, partitions, and consumers of the same kind are interchangeable.
\* (TLC ignores symmetry when checking liveness: MClive.cfg does not use it.)
MCSymmetry ==
    {a @@ b @@ c @@ d : a \in Permutations(MemberIds), b \in Permutations(Partitions),
                        c \in Permutations(Clients \ StaticClients),
                        d \in Permutations(StaticClients)}

MCConstraint == group.generation_id <= MaxGeneration

\* last_action names the step; it is not part of the state.
MCView == <<group, protocol, msgs, client_state, client_member, client_generation,
            client_busy, client_inc, owned, received, received_generation, faults, early_timer,
            committed, position, processed, redelivered, persisted>>
=============================================================================
