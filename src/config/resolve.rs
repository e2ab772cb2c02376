//! From a parsed file to the list of profiles: `extends` resolution (cycles refused), overlay
//! of the configuration's profiles on the built-in ones, and `default_profile`.

use super::file::{self, RawFile, RawProfile};
use super::host_paths::HostPaths;
use super::location::{toml_error, ConfigError, Diagnostic, Source};
use super::validate;
use crate::profile::AgentProfile;
use std::collections::{BTreeMap, BTreeSet};
use toml::Spanned;

/// The profiles a file defines, validated, over `base`.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// `base` with same-named profiles replaced in place, then the file's new ones in file order.
    pub profiles: Vec<AgentProfile>,
    /// Names of the profiles the file itself defines.
    pub defined: BTreeSet<String>,
    /// The file's `default_profile`, checked to name a profile, if it sets one.
    pub default_profile: Option<String>,
}

/// Parses and validates `src` over `base` (the built-in profiles, or none for builtin.toml).
pub fn resolve(
    src: &Source,
    host: &HostPaths,
    base: &[AgentProfile],
) -> Result<Resolved, ConfigError> {
    let raw = file::parse(&src.text).map_err(|e| toml_error(src, &e, "docs/config.md"))?;
    let mut r = Resolver {
        src,
        host,
        entries: raw.profiles_in_file_order(),
        base,
        done: BTreeMap::new(),
        stack: Vec::new(),
        diags: Vec::new(),
    };
    let mut own = Vec::new();
    for i in 0..r.entries.len() {
        if let Some(p) = r.resolve(i) {
            own.push(p);
        }
    }
    let mut diags = r.diags;
    let defined: BTreeSet<String> = raw.profiles.keys().map(|k| k.get_ref().clone()).collect();
    let mut profiles: Vec<AgentProfile> = base
        .iter()
        .map(|b| own.iter().find(|p| p.name == b.name).unwrap_or(b).clone())
        .collect();
    profiles.extend(
        own.into_iter()
            .filter(|p| !base.iter().any(|b| b.name == p.name)),
    );
    let default_profile = check_default(src, &raw, base, &defined, &mut diags);
    if !diags.is_empty() {
        return Err(ConfigError::sorted(diags));
    }
    Ok(Resolved {
        profiles,
        defined,
        default_profile,
    })
}

fn check_default(
    src: &Source,
    raw: &RawFile,
    base: &[AgentProfile],
    defined: &BTreeSet<String>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let d = raw.default_profile.as_ref()?;
    let name = d.get_ref();
    if !defined.contains(name) && !base.iter().any(|b| &b.name == name) {
        let known = known_names(base, defined);
        diags.push(src.diag(
            &d.span(),
            format!(
                "default_profile names {name:?}, which is not a profile: use one of {known}, or \
                 define [profiles.{name}]"
            ),
        ));
    }
    Some(name.clone())
}

fn known_names(base: &[AgentProfile], defined: &BTreeSet<String>) -> String {
    let mut names: Vec<&str> = base.iter().map(|b| b.name.as_str()).collect();
    names.extend(
        defined
            .iter()
            .map(String::as_str)
            .filter(|n| !base.iter().any(|b| b.name == *n)),
    );
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Resolves `extends` depth-first, memoised, refusing cycles.
struct Resolver<'a> {
    src: &'a Source,
    host: &'a HostPaths,
    entries: Vec<(&'a Spanned<String>, &'a RawProfile)>,
    base: &'a [AgentProfile],
    /// Finished profiles (`None`: invalid, its problems already reported).
    done: BTreeMap<String, Option<AgentProfile>>,
    /// Profiles being resolved, outermost first.
    stack: Vec<String>,
    diags: Vec<Diagnostic>,
}

impl Resolver<'_> {
    fn resolve(&mut self, i: usize) -> Option<AgentProfile> {
        let (name, raw) = self.entries[i];
        let name_s = name.get_ref().clone();
        if let Some(done) = self.done.get(&name_s) {
            return done.clone();
        }
        self.stack.push(name_s.clone());
        let result = match self.parent(&name_s, raw) {
            Ok(parent) => validate::profile(
                self.src,
                self.host,
                name,
                raw,
                parent.as_ref(),
                &mut self.diags,
            ),
            Err(()) => None,
        };
        self.stack.pop();
        self.done.insert(name_s, result.clone());
        result
    }

    /// The profile `raw` extends: `Ok(None)` without `extends`, `Err` when it cannot be had
    /// (reported here, or already reported for the parent itself).
    fn parent(&mut self, name: &str, raw: &RawProfile) -> Result<Option<AgentProfile>, ()> {
        let Some(target) = &raw.extends else {
            return Ok(None);
        };
        let t = target.get_ref();
        let from_base = || self.base.iter().find(|b| &b.name == t).cloned();
        if t == name {
            // `[profiles.shell] extends = "shell"`: the built-in being replaced.
            return match from_base() {
                Some(p) => Ok(Some(p)),
                None => {
                    self.diags.push(self.src.diag(
                        &target.span(),
                        format!(
                            "profile `{name}` extends itself: name another profile (a profile \
                             may extend the built-in profile it replaces, but `{name}` is not one)"
                        ),
                    ));
                    Err(())
                }
            };
        }
        if let Some(j) = self.entries.iter().position(|(n, _)| n.get_ref() == t) {
            if let Some(start) = self.stack.iter().position(|s| s == t) {
                let mut chain: Vec<&str> = self.stack[start..].iter().map(String::as_str).collect();
                chain.push(t);
                self.diags.push(self.src.diag(
                    &target.span(),
                    format!(
                        "extends forms a cycle ({}): one of these profiles must set its keys \
                         itself or extend a built-in profile",
                        chain.join(" -> ")
                    ),
                ));
                return Err(());
            }
            return self.resolve(j).map(Some).ok_or(());
        }
        if let Some(p) = from_base() {
            return Ok(Some(p));
        }
        let defined: BTreeSet<String> = self
            .entries
            .iter()
            .map(|(n, _)| n.get_ref().clone())
            .collect();
        let known = known_names(self.base, &defined);
        self.diags.push(self.src.diag(
            &target.span(),
            format!("extends names {t:?}, which is not a profile: use one of {known}"),
        ));
        Err(())
    }
}
