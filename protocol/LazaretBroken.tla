--------------------------- MODULE LazaretBroken ---------------------------
(***************************************************************************)
(* Deliberately broken variants of Lazaret.tla.  scripts/check-tla expects *)
(* TLC to REJECT each of them, so the checks of the real model cannot pass *)
(* vacuously.  Each variant adds one action with a single guard dropped    *)
(* (which is the same as dropping the guard) or removes some fairness.     *)
(***************************************************************************)
EXTENDS Lazaret

(* Guard dropped: the Agent Sandbox starts once the Network Sidecar runs, *)
(* before its policy is installed (violates SR-5).                       *)
StartSandboxBeforePolicy ==
    /\ domain = "starting" /\ anchor /\ sidecar /\ ~sandbox
    /\ sandbox' = TRUE
    /\ UNCHANGED <<domain, leader, anchor, sidecar, policy, published, trust,
                   cli, term, req>>

BrokenPolicySpec ==
    Init /\ [][Next \/ StartSandboxBeforePolicy]_vars

(* Guard dropped: a CLI that saw the Domain absent becomes leader        *)
(* although another CLI already holds the lifecycle lock (check, then    *)
(* act without the lock): two coordinators (violates OR-1).              *)
BecomeLeaderUnlocked(c) ==
    /\ cli[c] = "joining"
    /\ domain = "starting"
    /\ leader' = [leader EXCEPT ![c] = TRUE]
    /\ UNCHANGED <<domain, anchor, sidecar, policy, sandbox, published, trust,
                   cli, term, req>>

BrokenLeaderSpec ==
    Init /\ [][Next \/ \E c \in CLI : BecomeLeaderUnlocked(c)]_vars

(* Fairness dropped: the coordinator need not stop the sidecar during    *)
(* recovery, so a failed Domain may never become absent.                 *)
BrokenLivenessSpec ==
    /\ Init /\ [][Next]_vars /\ CoordinatorFairness
    /\ WF_vars(StopSandbox) /\ WF_vars(UnmountStateAnchor) /\ WF_vars(ReachAbsent)
=============================================================================
