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
                   cli, term, req, view, exitVars>>

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
                   cli, term, req, view, exitVars>>

BrokenLeaderSpec ==
    Init /\ [][Next \/ \E c \in CLI : BecomeLeaderUnlocked(c)]_vars

(* Guard dropped: a decision is taken although the request was already  *)
(* decided (first decision does not win): a second viewer's Deny         *)
(* overrides an approval not yet executed (violates DecidedOnce).        *)
DenyAfterDecision(r, d) ==
    /\ req[r].state = "approved" /\ req[r].by \in Deciders
    /\ d # req[r].by /\ Sees(d, r)
    /\ req' = [req EXCEPT ![r].state = "resolved", ![r].approval = "none",
                          ![r].outcome = "denied", ![r].by = d,
                          ![r].decisions = @ + 1, ![r].seen = TRUE]
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

BrokenDecisionSpec ==
    Init /\ [][Next \/ \E r \in Req, d \in Deciders : DenyAfterDecision(r, d)]_vars

(* Guard dropped: any viewer may decide a prompt, also one attached to   *)
(* another session or to none (violates DecidedBySeer, FR-5).            *)
ApproveUnseen(r, v) ==
    /\ req[r].state = "prompting"
    /\ term' = [term EXCEPT ![req[r].owner] = NoReq]
    /\ req' = [req EXCEPT ![r].state = "approved", ![r].approval = "developer",
                          ![r].by = v, ![r].decisions = @ + 1,
                          ![r].seen = Sees(v, r)]
    /\ UNCHANGED <<domainVars, cli, view, exitVars>>

BrokenSeerSpec ==
    Init /\ [][Next \/ \E r \in Req, v \in Viewer : ApproveUnseen(r, v)]_vars

(* Guard dropped: the last CLI's process returns as soon as its session  *)
(* left, although the coordinator told it the Domain is being torn down, *)
(* while the Agent Sandbox still runs: its Git Sentry end-of-run check   *)
(* races the sandbox (violates ReturnedAfterSandbox, issue #18).         *)
ReturnUnwaited(c) ==
    /\ c \notin returned
    /\ cli[c] = "left"
    /\ returned' = returned \cup {c}
    /\ UNCHANGED <<domainVars, cli, term, req, view, lastOut>>

BrokenReturnSpec ==
    Init /\ [][Next \/ \E c \in CLI : ReturnUnwaited(c)]_vars

(* Fairness dropped: the coordinator need not stop the sidecar during    *)
(* recovery, so a failed Domain may never become absent.                 *)
BrokenLivenessSpec ==
    /\ Init /\ [][Next]_vars /\ CoordinatorFairness
    /\ WF_vars(StopSandbox) /\ WF_vars(UnmountStateAnchor) /\ WF_vars(ReachAbsent)
=============================================================================
