//! Issue #32 "agent logins work" on the real stack: the built-in `codex` profile declares the
//! callback port of its ChatGPT sign-in (`[login] ports = [1455]`), so a server listening on
//! 127.0.0.1:1455 inside the sandbox is reached from the host's 127.0.0.1:1455 without
//! `lazaret port publish`, until the sign-in's file (/root/.codex/auth.json) exists. A host
//! port already taken is reported with what to run.
//!
//! The agent itself is not installed (its setup is replaced by one that is already done) and
//! no account is used: a fake callback server (`python3 -m http.server`) listens instead.

mod support;

use std::time::Duration;
use support::{wait_for, Dev, HOLD};

/// The built-in codex profile (its `login`) without its npm install.
const CODEX: &str = r#"
[profiles.codex-login]
extends = "codex"
command = ["bash"]

[profiles.codex-login.setup]
command = ["true"]
creates = "/bin/sh"
"#;

const PORT: u16 = 1455;

/// An HTTP GET of `path` on the host's 127.0.0.1:`port`: the body, or None.
fn host_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").as_bytes())
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    text.split_once("\r\n\r\n").map(|(_, body)| body.to_owned())
}

/// A fake sign-in callback server on the sandbox's 127.0.0.1:1455, serving /workspace.
fn callback_server() -> String {
    format!(
        "python3 -m http.server {PORT} --bind 127.0.0.1 --directory /workspace >/dev/null 2>&1 & {HOLD}; kill $!"
    )
}

#[test]
fn codex_sign_in_port_is_published_until_signed_in() {
    let dev = Dev::get();
    assert!(
        host_get(PORT, "/").is_none(),
        "something on this host already listens on 127.0.0.1:{PORT}"
    );
    let ws = dev
        .workspace("codex-login")
        .with_profile("codex-login", CODEX);
    let page = ws.path.join("auth-callback.txt");
    std::fs::write(&page, "callback reached the sandbox\n").expect("page");
    let _ = nix::unistd::chown(&page, Some(nix::unistd::Uid::from_raw(dev.uid)), None);
    let server = ws.spawn(&["sh", "-c", &callback_server()]);
    // No `lazaret port publish`: the profile's login publishes it.
    let body = wait_for(Duration::from_secs(90), || {
        host_get(PORT, "/auth-callback.txt")
    });
    assert_eq!(body.as_deref(), Some("callback reached the sandbox\n"));
    let list = ws.lazaret(&["port", "list", "--profile", "codex-login"]);
    assert!(
        list.stdout
            .contains(&format!("127.0.0.1:{PORT} -> sandbox port {PORT}")),
        "{list:?}"
    );

    // Signed in: the sign-in's file exists, and the port is no longer published.
    let signed = ws.run(&[
        "sh",
        "-c",
        "mkdir -p /root/.codex && echo '{}' > /root/.codex/auth.json",
    ]);
    assert_eq!(signed.code, Some(0), "{signed:?}");
    // The looks back off (2 s, 3 s, … up to 60 s): within the slowest look.
    let gone = wait_for(Duration::from_secs(65), || {
        host_get(PORT, "/auth-callback.txt").is_none().then_some(())
    });
    assert!(
        gone.is_some(),
        "127.0.0.1:{PORT} still published after the sign-in"
    );
    ws.release();
    let run = support::finish(server);
    assert_eq!(run.code, Some(0), "{run:?}");
    ws.wait_torn_down();

    // The next start of the signed-in Domain publishes nothing (the sign-in is kept in the
    // State Anchor under /root).
    let _ = std::fs::remove_file(ws.path.join(".go"));
    let server = ws.spawn(&[
        "sh",
        "-c",
        &format!("touch /workspace/.up; {}", callback_server()),
    ]);
    wait_for(Duration::from_secs(90), || {
        ws.path.join(".up").exists().then_some(())
    })
    .expect("the second session started");
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(host_get(PORT, "/auth-callback.txt"), None);
    ws.release();
    let run = support::finish(server);
    assert_eq!(run.code, Some(0), "{run:?}");
    ws.wait_torn_down();
}

#[test]
fn a_busy_sign_in_port_says_what_to_run() {
    let dev = Dev::get();
    // Something of the host's holds the port (a codex signing in outside the sandbox, say).
    let Ok(holder) = std::net::TcpListener::bind(("127.0.0.1", PORT + 1)) else {
        panic!("127.0.0.1:{} is taken on this host", PORT + 1);
    };
    let config = CODEX.replace("creates = \"/bin/sh\"", "creates = \"/bin/sh\"\n\n[profiles.codex-login.login]\nports = [1456]\nsigned_in = \"/root/.codex/auth.json\"");
    let ws = dev
        .workspace("codex-busy")
        .with_profile("codex-login", &config);
    let run = ws.run(&["sh", "-c", "sleep 5"]);
    drop(holder);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr
            .contains("lazaret port publish 1456 --profile codex-login"),
        "{run:?}"
    );
    assert!(run.stderr.contains("127.0.0.1:1456"), "{run:?}");
    ws.wait_torn_down();
}
