//! Agent Profile: what an agent runs in. A built-in default means no configuration file is needed.

/// Image of the default profile, built by `scripts/setup` from `images/base/recipe`.
pub const DEFAULT_BASE_IMAGE: &str = "localhost/lazaret/base:bookworm";
pub const DEFAULT_PROFILE: &str = "default";

/// A developer-selected description of an agent's image, command and capabilities (spec §2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentProfile {
    pub name: String,
    pub image: String,
    /// Command run when `lazaret run` is given none.
    pub command: Vec<String>,
}

impl AgentProfile {
    /// Resolves a profile by name. Until host configuration exists, only the built-in default does.
    pub fn resolve(name: Option<&str>) -> anyhow::Result<AgentProfile> {
        match name.unwrap_or(DEFAULT_PROFILE) {
            DEFAULT_PROFILE => Ok(AgentProfile::builtin_default()),
            other => anyhow::bail!(
                "unknown Agent Profile {other:?}: the only profile available is the built-in \
                 {DEFAULT_PROFILE:?} (omit --profile to use it)"
            ),
        }
    }

    /// Configuration Fingerprint: a digest of everything from the validated host configuration
    /// that shapes a running Domain (profile and network policy). CLIs whose fingerprint
    /// differs from the running Domain's are refused instead of silently joining.
    pub fn fingerprint(&self, policy: &crate::runtime::network_policy::NetworkPolicy) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for part in [self.name.as_str(), self.image.as_str()]
            .into_iter()
            .chain(self.command.iter().map(String::as_str))
        {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
        h.update(policy.render_nft().as_bytes());
        h.finalize()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    pub fn builtin_default() -> AgentProfile {
        AgentProfile {
            name: DEFAULT_PROFILE.to_owned(),
            image: DEFAULT_BASE_IMAGE.to_owned(),
            command: vec!["bash".to_owned(), "-l".to_owned()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_profile_needs_no_config() {
        let p = AgentProfile::resolve(None).map_err(|e| e.to_string());
        assert_eq!(p, Ok(AgentProfile::builtin_default()));
    }

    #[test]
    fn unknown_profile_says_what_exists() {
        let err = AgentProfile::resolve(Some("nope"))
            .err()
            .map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("\"default\""));
    }
}
