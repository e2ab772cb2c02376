//! Agent Profile: what an agent runs in — image, command, environment, persistent paths,
//! extra volumes, network policy, auto-approval rules and workspace protections (spec §2).
//!
//! Profiles come from the built-in set (`shell`, `claude`, `codex`) and from trusted host
//! configuration (`$XDG_CONFIG_HOME/lazaret/config.toml`, see `crate::config`). This file holds
//! only the resolved, validated form every other part of Lazaret consumes.

use crate::runtime::network_policy::NetworkPolicy;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Image of the built-in profiles, built by `scripts/setup` from `images/base/recipe`.
pub const DEFAULT_BASE_IMAGE: &str = "localhost/lazaret/base:bookworm";
/// The profile used when neither `--profile` nor `default_profile` in the configuration says.
pub const DEFAULT_PROFILE: &str = "shell";

/// A validated Agent Profile. Every path is absolute and normalised (no `.`/`..`, no trailing
/// slash); every list is in configuration order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgentProfile {
    pub name: String,
    /// One-line description shown by `lazaret profile list`.
    pub description: String,
    pub image: String,
    /// Command run when `lazaret run` is given none.
    pub command: Vec<String>,
    /// Environment of every command run in the sandbox (on top of the image's).
    pub env: BTreeMap<String, String>,
    /// Container paths kept in State Anchors (overlay of the image's content and a
    /// Domain-scoped upper dir, spec §3.4). Never `/`, never under `/workspace`, none inside another.
    pub persistent: Vec<PathBuf>,
    /// Extra host directories mounted into the sandbox.
    pub volumes: Vec<Volume>,
    /// Egress policy installed by the Network Sidecar.
    #[serde(serialize_with = "serialize_policy")]
    pub network: NetworkPolicy,
    /// Whether Git-ignored workspace paths are presented from Ignored Workspace State (SR-13);
    /// only trusted configuration turns this off (FR-9).
    pub isolate_ignored: bool,
    /// Workspace-relative editor configuration dirs hidden behind transient storage when present.
    pub hide_editor_dirs: Vec<PathBuf>,
    /// Host Escalation auto-approval rules (used by the Escalation Mailbox, issue #6).
    pub auto_approve: Vec<AutoApproveRule>,
    /// Run once per Domain, on the first launch whose sandbox lacks `creates`.
    pub setup: Option<SetupStep>,
    /// `[login]`: the callback ports the agent's sign-in listens on inside the sandbox,
    /// published on the host's loopback while it is not signed in (issue #32). Not part of the
    /// Configuration Fingerprint (it changes nothing in the sandbox).
    #[serde(skip)]
    pub login: Option<crate::config::login::Login>,
    /// What the sandbox may do through the developer's terminal in `lazaret run`.
    pub terminal: TerminalAccess,
    /// `[activity] idle_after`: seconds without output after which a session counts as
    /// `idle` (None: [`crate::coordinator::activity::IDLE_AFTER`]). Left out of the
    /// Configuration Fingerprint's form when unset, so that older fingerprints stay valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_after_secs: Option<u64>,
    /// `[terminal] image_paste`: whether the clipboard shim may read the host clipboard's
    /// image after the paste key (None: yes). Left out of the fingerprint's form when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_paste: Option<bool>,
    /// `trust_host_cas`: whether the host's extra CA certificates are added to the sandbox's
    /// trust store (issue #32; None: yes). Left out of the fingerprint's form when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust_host_cas: Option<bool>,
    /// `linger`: seconds the Domain stays up after its last session left (None or 0: it is
    /// torn down at once). Not part of the Configuration Fingerprint: it changes nothing in the
    /// sandbox, and `lazaret run --linger` may set it for the Domain it starts.
    #[serde(skip)]
    pub linger_secs: Option<u64>,
    /// `idle_stop`: seconds after which a Domain whose sessions are all detached and without input
    /// is stopped (None or 0: never). Not part of the Configuration Fingerprint (it changes
    /// nothing in the sandbox).
    #[serde(skip)]
    pub idle_stop_secs: Option<u64>,
    /// `memory`, `pids`, `cpus`, `disk` (issue #19). The first three change the sandbox's
    /// creation and are part of the Configuration Fingerprint when set; unset, they leave its
    /// form as it was. `disk` is only checked and never part of it.
    #[serde(skip_serializing_if = "crate::config::limits::ResourceLimits::sandbox_unbounded")]
    pub limits: crate::config::limits::ResourceLimits,
}

impl AgentProfile {
    /// Whether image paste into the sandbox is allowed (on unless the profile turns it off).
    pub fn image_paste(&self) -> bool {
        self.image_paste.unwrap_or(true)
    }

    /// Whether the sandbox trusts the host's extra CAs (on unless the profile turns it off).
    pub fn trust_host_cas(&self) -> bool {
        self.trust_host_cas.unwrap_or(true)
    }

    /// How long a Domain of this profile stays up after its last session left.
    pub fn linger(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.linger_secs.unwrap_or(0))
    }

    /// After how long with every session detached and without input a Domain of this profile is
    /// stopped; None: never.
    pub fn idle_stop(&self) -> Option<std::time::Duration> {
        self.idle_stop_secs
            .filter(|s| *s > 0)
            .map(std::time::Duration::from_secs)
    }

    /// After how long without output a session of this profile counts as `idle`.
    pub fn idle_after(&self) -> std::time::Duration {
        self.idle_after_secs.map_or(
            crate::coordinator::activity::IDLE_AFTER,
            std::time::Duration::from_secs,
        )
    }
}

pub use lazaret_protocol::access::TerminalAccess;

/// A host directory mounted into the sandbox.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Volume {
    pub host: PathBuf,
    pub container: PathBuf,
    pub read_only: bool,
}

/// An escalation rule (`auto_approve` in the configuration): the exact argv, or that argv as a
/// prefix when `trailing_args` says so, and what to do with a request it matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AutoApproveRule {
    pub argv: Vec<String>,
    pub trailing_args: bool,
    pub decision: RuleDecision,
}

/// What a matching rule decides; when several match, the strictest wins (deny, then ask, then
/// approve).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleDecision {
    /// Run without asking.
    Approve,
    /// Ask the developer even when another rule would approve.
    Ask,
    /// Never run; do not ask.
    Deny,
}

/// First-launch installation (e.g. an agent's CLI from the npm registry into a State Anchor).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SetupStep {
    /// Run inside the sandbox, output shown as progress.
    pub command: Vec<String>,
    /// Container path whose existence means the setup has already run.
    pub creates: PathBuf,
}

fn serialize_policy<S: serde::Serializer>(p: &NetworkPolicy, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("NetworkPolicy", 7)?;
    st.serialize_field("enabled", &p.enabled)?;
    let resolvers: Vec<String> = p.resolvers.iter().map(ToString::to_string).collect();
    st.serialize_field("resolvers", &resolvers)?;
    st.serialize_field("allow_names", &p.allow_names)?;
    st.serialize_field("deny_names", &p.deny_names)?;
    st.serialize_field("default", p.default_word())?;
    if let Some(secs) = p.ask_timeout {
        st.serialize_field("ask_timeout", &secs)?;
    }
    let allow: Vec<String> = p.allow.iter().map(ToString::to_string).collect();
    let deny: Vec<String> = p.deny.iter().map(ToString::to_string).collect();
    st.serialize_field("allow", &allow)?;
    st.serialize_field("deny", &deny)?;
    st.end()
}

impl AgentProfile {
    /// Configuration Fingerprint: a digest of the validated canonical form (the profile's
    /// serialisation, which includes its network policy). CLIs whose fingerprint differs from
    /// the running Domain's are refused instead of silently joining.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let canonical = serde_json::to_vec(self).unwrap_or_default();
        let mut h = Sha256::new();
        h.update(&canonical);
        h.update(self.network.render_nft().as_bytes());
        h.finalize()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}
