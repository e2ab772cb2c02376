//! Editing the host configuration file in place (issue #17: "add to the profile"): a
//! destination allowed for a run is written into the profile's `[network]` table, keeping the
//! file's comments and layout. Sans-IO: text in, text and the changed lines out; the caller
//! validates the result as the configuration (the same parser as every load) before writing.

use crate::network::run_rules::Target;
use crate::network::NamePattern;
use crate::profile::AgentProfile;
use crate::runtime::network_policy::{NetworkPolicy, DEFAULT_DENY};
use toml_edit::{Array, DocumentMut, Item, Table, Value};

/// A change to the configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEdit {
    /// The whole new file.
    pub text: String,
    /// The lines taken out (`- …`) and put in (`+ …`), in file order.
    pub diff: Vec<String>,
}

/// Adds `target` to `profile`'s network policy in the configuration file `text` (empty: no
/// file yet). `in_file`: the file defines the profile (else it is a built-in one, refined
/// with `extends` of itself). `None` when the profile allows it already.
pub fn allow_in_profile(
    text: &str,
    profile: &AgentProfile,
    in_file: bool,
    target: &Target,
) -> Result<Option<ProfileEdit>, String> {
    let net = &profile.network;
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| format!("the configuration file does not parse: {e}"))?;
    let table = network_table(&mut doc, &profile.name, in_file, net)?;
    match target {
        Target::Port(addr, port) => {
            return Err(format!(
                "the profile's rules have no ports: `lazaret net allow {addr} --save` keeps every \
                 port of {addr}; {addr}:{port} alone can only be allowed for the run"
            ))
        }
        Target::NamePort(..) => {
            return Err(format!(
                "the profile's name rules have no ports: `lazaret net allow {} --save` keeps \
                 every port of the name's addresses; {target} alone can only be allowed for the \
                 run",
                target.clone().any_port()
            ))
        }
        Target::Address(addr) => {
            let prefix = format!("{addr}/32");
            if net.allow.iter().any(|p| p.to_string() == prefix) {
                return Ok(None);
            }
            let current: Vec<String> = net.allow.iter().map(ToString::to_string).collect();
            push(table, "allow", &current, &prefix)?;
        }
        Target::Name(pattern) => {
            let same = |s: &String| NamePattern::parse(s).is_ok_and(|p| p == *pattern);
            let allowed = net.allow_names.iter().any(same);
            let denied = net.deny_names.iter().any(same);
            if allowed && !denied {
                return Ok(None);
            }
            if denied {
                let kept: Vec<String> = net
                    .deny_names
                    .iter()
                    .filter(|s| !same(s))
                    .cloned()
                    .collect();
                remove(table, "deny_names", &kept, pattern)?;
            }
            if !allowed {
                push(table, "allow_names", &net.allow_names, &pattern.to_string())?;
            }
        }
    }
    let new = doc.to_string();
    let diff = changed_lines(text, &new);
    Ok(Some(ProfileEdit { text: new, diff }))
}

/// `[profiles.NAME.network]`, created when missing (with `[profiles.NAME] extends = "NAME"` for
/// a built-in profile, so every other key stays the built-in's). A profile's `[network]` table
/// replaces the one it `extends` as a whole, so a new table starts with the whole policy the
/// profile has now (`net`).
fn network_table<'d>(
    doc: &'d mut DocumentMut,
    name: &str,
    in_file: bool,
    net: &NetworkPolicy,
) -> Result<&'d mut dyn toml_edit::TableLike, String> {
    let profiles = doc
        .entry("profiles")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or("`profiles` in the configuration file is not a table")?;
    if !in_file && profiles.get(name).is_none() {
        let mut t = Table::new();
        t.insert("extends", toml_edit::value(name));
        profiles.insert(name, Item::Table(t));
    }
    let profile = profiles
        .get_mut(name)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| format!("profile {name} in the configuration file is not a table"))?;
    if profile.get("network").is_none() {
        profile.insert("network", Item::Table(whole_policy(net)));
    }
    profile
        .get_mut("network")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| format!("`profiles.{name}.network` is not a table"))
}

/// A `[network]` table saying what `net` says (keys at their defaults left out).
fn whole_policy(net: &NetworkPolicy) -> Table {
    let strings = |v: Vec<String>| -> Array { v.iter().map(String::as_str).collect() };
    let mut t = Table::new();
    if !net.enabled {
        t.insert("enabled", toml_edit::value(false));
    }
    if net.resolvers != NetworkPolicy::default().resolvers {
        t.insert(
            "resolvers",
            toml_edit::value(strings(
                net.resolvers.iter().map(ToString::to_string).collect(),
            )),
        );
    }
    if !net.allow.is_empty() {
        t.insert(
            "allow",
            toml_edit::value(strings(net.allow.iter().map(ToString::to_string).collect())),
        );
    }
    let extra_deny: Vec<String> = net
        .deny
        .iter()
        .filter(|p| !DEFAULT_DENY.contains(p))
        .map(ToString::to_string)
        .collect();
    if !extra_deny.is_empty() {
        t.insert("deny", toml_edit::value(strings(extra_deny)));
    }
    if !net.allow_names.is_empty() {
        t.insert(
            "allow_names",
            toml_edit::value(strings(net.allow_names.clone())),
        );
    }
    if !net.deny_names.is_empty() {
        t.insert(
            "deny_names",
            toml_edit::value(strings(net.deny_names.clone())),
        );
    }
    if net.default_deny {
        t.insert("default", toml_edit::value(net.default_word()));
    }
    if let Some(secs) = net.ask_timeout {
        t.insert("ask_timeout", toml_edit::value(i64::from(secs)));
    }
    t
}

/// The list `key` of the table: the file's own when it has one (its layout kept), else a new
/// one holding `initial` (what the profile has now: inherited or default).
fn list_mut<'t>(
    table: &'t mut dyn toml_edit::TableLike,
    key: &str,
    initial: &[String],
) -> Result<&'t mut Array, String> {
    if table.get(key).is_none() {
        let list: Array = initial.iter().map(String::as_str).collect();
        table.insert(key, Item::Value(Value::Array(list)));
    }
    table
        .get_mut(key)
        .and_then(Item::as_array_mut)
        .ok_or_else(|| format!("`{key}` is not a list"))
}

/// Appends `item` to the list `key` (see [`list_mut`]).
fn push(
    table: &mut dyn toml_edit::TableLike,
    key: &str,
    current: &[String],
    item: &str,
) -> Result<(), String> {
    list_mut(table, key, current)?.push(item);
    Ok(())
}

/// Takes `pattern` out of the list `key` (see [`list_mut`]; a new one holds `kept`).
fn remove(
    table: &mut dyn toml_edit::TableLike,
    key: &str,
    kept: &[String],
    pattern: &NamePattern,
) -> Result<(), String> {
    let list = list_mut(table, key, kept)?;
    list.retain(|v| {
        v.as_str()
            .is_none_or(|s| NamePattern::parse(s).map_or(true, |p| p != *pattern))
    });
    // The new first item of a one-line list keeps no space after the bracket.
    if let Some(first) = list.get_mut(0) {
        let decor = first.decor_mut();
        let inline = decor
            .prefix()
            .and_then(|p| p.as_str())
            .is_some_and(|p| !p.contains('\n'));
        if inline {
            decor.set_prefix("");
        }
    }
    Ok(())
}

/// The lines of `new` that differ from `old`: the common head and tail are left out, the rest
/// shown as `- old` then `+ new`.
pub fn changed_lines(old: &str, new: &str) -> Vec<String> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out: Vec<String> = a[head..a.len() - tail]
        .iter()
        .map(|l| format!("- {l}"))
        .collect();
    out.extend(b[head..b.len() - tail].iter().map(|l| format!("+ {l}")));
    out
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
