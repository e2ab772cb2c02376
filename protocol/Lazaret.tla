------------------------------ MODULE Lazaret ------------------------------
(***************************************************************************)
(* Lazaret application protocol model for ONE Domain (spec §3.2, §3.6).    *)
(*                                                                         *)
(* The Session Coordinator owns the Domain's Agent Sandbox, Network        *)
(* Sidecar, State Anchor, Trust Anchor and active-session registry.        *)
(* Concurrent Client CLIs race to start the Domain: exactly one becomes    *)
(* the startup leader (it holds the lifecycle lock and spawns the          *)
(* coordinator); the others join.  Escalation requests from the sandbox    *)
(* are authenticated against a registered (Client CLI ID, Session ID,      *)
(* Session Anchor) binding, routed to the owning session, decided, run at  *)
(* most once and answered with an Escalation Result.                       *)
(*                                                                         *)
(* A Client CLI stands for its Client Session: the model binds Session ID  *)
(* and Session Anchor to the CLI at Register, so "cli[c] = registered" is  *)
(* the registration binding of FR-10.  A request that names a session     *)
(* whose binding is not current (or carries a forged signature) is        *)
(* rejected, never routed (SR-9).                                          *)
(*                                                                         *)
(* The Rust sans-IO core (src/coordinator/core.rs) names its events after  *)
(* the actions below and its state after these variables; recorded        *)
(* coordinator traces are replayed against it (trace conformance).         *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets, TLC

CONSTANTS
    CLI,        \* Client CLI IDs (one Client Session each)
    Req,        \* Escalation Request IDs
    NoCli,      \* "no session" (model value)
    NoReq       \* "the sandbox session owns the terminal" (model value)

ASSUME NoCli \notin CLI /\ NoReq \notin Req

(* Domain phases.  "draining" is teardown after the last leave, "failed"  *)
(* is recovery after a Domain failure; both stop the sandbox, then the    *)
(* sidecar, then unmount the State Anchor before the Domain is absent.    *)
Phases == {"absent", "starting", "ready", "draining", "failed"}

(* Client CLI states.  "idle": process not started yet.                  *)
CliStates == {"idle", "joining", "registered",
              "refused", "cancelled", "left", "disconnected"}
CliDone == {"refused", "cancelled", "left", "disconnected"}
(* CLIs that once held a Session Anchor: only they can sign a request.   *)
HadAnchor == {"registered", "left", "disconnected"}

(* Escalation request states. "none": Escalation Request ID unused.      *)
ReqStates == {"none", "submitted", "rejected", "accepted", "correlated",
              "prompting", "approved", "executing", "resolved",
              "delivered", "dropped"}
(* Accepted and not yet terminal: owes an Escalation Result (OR-2).      *)
Active == {"accepted", "correlated", "prompting", "approved", "executing",
           "resolved"}
Cancellable == {"accepted", "correlated", "prompting", "approved", "executing"}
Approvals == {"none", "developer", "edited", "rule"}
Outcomes == {"none", "completed", "denied", "timeout", "cancelled"}

ReqRecord == [state : ReqStates, owner : CLI \cup {NoCli}, forged : BOOLEAN,
              match : BOOLEAN, approval : Approvals, outcome : Outcomes,
              execs : 0..2, to : CLI \cup {NoCli}]
FreshReq == [state |-> "none", owner |-> NoCli, forged |-> FALSE,
             match |-> FALSE, approval |-> "none", outcome |-> "none",
             execs |-> 0, to |-> NoCli]

VARIABLES
    domain,     \* Domain phase
    leader,     \* leader[c]: c won the lifecycle lock and runs the coordinator
    anchor,     \* State Anchor mounted
    sidecar,    \* Network Sidecar running
    policy,     \* network policy installed in the sidecar (SR-5)
    sandbox,    \* Agent Sandbox running
    published,  \* coordinator endpoint published: CLIs can join
    trust,      \* Trust Anchor material valid
    cli,        \* Client CLI / Client Session state
    term,       \* term[c]: the prompt owning c's terminal, or NoReq
    req         \* req[r]: Escalation Request record

domainVars == <<domain, leader, anchor, sidecar, policy, sandbox, published, trust>>
vars == <<domain, leader, anchor, sidecar, policy, sandbox, published, trust,
          cli, term, req>>

TypeOK ==
    /\ domain \in Phases
    /\ leader \in [CLI -> BOOLEAN]
    /\ {anchor, sidecar, policy, sandbox, published, trust} \subseteq BOOLEAN
    /\ cli \in [CLI -> CliStates]
    /\ term \in [CLI -> Req \cup {NoReq}]
    /\ req \in [Req -> ReqRecord]

Init ==
    /\ domain = "absent"
    /\ leader = [c \in CLI |-> FALSE]
    /\ anchor = FALSE /\ sidecar = FALSE /\ policy = FALSE /\ sandbox = FALSE
    /\ published = FALSE /\ trust = FALSE
    /\ cli = [c \in CLI |-> "idle"]
    /\ term = [c \in CLI |-> NoReq]
    /\ req = [r \in Req |-> FreshReq]

Sessions == {c \in CLI : cli[c] = "registered"}
Joining == {c \in CLI : cli[c] = "joining"}

(* Requests of session c that are disconnected with it: every accepted   *)
(* one is dropped (its host process, if any, is terminated).             *)
DropOwnedBy(S) ==
    [r \in Req |-> IF req[r].state \in Active /\ req[r].owner \in S
                   THEN [req[r] EXCEPT !.state = "dropped"]
                   ELSE req[r]]
(* Unauthenticated requests left in the mailbox are rejected.            *)
RejectSubmitted(rq) ==
    [r \in Req |-> IF rq[r].state = "submitted"
                   THEN [rq[r] EXCEPT !.state = "rejected"]
                   ELSE rq[r]]

-----------------------------------------------------------------------------
(* Domain lifecycle (§3.2)                                                 *)

(* A CLI process starts and tries to join or start the Domain.           *)
Start(c) ==
    /\ cli[c] = "idle"
    /\ cli' = [cli EXCEPT ![c] = "joining"]
    /\ UNCHANGED <<domainVars, term, req>>

(* Exactly one joining CLI wins the lifecycle lock of an absent Domain,  *)
(* spawns the Session Coordinator and creates the Trust Anchor.          *)
BecomeLeader(c) ==
    /\ cli[c] = "joining"
    /\ domain = "absent"
    /\ domain' = "starting"
    /\ leader' = [leader EXCEPT ![c] = TRUE]
    /\ trust' = TRUE
    /\ UNCHANGED <<anchor, sidecar, policy, sandbox, published, cli, term, req>>

MountStateAnchor ==
    /\ domain = "starting" /\ ~anchor
    /\ anchor' = TRUE
    /\ UNCHANGED <<domain, leader, sidecar, policy, sandbox, published, trust,
                   cli, term, req>>

StartSidecar ==
    /\ domain = "starting" /\ anchor /\ ~sidecar
    /\ sidecar' = TRUE
    /\ UNCHANGED <<domain, leader, anchor, policy, sandbox, published, trust,
                   cli, term, req>>

InstallPolicy ==
    /\ domain = "starting" /\ sidecar /\ ~policy
    /\ policy' = TRUE
    /\ UNCHANGED <<domain, leader, anchor, sidecar, sandbox, published, trust,
                   cli, term, req>>

(* SR-5: the sandbox starts only once the sidecar's policy is in place.  *)
StartSandbox ==
    /\ domain = "starting" /\ anchor /\ sidecar /\ policy /\ ~sandbox
    /\ sandbox' = TRUE
    /\ UNCHANGED <<domain, leader, anchor, sidecar, policy, published, trust,
                   cli, term, req>>

(* The coordinator publishes its endpoint: the Domain is ready.          *)
Publish ==
    /\ domain = "starting" /\ sandbox
    /\ domain' = "ready"
    /\ published' = TRUE
    /\ UNCHANGED <<leader, anchor, sidecar, policy, sandbox, trust, cli, term, req>>

(* Registration binds Client CLI ID, Session ID and Session Anchor.      *)
Register(c) ==
    /\ cli[c] = "joining"
    /\ domain = "ready" /\ published /\ trust
    /\ cli' = [cli EXCEPT ![c] = "registered"]
    /\ UNCHANGED <<domainVars, term, req>>

(* The coordinator refuses a CLI and says why (e.g. a different          *)
(* Configuration Fingerprint, or an identity that does not authenticate). *)
Refuse(c) ==
    /\ cli[c] = "joining"
    /\ domain = "ready"
    /\ cli' = [cli EXCEPT ![c] = "refused"]
    /\ UNCHANGED <<domainVars, term, req>>

(* The developer cancels a CLI that is still waiting to join.            *)
CancelJoin(c) ==
    /\ cli[c] = "joining"
    /\ cli' = [cli EXCEPT ![c] = "cancelled"]
    /\ UNCHANGED <<domainVars, term, req>>

(* A session leaves (or its CLI dies): its requests are dropped, their   *)
(* host processes terminated, its terminal freed.                        *)
Leave(c) ==
    /\ cli[c] = "registered"
    /\ cli' = [cli EXCEPT ![c] = "left"]
    /\ term' = [term EXCEPT ![c] = NoReq]
    /\ req' = DropOwnedBy({c})
    /\ UNCHANGED domainVars

(* FR-6: no session remains and nobody waits to join: tear down.         *)
(* Publication is withdrawn first so that no CLI joins a dying Domain.   *)
BeginTeardown ==
    /\ domain = "ready"
    /\ Sessions = {} /\ Joining = {}
    /\ domain' = "draining"
    /\ published' = FALSE
    /\ trust' = FALSE
    /\ req' = RejectSubmitted(req)
    /\ UNCHANGED <<leader, anchor, sidecar, policy, sandbox, cli, term>>

(* A Domain failure (any component dies, startup or teardown fails):     *)
(* withdraw publication, invalidate trust material, disconnect sessions, *)
(* terminate host processes.  Resources are NOT assumed gone (FR-7).     *)
Fail ==
    /\ domain \in {"starting", "ready", "draining"}
    /\ domain' = "failed"
    /\ published' = FALSE
    /\ trust' = FALSE
    /\ cli' = [c \in CLI |-> CASE cli[c] = "registered" -> "disconnected"
                               [] cli[c] = "joining"    -> "refused"
                               [] OTHER                 -> cli[c]]
    /\ term' = [c \in CLI |-> NoReq]
    /\ req' = RejectSubmitted(DropOwnedBy(CLI))
    /\ UNCHANGED <<leader, anchor, sidecar, policy, sandbox>>

Stopping == domain \in {"draining", "failed"}

(* Teardown and recovery: sandbox, then sidecar, then State Anchor.      *)
StopSandbox ==
    /\ Stopping /\ sandbox
    /\ sandbox' = FALSE
    /\ UNCHANGED <<domain, leader, anchor, sidecar, policy, published, trust,
                   cli, term, req>>

StopSidecar ==
    /\ Stopping /\ ~sandbox /\ sidecar
    /\ sidecar' = FALSE
    /\ policy' = FALSE
    /\ UNCHANGED <<domain, leader, anchor, sandbox, published, trust,
                   cli, term, req>>

UnmountStateAnchor ==
    /\ Stopping /\ ~sandbox /\ ~sidecar /\ anchor
    /\ anchor' = FALSE
    /\ UNCHANGED <<domain, leader, sidecar, policy, sandbox, published, trust,
                   cli, term, req>>

(* The coordinator exits and releases the lifecycle lock: a new startup  *)
(* leader may come.                                                      *)
ReachAbsent ==
    /\ Stopping /\ ~sandbox /\ ~sidecar /\ ~anchor
    /\ domain' = "absent"
    /\ leader' = [c \in CLI |-> FALSE]
    /\ UNCHANGED <<anchor, sidecar, policy, sandbox, published, trust,
                   cli, term, req>>

-----------------------------------------------------------------------------
(* Host Escalation (§3.6)                                                  *)

(* A sandboxed process writes a request naming session c.  A genuine     *)
(* signature needs c's Session Anchor; the sandbox is untrusted, so it   *)
(* may also forge one.  m: the argv matches an auto-approval rule.       *)
Submit(r, c, forged, m) ==
    /\ domain = "ready" /\ sandbox
    /\ req[r].state = "none"
    /\ forged \/ cli[c] \in HadAnchor
    /\ req' = [req EXCEPT ![r] = [FreshReq EXCEPT !.state = "submitted",
                                  !.owner = c, !.forged = forged, !.match = m]]
    /\ UNCHANGED <<domainVars, cli, term>>

Authentic(r) ==
    /\ ~req[r].forged
    /\ cli[req[r].owner] = "registered"
    /\ trust /\ domain = "ready"

(* SR-9 / FR-10: Domain credentials and the current Session Anchor.      *)
Authenticate(r) ==
    /\ req[r].state = "submitted" /\ Authentic(r)
    /\ req' = [req EXCEPT ![r].state = "accepted"]
    /\ UNCHANGED <<domainVars, cli, term>>

Reject(r) ==
    /\ req[r].state = "submitted" /\ ~Authentic(r)
    /\ req' = [req EXCEPT ![r].state = "rejected"]
    /\ UNCHANGED <<domainVars, cli, term>>

(* FR-5: the Escalation Request ID is correlated to the owning session.  *)
Correlate(r) ==
    /\ req[r].state = "accepted"
    /\ req' = [req EXCEPT ![r].state = "correlated"]
    /\ UNCHANGED <<domainVars, cli, term>>

(* SR-7/SR-8: an exact match of a trusted auto-approval rule.            *)
AutoApprove(r) ==
    /\ req[r].state = "correlated" /\ req[r].match
    /\ req' = [req EXCEPT ![r].state = "approved", ![r].approval = "rule"]
    /\ UNCHANGED <<domainVars, cli, term>>

(* The owning CLI takes its terminal from the sandbox session to ask.    *)
Prompt(r) ==
    /\ req[r].state = "correlated" /\ ~req[r].match
    /\ term[req[r].owner] = NoReq
    /\ term' = [term EXCEPT ![req[r].owner] = r]
    /\ req' = [req EXCEPT ![r].state = "prompting"]
    /\ UNCHANGED <<domainVars, cli>>

(* A decision returns the terminal to the sandbox session.               *)
Decide(r, st, appr, out) ==
    /\ req[r].state = "prompting"
    /\ term' = [term EXCEPT ![req[r].owner] = NoReq]
    /\ req' = [req EXCEPT ![r].state = st, ![r].approval = appr,
                          ![r].outcome = out]
    /\ UNCHANGED <<domainVars, cli>>

Approve(r) == Decide(r, "approved", "developer", "none")
Edit(r)    == Decide(r, "approved", "edited", "none")
Deny(r)    == Decide(r, "resolved", "none", "denied")
Timeout(r) == Decide(r, "resolved", "none", "timeout")

(* The approved argv runs on the host, without a shell.                  *)
Execute(r) ==
    /\ req[r].state = "approved"
    /\ req' = [req EXCEPT ![r].state = "executing",
                          ![r].execs = req[r].execs + 1]
    /\ UNCHANGED <<domainVars, cli, term>>

Finish(r) ==
    /\ req[r].state = "executing"
    /\ req' = [req EXCEPT ![r].state = "resolved", ![r].outcome = "completed"]
    /\ UNCHANGED <<domainVars, cli, term>>

(* The Escalation Client or the developer cancels; a running host        *)
(* process is terminated (OR-3).  The cancellation is still reported.    *)
Cancel(r) ==
    /\ req[r].state \in Cancellable
    /\ term' = IF req[r].state = "prompting"
               THEN [term EXCEPT ![req[r].owner] = NoReq] ELSE term
    /\ req' = [req EXCEPT ![r].state = "resolved", ![r].outcome = "cancelled"]
    /\ UNCHANGED <<domainVars, cli>>

(* The Escalation Result goes to the owning session only (FR-5, OR-2).   *)
Deliver(r, c) ==
    /\ req[r].state = "resolved"
    /\ c = req[r].owner
    /\ cli[c] = "registered"
    /\ req' = [req EXCEPT ![r].state = "delivered", ![r].to = c]
    /\ UNCHANGED <<domainVars, cli, term>>

-----------------------------------------------------------------------------

(* Every CLI has finished and the Domain is absent: the run is over.     *)
Finished ==
    /\ domain = "absent"
    /\ \A c \in CLI : cli[c] \in CliDone
    /\ UNCHANGED vars

Next ==
    \/ \E c \in CLI : Start(c) \/ BecomeLeader(c) \/ Register(c) \/ Refuse(c)
                      \/ CancelJoin(c) \/ Leave(c)
    \/ MountStateAnchor \/ StartSidecar \/ InstallPolicy \/ StartSandbox
    \/ Publish \/ BeginTeardown \/ Fail
    \/ StopSandbox \/ StopSidecar \/ UnmountStateAnchor \/ ReachAbsent
    \/ \E r \in Req :
        \/ \E c \in CLI, f \in BOOLEAN, m \in BOOLEAN : Submit(r, c, f, m)
        \/ Authenticate(r) \/ Reject(r) \/ Correlate(r) \/ AutoApprove(r)
        \/ Prompt(r) \/ Approve(r) \/ Edit(r) \/ Deny(r) \/ Timeout(r)
        \/ Execute(r) \/ Finish(r) \/ Cancel(r)
        \/ \E c \in CLI : Deliver(r, c)
    \/ Finished

(* Weak fairness for everything the coordinator does by itself.  The     *)
(* developer (Start, CancelJoin, Leave, Approve, Edit, Deny, Cancel), the *)
(* sandbox (Submit) and failures (Fail, Refuse) are not fair.  Timeout is *)
(* the prompt deadline and Finish the host process ending or being       *)
(* killed at its deadline, so both are fair.                             *)
CoordinatorFairness ==
    /\ \A c \in CLI : WF_vars(BecomeLeader(c)) /\ WF_vars(Register(c))
    /\ WF_vars(MountStateAnchor) /\ WF_vars(StartSidecar)
    /\ WF_vars(InstallPolicy) /\ WF_vars(StartSandbox) /\ WF_vars(Publish)
    /\ WF_vars(BeginTeardown)
    /\ \A r \in Req :
        /\ WF_vars(Authenticate(r)) /\ WF_vars(Reject(r))
        /\ WF_vars(Correlate(r)) /\ WF_vars(AutoApprove(r))
        /\ WF_vars(Prompt(r)) /\ WF_vars(Timeout(r))
        /\ WF_vars(Execute(r)) /\ WF_vars(Finish(r))
        /\ WF_vars(\E c \in CLI : Deliver(r, c))

RecoveryFairness ==
    /\ WF_vars(StopSandbox) /\ WF_vars(StopSidecar)
    /\ WF_vars(UnmountStateAnchor) /\ WF_vars(ReachAbsent)

Spec == Init /\ [][Next]_vars /\ CoordinatorFairness /\ RecoveryFairness

-----------------------------------------------------------------------------
(* Safety invariants                                                       *)

(* OR-1: at most one coordinator (startup leader) per Domain, and one    *)
(* exactly while the Domain is not absent.                               *)
AtMostOneLeader == Cardinality({c \in CLI : leader[c]}) <= 1
LeaderWhileActive == (domain = "absent") <=> (\A c \in CLI : ~leader[c])

(* SR-5: sandbox up => sidecar up with policy, State Anchor mounted.     *)
SandboxNeedsSidecar == sandbox => (sidecar /\ policy /\ anchor)
PolicyNeedsSidecar == policy => sidecar

(* Absent => nothing running, mounted, published, trusted or executing.  *)
AbsentIsClean ==
    domain = "absent" =>
        /\ ~sandbox /\ ~sidecar /\ ~policy /\ ~anchor
        /\ ~published /\ ~trust
        /\ Sessions = {}
        /\ \A r \in Req : req[r].state \notin Active \cup {"submitted"}

(* Sessions exist only in a ready, published, trusted Domain.            *)
SessionsOnlyWhenReady ==
    Sessions # {} => (domain = "ready" /\ published /\ trust /\ sandbox)

(* SR-7: nothing executes without developer approval or an exact rule    *)
(* match, and never for an unauthenticated request.                      *)
ExecutesOnlyApproved ==
    \A r \in Req : req[r].execs > 0 =>
        /\ ~req[r].forged
        /\ \/ req[r].approval \in {"developer", "edited"}
           \/ req[r].approval = "rule" /\ req[r].match

ExecutesAtMostOnce == \A r \in Req : req[r].execs <= 1

(* Host processes run only for a live session in a ready Domain.         *)
HostProcessesBound ==
    \A r \in Req : req[r].state = "executing" =>
        domain = "ready" /\ cli[req[r].owner] = "registered"

(* FR-10: every accepted request stays bound to its registered session.  *)
BindingPreserved ==
    \A r \in Req : req[r].state \in Active =>
        ~req[r].forged /\ cli[req[r].owner] = "registered"

(* FR-5: results go only to the owning session.                          *)
ResultsToOwner ==
    \A r \in Req :
        /\ req[r].to \in {NoCli, req[r].owner}
        /\ req[r].state = "delivered" => req[r].to = req[r].owner

(* A terminal is owned by at most one prompt, of its own session.        *)
TerminalSingleOwner ==
    /\ \A c \in CLI : term[c] # NoReq =>
          req[term[c]].state = "prompting" /\ req[term[c]].owner = c
    /\ \A r \in Req : req[r].state = "prompting" => term[req[r].owner] = r

Safety ==
    /\ TypeOK /\ AtMostOneLeader /\ LeaderWhileActive
    /\ SandboxNeedsSidecar /\ PolicyNeedsSidecar /\ AbsentIsClean
    /\ SessionsOnlyWhenReady /\ ExecutesOnlyApproved /\ ExecutesAtMostOnce
    /\ HostProcessesBound /\ BindingPreserved /\ ResultsToOwner
    /\ TerminalSingleOwner

-----------------------------------------------------------------------------
(* Liveness under weak fairness                                            *)

(* Every CLI is eventually registered or told why not.                   *)
CliAnswered ==
    \A c \in CLI : cli[c] = "joining" ~> cli[c] \in {"registered", "refused", "cancelled"}

(* FR-6: the last leave leads to absent, unless a new CLI joins.         *)
LastLeaveLeadsToAbsent ==
    (domain = "ready" /\ Sessions = {} /\ Joining = {})
        ~> (domain = "absent" \/ Joining # {})

TeardownCompletes == domain = "draining" ~> domain = "absent"

(* FR-7: recovery leads to absent.                                       *)
RecoveryCompletes == domain = "failed" ~> domain = "absent"

(* OR-2: every accepted request reaches a delivered Escalation Result or *)
(* its session disconnects.                                              *)
RequestsResolve ==
    \A r \in Req : req[r].state = "accepted" ~> req[r].state \in {"delivered", "dropped"}

(* §3.6: the terminal returns to the sandbox session.                    *)
TerminalReturns == \A c \in CLI : term[c] # NoReq ~> term[c] = NoReq

(* Symmetry of CLIs and requests: for the safety-only configuration.     *)
Symmetry == Permutations(CLI) \cup Permutations(Req)
=============================================================================
