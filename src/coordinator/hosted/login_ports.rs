//! The callback ports of an agent's sign-in (profile `[login]`, issue #32): while the agent is
//! not signed in (its `signed_in` file is missing in the sandbox), each port is published on
//! the same port of the host's 127.0.0.1, so the browser's redirect to
//! `http://localhost:PORT/...` reaches the agent listening inside. Once the file exists (or
//! the Domain stops) the publications end. A host port already taken is reported where
//! failures are shown (`lazaret run`'s terminal, the TUI's Domain panel, `lazaret ps`) with
//! what to run.

use super::SessionHost;
use crate::config::login::Login;
use crate::runtime::sandbox;
use crate::wake::WakeFlag;
use std::sync::Arc;
use std::time::Duration;

/// How often the sign-in's file is looked for at first (a sign-in follows the start closely).
const POLL: Duration = Duration::from_secs(2);
/// The slowest look: each look is a `podman exec` (~0.1 s of CPU), and an agent signed in by
/// an API key never writes the file, so the looks back off instead of costing an idle Domain
/// a few per cent of a core for good (issue #18's idle budget).
const POLL_MAX: Duration = Duration::from_secs(60);

/// The wait after a look that waited `d`: half as long again, up to [`POLL_MAX`].
fn next_poll(d: Duration) -> Duration {
    (d + d / 2).min(POLL_MAX)
}

/// What a failure to publish a sign-in port says.
pub fn busy_message(profile: &str, port: u16, why: &str) -> String {
    format!(
        "the sign-in of profile {profile:?} redirects the browser to http://localhost:{port}/, \
         which could not be published on the host's 127.0.0.1:{port}: {why}. Free the host's \
         port {port} (`ss -ltnp 'sport = :{port}'` shows who holds it), then run `lazaret port \
         publish {port} --profile {profile}` in this workspace before signing in (docs/agents.md)"
    )
}

/// Watches the sign-in of the Domain's agent until it is signed in or `stop` is set.
pub fn spawn(host: Arc<SessionHost>, login: Login, sandbox: String, stop: Arc<WakeFlag>) {
    let profile = host.spawn.profile.name.clone();
    let engine = host.engine.clone();
    let signed_in = login.signed_in.display().to_string();
    std::thread::spawn(move || {
        if sandbox::path_exists(&sandbox, &signed_in) != Some(false) {
            return;
        }
        let mut published = Vec::new();
        for &port in &login.ports {
            match host.publish_port(port, port, std::net::Ipv4Addr::LOCALHOST) {
                Ok(()) => published.push(port),
                Err(e) => engine.report_failure(busy_message(&profile, port, &e)),
            }
        }
        if published.is_empty() {
            return;
        }
        tracing::info!(
            ?published,
            "sign-in callback ports published until signed in"
        );
        let mut poll = POLL;
        while !stop.is_set() {
            stop.wait_with(None, poll);
            poll = next_poll(poll);
            if stop.is_set() || sandbox::path_exists(&sandbox, &signed_in) == Some(true) {
                break;
            }
        }
        for port in published {
            let _ = host.unpublish_port(port);
        }
        tracing::info!("sign-in done or Domain stopping: callback ports unpublished");
    });
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn looks_back_off_to_a_minute() {
        let mut d = super::POLL;
        let mut waits = Vec::new();
        for _ in 0..12 {
            waits.push(d.as_secs_f64());
            d = super::next_poll(d);
        }
        assert_eq!(waits[..3], [2.0, 3.0, 4.5]);
        assert_eq!(d, Duration::from_secs(60));
        // The first two minutes still look often enough for a sign-in's end to show soon.
        assert!(waits.iter().take_while(|w| **w < 30.0).sum::<f64>() < 120.0);
    }

    #[test]
    fn a_busy_port_says_what_to_run() {
        let m = super::busy_message("codex", 1455, "address in use");
        assert!(
            m.contains("lazaret port publish 1455 --profile codex"),
            "{m}"
        );
        assert!(m.contains("127.0.0.1:1455"), "{m}");
    }
}
