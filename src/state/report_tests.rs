use super::*;
use crate::state::inspect::Totals;
use serde_json::Value;
use std::collections::BTreeSet;

const DOCS: &str = include_str!("../../docs/state.md");

fn size(bytes: u64, files: u64) -> SizeEntry {
    SizeEntry {
        bytes,
        files,
        partial: false,
        unreadable: Unreadable::default(),
    }
}

/// `count` unreadable entries, `listed` of them listed.
fn unreadable(listed: &[(&str, &str)], count: u64) -> Unreadable {
    let mut u = Unreadable::default();
    for (path, reason) in listed {
        u.note(std::path::Path::new(path), *reason);
    }
    u.count = count;
    u
}

fn domain_ref() -> DomainRef {
    DomainRef {
        domain_id: "3f2a9c0d41b7e8a65c10".into(),
        profile: "claude".into(),
        workspace: "/home/me/project".into(),
    }
}

fn list_example() -> ListEnvelope {
    let anchor = |c: Option<&str>, name: &str, generation, s| AnchorEntry {
        container: c.map(PathBuf::from),
        name: name.into(),
        generation,
        size: s,
    };
    let domains = vec![
        DomainEntry {
            domain_id: "3f2a9c0d41b7e8a65c10".into(),
            profile: "claude".into(),
            workspace: "/home/me/project".into(),
            active: true,
            held_by: Some("lifecycle lock held by pid 4242".into()),
            problem: None,
            anchors: vec![
                anchor(Some("/root"), "root-4f53cda1", Some(1), size(49_152, 7)),
                anchor(
                    Some("/usr"),
                    "usr-7a1c0e22",
                    Some(3),
                    size(12_897_484, 1_204),
                ),
            ],
            ignored_state: size(922_746_880, 52_113),
        },
        DomainEntry {
            domain_id: "0b5e77d2c9a1f3e48d6b".into(),
            profile: "shell".into(),
            workspace: "/srv/other".into(),
            active: false,
            held_by: None,
            problem: None,
            anchors: vec![anchor(
                None,
                "opt-9d0e1f2a",
                None,
                SizeEntry {
                    partial: true,
                    unreadable: unreadable(
                        &[("gen-1/work/work", "open: EACCES: Permission denied")],
                        1,
                    ),
                    ..size(4096, 1)
                },
            )],
            ignored_state: size(0, 0),
        },
    ];
    ListEnvelope {
        version: VERSION,
        domains,
    }
}

fn inspection() -> Inspection {
    use Change::*;
    let rows = [
        ("/usr/bin/ls", Modified, Kind::File, 138_208, "0755", None),
        (
            "/usr/local/bin/tool",
            Added,
            Kind::File,
            4_300_000,
            "0755",
            None,
        ),
        (
            "/usr/local/bin/t",
            Added,
            Kind::Symlink,
            4,
            "0777",
            Some("tool"),
        ),
        ("/usr/share/doc/x", Deleted, Kind::File, 1_234, "0644", None),
        ("/usr/share/man", OpaqueDir, Kind::Dir, 0, "0755", None),
    ];
    let changes = rows.map(|(path, change, kind, size, mode, target)| ChangeEntry {
        path: path.into(),
        change,
        kind,
        size,
        uid: 0,
        gid: 0,
        mode: mode.into(),
        link_target: target.map(String::from),
    });
    let totals = Totals {
        added: 2,
        modified: 1,
        deleted: 1,
        opaque_dirs: 1,
        present: 0,
        bytes: 4_438_212,
        files: 3,
    };
    Inspection {
        container: "/usr".into(),
        generation: Some(3),
        lower_available: true,
        changes: changes.to_vec(),
        truncated: false,
        partial: false,
        unreadable: Unreadable::default(),
        totals,
    }
}

fn inspect_example() -> InspectEnvelope {
    InspectEnvelope {
        version: VERSION,
        domain: domain_ref(),
        anchors: vec![inspection()],
    }
}

fn verify_example() -> VerifyEnvelope {
    let problems = vec![
        Problem {
            anchor: Some("/usr".into()),
            problem: "`current` points to \"gen-9\", which is missing".into(),
        },
        Problem {
            anchor: None,
            problem: "domain.json names another Domain".into(),
        },
    ];
    VerifyEnvelope {
        version: VERSION,
        domain: domain_ref(),
        ok: false,
        problems,
    }
}

fn reset_example() -> ResetEnvelope {
    ResetEnvelope {
        version: VERSION,
        domain: domain_ref(),
        reset: vec!["/usr".into()],
        generation: BTreeMap::from([("/usr".to_string(), 4)]),
    }
}

#[test]
fn sizes_and_counts_read_well() {
    assert_eq!(bytes_text(0), "0 B");
    assert_eq!(bytes_text(1023), "1023 B");
    assert_eq!(bytes_text(4096), "4.0 KiB");
    assert_eq!(bytes_text(12_897_484), "12.3 MiB");
    assert_eq!(bytes_text(u64::MAX), "16.0 EiB");
    assert_eq!(count_text(0), "0");
    assert_eq!(count_text(999), "999");
    assert_eq!(count_text(1_204), "1,204");
    assert_eq!(count_text(12_345_678), "12,345,678");
    assert_eq!(size_text(&size(4096, 1)), "4.0 KiB (1 file)");
    let partial = SizeEntry {
        partial: true,
        ..size(0, 0)
    };
    assert_eq!(
        size_text(&partial),
        "0 B (0 files; more: some entries not counted)"
    );
    let unreadable = SizeEntry {
        partial: true,
        unreadable: unreadable(&[("a", "open: EACCES: Permission denied")], 1_204),
        ..size(0, 0)
    };
    assert_eq!(
        size_text(&unreadable),
        "0 B (0 files; more: 1,204 entries unreadable)"
    );
}

#[test]
fn list_table() {
    let text = list_text(&list_example().domains);
    let want = "\
WORKSPACE         PROFILE  DOMAIN                ACTIVE
/home/me/project  claude   3f2a9c0d41b7e8a65c10  yes: lifecycle lock held by pid 4242
    /root          gen 1  48.0 KiB (7 files)
    /usr           gen 3  12.3 MiB (1,204 files)
    ignored state         880.0 MiB (52,113 files)
/srv/other        shell    0b5e77d2c9a1f3e48d6b  no
    ? (opt-9d0e1f2a)  old layout  4.0 KiB (1 file; more: 1 entry unreadable)
      unreadable: anchors/opt-9d0e1f2a/gen-1/work/work: open: EACCES: Permission denied
    ignored state                 0 B (0 files)
";
    assert_eq!(text, want, "\n{text}");
    assert!(list_text(&[]).starts_with("No Domains yet"));
}

#[test]
fn inspect_report_groups_changes() {
    let text = inspect_text(&domain_ref(), &[inspection()]);
    let want = "\
Domain 3f2a9c0d41b7e8a65c10: profile claude, workspace /home/me/project

/usr (gen 3): 2 added, 1 modified, 1 deleted, 1 opaque dirs; 3 files, 4.2 MiB in files
  added
    /usr/local/bin/tool       file     4.1 MiB    0:0  0755
    /usr/local/bin/t -> tool  symlink  4 B        0:0  0777
  modified
    /usr/bin/ls               file     135.0 KiB  0:0  0755
  deleted
    /usr/share/doc/x          file     1.2 KiB    0:0  0644
  opaque dirs (the image's content below is hidden)
    /usr/share/man            dir      -          0:0  0755
";
    assert_eq!(text, want, "\n{text}");
    let mut cut = inspection();
    cut.changes.truncate(2);
    cut.truncated = true;
    cut.partial = true;
    cut.unreadable = unreadable(&[("lib/x\u{1b}[2J", "stat: EACCES: Permission denied")], 12);
    cut.container = "/opt".into();
    cut.generation = None;
    let text = inspect_text(&domain_ref(), &[cut]);
    assert!(text.contains("\n/opt: 2 added"), "{text}");
    assert!(
        text.contains("  … 3 more not listed (raise --limit, or use --json)\n"),
        "{text}"
    );
    assert!(text.contains("some entries could not be read"), "{text}");
    assert!(
        text.contains(
            "\n    /opt/lib/x\\u{1b}[2J: stat: EACCES: Permission denied\n    … 11 more\n"
        ),
        "{text}"
    );
    let empty = Inspection {
        changes: vec![],
        totals: Totals::default(),
        ..inspection()
    };
    assert!(inspect_text(&domain_ref(), &[empty]).contains("/usr (gen 3): no changes\n"));
}

#[test]
fn sandbox_names_are_escaped() {
    let mut list = list_example().domains;
    list[0].workspace = "/home/me/\u{1b}]52;c;x\u{7}".into();
    list[0].anchors[0].container = Some("/root/\u{202e}evil".into());
    list[1].anchors[0].name = "a\nb".into();
    list[1].held_by = Some("pid 1 \u{1b}[2J".into());
    let text = list_text(&list);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\u{7}'));
    assert!(text.contains("/home/me/\\u{1b}]52;c;x\\u{7}"), "{text}");
    assert!(text.contains("/root/\\u{202e}evil"), "{text}");
    assert!(text.contains("? (a\\nb)"), "{text}");
    let mut i = inspection();
    i.changes[2].path = "/usr/local/bin/\u{1b}[31mred".into();
    i.changes[2].link_target = Some("\u{1b}]0;title\u{7}".into());
    let text = inspect_text(&domain_ref(), &[i]);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(
        text.contains("/usr/local/bin/\\u{1b}[31mred -> \\u{1b}]0;title\\u{7}"),
        "{text}"
    );
}

/// Every key path of `v`: `a.b`, arrays as `a[]`.
fn key_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                key_paths(val, &p, out);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|i| key_paths(i, &format!("{prefix}[]"), out)),
        _ => {}
    }
}

fn assert_keys<T: Serialize>(value: &T, want: &str) -> anyhow::Result<()> {
    let mut got = BTreeSet::new();
    key_paths(&serde_json::to_value(value)?, "", &mut got);
    let want: BTreeSet<String> = want.split_whitespace().map(String::from).collect();
    assert_eq!(
        got, want,
        "the JSON schema changed: update docs/state.md and the version"
    );
    Ok(())
}

const DOMAIN_KEYS: &str = "domain domain.domain_id domain.profile domain.workspace";

#[test]
fn list_envelope_keys() -> anyhow::Result<()> {
    let d = "domains[]";
    let a = "domains[].anchors[]";
    let want = format!(
        "version domains {d}.domain_id {d}.profile {d}.workspace {d}.active {d}.held_by \
         {d}.problem {d}.anchors {a}.container {a}.name {a}.generation {a}.size \
         {a}.size.bytes {a}.size.files {a}.size.partial {a}.size.unreadable \
         {a}.size.unreadable.count {a}.size.unreadable.entries \
         {a}.size.unreadable.entries[].path {a}.size.unreadable.entries[].reason \
         {d}.ignored_state {d}.ignored_state.bytes {d}.ignored_state.files \
         {d}.ignored_state.partial {d}.ignored_state.unreadable \
         {d}.ignored_state.unreadable.count {d}.ignored_state.unreadable.entries"
    );
    assert_keys(&list_example(), &want)
}

#[test]
fn inspect_envelope_keys() -> anyhow::Result<()> {
    let a = "anchors[]";
    let c = "anchors[].changes[]";
    let t = "anchors[].totals";
    let want = format!(
        "version {DOMAIN_KEYS} anchors {a}.container {a}.generation {a}.lower_available \
         {a}.changes {c}.path {c}.change {c}.kind {c}.size {c}.uid {c}.gid {c}.mode \
         {c}.link_target {a}.truncated {a}.partial {a}.unreadable {a}.unreadable.count \
         {a}.unreadable.entries {t} {t}.added {t}.modified {t}.deleted {t}.opaque_dirs \
         {t}.present {t}.bytes {t}.files"
    );
    assert_keys(&inspect_example(), &want)
}

#[test]
fn verify_envelope_keys() -> anyhow::Result<()> {
    let want = format!("version {DOMAIN_KEYS} ok problems problems[].anchor problems[].problem");
    assert_keys(&verify_example(), &want)
}

#[test]
fn reset_envelope_keys() -> anyhow::Result<()> {
    assert_keys(
        &reset_example(),
        &format!("version {DOMAIN_KEYS} reset generation generation./usr"),
    )
}

/// The ```json block after `<!-- {marker} -->` in docs/state.md.
fn doc_block(marker: &str) -> anyhow::Result<Value> {
    let tag = format!("<!-- {marker} -->");
    let rest = DOCS
        .split_once(&tag)
        .map(|(_, r)| r)
        .ok_or_else(|| anyhow::anyhow!("no {tag}"))?;
    let body = rest
        .split_once("```json\n")
        .map(|(_, b)| b)
        .ok_or_else(|| anyhow::anyhow!("no block"))?;
    let json = body
        .split_once("\n```")
        .map(|(j, _)| j)
        .ok_or_else(|| anyhow::anyhow!("unclosed"))?;
    Ok(serde_json::from_str(json)?)
}

fn type_ok(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "integer" => v.is_u64() || v.is_i64(),
        "number" => v.is_number(),
        _ => false,
    }
}

/// A minimal JSON Schema checker: `$ref` (to `#/$defs/…`), `type`, `const`, `enum`,
/// `required`, `properties`, `additionalProperties` (a schema), `items`, `minimum`. Stricter
/// than the schema: a key its object schema does not declare is an error, so nothing is
/// serialized that the documentation does not describe.
fn check(schema: &Value, root: &Value, v: &Value, at: &str, errs: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        match r
            .strip_prefix("#/$defs/")
            .and_then(|n| root.get("$defs")?.get(n))
        {
            Some(s) => check(s, root, v, at, errs),
            None => errs.push(format!("{at}: unresolved {r}")),
        }
        return;
    }
    if schema.get("const").is_some_and(|c| c != v) {
        errs.push(format!("{at}: not the constant"));
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errs.push(format!("{at}: {v} not in the enum"));
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if !types.is_empty() && !types.iter().any(|t| type_ok(v, t)) {
        errs.push(format!("{at}: {v} is not {types:?}"));
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if n < min {
            errs.push(format!("{at}: below {min}"));
        }
    }
    if let Value::Object(map) = v {
        for k in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !k.as_str().is_some_and(|k| map.contains_key(k)) {
                errs.push(format!("{at}: missing {k}"));
            }
        }
        let props = schema.get("properties");
        let extra = schema.get("additionalProperties").filter(|s| s.is_object());
        for (k, val) in map {
            match (props.and_then(|p| p.get(k)), extra) {
                (Some(s), _) | (None, Some(s)) => check(s, root, val, &format!("{at}.{k}"), errs),
                (None, None) => errs.push(format!("{at}: undeclared key {k}")),
            }
        }
    }
    if let (Value::Array(items), Some(s)) = (v, schema.get("items")) {
        for (n, item) in items.iter().enumerate() {
            check(s, root, item, &format!("{at}[{n}]"), errs);
        }
    }
}

fn validate(name: &str, value: &Value) -> anyhow::Result<Vec<String>> {
    let schema = doc_block(&format!("schema: {name}"))?;
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let mut errs = Vec::new();
    check(&schema, &schema, value, "$", &mut errs);
    Ok(errs)
}

/// The built example and the documented example both satisfy the documented schema, and the
/// documented example is what the envelope type reads.
fn conforms<T: Serialize + serde::de::DeserializeOwned>(
    name: &str,
    built: &T,
) -> anyhow::Result<()> {
    let errs = validate(name, &serde_json::to_value(built)?)?;
    assert!(errs.is_empty(), "{name}: {errs:?}");
    let documented = doc_block(&format!("example: {name}"))?;
    let errs = validate(name, &documented)?;
    assert!(errs.is_empty(), "docs example {name}: {errs:?}");
    let typed: T = serde_json::from_value(documented.clone())?;
    assert_eq!(
        serde_json::to_value(typed)?,
        documented,
        "{name}: the docs example round-trips"
    );
    Ok(())
}

#[test]
fn list_envelope_matches_its_schema() -> anyhow::Result<()> {
    conforms("list", &list_example())
}

#[test]
fn inspect_envelope_matches_its_schema() -> anyhow::Result<()> {
    conforms("inspect", &inspect_example())
}

#[test]
fn verify_envelope_matches_its_schema() -> anyhow::Result<()> {
    conforms("verify", &verify_example())
}

#[test]
fn reset_envelope_matches_its_schema() -> anyhow::Result<()> {
    conforms("reset", &reset_example())
}

#[test]
fn the_checker_rejects_what_the_schema_does_not_allow() -> anyhow::Result<()> {
    let good = serde_json::to_value(inspect_example())?;
    let broken = |f: &dyn Fn(&mut Value)| -> anyhow::Result<usize> {
        let mut v = good.clone();
        f(&mut v);
        Ok(validate("inspect", &v)?.len())
    };
    assert_eq!(broken(&|_| {})?, 0);
    assert_eq!(broken(&|v| v["version"] = 2.into())?, 1, "const");
    assert_eq!(
        broken(&|v| v["anchors"][0]["changes"][0]["change"] = "renamed".into())?,
        1,
        "enum"
    );
    assert_eq!(
        broken(&|v| v["anchors"][0]["truncated"] = "no".into())?,
        1,
        "type"
    );
    assert_eq!(
        broken(&|v| v["anchors"][0]["totals"]["bytes"] = (-1).into())?,
        1,
        "minimum"
    );
    assert_eq!(
        broken(&|v| v["domain"]["secret"] = true.into())?,
        1,
        "undeclared key"
    );
    let drop_key = |v: &mut Value| {
        if let Some(m) = v["domain"].as_object_mut() {
            m.remove("profile");
        }
    };
    assert_eq!(broken(&drop_key)?, 1, "required");
    Ok(())
}
