//! `lazaret state list | inspect | verify | reset` on the real stack (issue #8; FR-11, DX-6,
//! SR-14, OR-5): what a session installed and deleted is listed without contents, reset is
//! refused while a session runs (naming it), touches only the selected anchor, and is
//! crash-consistent: killed before each of its steps, 50 times, the next launch finds the prior
//! generation or a new empty one. What the sandbox plants in the trees these commands read
//! (symlinks, FIFOs, sparse files, escapes in names) is tested in `tests/adversarial/state.rs`.

mod support;

use serde_json::Value;
use std::collections::BTreeSet;
use support::anchors::upper;
use support::{finish, Dev, HOLD};

fn json(run: &support::Run) -> Value {
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn list_inspect_refuse_while_active_then_reset_one_anchor() {
    let dev = Dev::get();
    let ws = dev.workspace("state");
    ws.host_sh("echo keep > workspace-file");
    let r = ws.run(&[
        "sh",
        "-c",
        "printf 'secret-content-xyz' > /usr/local/bin/mytool && chmod 755 /usr/local/bin/mytool \
         && rm /etc/issue.net && echo v > /opt/marker",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");

    // list: the Domain, inactive, with its anchors and sizes.
    let v = json(&ws.lazaret(&["state", "list", "--json"]));
    assert_eq!(v["version"], 1);
    let d = v["domains"]
        .as_array()
        .and_then(|a| a.iter().find(|d| d["domain_id"] == ws.domain.as_str()))
        .unwrap_or_else(|| panic!("the Domain is not listed: {v}"));
    assert_eq!(
        keys(d),
        set(&[
            "domain_id",
            "profile",
            "workspace",
            "active",
            "held_by",
            "problem",
            "anchors",
            "ignored_state"
        ])
    );
    assert_eq!(d["active"], false);
    let containers: Vec<&str> = d["anchors"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["container"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        containers.contains(&"/usr") && containers.contains(&"/opt"),
        "{d}"
    );

    // inspect: the tool added, the base file deleted; no contents.
    let v = json(&ws.lazaret(&["state", "inspect", "--json"]));
    assert_eq!(keys(&v), set(&["version", "domain", "anchors"]));
    let all: Vec<&Value> = v["anchors"]
        .as_array()
        .map(|a| {
            a.iter()
                .flat_map(|x| x["changes"].as_array().into_iter().flatten())
                .collect()
        })
        .unwrap_or_default();
    let find = |path: &str| all.iter().find(|c| c["path"] == path).copied();
    let tool = find("/usr/local/bin/mytool").unwrap_or_else(|| panic!("no mytool in {v}"));
    assert_eq!(tool["change"], "added");
    assert_eq!(tool["kind"], "file");
    assert_eq!(tool["size"], 18);
    assert_eq!(tool["mode"], "0755");
    let issue = find("/etc/issue.net").unwrap_or_else(|| panic!("no issue.net in {v}"));
    assert_eq!(issue["change"], "deleted");
    let human = ws.lazaret(&["state", "inspect"]);
    assert_eq!(human.code, Some(0), "{human:?}");
    assert!(human.stdout.contains("/usr/local/bin/mytool"), "{human:?}");
    assert!(human.stdout.contains("/etc/issue.net"), "{human:?}");
    assert!(
        !human.stdout.contains("secret-content-xyz")
            && !v.to_string().contains("secret-content-xyz")
    );

    // A session runs: reset and verify are refused, naming what holds the Domain.
    let holder = ws.spawn(&["sh", "-c", HOLD]);
    support::wait_for(std::time::Duration::from_secs(60), || {
        let l = ws.lazaret(&["state", "list", "--json"]);
        let v: Value = serde_json::from_str(&l.stdout).ok()?;
        let held = v["domains"]
            .as_array()?
            .iter()
            .find(|d| d["domain_id"] == ws.domain.as_str())?["held_by"]
            .as_str()?
            .to_owned();
        held.contains("1 Client Session").then_some(())
    })
    .expect("the Domain never showed as held by its session");
    let refused = ws.lazaret(&["state", "reset", "--all", "--yes"]);
    assert_ne!(refused.code, Some(0), "{refused:?}");
    assert!(
        refused.stderr.contains("Session Coordinator (pid"),
        "{refused:?}"
    );
    assert!(refused.stderr.contains("Client Session"), "{refused:?}");
    let refused = ws.lazaret(&["state", "verify"]);
    assert_ne!(refused.code, Some(0), "{refused:?}");
    ws.release();
    assert_eq!(finish(holder).code, Some(0));

    // Stopped: verify passes; reset /opt only.
    let ok = json(&ws.lazaret(&["state", "verify", "--json"]));
    assert_eq!(ok["ok"], true, "{ok}");
    let done = json(&ws.lazaret(&["state", "reset", "--path", "/opt", "--yes", "--json"]));
    assert_eq!(
        keys(&done),
        set(&["version", "domain", "reset", "generation"])
    );
    assert_eq!(done["reset"], serde_json::json!(["/opt"]));
    let r = ws.run(&[
        "sh",
        "-c",
        "test -e /opt/marker && echo marker-left; cat /usr/local/bin/mytool; test -e /etc/issue.net || echo issue-still-deleted",
    ]);
    assert_eq!(r.stdout, "secret-content-xyzissue-still-deleted\n", "{r:?}");
    assert_eq!(ws.host_sh("cat workspace-file"), "keep\n");
    ws.assert_nothing_left();
}

#[test]
fn a_reset_killed_before_each_step_leaves_the_prior_or_a_new_empty_generation() {
    let dev = Dev::get();
    let ws = dev.workspace("state-fault");
    let r = ws.run(&["true"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let steps = ["create-tmp", "rename-tmp", "link-tmp", "commit", "collect"];
    let mut outcomes = Vec::new();
    for trial in 0..50 {
        let step = steps[trial % steps.len()];
        // The prior generation holds a marker (written straight into the current upper dir).
        let up = upper(&ws, "/opt");
        let put = dev.sh(&format!("echo v{trial} > '{}/marker'", up.display()));
        assert!(
            put.status.success(),
            "{}",
            String::from_utf8_lossy(&put.stderr)
        );
        let killed = ws.lazaret_env(
            &[&format!("LAZARET_TEST_KILL_AT={step}")],
            &["state", "reset", "--path", "/opt", "--yes"],
        );
        assert_ne!(
            killed.code,
            Some(0),
            "trial {trial}: the reset was not killed at {step}: {killed:?}"
        );
        // The next launch recovers and works; /opt is exactly the prior or empty.
        let r = ws.run(&[
            "sh",
            "-c",
            "ls -A /opt; cat /opt/marker 2>/dev/null || true",
        ]);
        assert_eq!(r.code, Some(0), "trial {trial} ({step}): {r:?}");
        let seen = match r.stdout.as_str() {
            "" => "empty",
            s if s == format!("marker\nv{trial}\n") => "prior",
            other => panic!("trial {trial} ({step}): neither prior nor empty: {other:?}"),
        };
        // Killed before the commit: the prior generation; at or after it: the new one.
        let expected = if step == "collect" { "empty" } else { "prior" };
        assert_eq!(seen, expected, "trial {trial}: killed before {step}");
        outcomes.push(seen);
    }
    let v = json(&ws.lazaret(&["state", "verify", "--json"]));
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(outcomes.len(), 50);
    ws.assert_nothing_left();
}

/// Per anchor container path: (files, unreadable count, the unreadable entries' paths) as
/// `state list --json` and as `state inspect --json` report them.
type Counts = std::collections::BTreeMap<String, (u64, u64, Vec<String>)>;

fn unreadable_paths(u: &Value) -> Vec<String> {
    u["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some(format!(
                "{}: {}",
                e["path"].as_str()?,
                e["reason"].as_str()?
            ))
        })
        .collect()
}

/// Issue #32: `state list` and `state inspect` count the same files of each anchor, read what
/// the sandbox's users own (subordinate uids, mode 000, overlay work dirs) without calling it
/// unreadable, and name the one entry the test made unreadable (a directory of a uid outside
/// the user namespace, mode 000), with why.
#[test]
fn list_and_inspect_agree_and_name_only_what_is_really_unreadable() {
    let dev = Dev::get();
    let ws = dev.workspace("state-agree");
    let r = ws.run(&[
        "sh",
        "-c",
        "set -e; mkdir -p /usr/local/lib/tool /root/locked /var/cache/svc; \
         printf x > /usr/local/lib/tool/a; printf yy > /usr/local/lib/tool/b; \
         ln -s a /usr/local/lib/tool/c; rm /etc/issue.net; echo r > /root/locked/f; \
         chown -R 100:100 /root/locked; chmod 000 /root/locked; echo s > /var/cache/svc/s; \
         chown -R 105:105 /var/cache/svc; chmod 700 /var/cache/svc",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    // Really unreadable inside the user namespace too: owned by a uid it does not map.
    let sealed = upper(&ws, "/opt").join("sealed");
    std::fs::create_dir_all(sealed.join("inner")).expect("mkdir sealed");
    std::os::unix::fs::chown(&sealed, Some(3_999_999), Some(3_999_999)).expect("chown");
    std::fs::set_permissions(&sealed, std::os::unix::fs::PermissionsExt::from_mode(0o000))
        .expect("chmod");

    let v = json(&ws.lazaret(&["state", "list", "--json"]));
    let d = v["domains"]
        .as_array()
        .and_then(|a| a.iter().find(|d| d["domain_id"] == ws.domain.as_str()))
        .unwrap_or_else(|| panic!("the Domain is not listed: {v}"))
        .clone();
    let listed: Counts = d["anchors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let u = &a["size"]["unreadable"];
            Some((
                a["container"].as_str()?.to_owned(),
                (
                    a["size"]["files"].as_u64()?,
                    u["count"].as_u64()?,
                    unreadable_paths(u),
                ),
            ))
        })
        .collect();
    let v = json(&ws.lazaret(&["state", "inspect", "--json"]));
    let inspected: Counts = v["anchors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let u = &a["unreadable"];
            Some((
                a["container"].as_str()?.to_owned(),
                (
                    a["totals"]["files"].as_u64()?,
                    u["count"].as_u64()?,
                    unreadable_paths(u),
                ),
            ))
        })
        .collect();
    eprintln!("list: {listed:#?}\ninspect: {inspected:#?}");
    let files = |c: &Counts| -> Vec<(String, u64, u64)> {
        c.iter().map(|(k, v)| (k.clone(), v.0, v.1)).collect()
    };
    assert_eq!(
        files(&listed),
        files(&inspected),
        "list and inspect disagree"
    );
    assert!(listed["/usr"].0 >= 3, "{listed:?}");
    assert!(
        listed["/root"].0 >= 1,
        "the file in the mode-000 dir: {listed:?}"
    );
    for (container, (_, count, paths)) in &listed {
        if container == "/opt" {
            assert_eq!(*count, 1, "{listed:?}");
            assert!(
                paths[0].ends_with("/upper/sealed: open: EACCES: Permission denied"),
                "{paths:?}"
            );
        } else {
            assert_eq!(*count, 0, "{container}: {paths:?}");
        }
    }
    assert_eq!(
        inspected["/opt"].2,
        ["sealed: open: EACCES: Permission denied"]
    );
    assert_eq!(d["ignored_state"]["unreadable"]["count"], 0, "{d}");

    // The human reports say the same.
    let human = ws.lazaret(&["state", "list"]);
    assert_eq!(human.code, Some(0), "{human:?}");
    let mine: Vec<&str> = human
        .stdout
        .lines()
        .skip_while(|l| !l.contains(ws.domain.as_str()))
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .collect();
    let unreadable: Vec<&&str> = mine.iter().filter(|l| l.contains("unreadable")).collect();
    assert_eq!(
        unreadable.len(),
        2,
        "the /opt size and its one entry: {mine:#?}"
    );
    assert!(
        unreadable[1]
            .trim_start()
            .starts_with("unreadable: anchors/")
            && unreadable[1].ends_with("/upper/sealed: open: EACCES: Permission denied"),
        "{mine:#?}"
    );
    let human = ws.lazaret(&["state", "inspect"]);
    assert!(
        human
            .stdout
            .contains("\n    /opt/sealed: open: EACCES: Permission denied\n"),
        "{human:?}"
    );

    std::fs::remove_dir_all(&sealed).expect("removing the sealed dir");
    ws.assert_nothing_left();
}
