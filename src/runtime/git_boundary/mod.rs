//! The git boundary (issue #30; spec §3.3, SR-3, SR-4, SR-7, SR-8): the sandbox never writes
//! the host's git, and the host never reads git state the sandbox wrote.
//!
//! The sandbox's `/workspace/.git` is a **Domain-private git directory** in the Domain's
//! storage ([`mounts`]): its own configuration, hooks, index, references and sequencer state,
//! and the host repository's objects borrowed read-only. The worktree stays shared. A host-side
//! round ([`Boundary::round`]) carries references across as between two repositories that do not
//! trust each other:
//! - **sandbox → host**: the sandbox's references are listed by git *inside* the sandbox and
//!   parsed as hostile input ([`refs`]); the commits the host lacks are fetched by the host's
//!   `git fetch` from a `git upload-pack` that runs inside, over a pipe, and checked as from any
//!   remote (`transfer.fsckObjects`); then the host's branches, tags and `HEAD` follow, and its
//!   index follows `HEAD` ([`host_side`]);
//! - **host → sandbox**: the developer's references are written into the private directory by
//!   git inside the sandbox ([`sandbox_side`]); its objects are already there (alternates).
//!
//! What moves where is decided three-way against the base, the references as the two sides
//! last agreed ([`reconcile`]). No host process opens a file of the private directory: the host
//! only creates it empty and watches it with inotify (events, no reads) to start a round soon
//! after the agent commits ([`watch`]).

pub mod host_side;
pub mod mounts;
pub mod reconcile;
pub mod refs;
pub mod sandbox_side;
mod state;
mod tell;
pub mod watch;

pub use tell::{log_len, log_since};

use self::mounts::HostLayout;
use self::refs::{Head, Oid, Refs};
use self::sandbox_side::{sh, Entry, GIT};
use crate::domain::Domain;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// How long one command inside may take (a fetch of a large pack included).
const INSIDE_LIMIT: Duration = Duration::from_secs(120);
/// The file, in the Domain's runtime dir, where rounds append what they told.
pub const LOG: &str = "git-boundary.log";

/// Inside: every gitlink of the private index marked `skip-worktree`, so git there does not
/// look into a submodule whose git directory is the host's (not shown inside).
const SKIP_GITLINKS: &str = "git ls-files -z --format='%(objectmode) %(path)' | tr '\\0' '\\n' \
                             | sed -n 's/^160000 //p' | git update-index --skip-worktree --stdin";

/// `s` as the one escaping of sandbox text shows it ([`crate::terminal::escape`]), with every
/// non-ASCII character also written `\u{hex}`: safe on a terminal and free of look-alike
/// letters (branch names, remote URLs, paths the boundary reports).
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            crate::terminal::escape::push_visible(&mut out, c);
        } else {
            out.extend(c.escape_unicode());
        }
    }
    out
}

/// The boundary of one Domain.
#[derive(Clone, Debug)]
pub struct Boundary {
    pub layout: HostLayout,
    pub entry: Entry,
    /// The private directory's host path (looked at with `stat` only, never opened).
    private: PathBuf,
    state: PathBuf,
    log: PathBuf,
    /// The directories of the references the sandbox listed last (relative to its git
    /// directory, e.g. `refs/heads/feature`): what the watch adds.
    pub seen_dirs: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
    /// The sandbox's references not carried, as last told.
    dropped: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// Whether the last round moved anything (the watch slows down on rounds that do not).
    pub moved: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Boundary {
    /// The boundary of `domain`, when its workspace is a repository (else `None`).
    pub fn of(domain: &Domain) -> Option<Boundary> {
        let layout = HostLayout::discover(&domain.workspace.root).ok()??;
        Some(Boundary {
            layout,
            entry: Entry::of(domain),
            private: mounts::private_dir(domain),
            state: mounts::state_dir(domain),
            log: domain.runtime_dir.join(LOG),
            seen_dirs: Default::default(),
            dropped: Default::default(),
            moved: Default::default(),
        })
    }

    /// With another way into the sandbox (the coordinator knows its own).
    pub fn with_entry(mut self, entry: Entry) -> Boundary {
        self.entry = entry;
        self
    }

    /// Once the sandbox runs, before any session: makes the private directory a repository
    /// borrowing the host's objects, then brings it level with the host (a new one gets the
    /// host's index too, so the agent starts with what the developer staged).
    pub fn prepare(&self) -> Result<Vec<String>, String> {
        let host = &self.layout.repo;
        let local = |key: &str| {
            host.git()
                .args(["config", "--local", "--get", key])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                .unwrap_or_default()
        };
        let format = host
            .git()
            .args(["rev-parse", "--show-object-format"])
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|f| f == "sha256")
            .unwrap_or_else(|| "sha1".into());
        let script = format!(
            "set -e; D=\"$1\"; fresh=0; \
             if [ ! -f \"$D/HEAD\" ]; then GIT_DIR=\"$D\" git init -q --object-format=\"$2\"; \
             fresh=1; fi; rm -f \"$D/commondir\"; \
             C() {{ [ \"$({GIT} --git-dir=$D config --get \"$1\")\" = \"$2\" ] || \
               {GIT} --git-dir=$D config \"$1\" \"$2\"; }}; \
             C core.bare false; \
             mkdir -p \"$D/objects/info\"; echo {obj} > \"$D/objects/info/alternates\"; \
             C core.checkStat minimal; C core.trustctime false; \
             C core.logAllRefUpdates true; \
             if [ -n \"$3\" ]; then C user.name \"$3\"; fi; \
             if [ -n \"$4\" ]; then C user.email \"$4\"; fi; \
             if [ -n \"$5\" ]; then C diff.ignoreSubmodules all; fi; echo fresh=$fresh; \
             {listing}",
            obj = mounts::SANDBOX_OBJECTS,
            listing = sandbox_side::listing_script()
        );
        let mut argv = sh(&script);
        argv.extend([
            self.layout.sandbox_dir(),
            format,
            local("user.name"),
            local("user.email"),
            // The developer's submodules' git directories stay on the host: inside, their
            // working trees are plain directories and git does not look into them.
            if self.layout.common_dir.join("modules").is_dir() {
                "1".into()
            } else {
                String::new()
            },
        ]);
        let stamp = self.stamp();
        let out = self.entry.run(&argv, b"", INSIDE_LIMIT)?;
        let (first, listing) = match out.iter().position(|b| *b == b'\n') {
            Some(i) => (&out[..i], out[i + 1..].to_vec()),
            None => (&out[..], Vec::new()),
        };
        let fresh = first == b"fresh=1";
        let _lock = self.lock()?;
        if fresh {
            // A new private directory: whatever base an older one left means nothing now.
            self.save_base(&Refs::default())?;
        }
        let msgs = self.round_locked(Some(listing))?;
        self.save_stamp(&stamp);
        if !fresh {
            return Ok(msgs);
        }
        let index = host.index_bytes();
        let mut argv = sh(&format!(
            "set -e; if [ \"$2\" = copy ]; then cat > \"$1/index.lazaret\"; \
             mv -f \"$1/index.lazaret\" \"$1/index\"; fi; {SKIP_GITLINKS}"
        ));
        argv.push(self.layout.sandbox_dir());
        argv.push(if index.is_some() { "copy" } else { "keep" }.into());
        self.entry
            .run(&argv, index.as_deref().unwrap_or_default(), INSIDE_LIMIT)?;
        Ok(msgs)
    }

    /// One round (see the module doc), under the boundary's lock. Returns what the developer
    /// is told (also appended to the Domain's boundary log).
    pub fn round(&self) -> Result<Vec<String>, String> {
        let _lock = self.lock()?;
        let stamp = self.stamp();
        let msgs = self.round_locked(None)?;
        self.save_stamp(&stamp);
        Ok(msgs)
    }

    /// A round unless the private directory's top and reference directories are as the last
    /// round found them (their `stat`, not their contents): what a command that did no git
    /// work costs at its end is a few `stat`s, not an exec.
    pub fn round_if_changed(&self) -> Result<Vec<String>, String> {
        // Compared before the lock: a round in progress (the start's, the watch's) does not
        // make a command that did no git work wait. The saved stamp is taken before a round
        // lists the sandbox, so anything since its listing shows as a difference.
        if !self.changed_since_last_round() {
            return Ok(Vec::new());
        }
        let _lock = self.lock()?;
        let stamp = self.stamp();
        let msgs = self.round_locked(None)?;
        self.save_stamp(&stamp);
        Ok(msgs)
    }

    /// A round; `listing`: the sandbox's references when already listed.
    fn round_locked(&self, listing: Option<Vec<u8>>) -> Result<Vec<String>, String> {
        let host = &self.layout.repo;
        let mut base = self.load_base();
        let host_refs = host.refs()?;
        // An index that could not follow its HEAD in an earlier round follows now.
        if let Err(e) = self.follow_pending_index(&host_refs, &mut Vec::new()) {
            tracing::info!("git boundary: {e}");
        }
        let listing = match listing {
            Some(l) => l,
            None => self
                .entry
                .run(&sh(&sandbox_side::listing_script()), b"", INSIDE_LIMIT)?,
        };
        let mut sandbox = refs::parse_listing(&listing)
            .map_err(|e| format!("the sandbox's references were refused: {e}"))?;
        let mut msgs = Vec::new();
        if let Ok(mut last) = self.dropped.lock() {
            if *last != sandbox.dropped {
                if !sandbox.dropped.is_empty() {
                    msgs.push(format!(
                        "git boundary: the agent's references {} are not carried (not valid, \
                         printable-ASCII branch or tag names)",
                        sandbox.dropped.join(", ")
                    ));
                }
                last.clone_from(&sandbox.dropped);
            }
        }
        if let Ok(mut dirs) = self.seen_dirs.lock() {
            dirs.clear();
            dirs.extend(
                sandbox
                    .refs
                    .keys()
                    .chain(host_refs.refs.keys())
                    .filter_map(|n| n.rsplit_once('/').map(|(d, _)| d.to_owned()))
                    .take(watch::MAX_DIRS),
            );
        }
        if sandbox.refs.is_empty() && !base.refs.is_empty() {
            // The private directory lost every reference (removed, re-initialised): it is
            // brought level with the host, never the other way round.
            base = Refs::default();
        }
        let wanted: Vec<Oid> = reconcile::wanted(&host_refs, &sandbox)
            .into_iter()
            .collect();
        let missing = host.missing(&wanted.iter().collect::<Vec<_>>())?;
        if !missing.is_empty() {
            let (program, args) = self.entry.argv(&[
                "git".into(),
                "-c".into(),
                "uploadpack.allowAnySHA1InWant=true".into(),
                "upload-pack".into(),
                self.layout.sandbox_dir(),
            ]);
            if let Err(e) = host.fetch(&(program, args), &missing) {
                msgs.push(e);
            }
        }
        // A value the host could not get, or of the wrong kind, is not taken from the sandbox:
        // the sandbox gets the host's value back.
        let mut refused: Vec<reconcile::Update> = Vec::new();
        let names: Vec<String> = sandbox.refs.keys().cloned().collect();
        for name in names {
            let Some(oid) = sandbox.refs.get(&name).cloned() else {
                continue;
            };
            if host_refs.refs.get(&name) == Some(&oid) || name.starts_with("refs/remotes/") {
                continue;
            }
            let kind = host.kind(&oid);
            let fits = match kind.as_deref() {
                Some("commit") => true,
                Some("tag") => name.starts_with("refs/tags/"),
                _ => false,
            };
            if !fits {
                msgs.push(format!(
                    "git boundary: the agent's {name} ({}) was not taken: {}",
                    oid.short(),
                    kind.map_or("its objects could not be fetched".to_owned(), |k| {
                        format!("it names a {k}, not a commit")
                    })
                ));
                let back = host_refs.refs.get(&name).cloned();
                refused.push(reconcile::Update {
                    name: name.clone(),
                    new: back.clone(),
                    old: Some(oid.clone()),
                });
                match back {
                    Some(h) => sandbox.refs.insert(name, h),
                    None => sandbox.refs.remove(&name),
                };
            }
        }
        if let Some(Head::Detached(o)) = &sandbox.head {
            if host.kind(o).as_deref() != Some("commit") {
                sandbox.head = host_refs.head.clone();
            }
        }
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
            .to_string();
        let mut plan = reconcile::plan(
            &base,
            &host_refs,
            &sandbox,
            &|a, b| host.is_ancestor(a, b),
            &stamp,
        );
        for r in refused {
            if !plan.sandbox.iter().any(|u| u.name == r.name) {
                plan.sandbox.push(r);
            }
        }
        self.moved
            .store(!plan.is_empty(), std::sync::atomic::Ordering::Relaxed);
        if plan.is_empty() {
            if plan.base != base {
                self.save_base(&plan.base)?;
            }
            return Ok(self.tell(msgs));
        }
        // The host first: a kept copy of the agent's work exists before the sandbox's
        // reference moves.
        if !plan.host.is_empty() {
            host.update_refs(&transaction(&plan.host), "lazaret: git boundary")?;
        }
        if let Some(h) = &plan.host_head {
            host.set_head(h, "lazaret: git boundary (the agent switched)")?;
        }
        if let Some((before, after)) = &plan.host_index {
            // Recorded first: if the index cannot follow now (the developer's git holds its
            // lock, a kill), the next round finishes it.
            self.save_pending_index(before.as_ref(), after)?;
            self.follow_pending_index(&host_refs_after(&plan, &host_refs), &mut msgs)?;
        }
        crate::fault::kill_point("git-boundary-between-sides");
        self.apply_inside(&plan)?;
        self.save_base(&plan.base)?;
        for r in &plan.reports {
            msgs.push(self.describe(r));
        }
        Ok(self.tell(msgs))
    }

    /// The sandbox's side of a plan, in one command inside.
    fn apply_inside(&self, plan: &reconcile::Plan) -> Result<(), String> {
        if plan.sandbox.is_empty() && plan.sandbox_head.is_none() && plan.sandbox_index.is_none() {
            return Ok(());
        }
        let script = format!(
            "set -e; {GIT} update-ref -m lazaret-boundary --stdin; \
             case \"$1\" in branch) {GIT} symbolic-ref -m lazaret-boundary HEAD \"$2\";; \
             detached) {GIT} update-ref --no-deref -m lazaret-boundary HEAD \"$2\";; esac; \
             if [ -n \"$4\" ]; then \
               if [ -n \"$3\" ] && {GIT} read-tree -m -i \"$3\" \"$4\" 2>/dev/null; then :; \
               else {GIT} read-tree \"$4\"; fi; {SKIP_GITLINKS}; fi"
        );
        let (kind, value) = match &plan.sandbox_head {
            Some(Head::Branch(b)) => ("branch", b.clone()),
            Some(Head::Detached(o)) => ("detached", o.as_str().to_owned()),
            None => ("none", String::new()),
        };
        let (before, after) = match &plan.sandbox_index {
            Some((b, a)) => (
                b.as_ref()
                    .map(|o| o.as_str().to_owned())
                    .unwrap_or_default(),
                a.as_str().to_owned(),
            ),
            None => (String::new(), String::new()),
        };
        let mut argv = sh(&script);
        argv.extend([kind.to_owned(), value, before, after]);
        self.entry
            .run(&argv, transaction(&plan.sandbox).as_bytes(), INSIDE_LIMIT)
            .map(drop)
    }
}

/// The host's references once `plan`'s host side is applied.
fn host_refs_after(plan: &reconcile::Plan, host: &Refs) -> Refs {
    let mut r = host.clone();
    for u in &plan.host {
        match &u.new {
            Some(n) => r.refs.insert(u.name.clone(), n.clone()),
            None => r.refs.remove(&u.name),
        };
    }
    if let Some(h) = &plan.host_head {
        r.head = Some(h.clone());
    }
    r
}

/// `git update-ref --stdin` commands for `updates`, as one transaction.
fn transaction(updates: &[reconcile::Update]) -> String {
    let mut s = String::new();
    if updates.is_empty() {
        return s;
    }
    s.push_str("start\n");
    for u in updates {
        let _ = match (&u.new, &u.old) {
            (Some(n), Some(o)) => writeln!(s, "update {} {} {}", u.name, n.as_str(), o.as_str()),
            (Some(n), None) => writeln!(s, "create {} {}", u.name, n.as_str()),
            (None, Some(o)) => writeln!(s, "delete {} {}", u.name, o.as_str()),
            (None, None) => Ok(()),
        };
    }
    s.push_str("prepare\ncommit\n");
    s
}

#[cfg(test)]
mod printable_tests {
    #[test]
    fn printable_is_the_one_escaping_plus_ascii_only() {
        assert_eq!(
            super::printable("ma\u{43e}n\x1b]52;c;eA==\x07\r\\\u{202e}"),
            "ma\\u{43e}n\\u{1b}]52;c;eA==\\u{7}\\r\\\\\\u{202e}"
        );
        let shown = super::printable(
            &(0..0x3000u32)
                .filter_map(char::from_u32)
                .collect::<String>(),
        );
        assert!(shown.chars().all(|c| c.is_ascii_graphic() || c == ' '));
    }
}
