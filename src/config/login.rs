//! `[profiles.NAME.login]` (issue #32): an agent's sign-in flow that redirects the browser to
//! a callback port on `localhost` (Codex's ChatGPT sign-in: 127.0.0.1:1455). The port listens
//! inside the sandbox; the coordinator publishes it on the host's 127.0.0.1 while the agent is
//! not signed in (`signed_in`, a container path, does not exist), and unpublishes it once it
//! does or the Domain stops (see `coordinator::hosted::login_ports`).

use super::paths;
use super::validate::Check;
use serde::Deserialize;
use std::path::PathBuf;
use toml::Spanned;

/// The most callback ports one profile declares.
pub const MAX_PORTS: usize = 4;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLogin {
    pub ports: Spanned<Vec<Spanned<i64>>>,
    pub signed_in: Spanned<String>,
}

/// A checked `login`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Login {
    /// Callback ports, published on the same port of the host's 127.0.0.1.
    pub ports: Vec<u16>,
    /// Container path whose existence means the agent is signed in.
    pub signed_in: PathBuf,
}

pub fn check(c: &mut Check<'_>, raw: &RawLogin) -> Option<Login> {
    let mut ports = Vec::new();
    if raw.ports.get_ref().len() > MAX_PORTS {
        c.error(
            Some(&raw.ports.span()),
            format!("login ports lists more than {MAX_PORTS} ports: name the sign-in's callbacks"),
        );
    }
    for p in raw.ports.get_ref() {
        match u16::try_from(*p.get_ref()) {
            Ok(port) if port > 0 => ports.push(port),
            _ => c.error(
                Some(&p.span()),
                format!("login port {} is not a port: use 1 to 65535", p.get_ref()),
            ),
        }
    }
    let signed_in = match paths::normalize_absolute(raw.signed_in.get_ref()) {
        Ok(p) if p != std::path::Path::new("/") => p,
        Ok(_) | Err(_) => {
            c.error(
                Some(&raw.signed_in.span()),
                "login signed_in: name the absolute container file the sign-in writes, e.g. \
                 \"/root/.codex/auth.json\"",
            );
            return None;
        }
    };
    Some(Login { ports, signed_in })
}
