use super::*;
use crate::runtime::network_policy::{RUN_DNS_ALLOWED_PORTS_SET, RUN_DNS_ALLOWED_SET};

fn t(s: &str) -> Target {
    Target::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn targets_parse_as_the_ledger_shows_them() {
    assert_eq!(
        t("198.51.100.7"),
        Target::Address(Ipv4Addr::new(198, 51, 100, 7))
    );
    assert_eq!(
        t("198.51.100.7:443"),
        Target::Port(Ipv4Addr::new(198, 51, 100, 7), 443)
    );
    assert_eq!(
        t("Registry.NPMJS.org."),
        Target::Name(NamePattern::Exact("registry.npmjs.org".into()))
    );
    assert_eq!(
        t("*.npmjs.org"),
        Target::Name(NamePattern::Wildcard("npmjs.org".into()))
    );
    for s in [
        "198.51.100.7",
        "198.51.100.7:443",
        "registry.npmjs.org",
        "*.npmjs.org",
    ] {
        assert_eq!(t(s).to_string(), s);
    }
}

#[test]
fn malformed_targets_say_what_to_do() {
    for (bad, says) in [
        ("198.51.100.7:0", "1 to 65535"),
        ("198.51.100.7:70000", "1 to 65535"),
        ("198.51.100.7:+80", "1 to 65535"),
        ("198.51.100.0/24", "profile rule"),
        ("[fd00::1]:80", "IPv6"),
        ("fd00::1", "IPv6"),
        ("198.51.100", "not an IPv4 address"),
        ("0300.0250.0.1", "not an IPv4 address"),
        ("evil\u{1b}]52.example", "name rule"),
        ("", "nothing to allow"),
        ("*", "name rule"),
    ] {
        match Target::parse(bad) {
            Err(e) => assert!(e.to_string().contains(says), "{bad:?}: {e}"),
            Ok(t) => panic!("{bad:?} parsed as {t:?}"),
        }
    }
}

#[test]
fn private_ranges_need_the_explicit_flag_and_loopback_is_refused() {
    for addr in [
        "10.1.2.3",
        "172.16.0.9:22",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.1.2.3",
    ] {
        let target = t(addr);
        assert!(
            matches!(target.check(false), Err(TargetError::NeedsPrivate(..))),
            "{addr}"
        );
        assert_eq!(target.check(true), Ok(()), "{addr}");
    }
    for addr in [
        "127.0.0.1",
        "224.0.0.1",
        "255.255.255.255",
        "240.0.0.1",
        "10.0.2.2:5432",
    ] {
        assert!(
            matches!(t(addr).check(true), Err(TargetError::Unusable(..))),
            "{addr}"
        );
    }
    assert_eq!(t("198.51.100.7:443").check(false), Ok(()));
    assert_eq!(t("*.example.com").check(false), Ok(()));
}

#[test]
fn allow_and_revoke_move_the_generation_and_render_one_transaction() {
    let mut r = RunRules::default();
    assert_eq!(r.allow(t("198.51.100.7"), 1), Ok(true));
    assert_eq!(r.allow(t("198.51.100.8:443"), 2), Ok(true));
    assert_eq!(r.allow(t("198.51.100.9:53"), 2), Ok(true));
    assert_eq!(r.allow(t("registry.example"), 3), Ok(true));
    assert_eq!(r.allow(t("198.51.100.7"), 4), Ok(false), "already there");
    assert_eq!(r.generation, 5);
    assert_eq!(
        r.render_nft(),
        "flush set inet lazaret run_allowed\n\
         flush set inet lazaret run_allowed_ports\n\
         flush set inet lazaret run_denied\n\
         flush set inet lazaret run_denied_ports\n\
         add element inet lazaret run_allowed { 198.51.100.7 }\n\
         add element inet lazaret run_allowed_ports { 198.51.100.8 . 443, 198.51.100.9 . 53 }\n"
    );
    assert_eq!(r.names(), [NamePattern::Exact("registry.example".into())]);
    assert!(r.revoke(&t("198.51.100.7")));
    assert!(!r.revoke(&t("198.51.100.7")));
    assert!(r.revoke(&t("198.51.100.8:443")));
    assert!(r.revoke(&t("198.51.100.9:53")));
    assert_eq!(
        r.render_nft(),
        "flush set inet lazaret run_allowed\nflush set inet lazaret run_allowed_ports\n\
         flush set inet lazaret run_denied\nflush set inet lazaret run_denied_ports\n"
    );
    assert_eq!(r.generation, 9);
}

#[test]
fn the_rules_file_round_trips_and_is_read_strictly() {
    let mut r = RunRules::default();
    r.allow(t("198.51.100.7:443"), 10).expect("added");
    r.allow(t("*.example.com"), 11).expect("added");
    let text = serde_json::to_string(&r).expect("json");
    assert_eq!(RunRules::parse(&text), Ok(r));
    for bad in [
        r#"{"generation":1,"allow":[{"target":"127.0.0.1","added_unix":0}]}"#,
        r#"{"generation":1,"allow":[{"target":"a b","added_unix":0}]}"#,
        r#"{"generation":1,"allow":[],"extra":1}"#,
        r#"{"generation":-1,"allow":[]}"#,
        "not json",
    ] {
        assert!(RunRules::parse(bad).is_err(), "{bad}");
    }
    let huge = format!(
        r#"{{"generation":1,"allow":[{}]}}"#,
        vec![r#"{"target":"198.51.100.7","added_unix":0}"#; MAX_RULES + 1].join(",")
    );
    assert!(RunRules::parse(&huge).is_err());
}

#[test]
fn revoking_a_name_takes_out_only_the_addresses_no_kept_name_was_answered() {
    let a = t("*.a.example");
    let b = t("b.example");
    let mut answered = AnsweredForNames::default();
    answered.record(
        &a,
        [
            Ipv4Addr::new(198, 51, 100, 1),
            Ipv4Addr::new(198, 51, 100, 2),
        ],
    );
    answered.record(&b, [Ipv4Addr::new(198, 51, 100, 2)]);
    assert!(answered.revoke_missing(&[a.clone(), b.clone()]).is_empty());
    assert_eq!(
        answered.revoke_missing(std::slice::from_ref(&b)),
        [(RUN_DNS_ALLOWED_SET, "198.51.100.1".to_string())]
    );
    assert_eq!(
        answered.revoke_missing(&[]),
        [(RUN_DNS_ALLOWED_SET, "198.51.100.2".to_string())]
    );
}

#[test]
fn a_name_on_a_port_is_the_narrow_form_and_parses_as_shown() {
    let n = || NamePattern::Exact("api.example.org".into());
    assert_eq!(
        t("api.example.org:443"),
        Target::NamePort(n(), Proto::Tcp, 443)
    );
    assert_eq!(
        t("API.example.org:443/TCP"),
        Target::NamePort(n(), Proto::Tcp, 443)
    );
    assert_eq!(
        t("api.example.org:53/udp"),
        Target::NamePort(n(), Proto::Udp, 53)
    );
    assert_eq!(
        t("*.example.org:8443"),
        Target::NamePort(
            NamePattern::Wildcard("example.org".into()),
            Proto::Tcp,
            8443
        )
    );
    for s in [
        "api.example.org:443",
        "api.example.org:53/udp",
        "*.example.org:80",
    ] {
        assert_eq!(t(s).to_string(), s, "shown as it is parsed");
    }
    for (bad, says) in [
        ("api.example.org:0", "1 to 65535"),
        ("api.example.org:https", "1 to 65535"),
        ("api.example.org:443/sctp", "tcp or udp"),
        ("bad\u{1b}name:443", "name rule"),
    ] {
        match Target::parse(bad) {
            Err(e) => assert!(e.to_string().contains(says), "{bad:?}: {e}"),
            Ok(t) => panic!("{bad:?} parsed as {t:?}"),
        }
    }
    assert_eq!(t("api.example.org:443").any_port(), Target::Name(n()));
    assert_eq!(t("api.example.org:443").check(false), Ok(()));
}

#[test]
fn an_answer_admits_the_narrow_rule_on_its_port_and_protocol_only() {
    let narrow = t("api.example.org:443");
    let udp = t("api.example.org:3478/udp");
    let other = t("other.example.org:80");
    let rules = [narrow.clone(), udp, other];
    let pattern = NamePattern::Exact("api.example.org".into());
    let records = [
        (Ipv4Addr::new(203, 0, 113, 7), 5),
        (Ipv4Addr::new(203, 0, 113, 8), 999_999),
    ];
    let elements = answer_elements(&rules, &pattern, &records);
    assert_eq!(
        elements,
        [
            (
                RUN_DNS_ALLOWED_PORTS_SET,
                "203.0.113.7 . tcp . 443 timeout 60s".to_string()
            ),
            (
                RUN_DNS_ALLOWED_PORTS_SET,
                "203.0.113.8 . tcp . 443 timeout 86400s".to_string()
            ),
            (
                RUN_DNS_ALLOWED_PORTS_SET,
                "203.0.113.7 . udp . 3478 timeout 60s".to_string()
            ),
            (
                RUN_DNS_ALLOWED_PORTS_SET,
                "203.0.113.8 . udp . 3478 timeout 86400s".to_string()
            ),
        ],
        "no element of the every-port set, and none for another name's rule"
    );
    let wide = [t("api.example.org")];
    assert_eq!(
        answer_elements(&wide, &pattern, &records[..1]),
        [(RUN_DNS_ALLOWED_SET, "203.0.113.7 timeout 60s".to_string())]
    );
    // Revoking the narrow rule takes out its elements, not the wide rule's.
    let mut answered = AnsweredForNames::default();
    answered.record(&narrow, [Ipv4Addr::new(203, 0, 113, 7)]);
    answered.record(&wide[0], [Ipv4Addr::new(203, 0, 113, 7)]);
    assert_eq!(
        answered.revoke_missing(&wide),
        [(
            RUN_DNS_ALLOWED_PORTS_SET,
            "203.0.113.7 . tcp . 443".to_string()
        )]
    );
}

#[test]
fn the_run_allows_both_forms_of_a_name_and_a_deny_refuses_the_name_whatever_the_port() {
    let mut r = RunRules::default();
    assert_eq!(r.allow(t("api.example.org:443"), 1), Ok(true));
    assert_eq!(
        r.allow(t("api.example.org"), 1),
        Ok(true),
        "a distinct rule"
    );
    assert_eq!(r.names(), [NamePattern::Exact("api.example.org".into())]);
    assert_eq!(r.name_targets().len(), 2);
    assert_eq!(r.decides(Ipv4Addr::new(203, 0, 113, 7), 443), None);
    assert!(!r.render_nft().contains("api.example.org"));
    assert_eq!(r.deny(t("api.example.org:80"), 2), Ok(true));
    assert_eq!(
        r.denied_names(),
        [NamePattern::Exact("api.example.org".into())]
    );
    assert_eq!(r.deny[0].target, t("api.example.org"));
    let text = serde_json::to_string(&r).unwrap_or_default();
    assert_eq!(
        RunRules::parse(&text),
        Ok(r.clone()),
        "the file keeps both forms"
    );
}

#[test]
fn what_an_allow_opens_is_said_with_the_addresses_and_the_cdn_caveat() {
    let addrs = [Ipv4Addr::new(203, 0, 113, 7), Ipv4Addr::new(203, 0, 113, 8)];
    let narrow = t("api.example.org:443").opens(&addrs);
    assert!(
        narrow.contains(
            "api.example.org's current addresses (203.0.113.7, 203.0.113.8) on tcp/443 only"
        ),
        "{narrow}"
    );
    assert!(
        narrow.contains("other names on those addresses too"),
        "{narrow}"
    );
    let wide = t("api.example.org").opens(&[]);
    assert!(wide.contains("every port, TCP and UDP"), "{wide}");
    let many: Vec<Ipv4Addr> = (1..=9).map(|i| Ipv4Addr::new(203, 0, 113, i)).collect();
    assert!(t("a.example:443").opens(&many).contains(", 5 more)"));
}

#[test]
fn a_deny_replaces_an_allow_of_the_same_target_and_the_other_way_round() {
    let mut r = RunRules::default();
    assert_eq!(r.allow(t("198.51.100.7:443"), 1), Ok(true));
    assert_eq!(r.deny(t("198.51.100.7:443"), 2), Ok(true));
    assert!(r.allow.is_empty());
    assert_eq!(
        r.deny(t("198.51.100.7:443"), 3),
        Ok(false),
        "already refused"
    );
    assert_eq!(r.deny(t("denied.example"), 3), Ok(true));
    assert_eq!(
        r.denied_names(),
        [NamePattern::Exact("denied.example".into())]
    );
    assert!(r.names().is_empty());
    assert!(r
        .render_nft()
        .contains("add element inet lazaret run_denied_ports { 198.51.100.7 . 443 }\n"));
    assert_eq!(r.allow(t("denied.example"), 4), Ok(true));
    assert!(r.denied_names().is_empty());
    assert!(
        r.revoke(&t("198.51.100.7:443")),
        "a revoke takes back a deny too"
    );
    assert!(r.deny.is_empty());
    let text = serde_json::to_string(&r).unwrap_or_default();
    assert_eq!(RunRules::parse(&text), Ok(r.clone()));
    let old = r#"{"generation": 3, "allow": []}"#;
    assert!(
        RunRules::parse(old).is_ok_and(|o| o.deny.is_empty()),
        "files without deny still load"
    );
}

#[test]
fn what_the_name_rules_opened_is_reported_per_rule_and_read_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(read_answered(dir.path()).is_empty(), "no file: nothing");
    let mut answered = AnsweredForNames::default();
    let narrow = t("api.example.org:443");
    assert!(answered.record(&narrow, [Ipv4Addr::new(203, 0, 113, 7)]));
    assert!(
        !answered.record(&narrow, [Ipv4Addr::new(203, 0, 113, 7)]),
        "nothing new"
    );
    let many = (0..=255).map(|i| Ipv4Addr::new(198, 51, 100, i));
    assert!(answered.record(&t("*.example.net"), many));
    std::fs::write(dir.path().join(ANSWERED_FILE), answered.to_json()).expect("write");
    let back = read_answered(dir.path());
    assert_eq!(back["api.example.org:443"], [Ipv4Addr::new(203, 0, 113, 7)]);
    assert_eq!(back["*.example.net"].len(), MAX_LISTED_ANSWERS);
    std::fs::write(
        dir.path().join(ANSWERED_FILE),
        "{\"x\": [\"not an address\"]}",
    )
    .expect("write");
    assert!(read_answered(dir.path()).is_empty(), "malformed: nothing");
}
