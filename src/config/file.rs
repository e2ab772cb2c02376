//! The configuration file as written: serde structs mirroring `config.toml` (and the built-in
//! `profiles/builtin.toml`), every key optional where the format allows, unknown keys refused.
//! Values that are validated later keep their byte span (`Spanned`) so that every semantic
//! error can still name its line.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A whole configuration file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    /// Profile `lazaret run` uses without `--profile`.
    pub default_profile: Option<Spanned<String>>,
    /// `[profiles.NAME]` tables; the key keeps its span (for the name's own errors).
    #[serde(default)]
    pub profiles: BTreeMap<Spanned<String>, RawProfile>,
}

impl RawFile {
    /// The profiles in the order they appear in the file.
    pub fn profiles_in_file_order(&self) -> Vec<(&Spanned<String>, &RawProfile)> {
        let mut v: Vec<_> = self.profiles.iter().collect();
        v.sort_by_key(|(name, _)| name.span().start);
        v
    }
}

/// One `[profiles.NAME]` table. `None` means "not set": the default, or the value of the
/// profile named by `extends`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    pub extends: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub image: Option<Spanned<String>>,
    pub command: Option<Spanned<Vec<Spanned<String>>>>,
    pub env: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
    pub persistent: Option<Spanned<Vec<Spanned<String>>>>,
    pub isolate_ignored: Option<bool>,
    /// Whether the host's extra CA certificates join the sandbox's trust store (issue #32).
    pub trust_host_cas: Option<bool>,
    pub hide_editor_dirs: Option<Vec<Spanned<String>>>,
    pub volumes: Option<Vec<RawVolume>>,
    pub network: Option<RawNetwork>,
    pub auto_approve: Option<Vec<RawRule>>,
    pub setup: Option<RawSetup>,
    pub login: Option<super::login::RawLogin>,
    pub terminal: Option<RawTerminal>,
    pub activity: Option<RawActivity>,
    /// How long the Domain stays up after its last session (issue #18): "30s", "5m", or seconds.
    pub linger: Option<Spanned<super::linger::RawLinger>>,
    /// After how long with every session detached and without input the Domain is stopped (issue
    /// #18): "8h", "2d", or seconds; unset or 0: never.
    pub idle_stop: Option<Spanned<super::duration::RawDuration>>,
    /// Memory of the sandbox's applications (issue #19): "4g", "512m", or bytes.
    pub memory: Option<Spanned<super::limits::RawSize>>,
    /// Processes and threads in the sandbox (issue #19).
    pub pids: Option<Spanned<i64>>,
    /// CPUs the sandbox may use (issue #19): 1.5, 2.
    pub cpus: Option<Spanned<super::limits::RawCpus>>,
    /// Size of the Domain's persistent state (issue #19): "20g"; checked, not enforced.
    pub disk: Option<Spanned<super::limits::RawSize>>,
}

/// `[profiles.NAME.terminal]`: each key unset means the `extends` profile's value, else false.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTerminal {
    pub clipboard: Option<bool>,
    pub notifications: Option<bool>,
    pub hyperlinks: Option<bool>,
    pub echo_queries: Option<bool>,
    pub image_paste: Option<bool>,
}

/// `[profiles.NAME.activity]`: unset means the `extends` profile's value, else the default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawActivity {
    /// Seconds without output after which a session counts as `idle` (issue #15).
    pub idle_after: Option<Spanned<i64>>,
}

/// `[[profiles.NAME.volumes]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVolume {
    pub host: Spanned<String>,
    pub container: Spanned<String>,
    #[serde(default)]
    pub read_only: bool,
}

/// `[profiles.NAME.network]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    /// `false`: no egress at all.
    pub enabled: Option<bool>,
    #[serde(default)]
    pub allow: Vec<Spanned<String>>,
    #[serde(default)]
    pub deny: Vec<Spanned<String>>,
    /// Upstream resolvers of the sidecar's DNS forwarder (IPv4 addresses).
    #[serde(default)]
    pub resolvers: Vec<Spanned<String>>,
    /// DNS names whose answers may be connected to (`*.npmjs.org`).
    #[serde(default)]
    pub allow_names: Vec<Spanned<String>>,
    /// DNS names never resolved for the sandbox.
    #[serde(default)]
    pub deny_names: Vec<Spanned<String>>,
    /// `"allow"` (default), `"deny"` or `"ask"`: public destinations no rule mentions.
    pub default: Option<Spanned<String>>,
    /// Under `default = "ask"`: how long a held connection waits for the developer, seconds.
    pub ask_timeout: Option<Spanned<i64>>,
    /// Ports of the host's loopback the sandbox may reach (`"tcp/5432"`), at
    /// `host.lazaret.internal`.
    #[serde(default)]
    pub host_services: Vec<Spanned<String>>,
    /// Ports of the sandbox published on the host's loopback at every start: `3000` or
    /// `"18000:8000"` (HOST_PORT:PORT).
    #[serde(default)]
    pub publish: Vec<Spanned<RawPublish>>,
}

/// One entry of `publish`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawPublish {
    Port(i64),
    Mapping(String),
}

/// `[[profiles.NAME.auto_approve]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub argv: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    pub trailing_args: bool,
    /// `"approve"` (default), `"ask"` or `"deny"`.
    pub decision: Option<Spanned<String>>,
}

/// `[profiles.NAME.setup]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSetup {
    pub command: Spanned<Vec<Spanned<String>>>,
    pub creates: Spanned<String>,
}

/// Parses TOML text into a [`RawFile`]; the error keeps toml's span and message.
pub fn parse(text: &str) -> Result<RawFile, toml::de::Error> {
    toml::from_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_survive_for_keys_arrays_and_tables() -> Result<(), toml::de::Error> {
        let text = "[profiles.b]\nimage = \"i\"\nenv = { FOO = \"x\" }\n\
                    [[profiles.b.volumes]]\nhost = \"/h\"\ncontainer = \"/c\"\n\
                    [profiles.a]\ncommand = [\"sh\"]\n";
        let f = parse(text)?;
        let order: Vec<&str> = f
            .profiles_in_file_order()
            .iter()
            .map(|(n, _)| n.get_ref().as_str())
            .collect();
        assert_eq!(order, ["b", "a"]);
        let (name, b) = f.profiles_in_file_order()[0];
        assert_eq!(&text[name.span()], "b");
        let env = b
            .env
            .as_ref()
            .map(|e| e.keys().map(|k| &text[k.span()]).collect::<Vec<_>>());
        assert_eq!(env, Some(vec!["FOO"]));
        let host = b.volumes.as_ref().map(|v| &text[v[0].host.span()]);
        assert_eq!(host, Some("\"/h\""));
        Ok(())
    }
}
