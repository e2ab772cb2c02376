//! The git control files of a workspace's repository that redirect git or add configuration,
//! read from the host without running git and without following symlinks in what the sandbox
//! can write — with, for each, whether its layout proves it harmless and whether it is valid
//! at all (a common dir must really be the repository's).

use super::files::{config_facts, normalise, parse_gitdir_file, parse_path_line, read_small};
use super::record::ControlFile;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Most repositories under `modules/` and `worktrees/` looked at.
const MAX_DIRS: usize = 512;
/// Deepest nesting followed under `modules/`.
const MAX_DEPTH: usize = 32;

/// What a control file does to git.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The workspace's `.git` directory: git reads its `config` and runs its hooks.
    RepositoryDir,
    /// The workspace's `.git` file `gitdir: <path>`: git takes the repository from there.
    GitdirPointer,
    /// The workspace's `.git` as a symlink: git follows it to a repository (launches refuse it;
    /// one that appears is renamed aside).
    RepositoryLink,
    /// `commondir` in a Git directory: git takes config, hooks, objects and refs from there.
    Commondir,
    /// `config.worktree` while `extensions.worktreeConfig` is off: inert until the extension is
    /// turned on (e.g. by `git sparse-checkout`), then configuration host git obeys.
    ConfigWorktree,
    /// `objects/info/alternates`: host git reads objects from the directories it names.
    Alternates,
}

impl Kind {
    pub fn describe(self) -> &'static str {
        match self {
            Kind::RepositoryDir => "a Git directory (host git reads its config)",
            Kind::GitdirPointer => "a `gitdir:` pointer (host git takes the repository from it)",
            Kind::RepositoryLink => {
                "a symlinked .git (host git takes the repository from its target)"
            }
            Kind::Commondir => {
                "a `commondir` file (host git takes config, hooks and objects from where it points)"
            }
            Kind::ConfigWorktree => {
                "a `config.worktree` while extensions.worktreeConfig is off (configuration host \
                 git obeys once the extension is turned on)"
            }
            Kind::Alternates => {
                "an `objects/info/alternates` file (host git reads objects from where it points)"
            }
        }
    }
}

/// One control file as found now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub file: ControlFile,
    /// Why the layout itself shows it harmless (needs no record), if it does.
    pub proven: Option<String>,
    /// Why it is not a valid layout at all (refused even when accepted), if it is not.
    pub invalid: Option<String>,
}

/// The control files of the workspace at `ws` (canonical), in a stable order.
pub fn observe(ws: &Path) -> Vec<Observed> {
    let mut out = Vec::new();
    let dotgit = ws.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dotgit) else {
        return out;
    };
    let mut seen = 0usize;
    if meta.is_dir() {
        out.push(plain(ControlFile {
            path: dotgit.clone(),
            kind: Kind::RepositoryDir,
            content: String::new(),
            target: None,
        }));
        let c = workspace_git_dir(ws, &dotgit, false, &mut out);
        common_dir(&c, &mut out, &mut seen);
        return dedup(out);
    } else if meta.is_file() {
        let text = parse_gitdir_file(&dotgit);
        let declared = text.as_ref().map(String::clone).unwrap_or_default();
        let g = std::fs::canonicalize(ws.join(&declared)).ok();
        let mut o = plain(ControlFile {
            path: dotgit.clone(),
            kind: Kind::GitdirPointer,
            content: read_small(&dotgit).unwrap_or_default(),
            target: g.clone(),
        });
        match (&text, &g) {
            (Err(e), _) => o.invalid = Some(format!("{e:#}")),
            (_, None) => {
                o.invalid = Some(format!("it points to {declared}, which does not exist"));
            }
            (_, Some(g)) if !is_git_dir(g) => {
                o.invalid = Some(format!(
                    "it points to {}, which is not a Git directory (HEAD, objects, config)",
                    g.display()
                ));
            }
            (_, Some(g)) => {
                let idx = out.len();
                out.push(o.clone());
                let c = workspace_git_dir(ws, g, true, &mut out);
                out[idx].proven = pointer_proof(ws, g, &c, &out);
                common_dir(&c, &mut out, &mut seen);
                return dedup(out);
            }
        }
        out.push(o);
    } else if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&dotgit).unwrap_or_default();
        let mut o = plain(ControlFile {
            path: dotgit.clone(),
            kind: Kind::RepositoryLink,
            content: target.to_string_lossy().into_owned(),
            target: Some(target.clone()),
        });
        o.invalid = Some(format!(
            "the sandbox could replace a symlink with a Git directory of its own; if it is yours, \
             replace it with a pointer file: `rm {} && echo 'gitdir: {}' > {}`",
            dotgit.display(),
            std::fs::canonicalize(&dotgit).unwrap_or(target).display(),
            dotgit.display()
        ));
        out.push(o);
    }
    out
}

/// The first observation of each path (a worktree's admin dir is seen from both sides).
fn dedup(all: Vec<Observed>) -> Vec<Observed> {
    let mut out: Vec<Observed> = Vec::new();
    for o in all {
        if !out.iter().any(|x| x.file.path == o.file.path) {
            out.push(o);
        }
    }
    out
}

fn plain(file: ControlFile) -> Observed {
    Observed {
        file,
        proven: None,
        invalid: None,
    }
}

/// A real Git directory: `HEAD` and `config` files and an `objects` directory (or, for a linked
/// worktree's admin dir, `HEAD` and `commondir`).
fn is_git_dir(dir: &Path) -> bool {
    let file = |n: &str| std::fs::symlink_metadata(dir.join(n)).is_ok_and(|m| m.is_file());
    let objects = std::fs::symlink_metadata(dir.join("objects")).is_ok_and(|m| m.is_dir());
    file("HEAD") && ((file("config") && objects) || file("commondir"))
}

fn is_common_dir(dir: &Path) -> bool {
    let file = |n: &str| std::fs::symlink_metadata(dir.join(n)).is_ok_and(|m| m.is_file());
    file("HEAD")
        && file("config")
        && std::fs::symlink_metadata(dir.join("objects")).is_ok_and(|m| m.is_dir())
}

/// The workspace's Git directory `g`: its `commondir`, validated; returns the common dir.
fn workspace_git_dir(ws: &Path, g: &Path, pointer: bool, out: &mut Vec<Observed>) -> PathBuf {
    let path = g.join("commondir");
    if std::fs::symlink_metadata(&path).is_err() {
        return g.to_path_buf();
    }
    let text = parse_path_line(&path);
    let c = text
        .as_ref()
        .ok()
        .and_then(|t| std::fs::canonicalize(g.join(t)).ok());
    let mut o = plain(ControlFile {
        path: path.clone(),
        kind: Kind::Commondir,
        content: read_small(&path).unwrap_or_default(),
        target: c.clone(),
    });
    let dotgit = ws.join(".git");
    o.invalid = match (&text, &c) {
        (Err(e), _) => Some(format!("{e:#}")),
        (Ok(t), None) => Some(format!("it points to {t}, which does not exist")),
        (_, Some(c)) if !is_common_dir(c) => Some(format!(
            "it points to {}, which is not a Git directory (HEAD, objects, config)",
            c.display()
        )),
        (_, Some(c)) => {
            let name = g.file_name().unwrap_or_default();
            let back = std::fs::canonicalize(c.join("worktrees").join(name)).ok();
            if back.as_deref() != Some(g) {
                Some(format!(
                    "{} is not a worktree of {}: {}/worktrees/{} is not this Git directory",
                    g.display(),
                    c.display(),
                    c.display(),
                    name.to_string_lossy()
                ))
            } else if pointer && back_pointer(g).as_deref() != Some(dotgit.as_path()) {
                Some(format!(
                    "{}/gitdir does not point back to {}",
                    g.display(),
                    dotgit.display()
                ))
            } else {
                None
            }
        }
    };
    if o.invalid.is_none()
        && pointer
        && outside(ws, g)
        && c.as_deref().is_some_and(|c| outside(ws, c))
    {
        o.proven = Some("a linked worktree of a repository outside the workspace".into());
    }
    let c = if o.invalid.is_none() {
        c.unwrap_or_else(|| g.to_path_buf())
    } else {
        g.to_path_buf()
    };
    out.push(o);
    c
}

/// A linked worktree's admin dir names the worktree's `.git` file in `gitdir`.
fn back_pointer(g: &Path) -> Option<PathBuf> {
    let text = parse_path_line(&g.join("gitdir")).ok()?;
    std::fs::canonicalize(g.join(text)).ok()
}

fn outside(ws: &Path, p: &Path) -> bool {
    !p.starts_with(ws)
}

/// Why the workspace's `gitdir:` pointer to `g` (common dir `c`) needs no record, if it does
/// not: a validated linked worktree of a repository outside the workspace, or a submodule whose
/// Git directory (outside the workspace) names this workspace as its `core.worktree`.
fn pointer_proof(ws: &Path, g: &Path, c: &Path, out: &[Observed]) -> Option<String> {
    if g != c {
        return out
            .iter()
            .find(|o| o.file.kind == Kind::Commondir && o.file.path == g.join("commondir"))
            .and_then(|o| o.proven.clone());
    }
    let facts = config_facts(&g.join("config")).ok()?;
    let wt = facts.worktree?;
    let resolved = std::fs::canonicalize(g.join(wt)).ok()?;
    (resolved == ws && outside(ws, g))
        .then(|| "a submodule's Git directory outside the workspace that names it".into())
}

/// The common dir `c` and the repositories under it: linked worktrees' admin dirs, submodules.
fn common_dir(c: &Path, out: &mut Vec<Observed>, seen: &mut usize) {
    let ext = config_facts(&c.join("config")).is_ok_and(|f| f.worktree_config);
    repository(c, c, ext, out);
    if let Ok(entries) = sorted_dirs(&c.join("worktrees")) {
        for admin in entries {
            *seen += 1;
            if *seen > MAX_DIRS {
                return;
            }
            admin_dir(c, &admin, ext, out);
        }
    }
    modules(c, &c.join("modules"), 0, out, seen);
}

/// `config.worktree` and `alternates` of Git directory `d` (with its own objects).
fn repository(c: &Path, d: &Path, ext: bool, out: &mut Vec<Observed>) {
    config_worktree(d, ext, out);
    let path = d.join("objects/info/alternates");
    if std::fs::symlink_metadata(&path).is_err() {
        return;
    }
    let mut o = plain(ControlFile {
        path: path.clone(),
        kind: Kind::Alternates,
        content: read_small(&path).unwrap_or_default(),
        target: None,
    });
    match read_small(&path) {
        Err(e) => o.invalid = Some(format!("{e:#}")),
        Ok(text) => {
            let objects = d.join("objects");
            let mut inside = true;
            for line in text.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let p = if line.starts_with('"') {
                    PathBuf::from("/")
                } else {
                    let joined = objects.join(line);
                    std::fs::canonicalize(&joined).unwrap_or_else(|_| normalise(&joined))
                };
                if o.file.target.is_none() {
                    o.file.target = Some(p.clone());
                }
                inside &= p.starts_with(c);
            }
            if inside {
                o.proven =
                    Some("every entry lies within the repository's own Git directory".into());
            }
        }
    }
    out.push(o);
}

fn config_worktree(d: &Path, ext: bool, out: &mut Vec<Observed>) {
    let path = d.join("config.worktree");
    if ext || std::fs::symlink_metadata(&path).is_err() {
        return;
    }
    out.push(plain(ControlFile {
        content: read_small(&path).unwrap_or_default(),
        path,
        kind: Kind::ConfigWorktree,
        target: None,
    }));
}

/// A linked worktree's admin dir `a` under `c/worktrees`: its `commondir` must lead back to `c`.
fn admin_dir(c: &Path, a: &Path, ext: bool, out: &mut Vec<Observed>) {
    config_worktree(a, ext, out);
    let path = a.join("commondir");
    if std::fs::symlink_metadata(&path).is_err() {
        return;
    }
    let target = parse_path_line(&path)
        .ok()
        .and_then(|t| std::fs::canonicalize(a.join(t)).ok());
    let mut o = plain(ControlFile {
        content: read_small(&path).unwrap_or_default(),
        path,
        kind: Kind::Commondir,
        target: target.clone(),
    });
    if target.as_deref() == Some(c) {
        o.proven = Some("a linked worktree's admin dir pointing to its own repository".into());
    } else {
        o.invalid = Some(format!(
            "a linked worktree's admin dir under {}/worktrees must point to {}",
            c.display(),
            c.display()
        ));
    }
    out.push(o);
}

/// Submodule repositories under `dir` (a directory holding `HEAD` is one).
fn modules(c: &Path, dir: &Path, depth: usize, out: &mut Vec<Observed>, seen: &mut usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let Ok(entries) = sorted_dirs(dir) else {
        return;
    };
    for sub in entries {
        *seen += 1;
        if *seen > MAX_DIRS {
            return;
        }
        if std::fs::symlink_metadata(sub.join("HEAD")).is_err() {
            modules(c, &sub, depth + 1, out, seen);
            continue;
        }
        let ext = config_facts(&sub.join("config")).is_ok_and(|f| f.worktree_config);
        let path = sub.join("commondir");
        if std::fs::symlink_metadata(&path).is_ok() {
            out.push(plain(ControlFile {
                content: read_small(&path).unwrap_or_default(),
                target: parse_path_line(&path)
                    .ok()
                    .and_then(|t| std::fs::canonicalize(sub.join(t)).ok()),
                path,
                kind: Kind::Commondir,
            }));
        }
        repository(c, &sub, ext, out);
        modules(c, &sub.join("modules"), depth + 1, out, seen);
    }
}

/// Real directories (not symlinks) in `dir`, sorted.
fn sorted_dirs(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            out.push(e.path());
        }
    }
    out.sort();
    Ok(out)
}
