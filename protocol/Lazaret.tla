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
(* Sessions are owned by the coordinator (issue #14).  A session keeps   *)
(* running with no client attached ("detached") and ends only by Leave   *)
(* (its process exits, or a client ends it).  Viewers are the clients    *)
(* that attach to a session (a TUI pane, `lazaret attach`), detach and   *)
(* re-attach; a control centre (a `lazaret tui` watching the Domain)     *)
(* sees every session's escalation prompts.  A prompt no longer needs a  *)
(* terminal: it waits, offered to every viewer that sees it and to the   *)
(* session's own terminal (a direct `lazaret run`), until one of them    *)
(* decides or it times out.  The first decision wins; who decided is     *)
(* recorded (FR-5).                                                      *)
(*                                                                         *)
(* Teardown off the user's path (issue #18).  A Client CLI's process       *)
(* returns to the developer's shell (Return) after its session left; the   *)
(* last one, told that its leave tore the Domain down, only once the       *)
(* Agent Sandbox is stopped (its Git Sentry end-of-run check must not      *)
(* race a running sandbox), not once the Domain is absent: the sidecar     *)
(* and the State Anchor go after it returned.  Linger (a profile's         *)
(* `linger`) is the stuttering between the last Leave and BeginTeardown.   *)
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
    NoReq,      \* "the session shows no prompt" (model value)
    Viewer,     \* client connections that attach to sessions (TUI panes, `lazaret attach`)
    Centre,     \* view[v] = Centre: v is a control centre, sees every session's prompts
    Own,        \* decider: the session's own terminal (a direct `lazaret run`)
    NoViewer,   \* decider: nobody (not decided, or timed out)
    LastCliWaits \* issue #18: the last session's CLI may wait for StopSandbox (see Leave)

ASSUME NoCli \notin CLI /\ NoReq \notin Req
ASSUME {Centre, Own, NoViewer} \cap (Viewer \cup CLI) = {}
ASSUME LastCliWaits \in BOOLEAN

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
(* Who may decide a prompt: a viewer, or the session's own terminal.     *)
Deciders == Viewer \cup {Own}

ReqRecord == [state : ReqStates, owner : CLI \cup {NoCli}, forged : BOOLEAN,
              match : BOOLEAN, approval : Approvals, outcome : Outcomes,
              execs : 0..2, to : CLI \cup {NoCli},
              by : Deciders \cup {NoViewer}, decisions : 0..2, seen : BOOLEAN]
(* by: who decided the prompt (FR-5); decisions: how many decisions took *)
(* effect (Timeout included; must stay <= 1); seen: history, the decider *)
(* could see the prompt when it decided.                                 *)
FreshReq == [state |-> "none", owner |-> NoCli, forged |-> FALSE,
             match |-> FALSE, approval |-> "none", outcome |-> "none",
             execs |-> 0, to |-> NoCli,
             by |-> NoViewer, decisions |-> 0, seen |-> FALSE]

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
    term,       \* term[c]: the prompt session c shows (to its own terminal, if any,
                \* and its viewers), or NoReq: one prompt per session at a time
    req,        \* req[r]: Escalation Request record
    view,       \* view[v]: the session viewer v is attached to, Centre, or NoCli
    returned,   \* the Client CLIs whose process has returned to the developer's shell
    lastOut     \* {c}: c's Leave emptied the Domain (no session left).  If c has not
                \* returned by BeginTeardown, it was told `domain_stopping` and stays
                \* lastOut (history) until ReachAbsent; a Register or Fail of the
                \* lingering Domain ends it too.  {} otherwise.

domainVars == <<domain, leader, anchor, sidecar, policy, sandbox, published, trust>>
exitVars == <<returned, lastOut>>
vars == <<domain, leader, anchor, sidecar, policy, sandbox, published, trust,
          cli, term, req, view, returned, lastOut>>
(* The variables the Rust core (src/coordinator/state.rs) mirrors: all   *)
(* but exitVars (the CLI's process, and history). Return changes only    *)
(* exitVars and exitVars guard no other action, so with VIEW CoreView    *)
(* TLC counts the core's distinct states, also with LastCliWaits = TRUE. *)
CoreView == <<domain, leader, anchor, sidecar, policy, sandbox, published, trust,
              cli, term, req, view>>

TypeOK ==
    /\ domain \in Phases
    /\ leader \in [CLI -> BOOLEAN]
    /\ {anchor, sidecar, policy, sandbox, published, trust} \subseteq BOOLEAN
    /\ cli \in [CLI -> CliStates]
    /\ term \in [CLI -> Req \cup {NoReq}]
    /\ req \in [Req -> ReqRecord]
    /\ view \in [Viewer -> CLI \cup {NoCli, Centre}]
    /\ returned \subseteq CLI
    /\ lastOut \subseteq CLI /\ Cardinality(lastOut) <= 1

Init ==
    /\ domain = "absent"
    /\ leader = [c \in CLI |-> FALSE]
    /\ anchor = FALSE /\ sidecar = FALSE /\ policy = FALSE /\ sandbox = FALSE
    /\ published = FALSE /\ trust = FALSE
    /\ cli = [c \in CLI |-> "idle"]
    /\ term = [c \in CLI |-> NoReq]
    /\ req = [r \in Req |-> FreshReq]
    /\ view = [v \in Viewer |-> NoCli]
    /\ returned = {}
    /\ lastOut = {}

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
    /\ UNCHANGED <<domainVars, term, req, view, exitVars>>

(* Exactly one joining CLI wins the lifecycle lock of an absent Domain,  *)
(* spawns the Session Coordinator and creates the Trust Anchor.          *)
BecomeLeader(c) ==
    /\ cli[c] = "joining"
    /\ domain = "absent"
    /\ domain' = "starting"
    /\ leader' = [leader EXCEPT ![c] = TRUE]
    /\ trust' = TRUE
    /\ UNCHANGED <<anchor, sidecar, policy, sandbox, published, cli, term, req, view,
                   exitVars>>

MountStateAnchor ==
    /\ domain = "starting" /\ ~anchor
    /\ anchor' = TRUE
    /\ UNCHANGED <<domain, leader, sidecar, policy, sandbox, published, trust,
                   cli, term, req, view, exitVars>>

StartSidecar ==
    /\ domain = "starting" /\ anchor /\ ~sidecar
    /\ sidecar' = TRUE
    /\ UNCHANGED <<domain, leader, anchor, policy, sandbox, published, trust,
                   cli, term, req, view, exitVars>>

InstallPolicy ==
    /\ domain = "starting" /\ sidecar /\ ~policy
    /\ policy' = TRUE
    /\ UNCHANGED <<domain, leader, anchor, sidecar, sandbox, published, trust,
                   cli, term, req, view, exitVars>>

(* SR-5: the sandbox starts only once the sidecar's policy is in place.  *)
StartSandbox ==
    /\ domain = "starting" /\ anchor /\ sidecar /\ policy /\ ~sandbox
    /\ sandbox' = TRUE
    /\ UNCHANGED <<domain, leader, anchor, sidecar, policy, published, trust,
                   cli, term, req, view, exitVars>>

(* The coordinator publishes its endpoint: the Domain is ready.          *)
Publish ==
    /\ domain = "starting" /\ sandbox
    /\ domain' = "ready"
    /\ published' = TRUE
    /\ UNCHANGED <<leader, anchor, sidecar, policy, sandbox, trust, cli, term, req, view,
                   exitVars>>

(* Registration binds Client CLI ID, Session ID and Session Anchor.      *)
(* Issue #18: c may join a lingering Domain (no session, lastOut # {}).  *)
(* The lingering Domain's last CLI was then answered "not stopping" and  *)
(* returns at once: it returns (at the latest) in this step and is no    *)
(* longer lastOut.                                                       *)
Register(c) ==
    /\ cli[c] = "joining"
    /\ domain = "ready" /\ published /\ trust
    /\ cli' = [cli EXCEPT ![c] = "registered"]
    /\ returned' = returned \cup lastOut
    /\ lastOut' = {}
    /\ UNCHANGED <<domainVars, term, req, view>>

(* The coordinator refuses a CLI and says why (e.g. a different          *)
(* Configuration Fingerprint, or an identity that does not authenticate). *)
(* Its process returns at once (issue #18: Return is part of the step).  *)
Refuse(c) ==
    /\ cli[c] = "joining"
    /\ domain = "ready"
    /\ cli' = [cli EXCEPT ![c] = "refused"]
    /\ returned' = returned \cup {c}
    /\ UNCHANGED <<domainVars, term, req, view, lastOut>>

(* The developer cancels a CLI that is still waiting to join; its        *)
(* process returns at once.                                              *)
CancelJoin(c) ==
    /\ cli[c] = "joining"
    /\ cli' = [cli EXCEPT ![c] = "cancelled"]
    /\ returned' = returned \cup {c}
    /\ UNCHANGED <<domainVars, term, req, view, lastOut>>

(* A session ends (its process exits, or a client ends it): its requests *)
(* are dropped, their host processes terminated, its prompt withdrawn,   *)
(* and every viewer attached to it is detached.  Detaching never ends a  *)
(* session: only Leave (or Fail) ends a registered session.              *)
(* Issue #18: if other sessions remain, the CLI is answered "not         *)
(* stopping" and its process returns at once (after its Git Sentry       *)
(* end-of-run check, which races the sandbox the others still use, as    *)
(* before). The last session's CLI becomes lastOut and returns later     *)
(* (Return).                                                             *)
(*                                                                       *)
(* With LastCliWaits = FALSE the last one too returns with its Leave (as *)
(* under linger, "not stopping"): lastOut stays {}, returned is the set  *)
(* of finished CLIs, and the configurations about requests and viewers   *)
(* check every other property on exactly the states (and at the cost) of *)
(* the model before issue #18: exitVars guard no other action.           *)
Leave(c) ==
    /\ cli[c] = "registered"
    /\ cli' = [cli EXCEPT ![c] = "left"]
    /\ term' = [term EXCEPT ![c] = NoReq]
    /\ req' = DropOwnedBy({c})
    /\ view' = [v \in Viewer |-> IF view[v] = c THEN NoCli ELSE view[v]]
    /\ IF LastCliWaits /\ Sessions = {c}
       THEN lastOut' = {c} /\ returned' = returned
       ELSE lastOut' = {} /\ returned' = returned \cup {c}
    /\ UNCHANGED domainVars

(* FR-6: no session remains and nobody waits to join: tear down.  A      *)
(* detached session is a session: it keeps the Domain.  Control centres  *)
(* do not; they are disconnected.  Publication is withdrawn first so     *)
(* that no CLI joins a dying Domain.                                     *)
(*                                                                       *)
(* Linger (issue #18, a profile's `linger = "30s"`) is the stuttering    *)
(* between the last Leave and BeginTeardown: the Domain stays "ready"    *)
(* and published, so a CLI that starts meanwhile registers in the        *)
(* running Domain (Register needs only "ready"; Sessions = {} is         *)
(* allowed), and BeginTeardown, weakly fair, still comes once the linger *)
(* is over and nobody joined (LastLeaveLeadsToAbsent). Without linger    *)
(* the coordinator takes BeginTeardown at once after the last Leave and  *)
(* answers `left` with `domain_stopping`: that last CLI is the one still *)
(* in lastOut here, not returned; it returns only after StopSandbox and  *)
(* runs the Git Sentry's end-of-run check itself. Under linger the last  *)
(* CLI was answered "not stopping" and returned while the Domain was     *)
(* "ready" (Return), so lastOut is {} here; the coordinator then runs    *)
(* the end-of-run check itself after StopSandbox (not modelled: a check  *)
(* of the workspace that changes no state of the protocol).              *)
BeginTeardown ==
    /\ domain = "ready"
    /\ Sessions = {} /\ Joining = {}
    /\ domain' = "draining"
    /\ published' = FALSE
    /\ trust' = FALSE
    /\ req' = RejectSubmitted(req)
    /\ view' = [v \in Viewer |-> NoCli]
    /\ lastOut' = lastOut \ returned
    /\ UNCHANGED <<leader, anchor, sidecar, policy, sandbox, cli, term, returned>>

(* A Domain failure (any component dies, startup or teardown fails):     *)
(* withdraw publication, invalidate trust material, disconnect sessions, *)
(* terminate host processes.  Resources are NOT assumed gone (FR-7).     *)
(* Issue #18: the disconnected and refused CLIs' processes return at     *)
(* once, as before.  A CLI that left last before the failure of a        *)
(* "ready" Domain was told "not stopping" (linger): it returns at once   *)
(* too and is no longer lastOut.  One that waits for the sandbox of a    *)
(* draining Domain keeps waiting, for recovery's StopSandbox.            *)
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
    /\ view' = [v \in Viewer |-> NoCli]
    /\ returned' = returned \cup {c \in CLI : cli[c] \in {"registered", "joining"}}
                           \cup (IF domain = "ready" THEN lastOut ELSE {})
    /\ lastOut' = IF domain = "ready" THEN {} ELSE lastOut
    /\ UNCHANGED <<leader, anchor, sidecar, policy, sandbox>>

Stopping == domain \in {"draining", "failed"}

(* Teardown and recovery: sandbox, then sidecar, then State Anchor.      *)
StopSandbox ==
    /\ Stopping /\ sandbox
    /\ sandbox' = FALSE
    /\ UNCHANGED <<domain, leader, anchor, sidecar, policy, published, trust,
                   cli, term, req, view, exitVars>>

StopSidecar ==
    /\ Stopping /\ ~sandbox /\ sidecar
    /\ sidecar' = FALSE
    /\ policy' = FALSE
    /\ UNCHANGED <<domain, leader, anchor, sandbox, published, trust,
                   cli, term, req, view, exitVars>>

UnmountStateAnchor ==
    /\ Stopping /\ ~sandbox /\ ~sidecar /\ anchor
    /\ anchor' = FALSE
    /\ UNCHANGED <<domain, leader, sidecar, policy, sandbox, published, trust,
                   cli, term, req, view, exitVars>>

(* The coordinator exits and releases the lifecycle lock: a new startup  *)
(* leader may come.  A CLI that starts during the teardown waits in      *)
(* "joining" until then (BecomeLeader needs "absent", Register "ready"). *)
(* The run is over and lastOut is cleared; its CLI, if it has not        *)
(* returned yet (it may since StopSandbox), still returns (Return).      *)
ReachAbsent ==
    /\ Stopping /\ ~sandbox /\ ~sidecar /\ ~anchor
    /\ domain' = "absent"
    /\ leader' = [c \in CLI |-> FALSE]
    /\ lastOut' = {}
    /\ UNCHANGED <<anchor, sidecar, policy, sandbox, published, trust,
                   cli, term, req, view, returned>>

-----------------------------------------------------------------------------
(* The Client CLI's process returns (issue #18)                            *)

(* A CLI's process returns to the developer's shell after the Git        *)
(* Sentry's end-of-run check. A CLI that is refused, cancelled or        *)
(* disconnected, or whose session leaves while others remain, returns at *)
(* once, as before: in the step that ends it (Refuse, CancelJoin, Fail,  *)
(* Leave), so that the return multiplies no states. Return is the step   *)
(* of the last session's CLI (lastOut): at once while the Domain is      *)
(* still "ready" (linger: its `left` said "not stopping"); once          *)
(* BeginTeardown followed its Leave (it was told `domain_stopping`),     *)
(* only once the Agent Sandbox is stopped, but not only once the Domain  *)
(* is absent: StopSidecar, UnmountStateAnchor and ReachAbsent may come   *)
(* first or after (after ReachAbsent it is no longer lastOut). The       *)
(* coordinator never records Return (no event of the Rust core). A       *)
(* coordinator-owned session has no process of its own to return.        *)
Return(c) ==
    /\ cli[c] = "left" /\ c \notin returned
    /\ c \in lastOut => (domain = "ready" \/ ~sandbox)
    /\ returned' = returned \cup {c}
    /\ UNCHANGED <<domainVars, cli, term, req, view, lastOut>>

-----------------------------------------------------------------------------
(* Viewers: attach, detach, control centres (issue #14)                    *)

(* A detached viewer attaches to a registered session (and receives its  *)
(* screen and any pending prompt).  One session per viewer at a time; a  *)
(* TUI with several panes is several viewers.                            *)
Attach(v, c) ==
    /\ view[v] = NoCli
    /\ cli[c] = "registered"
    /\ view' = [view EXCEPT ![v] = c]
    /\ UNCHANGED <<domainVars, cli, term, req, exitVars>>

(* A detached viewer becomes a control centre of the ready Domain: it    *)
(* sees every session's prompts.                                         *)
Watch(v) ==
    /\ view[v] = NoCli
    /\ domain = "ready"
    /\ view' = [view EXCEPT ![v] = Centre]
    /\ UNCHANGED <<domainVars, cli, term, req, exitVars>>

(* The viewer detaches, or its connection or terminal is lost (SIGHUP).  *)
(* The session keeps running.                                            *)
Detach(v) ==
    /\ view[v] # NoCli
    /\ view' = [view EXCEPT ![v] = NoCli]
    /\ UNCHANGED <<domainVars, cli, term, req, exitVars>>

(* d sees the prompt of request r: a viewer attached to its session or a *)
(* control centre, or the session's own terminal while the session runs. *)
Sees(d, r) ==
    IF d = Own THEN cli[req[r].owner] = "registered"
               ELSE view[d] \in {req[r].owner, Centre}

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
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

Authentic(r) ==
    /\ ~req[r].forged
    /\ cli[req[r].owner] = "registered"
    /\ trust /\ domain = "ready"

(* SR-9 / FR-10: Domain credentials and the current Session Anchor.      *)
Authenticate(r) ==
    /\ req[r].state = "submitted" /\ Authentic(r)
    /\ req' = [req EXCEPT ![r].state = "accepted"]
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

Reject(r) ==
    /\ req[r].state = "submitted" /\ ~Authentic(r)
    /\ req' = [req EXCEPT ![r].state = "rejected"]
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

(* FR-5: the Escalation Request ID is correlated to the owning session.  *)
Correlate(r) ==
    /\ req[r].state = "accepted"
    /\ req' = [req EXCEPT ![r].state = "correlated"]
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

(* SR-7/SR-8: an exact match of a trusted auto-approval rule.            *)
AutoApprove(r) ==
    /\ req[r].state = "correlated" /\ req[r].match
    /\ req' = [req EXCEPT ![r].state = "approved", ![r].approval = "rule"]
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

(* The session shows the prompt: on its own terminal (taken from the     *)
(* sandbox session) if it has one, and to every viewer that sees it.  No *)
(* viewer is needed: a detached session's prompt waits (until Timeout).  *)
Prompt(r) ==
    /\ req[r].state = "correlated" /\ ~req[r].match
    /\ term[req[r].owner] = NoReq
    /\ term' = [term EXCEPT ![req[r].owner] = r]
    /\ req' = [req EXCEPT ![r].state = "prompting"]
    /\ UNCHANGED <<domainVars, cli, view, exitVars>>

(* A decision by d (NoViewer: the deadline) withdraws the prompt from    *)
(* everyone and returns the terminal to the sandbox session.  Only the   *)
(* first decision takes effect: afterwards the request is no longer      *)
(* prompting, so a later decision of another viewer is not enabled.      *)
Decide(r, d, st, appr, out) ==
    /\ req[r].state = "prompting"
    /\ IF d = NoViewer THEN TRUE ELSE Sees(d, r)
    /\ term' = [term EXCEPT ![req[r].owner] = NoReq]
    /\ req' = [req EXCEPT ![r].state = st, ![r].approval = appr,
                          ![r].outcome = out, ![r].by = d,
                          ![r].decisions = @ + 1,
                          ![r].seen = IF d = NoViewer THEN FALSE ELSE Sees(d, r)]
    /\ UNCHANGED <<domainVars, cli, view, exitVars>>

Approve(r, d) == Decide(r, d, "approved", "developer", "none")
Edit(r, d)    == Decide(r, d, "approved", "edited", "none")
Deny(r, d)    == Decide(r, d, "resolved", "none", "denied")
Timeout(r)    == Decide(r, NoViewer, "resolved", "none", "timeout")

(* The approved argv runs on the host, without a shell.                  *)
Execute(r) ==
    /\ req[r].state = "approved"
    /\ req' = [req EXCEPT ![r].state = "executing",
                          ![r].execs = req[r].execs + 1]
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

Finish(r) ==
    /\ req[r].state = "executing"
    /\ req' = [req EXCEPT ![r].state = "resolved", ![r].outcome = "completed"]
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

(* The Escalation Client or the developer cancels; a running host        *)
(* process is terminated (OR-3).  The cancellation is still reported.    *)
Cancel(r) ==
    /\ req[r].state \in Cancellable
    /\ term' = IF req[r].state = "prompting"
               THEN [term EXCEPT ![req[r].owner] = NoReq] ELSE term
    /\ req' = [req EXCEPT ![r].state = "resolved", ![r].outcome = "cancelled"]
    /\ UNCHANGED <<domainVars, cli, view, exitVars>>

(* The Escalation Result goes to the owning session only (FR-5, OR-2).   *)
Deliver(r, c) ==
    /\ req[r].state = "resolved"
    /\ c = req[r].owner
    /\ cli[c] = "registered"
    /\ req' = [req EXCEPT ![r].state = "delivered", ![r].to = c]
    /\ UNCHANGED <<domainVars, cli, term, view, exitVars>>

-----------------------------------------------------------------------------

(* Every CLI has finished and the Domain is absent: the run is over.     *)
Finished ==
    /\ domain = "absent"
    /\ \A c \in CLI : cli[c] \in CliDone
    /\ UNCHANGED vars

Next ==
    \/ \E c \in CLI : Start(c) \/ BecomeLeader(c) \/ Register(c) \/ Refuse(c)
                      \/ CancelJoin(c) \/ Leave(c) \/ Return(c)
    \/ \E v \in Viewer : (\E c \in CLI : Attach(v, c)) \/ Watch(v) \/ Detach(v)
    \/ MountStateAnchor \/ StartSidecar \/ InstallPolicy \/ StartSandbox
    \/ Publish \/ BeginTeardown \/ Fail
    \/ StopSandbox \/ StopSidecar \/ UnmountStateAnchor \/ ReachAbsent
    \/ \E r \in Req :
        \/ \E c \in CLI, f \in BOOLEAN, m \in BOOLEAN : Submit(r, c, f, m)
        \/ Authenticate(r) \/ Reject(r) \/ Correlate(r) \/ AutoApprove(r)
        \/ Prompt(r) \/ Timeout(r)
        \/ \E d \in Deciders : Approve(r, d) \/ Edit(r, d) \/ Deny(r, d)
        \/ Execute(r) \/ Finish(r) \/ Cancel(r)
        \/ \E c \in CLI : Deliver(r, c)
    \/ Finished

(* Weak fairness for everything the coordinator does by itself.  The     *)
(* developer (Start, CancelJoin, Leave, Approve, Edit, Deny, Cancel,     *)
(* Attach, Watch, Detach: no viewer ever needs to come), the             *)
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

(* A CLI's process returns once it may: its own step, not the            *)
(* developer's.                                                          *)
ReturnFairness == \A c \in CLI : WF_vars(Return(c))

Spec == Init /\ [][Next]_vars /\ CoordinatorFairness /\ RecoveryFairness
             /\ ReturnFairness

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

(* Viewers view only running sessions; control centres only a ready      *)
(* Domain.  (A session that ends detaches its viewers.)                  *)
ViewsOnlyLiveSessions ==
    \A v \in Viewer :
        /\ view[v] \in CLI => cli[view[v]] = "registered"
        /\ view[v] = Centre => domain = "ready"

(* FR-6: a detached session (no viewer attached) still keeps its Domain  *)
(* ready: detaching never tears the Domain down.                         *)
DetachedSessionsKeepDomain ==
    (\E c \in Sessions : \A v \in Viewer : view[v] # c)
        => (domain = "ready" /\ published /\ sandbox)

(* First decision wins: a prompt is decided at most once (a viewer, the  *)
(* session's own terminal or the deadline), and who decided stays.       *)
DecidedOnce ==
    \A r \in Req :
        /\ req[r].decisions <= 1
        /\ req[r].by # NoViewer => req[r].decisions = 1

(* The decider could see the prompt when it decided (history: seen).     *)
DecidedBySeer == \A r \in Req : req[r].by # NoViewer => req[r].seen

(* FR-5: every developer decision names who made it.                     *)
DecisionAttributed ==
    \A r \in Req :
        (req[r].approval \in {"developer", "edited"} \/ req[r].outcome = "denied")
            => req[r].by \in Deciders

(* Issue #18: the last CLI, told that the Domain is being torn down, has *)
(* not returned while the Domain's sandbox still runs (its Git Sentry    *)
(* end-of-run check never races the sandbox), also if the Domain fails   *)
(* during the teardown.                                                  *)
ReturnedAfterSandbox ==
    \A c \in lastOut : c \in returned => ~(Stopping /\ sandbox)

(* A CLI returns only once its session has ended or it was turned away;  *)
(* one that was turned away or disconnected returns at once.             *)
ReturnedOnlyWhenDone == \A c \in returned : cli[c] \in CliDone
ReturnedAtOnce ==
    \A c \in CLI : cli[c] \in {"refused", "cancelled", "disconnected"} => c \in returned

Safety ==
    /\ TypeOK /\ AtMostOneLeader /\ LeaderWhileActive
    /\ SandboxNeedsSidecar /\ PolicyNeedsSidecar /\ AbsentIsClean
    /\ SessionsOnlyWhenReady /\ ExecutesOnlyApproved /\ ExecutesAtMostOnce
    /\ HostProcessesBound /\ BindingPreserved /\ ResultsToOwner
    /\ TerminalSingleOwner /\ ViewsOnlyLiveSessions
    /\ DetachedSessionsKeepDomain /\ DecidedOnce /\ DecidedBySeer
    /\ DecisionAttributed /\ ReturnedAfterSandbox /\ ReturnedOnlyWhenDone
    /\ ReturnedAtOnce

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

(* A prompt is eventually decided, timed out, cancelled or dropped, even *)
(* if no viewer ever attaches (Timeout is fair; viewers are not).        *)
PromptsResolve ==
    \A r \in Req : req[r].state = "prompting" ~> req[r].state # "prompting"

(* Issue #18: every CLI's process returns once its session ended or it   *)
(* was turned away, the last one too (StopSandbox is fair).              *)
CliReturns == \A c \in CLI : cli[c] \in CliDone ~> c \in returned

(* Symmetry of CLIs, requests and viewers: for the safety-only          *)
(* configurations.                                                       *)
Symmetry == Permutations(CLI) \cup Permutations(Req) \cup Permutations(Viewer)
=============================================================================
