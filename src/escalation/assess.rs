//! Looking at an accepted request once, on the host, before anyone decides: its working
//! directory opened as a held fd (see `workdir`), its program resolved (see `executable`),
//! where it stands relative to the protected repository (see `repository`), and what the rules
//! and the admission policy (see `admission`) make of it. Everything later — the prompt, the
//! run — uses these results, not the paths again.

use super::admission::{self, Admission, Place};
use super::executable::{self, Executable};
use super::repository::Protected;
use super::rules;
use super::workdir::{self, WorkDir};
use crate::profile::{AutoApproveRule, RuleDecision};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What the host makes of one request.
#[derive(Debug)]
pub struct Assessed {
    pub workdir: Result<WorkDir, String>,
    pub exe: Result<Executable, String>,
    pub place: Place,
    pub admission: Admission,
}

impl Assessed {
    /// The rule decision the request goes on with (`None`: refused before any rule).
    pub fn rule(&self) -> Option<RuleDecision> {
        match (&self.workdir, &self.admission) {
            (Ok(_), Admission::Decide { rule, .. }) => Some(*rule),
            _ => None,
        }
    }
}

/// The host's `PATH` programs are resolved in: the coordinator's own.
pub fn host_path() -> Option<OsString> {
    std::env::var_os("PATH")
}

/// Resolves `program` as the request's argv[0] would be.
pub fn resolve(program: &str, workspace: &Path) -> Result<Executable, String> {
    executable::resolve(program, host_path().as_deref(), workspace)
}

/// Assesses `argv` asked from the sandbox directory `cwd`.
pub fn assess(
    workspace: &Path,
    rules: &[AutoApproveRule],
    protected: &Result<Protected, String>,
    argv: &[String],
    cwd: &str,
) -> Assessed {
    let workdir = workdir::open(workspace, cwd);
    let exe = match argv.first() {
        Some(p) => resolve(p, workspace),
        None => Err("the command is empty".into()),
    };
    let place = place(protected, &workdir);
    let path = host_path();
    let resolve_rule = |p: &str| -> Option<PathBuf> { executable::find(p, path.as_deref()).ok() };
    let rule = rules::decide(
        rules,
        exe.as_ref().ok().map(|e| e.path.as_path()),
        argv,
        &resolve_rule,
    );
    let admission = admission::admit(&exe, argv, &place, rule);
    Assessed {
        workdir,
        exe,
        place,
        admission,
    }
}

/// Where a command in `workdir` stands: in the protected repository, or not (why).
pub fn place(protected: &Result<Protected, String>, workdir: &Result<WorkDir, String>) -> Place {
    let repo = match protected {
        Err(why) => return Place::Unprotected(why.clone()),
        Ok(p) => p,
    };
    if let Err(why) = repo.still_protected() {
        return Place::Unprotected(why);
    }
    match workdir {
        Ok(WorkDir {
            nested_repository: Some(rel),
            ..
        }) => Place::Unprotected(format!(
            "the working directory lies in {rel:?}, a Git repository inside the workspace that \
             is not the workspace's own: the sandbox can write its configuration"
        )),
        _ => Place::Protected,
    }
}
