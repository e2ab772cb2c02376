//! The git boundary's decision (sans-IO): given the references as they were when the two sides
//! last agreed (the base), as the host has them and as the sandbox has them, what moves where.
//!
//! Three-way, per reference and for `HEAD`:
//! - both sides equal: nothing moves; that value is the new base;
//! - only the sandbox moved (the host still has the base): the host follows — a branch
//!   updated (fast-forward or not, the old value stays in the host's reflog), created, or
//!   deleted (its last value kept under `refs/lazaret/agent/<time>/…`);
//! - only the host moved: the sandbox follows;
//! - both moved to different values: a descendant wins over its ancestor; otherwise the host
//!   keeps its value, the sandbox gets it too, and the agent's value is kept on the host under
//!   `refs/lazaret/agent/<time>/…` — nobody's commits are lost and the developer is told.
//!
//! `refs/remotes/` moves from the host to the sandbox only (the sandbox's own remote-tracking
//! references are never trusted). The branch `HEAD` points to on the host after the round is
//! never deleted there. Applying a plan partly (a kill, a concurrent change that makes a
//! compare-and-swap fail) is safe: the next round sees the two sides equal where it succeeded.

use super::refs::{Head, Oid, Refs};
use std::collections::BTreeSet;

/// One reference change on one side: set `name` to `new` (`None`: delete) if it still is `old`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Update {
    pub name: String,
    pub new: Option<Oid>,
    pub old: Option<Oid>,
}

/// What the developer is told of a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Report {
    /// The agent moved `branch` (or a tag) and the host followed.
    AgentMoved {
        name: String,
        from: Option<Oid>,
        to: Oid,
    },
    /// The agent deleted `name`; the host deleted it too, its value kept as `kept`.
    AgentDeleted { name: String, kept: String },
    /// The agent and the developer both moved `name`; the host kept its own value, the agent's
    /// is `kept`.
    Diverged { name: String, kept: String },
    /// The agent tried to delete the branch the host has checked out: refused.
    KeptCheckedOut { name: String },
    /// The host's `HEAD` followed the agent's.
    HostHeadFollowed { to: Head },
}

/// What one round does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub host: Vec<Update>,
    pub sandbox: Vec<Update>,
    /// New `HEAD` of each side, when it changes.
    pub host_head: Option<Head>,
    pub sandbox_head: Option<Head>,
    /// The commits each side's `HEAD` resolves to before and after, when they differ: that
    /// side's index follows (`git read-tree -m -i BEFORE AFTER`).
    pub host_index: Option<(Option<Oid>, Oid)>,
    pub sandbox_index: Option<(Option<Oid>, Oid)>,
    pub reports: Vec<Report>,
    /// The base once the plan is applied.
    pub base: Refs,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.host.is_empty()
            && self.sandbox.is_empty()
            && self.host_head.is_none()
            && self.sandbox_head.is_none()
    }
}

/// The sandbox objects a round may need, before ancestry can be asked: every sandbox value
/// that differs from the host's.
pub fn wanted(host: &Refs, sandbox: &Refs) -> BTreeSet<Oid> {
    let mut out: BTreeSet<Oid> = sandbox
        .refs
        .iter()
        .filter(|(n, o)| !n.starts_with("refs/remotes/") && host.refs.get(*n) != Some(*o))
        .map(|(_, o)| o.clone())
        .collect();
    if let Some(Head::Detached(o)) = &sandbox.head {
        if host.head_commit() != Some(o) {
            out.insert(o.clone());
        }
    }
    out
}

/// Decides a round. `is_ancestor(a, b)`: whether commit `a` is an ancestor of (or equal to)
/// `b`, asked of the host after it fetched [`wanted`] (every sandbox value the plan may store
/// on the host is among them). `stamp`: what distinguishes this round's
/// kept references (the time).
pub fn plan(
    base: &Refs,
    host: &Refs,
    sandbox: &Refs,
    is_ancestor: &dyn Fn(&Oid, &Oid) -> bool,
    stamp: &str,
) -> Plan {
    let mut p = Plan::default();
    // HEAD first: which branch the host has checked out after the round decides what may be
    // deleted there.
    let head = decide_head(&base.head, &host.head, &sandbox.head);
    if head != host.head {
        if let Some(h) = &head {
            p.host_head = Some(h.clone());
            p.reports.push(Report::HostHeadFollowed { to: h.clone() });
        }
    }
    if head != sandbox.head {
        p.sandbox_head = head.clone();
    }
    let checked_out = match &head {
        Some(Head::Branch(b)) => Some(b.as_str()),
        _ => None,
    };
    let names: BTreeSet<&String> = base
        .refs
        .keys()
        .chain(host.refs.keys())
        .chain(sandbox.refs.keys())
        .collect();
    let kept = |name: &str| format!("refs/lazaret/agent/{stamp}/{}", &name["refs/".len()..]);
    // The host's new reference keeping `oid` of `name` for the developer.
    let keep = |name: &str, oid: &Oid| Update {
        name: kept(name),
        new: Some(oid.clone()),
        old: None,
    };
    for name in names {
        let (b, h, s) = (
            base.refs.get(name),
            host.refs.get(name),
            sandbox.refs.get(name),
        );
        let remote = name.starts_with("refs/remotes/");
        // Equal, or only the host moved (remote-tracking: the host's always).
        let fin: Option<Oid> = if h == s || s == b || remote {
            h.cloned()
        } else if h == b {
            match s {
                Some(s) => {
                    p.reports.push(Report::AgentMoved {
                        name: name.clone(),
                        from: h.cloned(),
                        to: s.clone(),
                    });
                    Some(s.clone())
                }
                None if checked_out == Some(name.as_str()) => {
                    p.reports
                        .push(Report::KeptCheckedOut { name: name.clone() });
                    h.cloned()
                }
                None => {
                    if let Some(h) = h {
                        p.host.push(keep(name, h));
                    }
                    p.reports.push(Report::AgentDeleted {
                        name: name.clone(),
                        kept: kept(name),
                    });
                    None
                }
            }
        } else {
            // Both moved, differently.
            match (h, s) {
                (Some(h), Some(s)) if is_ancestor(h, s) => {
                    p.reports.push(Report::AgentMoved {
                        name: name.clone(),
                        from: Some(h.clone()),
                        to: s.clone(),
                    });
                    Some(s.clone())
                }
                (Some(h), Some(s)) if is_ancestor(s, h) => Some(h.clone()),
                (_, Some(s)) => {
                    p.host.push(keep(name, s));
                    p.reports.push(Report::Diverged {
                        name: name.clone(),
                        kept: kept(name),
                    });
                    h.cloned()
                }
                // The agent deleted what the developer moved: the developer's value stays.
                (h, None) => h.cloned(),
            }
        };
        if fin.as_ref() != h {
            p.host.push(Update {
                name: name.clone(),
                new: fin.clone(),
                old: h.cloned(),
            });
        }
        if fin.as_ref() != s {
            p.sandbox.push(Update {
                name: name.clone(),
                new: fin.clone(),
                old: s.cloned(),
            });
        }
        if let Some(f) = fin {
            p.base.refs.insert(name.clone(), f);
        }
    }
    p.base.head = head;
    // What each side's HEAD resolves to afterwards: its index follows when that changes.
    let after = p.base.head_commit().cloned();
    if let Some(a) = &after {
        if host.head_commit() != Some(a) {
            p.host_index = Some((host.head_commit().cloned(), a.clone()));
        }
        if sandbox.head_commit() != Some(a) {
            p.sandbox_index = Some((sandbox.head_commit().cloned(), a.clone()));
        }
    }
    p
}

/// `HEAD` after a round: a side that did not move follows the one that did; both moved: the
/// host's. A side that reports none (an unreadable `HEAD`) never decides.
fn decide_head(base: &Option<Head>, host: &Option<Head>, sandbox: &Option<Head>) -> Option<Head> {
    match (host, sandbox) {
        (None, s) => s.clone(),
        (h, None) => h.clone(),
        (h, s) if h == s => h.clone(),
        (h, s) if s == base => h.clone(),
        (h, s) if h == base => s.clone(),
        (h, _) => h.clone(),
    }
}

#[cfg(test)]
#[path = "reconcile_tests.rs"]
mod tests;
