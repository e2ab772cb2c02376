//! The host's side of the run-scoped network rules ([`crate::network::run_rules`]): the rules
//! file in the Network Sidecar's host-private status dir, changed under a lock (several CLIs
//! and TUIs may change it at once), written atomically, and the sidecar's acknowledgement
//! waited for, so a command returns only when the rule is in force (or says why not).

use crate::network::run_rules::{RunRules, APPLIED_FILE, RULES_FILE};
use anyhow::{bail, Context};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the sidecar may take to apply a change (it looks every 500 ms).
pub const APPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// The rules in force for this run (none when no rule was ever added).
pub fn load(dir: &Path) -> anyhow::Result<RunRules> {
    match std::fs::read_to_string(dir.join(RULES_FILE)) {
        Ok(text) => RunRules::parse(&text).map_err(anyhow::Error::msg),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RunRules::default()),
        Err(e) => Err(e).context("reading the run's network rules"),
    }
}

/// Changes the rules under the lock, writes them, and waits until the sidecar applied them.
/// When the sidecar refuses the change or does not answer, the previous rules are put back
/// (the sidecar keeps its last good ones either way) and the error says so.
pub fn change<T>(
    dir: &Path,
    edit: impl FnOnce(&mut RunRules) -> Result<T, String>,
) -> anyhow::Result<T> {
    change_within(dir, APPLY_TIMEOUT, edit)
}

fn change_within<T>(
    dir: &Path,
    timeout: Duration,
    edit: impl FnOnce(&mut RunRules) -> Result<T, String>,
) -> anyhow::Result<T> {
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("run-rules.lock"))
        .context("opening the run's network rules lock")?;
    let _held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| anyhow::anyhow!("locking the run's network rules: {e}"))?;
    let before = load(dir)?;
    let mut rules = before.clone();
    let out = edit(&mut rules).map_err(anyhow::Error::msg)?;
    write(dir, &rules)?;
    if let Err(e) = wait_applied(dir, rules.generation, timeout) {
        let mut back = before;
        back.generation = rules.generation + 1;
        let restored = write(dir, &back);
        return Err(match restored {
            Ok(()) => e.context("the change was taken back"),
            Err(r) => e.context(format!("and putting the previous rules back failed: {r:#}")),
        });
    }
    Ok(out)
}

fn write(dir: &Path, rules: &RunRules) -> anyhow::Result<()> {
    let tmp = dir.join(format!(".{RULES_FILE}.tmp"));
    let text = serde_json::to_string_pretty(rules)? + "\n";
    std::fs::write(&tmp, text).context("writing the run's network rules")?;
    std::fs::rename(&tmp, dir.join(RULES_FILE)).context("writing the run's network rules")
}

/// Waits for the sidecar's acknowledgement of `generation` (or a later one).
fn wait_applied(dir: &Path, generation: u64, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join(APPLIED_FILE)) {
            match parse_applied(&text) {
                Some((g, Ok(()))) if g >= generation => return Ok(()),
                Some((g, Err(why))) if g >= generation || g == 0 => {
                    bail!("the Network Sidecar refused the rules: {why}")
                }
                _ => {}
            }
        }
        if Instant::now() > deadline {
            bail!(
                "the Network Sidecar did not apply the rules within {}s: is the Domain still \
                 running (lazaret ps)?",
                timeout.as_secs_f32()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `GENERATION ok` or `GENERATION failed: WHY`.
fn parse_applied(text: &str) -> Option<(u64, Result<(), String>)> {
    let line = text.lines().next()?;
    let (generation, rest) = line.split_once(' ')?;
    let generation = generation.parse().ok()?;
    match rest {
        "ok" => Some((generation, Ok(()))),
        _ => rest
            .strip_prefix("failed: ")
            .map(|why| (generation, Err(why.to_owned()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acknowledgements_parse() {
        assert_eq!(parse_applied("7 ok\n"), Some((7, Ok(()))));
        assert_eq!(
            parse_applied("8 failed: nft: no such set\n"),
            Some((8, Err("nft: no such set".into())))
        );
        assert_eq!(parse_applied("x ok"), None);
        assert_eq!(parse_applied(""), None);
        assert_eq!(parse_applied("9 maybe"), None);
    }

    /// A sidecar that never answers: the command says so, and the rules are as before.
    #[test]
    fn an_unanswered_change_is_taken_back() {
        let dir = tempfile::tempdir().expect("tmp");
        let target = crate::network::run_rules::Target::parse("198.51.100.7").expect("target");
        let started = Instant::now();
        let wait = Duration::from_millis(200);
        let err = change_within(dir.path(), wait, |r| r.allow(target, 1)).expect_err("no sidecar");
        assert!(started.elapsed() >= wait);
        assert!(format!("{err:#}").contains("did not apply"), "{err:#}");
        let now = load(dir.path()).expect("rules");
        assert!(now.allow.is_empty());
        assert_eq!(now.generation, 2);
    }
}
