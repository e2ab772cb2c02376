//! The host's side of the git boundary: git run on the host repository, which the sandbox can
//! no longer write (it sees a Domain-private git directory at `/workspace/.git`). Every command
//! is pinned to the host's Git directory with no work tree (`GIT_IMPLICIT_WORK_TREE=0`), so
//! nothing of the worktree — submodules, attributes, nested repositories the sandbox made — is
//! read; hooks and fsmonitor are off, and objects fetched from the sandbox are checked as from
//! any untrusted remote (`transfer.fsckObjects`).

use super::refs::{parse_listing, Head, Oid, Refs};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The host repository the boundary writes.
#[derive(Clone, Debug)]
pub struct HostRepo {
    /// `GIT_DIR`: `<workspace>/.git`, or the Git directory a `gitdir:` file names.
    pub git_dir: PathBuf,
    /// The workspace (the work tree; used only to name index paths, never read).
    pub work_tree: PathBuf,
}

/// Options every host git of the boundary runs with.
const HARDENING: &[&str] = &[
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "transfer.fsckObjects=true",
    "-c",
    "fetch.writeCommitGraph=false",
    "-c",
    "submodule.recurse=false",
    "-c",
    "fetch.recurseSubmodules=false",
];

impl HostRepo {
    /// A host git command (the caller adds the subcommand).
    pub fn git(&self) -> Command {
        let mut c = Command::new("git");
        for (k, _) in std::env::vars_os() {
            if k.to_str().is_none_or(|k| k.starts_with("GIT_")) {
                c.env_remove(k);
            }
        }
        c.env("GIT_DIR", &self.git_dir)
            .env("GIT_IMPLICIT_WORK_TREE", "0")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .current_dir(&self.git_dir)
            .args(HARDENING)
            .stdin(Stdio::null());
        c
    }

    fn output(&self, args: &[&str]) -> Result<Output, String> {
        self.git()
            .args(args)
            .output()
            .map_err(|e| format!("running host git {}: {e}", args.join(" ")))
    }

    fn ok(&self, args: &[&str]) -> Result<Vec<u8>, String> {
        let out = self.output(args)?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(format!(
                "host git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// The host's references, in the listing format the sandbox's are read in.
    pub fn refs(&self) -> Result<Refs, String> {
        let mut listing = self.ok(&[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/heads",
            "refs/tags",
            "refs/remotes",
        ])?;
        let head = self.output(&["symbolic-ref", "-q", "HEAD"])?;
        let head = if head.status.success() {
            head.stdout
        } else {
            self.output(&["rev-parse", "-q", "--verify", "HEAD"])?
                .stdout
        };
        listing.extend_from_slice(b"HEAD ");
        listing.extend_from_slice(&head);
        let mut refs = parse_listing(&listing)?;
        // Host names the boundary does not carry (valid for git, not for the listing's stricter
        // rules) are simply not mirrored: drop them rather than refuse the host's listing.
        refs.refs.retain(|n, _| super::refs::valid_name(n));
        Ok(refs)
    }

    /// Which of `oids` the host lacks.
    pub fn missing(&self, oids: &[&Oid]) -> Result<Vec<Oid>, String> {
        if oids.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = oids.iter().map(|o| format!("{}\n", o.as_str())).collect();
        let mut cmd = self.git();
        cmd.args(["cat-file", "--batch-check=%(objectname)"]);
        let out = fed(cmd, input.as_bytes(), "cat-file")?;
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(oids
            .iter()
            .zip(text.lines())
            .filter(|(_, l)| l.ends_with(" missing"))
            .map(|(o, _)| (*o).clone())
            .collect())
    }

    /// Fetches `oids` from the sandbox: the host's `git fetch` talks to a `git upload-pack`
    /// started inside by `upload_pack` (program and arguments), over its stdin and stdout, as
    /// with any remote; objects are checked (`transfer.fsckObjects`) and no reference is
    /// written (the caller updates references itself).
    pub fn fetch(&self, upload_pack: &(String, Vec<String>), oids: &[Oid]) -> Result<(), String> {
        if oids.is_empty() {
            return Ok(());
        }
        let url = ext_url(upload_pack);
        let mut args: Vec<String> = [
            "-c",
            "protocol.ext.allow=always",
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-maintenance",
            "--no-recurse-submodules",
            "--no-show-forced-updates",
        ]
        .map(String::from)
        .to_vec();
        args.push(url);
        args.extend(oids.iter().map(|o| o.as_str().to_owned()));
        let out = self
            .git()
            .args(&args)
            .output()
            .map_err(|e| format!("running host git fetch: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            let said = String::from_utf8_lossy(&out.stderr);
            let last = said.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
            Err(format!(
                "git boundary: fetching the agent's commits was refused: {}",
                super::printable(last.trim())
            ))
        }
    }

    /// Whether `a` is an ancestor of `b` (both present).
    pub fn is_ancestor(&self, a: &Oid, b: &Oid) -> bool {
        self.output(&["merge-base", "--is-ancestor", a.as_str(), b.as_str()])
            .is_ok_and(|o| o.status.success())
    }

    /// The object type of `oid` (`commit`, `tag`…), if present.
    pub fn kind(&self, oid: &Oid) -> Option<String> {
        let out = self.output(&["cat-file", "-t", oid.as_str()]).ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// How many commits `to` has that `from` has not (for messages).
    pub fn count(&self, from: Option<&Oid>, to: &Oid) -> Option<u64> {
        let range = match from {
            Some(f) => format!("{}..{}", f.as_str(), to.as_str()),
            None => to.as_str().to_owned(),
        };
        let out = self.output(&["rev-list", "--count", &range]).ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    /// Applies `stdin` (`git update-ref --stdin` commands) as one transaction.
    pub fn update_refs(&self, stdin: &str, why: &str) -> Result<(), String> {
        let mut cmd = self.git();
        cmd.args(["update-ref", "-m", why, "--stdin"]);
        let out = fed(cmd, stdin.as_bytes(), "update-ref")?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "updating the host's references: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// Points `HEAD` at `head`.
    pub fn set_head(&self, head: &Head, why: &str) -> Result<(), String> {
        match head {
            Head::Branch(b) => self.ok(&["symbolic-ref", "-m", why, "HEAD", b]).map(drop),
            Head::Detached(o) => self
                .ok(&["update-ref", "--no-deref", "-m", why, "HEAD", o.as_str()])
                .map(drop),
        }
    }

    /// The index follows `HEAD` from `before` to `after`, keeping what the developer staged
    /// where it does not conflict (a two-tree merge of the index alone; the worktree is not
    /// touched). Where it conflicts, the index is reset to `after` and the caller says so.
    /// A gitlink the agent's commit brought is marked `skip-worktree`, so the developer's `git
    /// status` never enters a repository the sandbox may have made there. The new index is
    /// made under git's own `index.lock` and takes the index's place in one rename: no git of
    /// the developer's ever sees it half made (with the gitlink, before the mark).
    pub fn follow_index(&self, before: Option<&Oid>, after: &Oid) -> Result<bool, String> {
        let index = self.git_dir.join("index");
        let lock = self.git_dir.join("index.lock");
        let mut held = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
            .map_err(|e| {
                format!(
                    "the host index is in use ({}: {e}); the next round retries",
                    lock.display()
                )
            })?;
        let made = (|| {
            match std::fs::read(&index) {
                Ok(bytes) => held
                    .write_all(&bytes)
                    .map_err(|e| format!("copying the host index: {e}"))?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("reading the host index: {e}")),
            }
            drop(held);
            let had = self.gitlinks(&lock)?;
            let mut merged_ok = false;
            if let Some(b) = before {
                let merged = self
                    .git()
                    .env("GIT_INDEX_FILE", &lock)
                    .args(["read-tree", "-m", "-i", b.as_str(), after.as_str()])
                    .output()
                    .map_err(|e| format!("running host git read-tree: {e}"))?;
                merged_ok = merged.status.success();
            }
            if !merged_ok {
                let out = self
                    .git()
                    .env("GIT_INDEX_FILE", &lock)
                    .args(["read-tree", after.as_str()])
                    .output()
                    .map_err(|e| format!("running host git read-tree: {e}"))?;
                if !out.status.success() {
                    return Err(format!(
                        "host git read-tree failed: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    ));
                }
            }
            let new: Vec<String> = self
                .gitlinks(&lock)?
                .into_iter()
                .filter(|p| !had.contains(p))
                .collect();
            if !new.is_empty() {
                self.hide_gitlinks(&lock, &new)?;
            }
            std::fs::rename(&lock, &index).map_err(|e| format!("replacing the host index: {e}"))?;
            Ok(merged_ok)
        })();
        if made.is_err() {
            let _ = std::fs::remove_file(&lock);
        }
        made
    }

    /// The gitlinks (submodule entries) of the index file `index`.
    fn gitlinks(
        &self,
        index: &std::path::Path,
    ) -> Result<std::collections::BTreeSet<String>, String> {
        let out = self
            .git()
            .env("GIT_INDEX_FILE", index)
            .args(["ls-files", "--stage", "-z"])
            .output()
            .map_err(|e| format!("running host git ls-files: {e}"))?;
        Ok(out
            .stdout
            .split(|b| *b == 0)
            .filter_map(|e| std::str::from_utf8(e).ok())
            .filter_map(|e| {
                let (meta, path) = e.split_once('\t')?;
                meta.starts_with("160000 ").then(|| path.to_owned())
            })
            .collect())
    }

    /// Marks `paths` `skip-worktree` in the index file `index` (flags only; nothing at the
    /// paths is read).
    fn hide_gitlinks(&self, index: &std::path::Path, paths: &[String]) -> Result<(), String> {
        let mut cmd = self.git();
        cmd.env("GIT_INDEX_FILE", index)
            .env("GIT_WORK_TREE", &self.work_tree)
            .current_dir(&self.work_tree)
            .args(["update-index", "--skip-worktree", "-z", "--stdin"]);
        let list: Vec<u8> = paths
            .iter()
            .flat_map(|p| [p.as_bytes(), b"\0"].concat())
            .collect();
        let out = fed(cmd, &list, "update-index")?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "hiding the agent's submodules from host git: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// The host index's bytes, for a new private directory's first index.
    pub fn index_bytes(&self) -> Option<Vec<u8>> {
        // A split index names a shared file beside it, which git inside could not read.
        let split = std::fs::read_dir(&self.git_dir).ok()?.flatten().any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("sharedindex."))
        });
        let bytes = std::fs::read(self.git_dir.join("index")).ok()?;
        (!split && bytes.len() < 512 << 20).then_some(bytes)
    }
}

/// Runs `cmd` with `input` on its stdin; its stdout and stderr collected.
fn fed(mut cmd: Command, input: &[u8], what: &str) -> Result<Output, String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running host git {what}: {e}"))?;
    if let Some(mut w) = child.stdin.take() {
        let _ = w.write_all(input);
    }
    child
        .wait_with_output()
        .map_err(|e| format!("host git {what}: {e}"))
}

/// `ext::` URL running `program args…` (git's ext transport quoting: `%` and space escaped).
fn ext_url((program, args): &(String, Vec<String>)) -> String {
    let q = |s: &str| s.replace('%', "%%").replace(' ', "% ");
    let mut url = format!("ext::{}", q(program));
    for a in args {
        url.push(' ');
        url.push_str(&q(a));
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ext_urls_escape_spaces_and_percents() {
        let u = ext_url(&("/usr/bin/nsenter".into(), vec!["a b".into(), "50%".into()]));
        assert_eq!(u, "ext::/usr/bin/nsenter a% b 50%%");
    }
}
