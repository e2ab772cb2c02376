use super::*;
use crate::config::host_paths::HostPaths;
use crate::config::HostConfig;
use std::path::PathBuf;

const HOME: &str = "/nonexistent-lazaret-test/home/dev";

fn load(text: &str) -> HostConfig {
    let host = HostPaths {
        home: PathBuf::from(HOME),
        config_dir: PathBuf::from(format!("{HOME}/.config/lazaret")),
        storage_root: PathBuf::from(format!("{HOME}/.local/share/lazaret")),
        state_dir: PathBuf::from(format!("{HOME}/.local/state/lazaret")),
        runtime_root: None,
    };
    let path = PathBuf::from(format!("{HOME}/.config/lazaret/config.toml"));
    if text.is_empty() {
        return HostConfig::builtin_only(&host, &path).expect("built-ins");
    }
    HostConfig::from_text(text, &path, &host).unwrap_or_else(|e| panic!("{e:#}\n{text}"))
}

/// Allows `target` in `profile` of `text`, checks the result loads and allows it; returns it.
fn allowed(text: &str, profile: &str, target: &str) -> ProfileEdit {
    let cfg = load(text);
    let p = cfg.profile(Some(profile)).expect("profile");
    let target = Target::parse(target).expect("target");
    let edit = allow_in_profile(text, &p, cfg.from_file.contains(profile), &target)
        .expect("edited")
        .expect("a change");
    let after = load(&edit.text).profile(Some(profile)).expect("profile");
    let again = allow_in_profile(&edit.text, &after, true, &target).expect("edited");
    assert_eq!(again, None, "allowed after the edit:\n{}", edit.text);
    edit
}

const FILE: &str = r#"# my agents
default_profile = "py"

[profiles.py]
image = "localhost/lazaret/base:bookworm"   # the base
command = ["bash"]

[profiles.py.network]
# registries
allow = ["198.51.100.0/25"]   # mirror
deny_names = ["denied.test", "*.evil.test"]
default = "deny"
"#;

#[test]
fn an_address_is_appended_to_the_files_own_list_keeping_comments() {
    let edit = allowed(FILE, "py", "203.0.113.9");
    assert_eq!(
        edit.diff,
        [
            "- allow = [\"198.51.100.0/25\"]   # mirror",
            "+ allow = [\"198.51.100.0/25\", \"203.0.113.9/32\"]   # mirror"
        ]
    );
    assert!(edit.text.starts_with("# my agents\n"), "{}", edit.text);
    assert!(edit.text.contains("# registries\n"));
}

#[test]
fn a_denied_name_leaves_the_deny_list_and_joins_the_allow_list() {
    let edit = allowed(FILE, "py", "denied.test");
    assert_eq!(
        edit.diff,
        [
            "- deny_names = [\"denied.test\", \"*.evil.test\"]",
            "- default = \"deny\"",
            "+ deny_names = [\"*.evil.test\"]",
            "+ default = \"deny\"",
            "+ allow_names = [\"denied.test\"]",
        ]
    );
    // Below a wildcard deny, the exact allow is the more specific rule.
    let edit = allowed(FILE, "py", "api.evil.test");
    assert!(
        edit.text.contains("allow_names = [\"api.evil.test\"]"),
        "{}",
        edit.text
    );
}

#[test]
fn a_built_in_profile_is_refined_in_a_new_file_with_what_it_had() {
    let edit = allowed("", "shell", "registry.example.org");
    assert_eq!(
        edit.text,
        "[profiles.shell]\nextends = \"shell\"\n\n[profiles.shell.network]\n\
         allow_names = [\"registry.example.org\"]\n"
    );
    let cfg = load(&edit.text);
    let shell = cfg.profile(Some("shell")).expect("shell");
    let builtin = load("").profile(Some("shell")).expect("shell");
    assert_eq!(
        shell.image, builtin.image,
        "every other key stays the built-in's"
    );
}

#[test]
fn ports_cannot_go_into_a_profile_and_what_is_allowed_already_changes_nothing() {
    let cfg = load(FILE);
    let p = cfg.profile(Some("py")).expect("py");
    let port = Target::parse("203.0.113.9:443").expect("target");
    let e = allow_in_profile(FILE, &p, true, &port).expect_err("no ports");
    assert!(e.contains("--save"), "{e}");
    let mut with = FILE.replace(
        "allow = [\"198.51.100.0/25\"]",
        "allow = [\"203.0.113.9/32\"]",
    );
    with.push_str("allow_names = [\"ok.test\"]\n");
    let cfg = load(&with);
    let p = cfg.profile(Some("py")).expect("py");
    for t in ["203.0.113.9", "ok.test"] {
        let target = Target::parse(t).expect("target");
        assert_eq!(allow_in_profile(&with, &p, true, &target), Ok(None), "{t}");
    }
}

#[test]
fn changed_lines_show_only_the_middle() {
    assert_eq!(changed_lines("a\nb\nc\n", "a\nB\nc\n"), ["- b", "+ B"]);
    assert_eq!(changed_lines("a\n", "a\nb\n"), ["+ b"]);
    assert!(changed_lines("a\n", "a\n").is_empty());
}

/// A profile's `[network]` table replaces its parent's as a whole: a new one starts with
/// everything the profile had.
#[test]
fn a_new_network_table_keeps_the_inherited_policy() {
    let text = r#"[profiles.base]
image = "localhost/lazaret/base:bookworm"
command = ["bash"]

[profiles.base.network]
resolvers = ["198.51.100.53"]
allow = ["10.1.0.0/16"]
deny = ["198.51.100.0/24"]
deny_names = ["x.test"]
default = "deny"

[profiles.child]
extends = "base"
"#;
    let edit = allowed(text, "child", "registry.example.org");
    let child = load(&edit.text).profile(Some("child")).expect("child");
    let base = load(text).profile(Some("base")).expect("base");
    let mut want = base.network.clone();
    want.allow_names.push("registry.example.org".into());
    assert_eq!(child.network, want, "{}", edit.text);
}
