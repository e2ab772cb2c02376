//! `lazaret config` and `lazaret profile` on the built binary: no container runtime needed,
//! the host configuration in a temporary XDG layout. Passes as root and as a normal user.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary home with the XDG directories inside it.
struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    fn new() -> Host {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = dir.path().join("run");
        std::fs::create_dir_all(&run).expect("runtime dir");
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        Host { dir }
    }

    fn home(&self) -> &Path {
        self.dir.path()
    }

    fn config_file(&self) -> PathBuf {
        self.home().join("xdg-config/lazaret/config.toml")
    }

    fn write_config(&self, text: &str) -> PathBuf {
        let f = self.config_file();
        std::fs::create_dir_all(f.parent().expect("parent")).expect("config dir");
        std::fs::write(&f, text).expect("write config");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        f
    }

    fn lazaret(&self, args: &[&str]) -> Output {
        let h = self.home();
        Command::new(env!("CARGO_BIN_EXE_lazaret"))
            .args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", h)
            .env("XDG_CONFIG_HOME", h.join("xdg-config"))
            .env("XDG_DATA_HOME", h.join("xdg-data"))
            .env("XDG_STATE_HOME", h.join("xdg-state"))
            .env("XDG_RUNTIME_DIR", h.join("run"))
            .output()
            .expect("run lazaret")
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

#[track_caller]
fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

const CONFIG: &str = r#"default_profile = "py"

[profiles.py]
extends = "shell"
description = "Python work"
env = { HOME = "/root", PIP_CACHE_DIR = "/cache/pip" }

[[profiles.py.volumes]]
host = "~/.cache/pip"
container = "/cache/pip"

[profiles.py.network]
allow = ["10.1.2.0/24"]
"#;

#[test]
fn config_path_and_check_without_a_file() {
    let host = Host::new();
    let out = host.lazaret(&["config", "path"]);
    assert_ok(&out);
    assert_eq!(
        stdout(&out).trim(),
        host.config_file().display().to_string()
    );

    let out = host.lazaret(&["config", "check"]);
    assert_ok(&out);
    assert!(
        stdout(&out).contains("built-in profiles only"),
        "{}",
        stdout(&out)
    );

    let out = host.lazaret(&["config", "check", "--json"]);
    assert_ok(&out);
    let v = json(&out);
    assert_eq!(v["ok"], true);
    assert_eq!(v["file"], serde_json::Value::Null);
    assert_eq!(v["default_profile"], "shell");
    assert_eq!(
        v["profiles"],
        serde_json::json!(["shell", "claude", "codex"])
    );
}

#[test]
fn config_check_accepts_a_valid_file() {
    let host = Host::new();
    let file = host.write_config(CONFIG);
    let out = host.lazaret(&["config", "check"]);
    assert_ok(&out);
    let want = format!(
        "configuration OK: {} (4 profiles, default py)",
        file.display()
    );
    assert!(stdout(&out).contains(&want), "{}", stdout(&out));

    let v = json(&host.lazaret(&["config", "check", "--json"]));
    assert_eq!(v["ok"], true);
    assert_eq!(v["file"], file.display().to_string());
    assert_eq!(v["default_profile"], "py");
}

#[test]
fn malformed_file_is_refused_with_file_and_line() {
    let host = Host::new();
    host.write_config("[profiles.p]\nimage = \"img\"\ncommand = [\"sh\"]\npersistent = [\"/usr\", \"/usr/local\"]\n");
    let out = host.lazaret(&["config", "check"]);
    assert!(!out.status.success());
    assert_eq!(out.status.code(), Some(125));
    let err = stderr(&out);
    assert!(err.contains("config.toml:4:"), "{err}");
    assert!(
        err.contains("/usr/local is inside persistent path /usr"),
        "{err}"
    );

    host.write_config("[profiles.p\nimage = \"img\"\n");
    let out = host.lazaret(&["config", "check"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("config.toml:1:"), "{}", stderr(&out));

    let out = host.lazaret(&["config", "check", "--json"]);
    assert!(!out.status.success());
    let v = json(&out);
    assert_eq!(v["ok"], false);
    assert!(v["error"]
        .as_str()
        .unwrap_or_default()
        .contains("config.toml:1:"));

    // Every command that reads the configuration refuses it the same way.
    let out = host.lazaret(&["profile", "list"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("config.toml:1:"), "{}", stderr(&out));
}

#[test]
fn unknown_key_is_named_with_its_line() {
    let host = Host::new();
    host.write_config("[profiles.p]\nimage = \"img\"\ncommand = [\"sh\"]\nimagee = \"x\"\n");
    let out = host.lazaret(&["config", "check"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("config.toml:4:1: unknown field `imagee`"),
        "{err}"
    );
}

#[test]
fn a_file_others_can_write_is_refused() {
    let host = Host::new();
    let f = host.write_config(CONFIG);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let out = host.lazaret(&["config", "check"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("chmod go-w"), "{}", stderr(&out));
}

#[test]
fn profile_list_json() {
    let host = Host::new();
    host.write_config(CONFIG);
    let out = host.lazaret(&["profile", "list", "--json"]);
    assert_ok(&out);
    let v = json(&out);
    let rows = v.as_array().expect("an array");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names, ["shell", "claude", "codex", "py"]);
    let py = &rows[3];
    assert_eq!(py["source"], "config");
    assert_eq!(py["default"], true);
    assert_eq!(py["description"], "Python work");
    assert_eq!(rows[0]["source"], "built-in");
    assert_eq!(rows[0]["default"], false);

    let out = host.lazaret(&["profile", "list"]);
    assert_ok(&out);
    let text = stdout(&out);
    assert!(text.lines().any(|l| l.starts_with("* py ")), "{text}");
    assert!(
        text.lines().next().unwrap_or_default().contains("NAME"),
        "{text}"
    );
}

#[test]
fn profile_show_claude_json() {
    let host = Host::new();
    let out = host.lazaret(&["profile", "show", "claude", "--json"]);
    assert_ok(&out);
    let v = json(&out);
    assert_eq!(v["name"], "claude");
    assert_eq!(v["source"], "built-in");
    assert_eq!(v["image"], "localhost/lazaret/base:bookworm");
    assert_eq!(v["command"], serde_json::json!(["claude"]));
    assert_eq!(v["env"]["HOME"], "/root");
    assert_eq!(v["isolate_ignored"], true);
    assert_eq!(
        v["trust_host_cas"], true,
        "on in the built-in profiles (issue #32)"
    );
    assert_eq!(v["setup"]["creates"], "/usr/local/bin/claude");
    assert_eq!(v["network"]["deny"][0], "10.0.0.0/8");
    let fp = v["fingerprint"].as_str().unwrap_or_default();
    assert_eq!(fp.len(), 32, "{fp}");

    // The same profile, the same fingerprint, whoever asks.
    let again = json(&host.lazaret(&["profile", "show", "claude", "--json"]));
    assert_eq!(again["fingerprint"], v["fingerprint"]);

    let out = host.lazaret(&["profile", "show"]);
    assert_ok(&out);
    assert!(
        stdout(&out).starts_with("name:             shell\n"),
        "{}",
        stdout(&out)
    );

    let out = host.lazaret(&["profile", "show", "nope"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("shell, claude, codex"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn show_resolves_home_and_extends() {
    let host = Host::new();
    host.write_config(CONFIG);
    let v = json(&host.lazaret(&["profile", "show", "--json"]));
    assert_eq!(v["name"], "py");
    assert_eq!(v["source"], "config");
    assert_eq!(v["command"], serde_json::json!(["bash"]));
    let cache = host.home().join(".cache/pip").display().to_string();
    assert_eq!(v["volumes"][0]["host"], cache);
    assert_eq!(v["network"]["allow"], serde_json::json!(["10.1.2.0/24"]));
}
