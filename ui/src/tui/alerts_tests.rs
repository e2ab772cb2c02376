use super::*;

fn need(pane: PaneId, need: Need, reason: &str) -> (PaneId, String, Need, String) {
    (pane, format!("s{pane}"), need, reason.to_owned())
}

/// An alerter asked every [`ALERT_GAP`]: the gap never holds an alert back.
#[derive(Default)]
struct Paced {
    alerter: Alerter,
    calls: u32,
}

impl Paced {
    fn due(&mut self, now: Vec<(PaneId, String, Need, String)>) -> Vec<Alert> {
        self.calls += 1;
        let at = start() + ALERT_GAP * self.calls;
        self.alerter.due(at, now)
    }
}

fn start() -> Instant {
    static T0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *T0.get_or_init(Instant::now)
}

fn kinds(alerts: &[Alert]) -> Vec<(PaneId, &'static str)> {
    alerts.iter().map(|a| (a.pane, a.kind)).collect()
}

#[test]
fn an_alert_goes_out_once_per_call() {
    let mut a = Paced::default();
    assert!(a
        .due(vec![need(1, Need::Working, ""), need(2, Need::Idle, "")])
        .is_empty());
    let got = a.due(vec![
        need(1, Need::Attention, "bell"),
        need(2, Need::Idle, ""),
    ]);
    assert_eq!(kinds(&got), vec![(1, "attention")]);
    assert_eq!(got[0].reason, "bell");
    // Still calling for the same reason: nothing new.
    assert!(a.due(vec![need(1, Need::Attention, "bell")]).is_empty());
    // Another reason: a new call.
    let got = a.due(vec![need(1, Need::Attention, "notification: done")]);
    assert_eq!(kinds(&got), vec![(1, "attention")]);
    // An escalation arrives while the call stands: alerted; decided, the call stands: not.
    assert_eq!(
        kinds(&a.due(vec![need(1, Need::Escalation, "")])),
        vec![(1, "escalation")]
    );
    assert!(a
        .due(vec![need(1, Need::Attention, "notification: done")])
        .is_empty());
    // Looked at, then a bell again: alerted again.
    assert!(a.due(vec![need(1, Need::Idle, "")]).is_empty());
    assert_eq!(
        kinds(&a.due(vec![need(1, Need::Attention, "bell")])),
        vec![(1, "attention")]
    );
    // A pane that is new to the alerter and already calls (a re-attached TUI): alerted once.
    let got = a.due(vec![
        need(1, Need::Attention, "bell"),
        need(7, Need::Escalation, ""),
    ]);
    assert_eq!(kinds(&got), vec![(7, "escalation")]);
}

#[test]
fn the_host_terminal_gets_lazarets_words_never_the_programs() {
    let alert = Alert {
        pane: 3,
        session: "ab".repeat(32),
        kind: "attention",
        reason: "notification: \\u{1b}]52;c;cHduZWQ=\\u{7} pwned".into(),
        more: 0,
    };
    let off = AlertSettings::default();
    assert!(alert.bytes(&off).is_empty(), "all off by default");
    let bell = AlertSettings {
        bell: true,
        ..off.clone()
    };
    assert_eq!(alert.bytes(&bell), b"\x07");
    let osc9 = AlertSettings {
        notify: Notify::Osc9,
        ..off.clone()
    };
    assert_eq!(
        alert.bytes(&osc9),
        b"\x1b]9;Lazaret: pane 3 needs you (its program called)\x07"
    );
    let osc777 = AlertSettings {
        bell: true,
        notify: Notify::Osc777,
        ..off
    };
    let bytes = String::from_utf8(alert.bytes(&osc777)).unwrap_or_default();
    assert_eq!(
        bytes,
        "\x07\x1b]777;notify;Lazaret;Lazaret: pane 3 needs you (its program called)\x07"
    );
    assert!(!bytes.contains("pwned") && !bytes.contains("52;"));
    // The command's JSON carries the reason as data.
    let json: serde_json::Value =
        serde_json::from_str(&alert.json("/home/dev/proj")).unwrap_or_default();
    assert_eq!(json["event"], "attention");
    assert_eq!(json["pane"], 3);
    assert_eq!(
        json["reason"],
        "notification: \\u{1b}]52;c;cHduZWQ=\\u{7} pwned"
    );
    assert_eq!(json["workspace"], "/home/dev/proj");
    assert_eq!(Notify::parse("osc777"), Some(Notify::Osc777));
    assert_eq!(Notify::parse("OSC9"), None);
}

#[test]
fn a_program_that_calls_again_and_again_gets_one_alert_per_gap() {
    let mut a = Alerter::default();
    let t0 = start();
    let mut alerts = 0;
    // A bell and a notification with changing text, a hundred times a second for 25 s.
    for i in 0..2500u32 {
        let at = t0 + Duration::from_millis(10 * u64::from(i));
        let reason = if i % 2 == 0 {
            "bell".to_owned()
        } else {
            format!("notification: {i}")
        };
        alerts += a.due(at, vec![need(1, Need::Attention, &reason)]).len();
    }
    assert_eq!(alerts, 3, "at 0 s, 10 s and 20 s");
    // Another pane is not held back by the first one's gap.
    let at = t0 + Duration::from_millis(25_005);
    let got = a.due(
        at,
        vec![
            need(1, Need::Attention, "bell"),
            need(2, Need::Attention, "bell"),
        ],
    );
    assert_eq!(kinds(&got), vec![(2, "attention")]);
}

fn held(target: &str, since: u64) -> HeldEntry {
    HeldEntry {
        target: target.into(),
        protocol: "tcp".into(),
        since,
        deadline: since + 60,
        count: 1,
    }
}

fn holding(domains: &[(&str, &[HeldEntry])]) -> HashMap<String, Vec<HeldEntry>> {
    domains
        .iter()
        .map(|(d, e)| ((*d).to_owned(), e.to_vec()))
        .collect()
}

#[test]
fn a_held_connection_alerts_once_and_a_flood_of_them_once_per_gap() {
    let mut a = HeldAlerter::default();
    let t0 = start();
    assert_eq!(a.due(t0, &HashMap::new()), None);
    let one = [held("203.0.113.7:443", 10)];
    let (domain, alert) = a.due(t0, &holding(&[("d1", &one)])).unwrap_or_else(|| {
        panic!("no alert for a new held connection");
    });
    assert_eq!(domain, "d1");
    assert_eq!((alert.kind, alert.pane, alert.more), ("held", 0, 0));
    assert_eq!(
        alert.text(),
        "Lazaret: network: the sandbox waits for 203.0.113.7:443 — a allow, d deny in the \
         denials panel"
    );
    // Still held: nothing new.
    assert_eq!(a.due(t0 + ALERT_GAP, &holding(&[("d1", &one)])), None);

    // Another one within the gap waits for it; then it is told, if still held.
    let t1 = t0 + ALERT_GAP * 2;
    let two = [held("203.0.113.7:443", 10), held("198.51.100.9:80", 20)];
    assert!(a.due(t1, &holding(&[("d1", &two)])).is_some());
    let three = [
        held("203.0.113.7:443", 10),
        held("198.51.100.9:80", 20),
        held("pkg.example.net", 21),
    ];
    let other = [held("192.0.2.1:22", 22)];
    let now = holding(&[("d1", &three), ("d2", &other)]);
    assert_eq!(a.due(t1 + Duration::from_secs(1), &now), None, "in the gap");
    let (domain, alert) = a
        .due(t1 + ALERT_GAP, &now)
        .unwrap_or_else(|| panic!("no alert after the gap"));
    assert_eq!(
        (domain.as_str(), alert.reason.as_str()),
        ("d1", "pkg.example.net")
    );
    assert_eq!(alert.more, 1, "the other Domain's, oldest first");
    assert!(alert.text().contains("pkg.example.net (and 1 more)"));
    assert_eq!(a.due(t1 + ALERT_GAP * 2, &now), None);

    // A flood of new destinations: one alert per gap, whatever the sandbox tries.
    let mut alerts = 0;
    for i in 0..1000u64 {
        let flood = [held(
            &format!("203.0.113.{}:{}", i % 200, 1000 + i),
            100 + i,
        )];
        let at = t1 + ALERT_GAP * 3 + Duration::from_millis(25 * i);
        alerts += usize::from(a.due(at, &holding(&[("d1", &flood)])).is_some());
    }
    assert_eq!(alerts, 3, "25 s of a flood: at 0, 10 and 20 s");

    // Gone, then held again: news again.
    let t2 = t1 + ALERT_GAP * 10;
    assert_eq!(a.due(t2, &HashMap::new()), None);
    assert!(a.due(t2 + ALERT_GAP, &holding(&[("d1", &one)])).is_some());
}

#[test]
fn a_held_name_reaches_the_host_terminal_only_when_plain() {
    let alert = |reason: &str| Alert {
        pane: 0,
        session: String::new(),
        kind: "held",
        reason: reason.into(),
        more: 0,
    };
    assert!(alert("pkg.example-1.net")
        .text()
        .contains("waits for pkg.example-1.net —"));
    for hostile in [
        r"evil\u{1b}]9;x\u{7}.com",
        "a;b.example",
        "approve me please",
        "",
    ] {
        let text = alert(hostile).text();
        assert!(text.contains("waits for a destination —"), "{text}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&alert(r"evil\u{1b}.com").json("/w")).unwrap_or_default();
    assert_eq!(json["event"], "held");
    assert_eq!(json["reason"], r"evil\u{1b}.com");
}
