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

-----------------------------------------------------------------------------
(* Checking a chosen assignment (BalancedAssignmentProp, StickyAssignmentProp *)
(* of ConsumerGroup.tla).  These operators judge the plan the leader sent, *)
(* not the leader's choice (IsTarget below): a leader that picks outside *)
(* the contract is caught.  They quantify over sets of members only,      *)
(* never over sets of functions, and compute the least moves directly.   *)

\* The partitions some member reported owning.
\* @type: (Set(MEMBER), MEMBER -> Set(PARTITION), Set(PARTITION)) => Set(PARTITION);
Claimed(ms, meta, ps) == {p \in ps : Claimants(ms, meta, p) # {}}

\* Claimed partitions the plan gives to one of their claimants.
\* @type: (Set(MEMBER), MEMBER -> Set(PARTITION), Set(PARTITION), MEMBER -> Set(PARTITION)) => Int;
Kept(ms, meta, ps, plan) ==
    Cardinality({p \in Claimed(ms, meta, ps) : \E m \in Claimants(ms, meta, p) : p \in plan[m]})

\* Whether some balanced assignment of ps over ms keeps at least k claimed
\* partitions with a claimant.  Balanced with uniform subscriptions: r members
\* (a set R) get q + 1 partitions, the others q.  For given quotas the most a
\* member set can keep is a bipartite b-matching (partitions to claimants,
\* member m taking at most its quota); by max-flow/min-cut it is the least,
\* over member sets X, of X's quotas plus the claimed partitions with a
\* claimant outside X.
\* @type: (Set(MEMBER), MEMBER -> Set(PARTITION), Set(PARTITION), Int) => Bool;
CanKeep(ms, meta, ps, k) ==
    LET n == Cardinality(ms)
        q == IF n = 0 THEN 0 ELSE Cardinality(ps) \div n
        r == IF n = 0 THEN 0 ELSE Cardinality(ps) % n
        claimed == Claimed(ms, meta, ps)
    IN \E R \in SUBSET ms :
         /\ Cardinality(R) = r
         /\ \A X \in SUBSET ms :
              Cardinality(X) * q + Cardinality(X \cap R)
                + Cardinality({p \in claimed : ~(Claimants(ms, meta, p) \subseteq X)}) >= k

\* A plan (member -> partitions; under cooperative with the moving partitions
\* withheld) extends to a balanced assignment: no member above q + 1, at most
\* r members at q + 1, and enough withheld partitions to lift every member to q.
\* @type: (Set(MEMBER), Set(PARTITION), MEMBER -> Set(PARTITION)) => Bool;
PlanBalanced(ms, ps, plan) ==
    LET n == Cardinality(ms)
        q == IF n = 0 THEN 0 ELSE Cardinality(ps) \div n
        r == IF n = 0 THEN 0 ELSE Cardinality(ps) % n
        withheld == ps \ UNION {plan[m] : m \in ms}
        short == {m \in ms : Cardinality(plan[m]) < q}
    IN /\ \A m \in ms : Cardinality(plan[m]) <= q + 1
       /\ Cardinality({m \in ms : Cardinality(plan[m]) = q + 1}) <= r
       /\ Cardinality(withheld) >= Cardinality(short) * q
                                  - Cardinality(UNION {plan[m] : m \in short})

\* Among balanced assignments, none keeps more claimed partitions than the plan.
\* @type: (Set(MEMBER), MEMBER -> Set(PARTITION), Set(PARTITION), MEMBER -> Set(PARTITION)) => Bool;
PlanSticky(ms, meta, ps, plan) == ~CanKeep(ms, meta, ps, Kept(ms, meta, ps, plan) + 1)

\* Whether owner is a target assignment an assignor with this contract may
\* compute: balanced, and for the sticky contract keeping as many claimed
\* partitions with a claimant as any balanced assignment (the fewest moves).
\* The leader picks one with an existential choice of owner function; no set
\* of functions is built or quantified over universally (Apalache's fragment).
\* @type: (Str, Set(MEMBER), Set(PARTITION), MEMBER -> Set(PARTITION), PARTITION -> MEMBER) => Bool;
IsTarget(assignor, ms, ps, meta, owner) ==
    /\ IsBalanced(ms, ps, owner)
    /\ assignor = "sticky" =>
         ~CanKeep(ms, meta, ps,
                  Cardinality(Claimed(ms, meta, ps)) - Moves(ms, ps, meta, owner) + 1)

\* What a member is given this round: the whole target under eager; under
\* cooperative, a partition moving away from a member that claims it is
\* withheld until that member has revoked it.
\* @type: (Str, Set(MEMBER), MEMBER -> Set(PARTITION), PARTITION -> MEMBER, MEMBER, Set(PARTITION)) => Set(PARTITION);
Given(protocol, ms, meta, owner, m, ps) ==
    {p \in ps : owner[p] = m /\
                (protocol = "eager" \/ Claimants(ms, meta, p) = {} \/ m \in Claimants(ms, meta, p))}
=============================================================================
