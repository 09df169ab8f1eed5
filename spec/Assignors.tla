----------------------------- MODULE Assignors -----------------------------
(***************************************************************************)
(* The assignors' contracts, not their algorithms.  The leader may hand    *)
(* out any assignment a correct assignor could produce, so TLC explores    *)
(* all of them:                                                            *)
(*   - validity: every partition goes to exactly one member of the group;  *)
(*   - balance: with every member subscribed to every partition, the       *)
(*     counts differ by at most one (Range, RoundRobin and both sticky     *)
(*     assignors guarantee this for uniform subscriptions);                *)
(*   - stickiness (Sticky, CooperativeSticky): among balanced assignments, *)
(*     one that moves the fewest partitions away from the member that      *)
(*     reported owning them;                                               *)
(*   - cooperative (KIP-429, CooperativeStickyAssignor): a partition that  *)
(*     changes owner is withheld this round and handed over in the next.   *)
(* Sources: clients/.../consumer/internals/AbstractStickyAssignor.java,    *)
(* clients/.../consumer/CooperativeStickyAssignor.java                     *)
(* (adjustAssignment: partitions moving between members are removed), and *)
(* the Python contracts in reference/groupspec/assignors/moves.py.         *)
(*                                                                         *)
(* An assignment is an owner function: partition -> member.                *)
(***************************************************************************)
EXTENDS Integers, FiniteSets

\* Members that reported owning p (more than one only after a fault).
\* @type: (Set(MEMBER), MEMBER -> Set(PARTITION), PARTITION) => Set(MEMBER);
Claimants(ms, meta, p) == {m \in ms : p \in meta[m]}

\* @type: (Set(PARTITION), PARTITION -> MEMBER, MEMBER) => Int;
Load(ps, owner, m) == Cardinality({p \in ps : owner[p] = m})

\* @type: (Set(MEMBER), Set(PARTITION), PARTITION -> MEMBER) => Bool;
IsBalanced(ms, ps, owner) ==
    \A m1, m2 \in ms : Load(ps, owner, m1) <= Load(ps, owner, m2) + 1

\* Partitions given to a member other than one that claimed them.
\* @type: (Set(MEMBER), Set(PARTITION), MEMBER -> Set(PARTITION), PARTITION -> MEMBER) => Int;
Moves(ms, ps, meta, owner) ==
    Cardinality({p \in ps : Claimants(ms, meta, p) # {} /\ owner[p] \notin Claimants(ms, meta, p)})

\* Every balanced assignment of ps over ms.
\* @type: (Set(MEMBER), Set(PARTITION)) => Set(PARTITION -> MEMBER);
BalancedAssignments(ms, ps) == {o \in [ps -> ms] : IsBalanced(ms, ps, o)}

\* The target assignments an assignor with this contract may compute.
\* @type: (Str, Set(MEMBER), Set(PARTITION), MEMBER -> Set(PARTITION)) => Set(PARTITION -> MEMBER);
Targets(assignor, ms, ps, meta) ==
    LET balanced == BalancedAssignments(ms, ps)
    IN IF assignor = "sticky"
       THEN {o \in balanced : \A o2 \in balanced : Moves(ms, ps, meta, o) <= Moves(ms, ps, meta, o2)}
       ELSE balanced

\* What a member is given this round: the whole target under eager; under
\* cooperative, a partition moving away from a member that claims it is
\* withheld until that member has revoked it.
\* @type: (Str, Set(MEMBER), MEMBER -> Set(PARTITION), PARTITION -> MEMBER, MEMBER, Set(PARTITION)) => Set(PARTITION);
Given(protocol, ms, meta, owner, m, ps) ==
    {p \in ps : owner[p] = m /\
                (protocol = "eager" \/ Claimants(ms, meta, p) = {} \/ m \in Claimants(ms, meta, p))}
=============================================================================
