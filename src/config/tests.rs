//! Unit tests of the whole configuration pipeline: text in, profiles or `file:line:` errors out.

use super::host_paths::HostPaths;
use super::*;
use crate::profile::RuleDecision;
use crate::runtime::network_policy::{Ipv4Prefix, DEFAULT_DENY};

const HOME: &str = "/nonexistent-lazaret-test/home/dev";

fn host() -> HostPaths {
    HostPaths {
        home: PathBuf::from(HOME),
        config_dir: PathBuf::from(format!("{HOME}/.config/lazaret")),
        storage_root: PathBuf::from(format!("{HOME}/.local/share/lazaret")),
        state_dir: PathBuf::from(format!("{HOME}/.local/state/lazaret")),
        runtime_root: Some(PathBuf::from(
            "/nonexistent-lazaret-test/run/user/1000/lazaret",
        )),
    }
}

fn path() -> PathBuf {
    PathBuf::from(format!("{HOME}/.config/lazaret/config.toml"))
}

fn load(text: &str) -> Result<HostConfig, String> {
    HostConfig::from_text(text, &path(), &host()).map_err(|e| format!("{e:#}"))
}

fn ok(text: &str) -> HostConfig {
    match load(text) {
        Ok(c) => c,
        Err(e) => panic!("expected a valid configuration, got:\n{e}\n--- for:\n{text}"),
    }
}

fn get(cfg: &HostConfig, name: &str) -> AgentProfile {
    match cfg.profile(Some(name)) {
        Ok(p) => p,
        Err(e) => panic!("{e:#}"),
    }
}

/// Asserts that `text` is refused with an error at `line` that contains every `needle`.
#[track_caller]
fn err_at(text: &str, line: usize, needles: &[&str]) {
    let err = match load(text) {
        Ok(_) => panic!("expected an error at line {line} for:\n{text}"),
        Err(e) => e,
    };
    let at = format!("~/.config/lazaret/config.toml:{line}:");
    let hit = err
        .lines()
        .find(|l| l.starts_with(&at) && needles.iter().all(|n| l.contains(n)));
    assert!(
        hit.is_some(),
        "no error at {at} containing {needles:?}; got:\n{err}"
    );
}

/// A valid profile head; the tests append the keys they are about.
const HEAD: &str = "[profiles.p]\nimage = \"img\"\ncommand = [\"sh\"]\n";

// ---- built-ins ----

#[test]
fn builtins_without_a_file() -> anyhow::Result<()> {
    let cfg = HostConfig::builtin_only(&host(), &path())?;
    assert_eq!(cfg.names(), ["shell", "claude", "codex"]);
    assert_eq!(cfg.default_profile, crate::profile::DEFAULT_PROFILE);
    assert_eq!(cfg.source, None);
    let shell = cfg.profile(None)?;
    assert_eq!(shell.name, "shell");
    assert_eq!(shell.description, "A plain shell");
    assert_eq!(shell.image, crate::profile::DEFAULT_BASE_IMAGE);
    assert_eq!(shell.command, ["bash"]);
    assert_eq!(shell.env.get("HOME").map(String::as_str), Some("/root"));
    let persistent: Vec<PathBuf> = ["/usr", "/etc", "/var", "/root", "/opt"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(shell.persistent, persistent);
    assert!(shell.isolate_ignored);
    assert_eq!(
        shell.hide_editor_dirs,
        [PathBuf::from(".vscode"), PathBuf::from(".idea")]
    );
    assert_eq!(
        shell.network,
        crate::runtime::network_policy::NetworkPolicy::default()
    );
    assert_eq!(shell.setup, None);
    for (name, pkg, bin) in [
        (
            "claude",
            "@anthropic-ai/claude-code",
            "/usr/local/bin/claude",
        ),
        ("codex", "@openai/codex", "/usr/local/bin/codex"),
    ] {
        let p = cfg.profile(Some(name))?;
        assert_eq!(p.image, shell.image);
        assert_eq!(p.persistent, shell.persistent);
        assert_eq!(p.command, [name]);
        assert!(p.auto_approve.is_empty());
        assert!(p.network.allow.is_empty());
        let setup = p
            .setup
            .ok_or_else(|| anyhow::anyhow!("{name} has no setup"))?;
        assert_eq!(setup.creates, PathBuf::from(bin));
        assert_eq!(setup.command[..2], ["sh", "-c"]);
        assert_eq!(setup.command[3..], ["lazaret-setup", pkg]);
        let script = &setup.command[2];
        assert!(script.contains(
            "npm install -g --prefix /usr/local --no-fund --no-update-notifier \"$pkg\""
        ));
        // Node.js >= 22 from the npm registry, checked against pinned sums before unpacking.
        assert!(script.contains("if [ \"$major\" -lt 22 ]; then"));
        assert!(script.contains("node-linux-$arch-$node_version.tgz"));
        let check = script.find("sha512sum -c").unwrap_or(usize::MAX);
        assert!(check < script.find("tar -xzf").unwrap_or(0), "{script}");
        // The script parses as POSIX sh.
        let parsed = std::process::Command::new("sh")
            .args(["-n", "-c", script])
            .status()?;
        assert!(parsed.success(), "sh -n rejected the {name} setup script");
        assert_eq!(cfg.source_of(name), ProfileSource::BuiltIn);
    }
    Ok(())
}

#[test]
fn builtin_profiles_bound_pids_and_memory() {
    let cfg = ok("");
    for p in &cfg.profiles {
        assert_eq!(
            p.limits.pids,
            Some(crate::config::limits::DEFAULT_PIDS),
            "{}",
            p.name
        );
        assert_eq!(
            p.limits.memory,
            Some(crate::config::limits::DEFAULT_MEMORY),
            "{}",
            p.name
        );
        assert_eq!(p.limits.cpus_milli, None, "{}", p.name);
    }
    let raw: toml::Value = toml::from_str(builtin::BUILTIN_TOML).unwrap();
    assert_eq!(
        raw["profiles"]["shell"]["memory"].as_str(),
        Some(crate::config::limits::DEFAULT_MEMORY_TEXT)
    );
}

#[test]
fn builtin_toml_round_trips_as_a_config_file() {
    let builtins = ok("");
    let again = ok(builtin::BUILTIN_TOML);
    assert_eq!(again.profiles, builtins.profiles);
    assert_eq!(again.default_profile, "shell");
    assert_eq!(again.source_of("claude"), ProfileSource::Config);
    for p in &again.profiles {
        assert_eq!(p.fingerprint(), get(&builtins, &p.name).fingerprint());
    }
}

#[test]
fn empty_file_is_the_builtins() {
    let cfg = ok("# nothing yet\n");
    assert_eq!(cfg.names(), ["shell", "claude", "codex"]);
    assert_eq!(cfg.source, Some(path()));
    assert!(cfg.from_file.is_empty());
}

#[test]
fn unknown_profile_lists_the_known_ones() {
    let err = ok("").profile(Some("nope")).err().map(|e| e.to_string());
    assert!(err.unwrap_or_default().contains("shell, claude, codex"));
}

// ---- syntax and shape ----

#[test]
fn unknown_key_names_key_and_line() {
    err_at(
        "[profiles.p]\nimage = \"img\"\ncommand = [\"sh\"]\n\nimagee = \"x\"\n",
        5,
        &[
            "unknown field `imagee`",
            "expected one of",
            "check the spelling",
        ],
    );
    err_at(
        "default_profil = \"shell\"\n",
        1,
        &["unknown field `default_profil`"],
    );
    err_at(
        &format!(
            "{HEAD}[[profiles.p.volumes]]\nhost = \"/h\"\ncontainer = \"/c\"\nreadonly = true\n"
        ),
        7,
        &["unknown field `readonly`", "read_only"],
    );
    err_at(
        &format!("{HEAD}[profiles.p.network]\nallow = []\nallows = []\n"),
        6,
        &["unknown field `allows`"],
    );
}

#[test]
fn syntax_and_type_errors_have_lines() {
    err_at("[profiles.p]\nimage = \"img\n", 2, &["fix the TOML"]);
    err_at(
        "[profiles.p]\nimage = 3\ncommand = [\"sh\"]\n",
        2,
        &["string"],
    );
    err_at(
        &format!("{HEAD}[[profiles.p.volumes]]\nhost = \"/h\"\n"),
        4,
        &["missing field `container`"],
    );
}

// ---- names, image, command, env, description ----

#[test]
fn profile_names_are_checked() {
    err_at(
        "[profiles.My_Agent]\nimage = \"i\"\ncommand = [\"sh\"]\n",
        1,
        &["\"My_Agent\"", "lowercase"],
    );
    err_at(
        &format!(
            "[profiles.{}]\nimage = \"i\"\ncommand = [\"sh\"]\n",
            "a".repeat(41)
        ),
        1,
        &["not allowed"],
    );
    ok(&format!(
        "[profiles.{}]\nimage = \"i\"\ncommand = [\"sh\"]\n",
        "a".repeat(40)
    ));
}

#[test]
fn image_and_command_are_required_and_non_empty() {
    err_at(
        "[profiles.p]\ncommand = [\"sh\"]\n",
        1,
        &["has no image", "extends"],
    );
    err_at("[profiles.p]\nimage = \"i\"\n", 1, &["has no command"]);
    err_at(
        "[profiles.p]\nimage = \"\"\ncommand = [\"sh\"]\n",
        2,
        &["image is empty"],
    );
    err_at(
        "[profiles.p]\nimage = \"a b\"\ncommand = [\"sh\"]\n",
        2,
        &["whitespace"],
    );
    err_at(
        "[profiles.p]\nimage = \"i\"\ncommand = []\n",
        3,
        &["command is empty"],
    );
    err_at(
        "[profiles.p]\nimage = \"i\"\ncommand = [\"\", \"x\"]\n",
        3,
        &["program", "empty"],
    );
    err_at(
        "[profiles.p]\nimage = \"i\"\ncommand = [\"sh\", \"a\\u0000b\"]\n",
        3,
        &["NUL"],
    );
    err_at(
        &format!("{HEAD}description = \"two\\nlines\"\n"),
        4,
        &["one line"],
    );
}

#[test]
fn env_is_checked() {
    err_at(
        &format!("{HEAD}env = {{ \"1X\" = \"v\" }}\n"),
        4,
        &["\"1X\"", "shell identifier"],
    );
    err_at(
        &format!("{HEAD}env = {{ \"A-B\" = \"v\" }}\n"),
        4,
        &["shell identifier"],
    );
    err_at(
        &format!("{HEAD}env = {{ LAZARET_X = \"v\" }}\n"),
        4,
        &["LAZARET_X", "reserved"],
    );
    err_at(
        &format!("{HEAD}[profiles.p.env]\nOK = \"v\"\nBAD = \"a\\u0000\"\n"),
        6,
        &["BAD", "NUL"],
    );
    let p = get(
        &ok(&format!("{HEAD}env = {{ B = \"2\", A = \"1\" }}\n")),
        "p",
    );
    assert_eq!(p.env.keys().collect::<Vec<_>>(), ["A", "B"]);
}

// ---- persistent ----

#[test]
fn persistent_paths_are_checked() {
    let line = |v: &str| format!("{HEAD}persistent = [{v}]\n");
    err_at(&line("\"usr\""), 4, &["not an absolute path"]);
    err_at(&line("\"/usr/../etc\""), 4, &["\"..\""]);
    err_at(&line("\"/\""), 4, &["whole filesystem"]);
    err_at(&line("\"/workspace\""), 4, &["/workspace"]);
    err_at(&line("\"/workspace/node_modules\""), 4, &["workspace"]);
    for v in ["/proc", "/sys/x", "/dev", "/run/x", "/tmp", "/tmp/cache"] {
        err_at(&line(&format!("\"{v}\"")), 4, &["sandbox kernel creates"]);
    }
    ok(&line("\"/tmpx\", \"/workspacex\""));
    let nested = format!("{HEAD}persistent = [\n  \"/usr\",\n  \"/usr/local\",\n]\n");
    err_at(
        &nested,
        6,
        &[
            "/usr/local is inside persistent path /usr",
            "line 6 and line 5",
            "keep only /usr",
        ],
    );
    err_at(
        &line("\"/opt/x\", \"/opt\""),
        4,
        &["/opt/x is inside persistent path /opt"],
    );
    err_at(&line("\"/usr\", \"//usr/\""), 4, &["listed twice"]);
    let many: Vec<String> = (0..17).map(|i| format!("\"/p{i}\"")).collect();
    err_at(&line(&many.join(", ")), 4, &["at most 16"]);
    let sixteen: Vec<String> = (0..16).map(|i| format!("\"/p{i}\"")).collect();
    ok(&line(&sixteen.join(", ")));
    let p = get(&ok(&line("\"/usr//local/\", \"/./opt\"")), "p");
    assert_eq!(
        p.persistent,
        [PathBuf::from("/usr/local"), PathBuf::from("/opt")]
    );
}

// ---- volumes ----

fn volume(host: &str, container: &str) -> String {
    format!("{HEAD}persistent = [\"/usr\"]\n[[profiles.p.volumes]]\nhost = \"{host}\"\ncontainer = \"{container}\"\n")
}

#[test]
fn volume_host_paths_are_checked() {
    err_at(&volume("cache", "/c"), 6, &["not an absolute path"]);
    err_at(
        &volume("~bob/x", "/c"),
        6,
        &["only \"~/\" (your own home directory)"],
    );
    err_at(&volume("/a/../b", "/c"), 6, &["\"..\""]);
    err_at(&volume("~/.config", "/c"), 6, &["configuration directory"]);
    err_at(
        &volume("~/.config/lazaret/x", "/c"),
        6,
        &["configuration directory", "SR-2"],
    );
    err_at(
        &volume("~/.local/share/lazaret/d", "/c"),
        6,
        &["Storage Root"],
    );
    err_at(&volume("~/.local/state", "/c"), 6, &["state directory"]);
    err_at(
        &volume("/nonexistent-lazaret-test/run/user/1000", "/c"),
        6,
        &["runtime directory"],
    );
    err_at(&volume("~", "/c"), 6, &["contains your home directory"]);
    err_at(
        &volume("/nonexistent-lazaret-test", "/c"),
        6,
        &["contains your home directory"],
    );
    err_at(&volume("/", "/c"), 6, &["contains your home directory"]);
    let p = get(&ok(&volume("~/.cache/pip/", "/root/.cache/pip")), "p");
    assert_eq!(
        p.volumes[0].host,
        PathBuf::from(format!("{HOME}/.cache/pip"))
    );
    assert_eq!(p.volumes[0].container, PathBuf::from("/root/.cache/pip"));
    assert!(!p.volumes[0].read_only);
}

#[test]
fn volume_host_symlink_into_lazaret_dirs_is_refused() -> std::io::Result<()> {
    let t = tempfile::tempdir()?;
    let home = t.path().join("home");
    let storage = home.join(".local/share/lazaret");
    std::fs::create_dir_all(&storage)?;
    std::os::unix::fs::symlink(&storage, home.join("innocent"))?;
    let h = HostPaths {
        home: home.clone(),
        config_dir: home.join(".config/lazaret"),
        storage_root: storage,
        state_dir: home.join(".local/state/lazaret"),
        runtime_root: None,
    };
    let text = format!(
        "{HEAD}[[profiles.p.volumes]]\nhost = \"{}/innocent/x\"\ncontainer = \"/c\"\n",
        home.display()
    );
    let err = HostConfig::from_text(&text, &h.config_dir.join("config.toml"), &h)
        .err()
        .map(|e| format!("{e:#}"))
        .unwrap_or_default();
    assert!(
        err.contains("config.toml:5:") && err.contains("Storage Root"),
        "{err}"
    );
    Ok(())
}

#[test]
fn volume_container_paths_are_checked() {
    err_at(&volume("/h", "c"), 7, &["not an absolute path"]);
    err_at(&volume("/h", "/"), 7, &["\"/\""]);
    err_at(&volume("/h", "/workspace"), 7, &["workspace"]);
    err_at(&volume("/h", "/workspace/sub/"), 7, &["/workspace/sub"]);
    err_at(
        &volume("/h", "/usr/share/x"),
        7,
        &["overlaps persistent path /usr (line 4)"],
    );
    err_at(&volume("/h", "/usr"), 7, &["overlaps persistent path /usr"]);
    err_at(&format!("{HEAD}persistent = [\"/opt/tools\"]\n[[profiles.p.volumes]]\nhost = \"/h\"\ncontainer = \"/opt\"\n"), 7, &["overlaps persistent path /opt/tools"]);
    let two = format!("{HEAD}[[profiles.p.volumes]]\nhost = \"/a\"\ncontainer = \"/data\"\n[[profiles.p.volumes]]\nhost = \"/b\"\ncontainer = \"/data/\"\n");
    err_at(&two, 9, &["two volumes", "line 6"]);
    let ro = format!("{HEAD}[[profiles.p.volumes]]\nhost = \"/srv/data\"\ncontainer = \"/data\"\nread_only = true\n");
    assert!(get(&ok(&ro), "p").volumes[0].read_only);
}

// ---- network ----

fn net(allow: &str, deny: &str) -> String {
    format!("{HEAD}[profiles.p.network]\nallow = [{allow}]\ndeny = [{deny}]\n")
}

#[test]
fn network_prefixes_are_checked() {
    err_at(&net("\"10.1.2\"", ""), 5, &["not an IPv4 prefix"]);
    err_at(&net("\"fd00::/8\"", ""), 5, &["not an IPv4 prefix"]);
    err_at(&net("", "\"10.1.2.0/33\""), 6, &["above 32"]);
    err_at(
        &net("\"10.1.2.3/24\"", ""),
        5,
        &["10.1.2.3/24 has host bits set; did you mean 10.1.2.0/24?"],
    );
}

#[test]
fn equal_prefix_conflicts_are_refused() {
    err_at(
        &net("\"203.0.113.0/24\"", "\"203.0.113.0/24\""),
        5,
        &["conflicts with the deny rule at line 6", "SR-6"],
    );
    err_at(
        &net("\"10.0.0.0/8\"", ""),
        5,
        &["conflicts with the default deny rule", "10.0.0.0/8"],
    );
    err_at(&net("\"192.168.0.0/16\"", ""), 5, &["default deny rule"]);
}

#[test]
fn nested_rules_are_accepted_and_the_longest_prefix_decides() {
    let p = get(&ok(&net("\"203.0.0.0/8\"", "\"203.0.113.0/24\"")), "p");
    let nft = p.network.render_nft();
    let deny = nft
        .find("ip daddr 203.0.113.0/24 meta")
        .unwrap_or(usize::MAX);
    let allow = nft.find("ip daddr 203.0.0.0/8 accept").unwrap_or(0);
    assert!(deny < allow, "{nft}");
}

#[test]
fn networking_can_be_turned_off() {
    let text =
        "[profiles.p]\nimage = \"i\"\ncommand = [\"sh\"]\n[profiles.p.network]\nenabled = false\n";
    assert!(!get(&ok(text), "p").network.enabled);
}

#[test]
fn name_rules_resolvers_and_default_are_checked() {
    let net = |body: &str| format!("{HEAD}[profiles.p.network]\n{body}");
    let p = get(
        &ok(&net(
            "resolvers = [\"198.51.100.53\"]\nallow_names = [\"*.npmjs.org\", \"API.example.com.\"]\ndeny_names = [\"evil.example.com\"]\ndefault = \"deny\"\n",
        )),
        "p",
    );
    assert_eq!(p.network.allow_names, ["*.npmjs.org", "api.example.com"]);
    assert!(p.network.default_deny);
    assert_eq!(
        p.network.dns_settings().upstream.to_string(),
        "198.51.100.53:53"
    );
    err_at(&net("allow_names = [\"a..b\"]\n"), 5, &["allow_names"]);
    err_at(
        &net("resolvers = [\"dns.example\"]\n"),
        5,
        &["not an IPv4 address"],
    );
    err_at(
        &net("default = \"maybe\"\n"),
        5,
        &["is not \"allow\", \"deny\" or \"ask\""],
    );
    err_at(
        &net("allow_names = [\"x.example\"]\ndeny_names = [\"x.example\"]\n"),
        6,
        &["x.example", "conflicts are refused"],
    );
}

#[test]
fn default_ask_holds_for_its_timeout() {
    let net = |body: &str| format!("{HEAD}[profiles.p.network]\n{body}");
    let p = get(&ok(&net("default = \"ask\"\n")), "p");
    assert!(p.network.default_deny);
    assert_eq!(p.network.ask_timeout, Some(60));
    assert_eq!(p.network.default_word(), "ask");
    let p = get(&ok(&net("default = \"ask\"\nask_timeout = 15\n")), "p");
    assert_eq!(p.network.ask_timeout, Some(15));
    err_at(
        &net("default = \"deny\"\nask_timeout = 15\n"),
        6,
        &["ask_timeout", "only used with default = \"ask\""],
    );
    for bad in ["0", "601", "-3"] {
        err_at(
            &net(&format!("default = \"ask\"\nask_timeout = {bad}\n")),
            6,
            &["from 1 to 600"],
        );
    }
    let deny = get(&ok(&net("default = \"deny\"\n")), "p");
    assert_ne!(
        deny.fingerprint(),
        get(&ok(&net("default = \"ask\"\n")), "p").fingerprint(),
        "the running Domain's policy is part of its fingerprint"
    );
}

#[test]
fn network_policy_is_default_plus_config() {
    let p = get(
        &ok(&net(
            "\"10.1.2.0/24\", \"192.168.7.7/32\"",
            "\"203.0.113.0/24\", \"10.0.0.0/8\"",
        )),
        "p",
    );
    let pre = |s: &str| Ipv4Prefix::parse(s).unwrap_or(Ipv4Prefix::new(0, 0, 0, 0, 0));
    assert_eq!(p.network.allow, [pre("10.1.2.0/24"), pre("192.168.7.7/32")]);
    let mut deny = DEFAULT_DENY.to_vec();
    deny.push(pre("203.0.113.0/24"));
    assert_eq!(p.network.deny, deny);
    assert!(p
        .network
        .render_nft()
        .contains("ip daddr 10.1.2.0/24 accept"));
}

// ---- auto_approve and setup ----

#[test]
fn auto_approve_rules_are_checked() {
    let rule = |argv: &str| format!("{HEAD}[[profiles.p.auto_approve]]\nargv = {argv}\n");
    err_at(&rule("[]"), 5, &["auto_approve argv is empty"]);
    err_at(&rule("[\"\"]"), 5, &["program", "empty"]);
    err_at(&rule("[\"git\", \"a\\nb\"]"), 5, &["line break"]);
    err_at(&rule("[\"git\", \"a\\u0000\"]"), 5, &["NUL"]);
    err_at(
        &format!("{HEAD}[[profiles.p.auto_approve]]\ntrailing_args = true\n"),
        4,
        &["missing field `argv`"],
    );
    let text = format!(
        "{HEAD}[[profiles.p.auto_approve]]\nargv = [\"git\", \"status\"]\n\
         [[profiles.p.auto_approve]]\nargv = [\"make\"]\ntrailing_args = true\n"
    );
    let p = get(&ok(&text), "p");
    assert_eq!(p.auto_approve.len(), 2);
    assert_eq!(p.auto_approve[0].argv, ["git", "status"]);
    assert!(!p.auto_approve[0].trailing_args);
    assert!(p.auto_approve[1].trailing_args);
    assert_eq!(p.auto_approve[0].decision, RuleDecision::Approve);
}

#[test]
fn rule_decisions_are_approve_ask_or_deny() {
    let rule = |d: &str| {
        format!(
            "{HEAD}[[profiles.p.auto_approve]]
argv = [\"git\", \"push\"]
decision = \"{d}\"
"
        )
    };
    for (word, decision) in [
        ("approve", RuleDecision::Approve),
        ("ask", RuleDecision::Ask),
        ("deny", RuleDecision::Deny),
    ] {
        assert_eq!(
            get(&ok(&rule(word)), "p").auto_approve[0].decision,
            decision
        );
    }
    err_at(
        &rule("allow"),
        6,
        &["\"allow\" is not a rule decision", "\"ask\""],
    );
}

#[test]
fn setup_is_checked() {
    let setup = |cmd: &str, creates: &str| {
        format!("{HEAD}[profiles.p.setup]\ncommand = {cmd}\ncreates = \"{creates}\"\n")
    };
    err_at(&setup("[]", "/x"), 5, &["setup command is empty"]);
    err_at(
        &setup("[\"sh\"]", "usr/bin/x"),
        6,
        &["setup creates", "not an absolute path"],
    );
    err_at(&setup("[\"sh\"]", "/"), 6, &["always exists"]);
    let p = get(
        &ok(&setup("[\"sh\", \"-c\", \"true\"]", "/usr/local/bin/x/")),
        "p",
    );
    assert_eq!(
        p.setup.map(|s| s.creates),
        Some(PathBuf::from("/usr/local/bin/x"))
    );
}

// ---- workspace protections ----

#[test]
fn isolate_ignored_and_editor_dirs() {
    let p = get(
        &ok(&format!(
            "{HEAD}isolate_ignored = false\nhide_editor_dirs = [\".vscode/\", \"./.fleet\"]\n"
        )),
        "p",
    );
    assert!(!p.isolate_ignored);
    assert_eq!(
        p.hide_editor_dirs,
        [PathBuf::from(".vscode"), PathBuf::from(".fleet")]
    );
    err_at(
        &format!("{HEAD}hide_editor_dirs = [\"/etc\"]\n"),
        4,
        &["absolute"],
    );
    err_at(
        &format!("{HEAD}hide_editor_dirs = [\"../x\"]\n"),
        4,
        &["\"..\""],
    );
    err_at(
        &format!("{HEAD}hide_editor_dirs = [\".git/hooks\"]\n"),
        4,
        &["Git Sentry"],
    );
    assert!(get(&ok(&format!("{HEAD}hide_editor_dirs = []\n")), "p")
        .hide_editor_dirs
        .is_empty());
}

// ---- default_profile, overrides, extends ----

#[test]
fn default_profile_must_exist() {
    err_at(
        "default_profile = \"nope\"\n",
        1,
        &["\"nope\"", "`shell`, `claude`, `codex`"],
    );
    assert_eq!(ok("default_profile = \"codex\"\n").default_profile, "codex");
    let cfg = ok(&format!("default_profile = \"p\"\n{HEAD}"));
    assert_eq!(cfg.default_profile, "p");
    assert_eq!(cfg.profile(None).map(|p| p.name).ok().as_deref(), Some("p"));
}

#[test]
fn a_config_profile_replaces_a_builtin_entirely() {
    let cfg = ok("[profiles.claude]\nimage = \"my/claude\"\ncommand = [\"claude\", \"--debug\"]\n");
    assert_eq!(cfg.names(), ["shell", "claude", "codex"]);
    let c = get(&cfg, "claude");
    assert_eq!(c.image, "my/claude");
    assert_eq!(c.setup, None);
    assert!(c.persistent.is_empty());
    assert!(c.env.is_empty());
    assert_eq!(cfg.source_of("claude"), ProfileSource::Config);
    assert_eq!(cfg.source_of("shell"), ProfileSource::BuiltIn);
}

#[test]
fn new_profiles_follow_the_builtins_in_file_order() {
    let cfg = ok("[profiles.zz]\nimage = \"i\"\ncommand = [\"a\"]\n[profiles.aa]\nimage = \"i\"\ncommand = [\"b\"]\n");
    assert_eq!(cfg.names(), ["shell", "claude", "codex", "zz", "aa"]);
}

#[test]
fn extends_inherits_unset_fields() {
    let cfg = ok(
        "[profiles.mine]\nextends = \"claude\"\ndescription = \"mine\"\n\
                  env = { HOME = \"/root\", EDITOR = \"vi\" }\n\
                  [[profiles.mine.volumes]]\nhost = \"~/.cache/pip\"\ncontainer = \"/cache/pip\"\n",
    );
    let (mine, claude) = (get(&cfg, "mine"), get(&cfg, "claude"));
    assert_eq!(mine.image, claude.image);
    assert_eq!(mine.command, claude.command);
    assert_eq!(mine.setup, claude.setup);
    assert_eq!(mine.persistent, claude.persistent);
    assert_eq!(mine.description, "mine");
    assert_eq!(mine.env.len(), 2);
    assert_eq!(mine.volumes.len(), 1);
}

#[test]
fn extends_can_refine_the_builtin_it_replaces_and_later_profiles() {
    let cfg = ok("[profiles.a]\nextends = \"b\"\ncommand = [\"a\"]\n\
                  [profiles.b]\nextends = \"shell\"\ncommand = [\"b\"]\n\
                  [profiles.shell]\nextends = \"shell\"\nisolate_ignored = false\n");
    assert_eq!(get(&cfg, "a").image, crate::profile::DEFAULT_BASE_IMAGE);
    let shell = get(&cfg, "shell");
    assert!(!shell.isolate_ignored);
    assert_eq!(shell.command, ["bash"]);
    // `b` extends `shell` as the file redefines it (only a profile extending its own name
    // reaches the built-in it replaces).
    assert!(!get(&cfg, "b").isolate_ignored);
    assert_eq!(get(&cfg, "b").command, ["b"]);
}

#[test]
fn extends_errors() {
    err_at(
        "[profiles.a]\nextends = \"nope\"\n",
        2,
        &["\"nope\"", "not a profile"],
    );
    err_at("[profiles.a]\nextends = \"a\"\n", 2, &["extends itself"]);
    err_at(
        "[profiles.a]\nextends = \"b\"\n[profiles.b]\nextends = \"c\"\n[profiles.c]\nextends = \"a\"\n",
        6,
        &["cycle (a -> b -> c -> a)"],
    );
    // A value inherited through extends that clashes with one set here: reported at the
    // line set here, naming the inherited one.
    err_at(
        "[profiles.a]\nextends = \"shell\"\n[[profiles.a.volumes]]\nhost = \"/h\"\ncontainer = \"/usr/lib/x\"\n",
        5,
        &["overlaps persistent path /usr (inherited through `extends`)"],
    );
    err_at(
        "[profiles.a]\nextends = \"shell\"\nenv = { LAZARET_A = \"1\" }\nimage = \"\"\n",
        3,
        &["LAZARET_A"],
    );
}

#[test]
fn all_problems_are_reported_at_once() -> Result<(), String> {
    let err = match load("[profiles.a]\nimage = \"\"\ncommand = []\n[profiles.b]\nimage = \"i\"\n")
    {
        Ok(_) => return Err("expected errors".into()),
        Err(e) => e,
    };
    for at in [":2:", ":3:", ":4:"] {
        assert!(
            err.lines().any(|l| l.contains(at)),
            "{at} missing in\n{err}"
        );
    }
    // In file order, although the network checks run after the parsing of every prefix.
    let err = load(&net("\"10.0.0.0/8\", \"1.2.3.4/8\"", ""))
        .err()
        .unwrap_or_default();
    let cols: Vec<&str> = err.lines().filter_map(|l| l.split(':').nth(2)).collect();
    assert_eq!(cols, ["10", "24"], "{err}");
    // Multi-line toml messages stay on one line.
    let err = load("[profiles.p\n").err().unwrap_or_default();
    assert_eq!(err.lines().count(), 1, "{err}");
    Ok(())
}

// ---- fingerprint ----

#[test]
fn fingerprint_ignores_spelling_and_follows_content() {
    let a = "[profiles.p]\nimage = \"img\"\ncommand = [\"sh\"]\nenv = { A = \"1\", B = \"2\" }\n\
             persistent = [\"/usr\", \"/opt/\"]\n\
             # more\n\
             [[profiles.p.volumes]]\nhost = \"~/.cache/pip/\"\ncontainer = \"/root/.cache/pip\"\n\
             [profiles.p.network]\nallow = [\"10.1.2.0/24\"]\n";
    let b = format!(
        "[profiles.p.network]\nallow = [ \"10.1.2.0/24\" ]\ndeny = []\n\
         [profiles.p]\nenv.B = \"2\"\nenv.A = \"1\"\ncommand = [ \"sh\" ]\nimage = 'img'\n\
         isolate_ignored = true\nhide_editor_dirs = [\".vscode\", \".idea\"]\n\
         persistent = [\"//usr/\", \"/opt\"]\n\
         [[profiles.p.volumes]]\ncontainer = \"/root/.cache/pip/\"\nhost = \"{HOME}/.cache//pip\"\nread_only = false\n"
    );
    let fa = get(&ok(a), "p").fingerprint();
    assert_eq!(fa, get(&ok(&b), "p").fingerprint());
    assert_eq!(fa, get(&ok(a), "p").fingerprint());
    let changes = [
        ("image = \"img\"", "image = \"img2\""),
        ("command = [\"sh\"]", "command = [\"sh\", \"-l\"]"),
        ("A = \"1\"", "A = \"2\""),
        ("\"/opt/\"", "\"/srv\""),
        ("[\"/usr\", \"/opt/\"]", "[\"/opt\", \"/usr\"]"),
        ("\"~/.cache/pip/\"", "\"~/.cache/pip2\""),
        (
            "container = \"/root/.cache/pip\"",
            "container = \"/root/.cache/pip\"\nread_only = true",
        ),
        ("10.1.2.0/24", "10.1.3.0/24"),
        ("# more", "isolate_ignored = false"),
        ("# more", "hide_editor_dirs = []"),
        ("# more", "description = \"d\""),
        (
            "[profiles.p.network]",
            "[[profiles.p.auto_approve]]\nargv = [\"ls\"]\n[profiles.p.network]",
        ),
        (
            "[profiles.p.network]",
            "[profiles.p.setup]\ncommand = [\"true\"]\ncreates = \"/x\"\n[profiles.p.network]",
        ),
        (
            "allow = [\"10.1.2.0/24\"]",
            "allow = [\"10.1.2.0/24\"]\ndeny = [\"203.0.113.0/24\"]",
        ),
    ];
    for (from, to) in changes {
        let changed = a.replacen(from, to, 1);
        assert_ne!(changed, a, "{from} not in the base text");
        assert_ne!(
            get(&ok(&changed), "p").fingerprint(),
            fa,
            "changing {from} to {to}"
        );
    }
}

// ---- location of the configuration ----

#[test]
fn check_outside_follows_a_symlinked_config_file() -> anyhow::Result<()> {
    let t = tempfile::tempdir()?;
    let ws = t.path().join("workspace");
    let dir = t.path().join("xdg/lazaret");
    std::fs::create_dir_all(&ws)?;
    std::fs::create_dir_all(&dir)?;
    std::fs::write(ws.join("lazaret.toml"), "")?;
    std::os::unix::fs::symlink(ws.join("lazaret.toml"), dir.join("config.toml"))?;
    let mut cfg = ok("");
    cfg.path = dir.join("config.toml");
    let err = cfg
        .check_outside(&[ws.as_path()])
        .err()
        .map(|e| format!("{e:#}"))
        .unwrap_or_default();
    assert!(
        err.contains(&ws.display().to_string()) && err.contains("Move the file"),
        "{err}"
    );
    cfg.check_outside(&[t.path().join("elsewhere").as_path()])?;
    Ok(())
}

#[test]
fn terminal_access_is_off_by_default_set_per_key_and_inherited() {
    use crate::profile::TerminalAccess;
    let cfg = ok(&format!(
        "{HEAD}[profiles.p.terminal]\nclipboard = true\n\
         [profiles.q]\nextends = \"p\"\n[profiles.q.terminal]\nnotifications = true\n\
         [profiles.r]\nextends = \"p\"\n"
    ));
    let both = TerminalAccess {
        clipboard: true,
        notifications: true,
        ..TerminalAccess::default()
    };
    let clip = TerminalAccess {
        clipboard: true,
        ..TerminalAccess::default()
    };
    assert_eq!(get(&cfg, "p").terminal, clip);
    assert_eq!(get(&cfg, "q").terminal, both);
    assert_eq!(get(&cfg, "r").terminal, clip);
    assert_eq!(get(&cfg, "shell").terminal, TerminalAccess::default());
    assert!(!get(&cfg, "shell").terminal.clipboard);
    let refused = load(&format!("{HEAD}[profiles.p.terminal]\nosc52 = true\n"));
    assert!(refused.is_err_and(|e| e.contains("osc52")));
}

#[test]
fn hyperlinks_and_echoing_queries_are_off_unless_a_profile_turns_them_on() {
    let cfg = ok(&format!(
        "{HEAD}[profiles.p.terminal]\nhyperlinks = true\n\
         [profiles.q]\nextends = \"p\"\n[profiles.q.terminal]\necho_queries = true\n"
    ));
    let shell = get(&cfg, "shell").terminal;
    assert!(!shell.hyperlinks && !shell.echo_queries);
    let p = get(&cfg, "p").terminal;
    assert!(p.hyperlinks && !p.echo_queries);
    let q = get(&cfg, "q").terminal;
    assert!(q.hyperlinks && q.echo_queries && !q.clipboard);
}

#[test]
fn image_paste_is_on_unless_a_profile_or_its_parent_turns_it_off() {
    let cfg = ok(&format!(
        "{HEAD}[profiles.p.terminal]\nimage_paste = false\n\
         [profiles.q]\nextends = \"p\"\n\
         [profiles.r]\nextends = \"p\"\n[profiles.r.terminal]\nimage_paste = true\n"
    ));
    assert!(!get(&cfg, "p").image_paste());
    assert!(!get(&cfg, "q").image_paste(), "inherited");
    assert!(get(&cfg, "r").image_paste());
    assert!(get(&cfg, "shell").image_paste());
    assert_eq!(
        get(&cfg, "shell").image_paste,
        None,
        "unset: the fingerprint's form is unchanged"
    );
    let refused = load(&format!(
        "{HEAD}[profiles.p.terminal]\nimage_paste = \"yes\"\n"
    ));
    assert!(refused.is_err(), "a string for a boolean is refused");
}

#[test]
fn idle_after_is_a_profile_setting_inherited_checked_and_out_of_the_fingerprint_when_unset() {
    let cfg = ok(&format!(
        "{HEAD}[profiles.p.activity]\nidle_after = 30\n[profiles.q]\nextends = \"p\"\n"
    ));
    assert_eq!(get(&cfg, "p").idle_after_secs, Some(30));
    assert_eq!(
        get(&cfg, "q").idle_after(),
        std::time::Duration::from_secs(30)
    );
    assert_eq!(get(&cfg, "shell").idle_after_secs, None);
    assert_eq!(
        get(&cfg, "shell").idle_after(),
        crate::coordinator::activity::IDLE_AFTER
    );
    // Unset, the profile's canonical form (and so its fingerprint) is what it was before
    // the setting existed.
    let shell = serde_json::to_string(&get(&cfg, "shell")).unwrap_or_default();
    assert!(!shell.contains("idle_after"), "{shell}");
    let p = get(&cfg, "p");
    let mut unset = p.clone();
    unset.idle_after_secs = None;
    assert_ne!(p.fingerprint(), unset.fingerprint());
    for bad in ["0", "-1", "86401"] {
        let e = load(&format!(
            "{HEAD}[profiles.p.activity]\nidle_after = {bad}\n"
        ));
        assert!(
            e.as_ref()
                .is_err_and(|e| e.contains("use 1 to 86400 seconds")),
            "{bad}: {e:?}"
        );
    }
    let e = load(&format!("{HEAD}[profiles.p.activity]\nbusy_after = 3\n"));
    assert!(e.is_err_and(|e| e.contains("busy_after")));
}

#[test]
fn host_services_and_published_ports() {
    let net = |body: &str| format!("{HEAD}[profiles.p.network]\n{body}");
    let cfg = ok(&net(
        "host_services = [\"tcp/5432\", \"udp/8125\", \"tcp/5432\"]\npublish = [3000, \"18000:8000\"]\n",
    ));
    let p = get(&cfg, "p");
    assert_eq!(
        p.network
            .host_services
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["tcp/5432", "udp/8125"]
    );
    assert_eq!(p.network.publish, [(3000, 3000), (18000, 8000)]);
    err_at(
        &net("host_services = [\"sctp/1\"]\n"),
        5,
        &["host_services", "tcp/PORT"],
    );
    err_at(&net("host_services = [\"tcp/0\"]\n"), 5, &["host_services"]);
    err_at(&net("publish = [0]\n"), 5, &["publish", "not a port"]);
    err_at(&net("publish = [\"x:80\"]\n"), 5, &["publish"]);
    err_at(
        &net("publish = [80, \"80:81\"]\n"),
        5,
        &["host port 80 is published twice"],
    );
}

#[test]
fn trust_host_cas_is_on_unless_a_profile_or_its_parent_turns_it_off() {
    let cfg = ok(&format!(
        "{HEAD}trust_host_cas = false\n\
         [profiles.q]\nextends = \"p\"\n\
         [profiles.r]\nextends = \"p\"\ntrust_host_cas = true\n"
    ));
    assert!(!get(&cfg, "p").trust_host_cas());
    assert!(!get(&cfg, "q").trust_host_cas(), "inherited");
    assert!(get(&cfg, "r").trust_host_cas());
    assert!(
        get(&cfg, "claude").trust_host_cas(),
        "built-in profiles: on"
    );
    assert_eq!(
        get(&cfg, "shell").trust_host_cas,
        None,
        "unset: the fingerprint's form is unchanged"
    );
    assert_ne!(
        get(&cfg, "p").fingerprint(),
        get(&cfg, "r").fingerprint(),
        "turning it off changes the sandbox, so the fingerprint"
    );
    assert!(load(&format!("{HEAD}trust_host_cas = \"no\"\n")).is_err());
}

#[test]
fn login_ports_are_declared_by_codex_inherited_and_checked() {
    let cfg = ok("[profiles.mine]\nextends = \"codex\"\n");
    let login = get(&cfg, "mine").login.expect("codex's login");
    assert_eq!(login.ports, vec![1455]);
    assert_eq!(login.signed_in, PathBuf::from("/root/.codex/auth.json"));
    assert!(
        get(&cfg, "claude").login.is_none(),
        "Claude Code needs no port"
    );
    err_at(
        "[profiles.x]\n[profiles.x.login]\nports = [0]\nsigned_in = \"/root/a\"\n",
        3,
        &["login port 0", "1 to 65535"],
    );
    err_at(
        "[profiles.x]\n[profiles.x.login]\nports = [1455]\nsigned_in = \"rel\"\n",
        4,
        &["signed_in"],
    );
}
