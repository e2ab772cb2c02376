//! The record, the control-file observation and the start/end checks on real repositories made
//! with `git` (fixtures only; the checks never run git).

use super::control::{observe, Kind};
use super::guard::{accept, after_run, before_start};
use super::tests::Fixture;
use std::path::{Path, PathBuf};

fn kinds(ws: &Path) -> Vec<(Kind, bool, bool)> {
    observe(ws)
        .into_iter()
        .map(|o| (o.file.kind, o.proven.is_some(), o.invalid.is_some()))
        .collect()
}

fn err(r: anyhow::Result<()>) -> String {
    r.err().map(|e| format!("{e:#}")).unwrap_or_default()
}

#[test]
fn a_plain_repository_is_recorded_and_a_planted_commondir_refused() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    let store = f.root.join("store");
    before_start(&ws, &store).unwrap();
    let canary = f.root.join("home/.ssh");
    std::fs::create_dir_all(&canary).unwrap();
    std::fs::write(canary.join("config"), "Host *\n").unwrap();
    std::fs::write(ws.join(".git/commondir"), "../../home/.ssh\n").unwrap();
    let e = err(before_start(&ws, &store));
    assert!(
        e.contains("refuses to start") && e.contains("commondir"),
        "{e}"
    );
    assert!(
        e.contains("not a Git directory") && e.contains("mv -- '"),
        "{e}"
    );
    assert!(
        !e.contains("git-sentry accept"),
        "an invalid layout offered as acceptable: {e}"
    );
    assert!(accept(&ws, &store).is_err());
}

#[test]
fn a_linked_worktree_is_proven_and_a_separate_git_dir_needs_accepting() {
    let f = Fixture::new();
    let main = f.repo("main");
    let wt = f.root.join("wt");
    f.git(&main, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    assert_eq!(
        kinds(&wt),
        vec![
            (Kind::GitdirPointer, true, false),
            (Kind::Commondir, true, false)
        ]
    );
    before_start(&wt, &f.root.join("store")).unwrap();

    let sep = f.root.join("sep");
    std::fs::create_dir(&sep).unwrap();
    let gd = f.root.join("sep.git");
    f.git(
        &sep,
        &["init", "-q", "--separate-git-dir", gd.to_str().unwrap()],
    );
    let store = f.root.join("store");
    let e = err(before_start(&sep, &store));
    assert!(
        e.contains("gitdir:") && e.contains("lazaret git-sentry accept"),
        "{e}"
    );
    assert_eq!(accept(&sep, &store).unwrap().len(), 1);
    before_start(&sep, &store).unwrap();
    // The pointer changed to another repository: refused, the recorded text shown.
    std::fs::write(
        sep.join(".git"),
        format!("gitdir: {}/.git\n", main.display()),
    )
    .unwrap();
    let e = err(before_start(&sep, &store));
    assert!(e.contains("recorded as"), "{e}");
}

#[test]
fn a_commondir_must_lead_to_a_repository_that_lists_the_worktree() {
    let f = Fixture::new();
    let main = f.repo("main");
    let other = f.repo("other");
    let wt = f.root.join("wt");
    f.git(&main, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    let admin = main.join(".git/worktrees/wt");
    // Pointed at another real repository: not a worktree of it.
    std::fs::write(
        admin.join("commondir"),
        format!("{}/.git\n", other.display()),
    )
    .unwrap();
    let found = observe(&wt);
    let cd = found
        .iter()
        .find(|o| o.file.kind == Kind::Commondir)
        .unwrap();
    assert!(cd
        .invalid
        .as_deref()
        .unwrap_or("")
        .contains("is not a worktree of"));
    // The main repository's own view of that admin dir: invalid too.
    let found = observe(&main);
    assert!(found
        .iter()
        .any(|o| o.file.path == admin.join("commondir") && o.invalid.is_some()));
}

#[test]
fn alternates_inside_need_nothing_outside_need_a_record_and_config_worktree_follows_the_extension()
{
    let f = Fixture::new();
    let ws = f.repo("ws");
    let other = f.repo("other");
    let alt = ws.join(".git/objects/info/alternates");
    std::fs::write(&alt, format!("{}/.git/objects\n", ws.display())).unwrap();
    assert!(kinds(&ws).contains(&(Kind::Alternates, true, false)));
    std::fs::write(&alt, format!("{}/.git/objects\n", other.display())).unwrap();
    assert!(kinds(&ws).contains(&(Kind::Alternates, false, false)));
    std::fs::remove_file(&alt).unwrap();
    std::fs::write(ws.join(".git/config.worktree"), "[core]\n\tpager = x\n").unwrap();
    assert!(kinds(&ws).contains(&(Kind::ConfigWorktree, false, false)));
    f.git(&ws, &["config", "extensions.worktreeConfig", "true"]);
    assert!(!kinds(&ws).iter().any(|k| k.0 == Kind::ConfigWorktree));
}

#[test]
fn after_run_renames_new_redirectors_aside_and_moves_new_nested_repositories_away() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    let store = f.root.join("store");
    f.git(&ws, &["init", "-q", "mine"]);
    before_start(&ws, &store).unwrap();
    std::fs::write(ws.join(".git/config.worktree"), "[core]\n\tpager = x\n").unwrap();
    f.git(&ws, &["init", "-q", "sub"]);
    let deep: PathBuf = (0..20).map(|i| format!("d{i}")).collect();
    std::fs::create_dir_all(ws.join(&deep)).unwrap();
    std::fs::write(ws.join(&deep).join(".git"), "gitdir: /elsewhere\n").unwrap();
    let report = after_run(&ws, &store).unwrap();
    assert_eq!(report.messages.len(), 3, "{:?}", report.messages);
    assert!(report.messages[0].contains("Renamed it to"));
    assert!(!ws.join(".git/config.worktree").exists());
    // The new repositories, at any depth, are gone from the worktree into the host's own
    // .git (which the sandbox never sees), under names nobody could predict; the developer's
    // own stays.
    assert!(std::fs::symlink_metadata(ws.join("sub/.git")).is_err());
    assert!(std::fs::symlink_metadata(ws.join(&deep).join(".git")).is_err());
    assert!(ws.join("mine/.git/config").exists());
    let q: Vec<String> = std::fs::read_dir(ws.join(".git/lazaret-quarantine"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        q.iter().filter(|n| !n.ends_with(".origin")).count(),
        2,
        "{q:?}"
    );
    assert!(q.iter().all(|n| n.len() > 40), "{q:?}");
    assert!(after_run(&ws, &store).unwrap().messages.is_empty());
    // The developer's repository replaced by another (same path, new identity): moved away.
    before_start(&ws, &store).unwrap();
    std::fs::rename(ws.join("mine/.git"), ws.join("mine/old")).unwrap();
    f.git(&ws, &["init", "-q", "mine"]);
    let report = after_run(&ws, &store).unwrap();
    assert_eq!(report.messages.len(), 1, "{:?}", report.messages);
    assert!(std::fs::symlink_metadata(ws.join("mine/.git")).is_err());
}

#[test]
fn a_run_killed_before_its_check_is_checked_at_the_next_start() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    let store = f.root.join("store");
    before_start(&ws, &store).unwrap();
    f.git(&ws, &["init", "-q", "planted"]);
    // No after_run (the CLI and coordinator were killed): the next start neutralises first.
    before_start(&ws, &store).unwrap();
    assert!(std::fs::symlink_metadata(ws.join("planted/.git")).is_err());
    let rec = super::record::load(&store, &ws).unwrap().unwrap();
    assert!(rec.pending && rec.nested.is_empty());
}

#[test]
fn a_new_workspace_inside_a_recorded_one_is_refused_until_accepted() {
    let f = Fixture::new();
    let ws = f.repo("ws");
    let store = f.root.join("store");
    before_start(&ws, &store).unwrap();
    f.git(&ws, &["init", "-q", "a/inner"]);
    let inner = ws.join("a/inner");
    let e = err(before_start(&inner, &store));
    assert!(
        e.contains("lies inside") && e.contains("git-sentry accept"),
        "{e}"
    );
    accept(&inner, &store).unwrap();
    before_start(&inner, &store).unwrap();
}

#[test]
fn a_repository_appearing_in_a_recorded_non_repository_is_refused_then_acceptable() {
    let f = Fixture::new();
    let ws = f.root.join("plain");
    std::fs::create_dir(&ws).unwrap();
    let store = f.root.join("store");
    before_start(&ws, &store).unwrap();
    f.git(&ws, &["init", "-q"]);
    let e = err(before_start(&ws, &store));
    assert!(e.contains("a Git directory") && e.contains("accept"), "{e}");
    accept(&ws, &store).unwrap();
    before_start(&ws, &store).unwrap();
}

#[test]
fn a_symlinked_dot_git_that_appeared_is_renamed_aside_at_the_end_of_the_run() {
    let f = Fixture::new();
    let ws = f.root.join("plain");
    std::fs::create_dir(&ws).unwrap();
    let evil = f.repo("evil");
    let store = f.root.join("store");
    before_start(&ws, &store).unwrap();
    std::os::unix::fs::symlink(evil.join(".git"), ws.join(".git")).unwrap();
    assert_eq!(kinds(&ws), vec![(Kind::RepositoryLink, false, true)]);
    let report = after_run(&ws, &store).unwrap();
    assert!(
        report.messages[0].contains("symlinked .git"),
        "{:?}",
        report.messages
    );
    assert!(std::fs::symlink_metadata(ws.join(".git")).is_err());
    assert!(evil.join(".git/config").exists(), "the target was touched");
}

#[test]
fn the_record_is_private_round_trips_and_a_damaged_one_stops_the_start() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let ws = f.repo("ws");
    let store = f.root.join("store");
    before_start(&ws, &store).unwrap();
    let mode = std::fs::metadata(&store).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let rec = super::record::load(&store, &ws).unwrap().unwrap();
    assert_eq!(rec.workspace, ws);
    assert_eq!(rec.files.len(), 1);
    let path = super::record::record_path(&store, &ws);
    std::fs::write(&path, "{not json").unwrap();
    let e = err(before_start(&ws, &store));
    assert!(
        e.contains("damaged") && e.contains("git-sentry accept"),
        "{e}"
    );
    // Another workspace's record under this name is refused too.
    let other = super::record::Record::new(Path::new("/elsewhere"), Vec::new(), Vec::new());
    std::fs::write(&path, serde_json::to_string(&other).unwrap()).unwrap();
    assert!(err(before_start(&ws, &store)).contains("not this workspace's"));
}
