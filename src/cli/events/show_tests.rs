use super::*;

fn hostile_prompt() -> Happened {
    Happened::EscalationWaiting {
        session_id: "fedcba9876543210fedcba9876543210".into(),
        request_id: "0123456789abcdef0123456789abcdef".into(),
        argv: vec![
            "sh".into(),
            "-c".into(),
            "echo \u{1b}]0;owned\u{7} \u{202e}".into(),
        ],
        command: crate::terminal::escape::argv(&[
            "sh".into(),
            "-c".into(),
            "echo \u{1b}]0;owned\u{7} \u{202e}".into(),
        ]),
        argv_hash: "0123456789ab".into(),
        cwd: "/workspace/\u{9b}2J".into(),
        host_cwd: "/home/dev/p".into(),
        justification: "trust me\u{1b}[2J".into(),
        warnings: vec!["w\u{1b}".into()],
        timeout_secs: 300,
    }
}

fn hostile_attention() -> Happened {
    Happened::Activity {
        session_id: "fedcba9876543210fedcba9876543210".into(),
        activity: "attention",
        attention: "notification: \u{1b}]52;c;eA==\u{7}\u{202e}".into(),
        pending_escalations: 0,
        last_output_unix_ms: 5,
    }
}

#[test]
fn text_lines_show_every_sandbox_string_escaped() {
    let d = domain("/home/dev/p");
    for e in [hostile_prompt(), hostile_attention()] {
        let line = text(1_795_000_000_000, &d, &e);
        assert!(
            !line.chars().any(crate::terminal::escape::is_escaped),
            "{line:?}"
        );
        assert!(
            line.starts_with("2026-11-18 11:06:40  /home/dev/p  "),
            "{line}"
        );
    }
    let line = text(0, &d, &hostile_prompt());
    assert!(
        line.ends_with(
            r#"escalation 0123456789abcdef0123456789abcdef waiting (session fedcba987654): run ["sh", "-c", "echo \u{1b}]0;owned\u{7} \u{202e}"] in "/workspace/\u{9b}2J" why "trust me\u{1b}[2J""#
        ),
        "{line}"
    );
    let line = text(0, &d, &hostile_attention());
    assert!(
        line.ends_with(
            r"session fedcba987654 needs you: notification: \u{1b}]52;c;eA==\u{7}\u{202e}"
        ),
        "{line}"
    );
    let ended = Happened::SessionEnded {
        session_id: "fedcba9876543210fedcba9876543210".into(),
        exit_status: Some(3),
        reason: String::new(),
    };
    assert!(text(0, &d, &ended).ends_with("session fedcba987654 exited 3"));
}

#[test]
fn json_lines_are_ascii_one_per_event_and_keep_the_exact_values() {
    let d = domain("/home/dev/p");
    let line = json(7, &d, &hostile_prompt()).unwrap_or_default();
    assert!(
        !line.contains('\n') && line.bytes().all(|b| (0x20..0x7f).contains(&b)),
        "{line:?}"
    );
    let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
    assert_eq!(v["event"], "escalation_waiting");
    assert_eq!(v["time_unix_ms"], 7);
    assert_eq!(v["domain_id"], "d0123456789abcdef");
    assert_eq!(v["workspace"], "/home/dev/p");
    assert_eq!(v["profile"], "default");
    assert_eq!(v["session_id"], "fedcba9876543210fedcba9876543210");
    assert_eq!(v["argv"][2], "echo \u{1b}]0;owned\u{7} \u{202e}");
    assert_eq!(v["timeout_secs"], 300);
    assert_eq!(
        v["command"],
        r#"["sh", "-c", "echo \u{1b}]0;owned\u{7} \u{202e}"]"#
    );
    let v: serde_json::Value =
        serde_json::from_str(&json(7, &d, &hostile_attention()).unwrap_or_default())
            .unwrap_or_default();
    assert_eq!(v["event"], "activity");
    assert_eq!(v["activity"], "attention");
    assert_eq!(
        v["attention"],
        "notification: \u{1b}]52;c;eA==\u{7}\u{202e}"
    );
    let stopped = json(7, &d, &Happened::DomainStopped {}).unwrap_or_default();
    assert_eq!(
        stopped,
        r#"{"time_unix_ms":7,"domain_id":"d0123456789abcdef","profile":"default","workspace":"/home/dev/p","event":"domain_stopped"}"#
    );
    let ended = Happened::SessionEnded {
        session_id: "s".into(),
        exit_status: None,
        reason: "the Domain stopped".into(),
    };
    let v: serde_json::Value =
        serde_json::from_str(&json(7, &d, &ended).unwrap_or_default()).unwrap_or_default();
    assert!(v["exit_status"].is_null() && v.get("exit_status").is_some());
}
