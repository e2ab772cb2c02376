use super::*;

fn status(running: bool, pending: u32, attention: &str, last: u64) -> SessionStatus {
    SessionStatus {
        hosted: true,
        running,
        last_output_unix_ms: last,
        attention: attention.into(),
        pending_escalations: pending,
        ..SessionStatus::registered("s", "c", 1)
    }
}

#[test]
fn the_activity_word_follows_the_status_fields_in_order_of_need() {
    let now = 100_000;
    let of = |r, p, a, l| Activity::of(&status(r, p, a, l), now);
    assert_eq!(of(false, 1, "bell", now), Activity::Ending);
    assert_eq!(of(true, 2, "bell", now), Activity::Escalation(2));
    assert_eq!(of(true, 0, "bell", now), Activity::Attention("bell".into()));
    assert_eq!(of(true, 0, "", now - 4_999), Activity::Working);
    assert_eq!(of(true, 0, "", now - 5_000), Activity::Idle);
    assert_eq!(of(true, 0, "", 0), Activity::Idle);
    // A profile's own threshold, as the coordinator published it.
    let mut slow = status(true, 0, "", now - 20_000);
    slow.idle_after_ms = 30_000;
    assert_eq!(Activity::of(&slow, now), Activity::Working);
    slow.idle_after_ms = 10_000;
    assert_eq!(Activity::of(&slow, now), Activity::Idle);
    assert_eq!(Activity::Attention("x".into()).word(), "attention");
    assert_eq!(Activity::Escalation(1).word(), "escalation");
}

#[test]
fn output_is_published_at_most_once_a_second_but_attention_at_once() {
    let t0 = Instant::now();
    let mut t = Tracker::default();
    assert!(t.scan(b"first", t0), "the first output is news");
    assert!(!t.scan(b"more", t0 + Duration::from_millis(10)));
    assert!(
        t.scan(b"\x07", t0 + Duration::from_millis(20)),
        "a bell at once"
    );
    assert_eq!(t.attention(), Some("bell"));
    assert!(
        !t.scan(b"\x07", t0 + Duration::from_millis(30)),
        "the same reason again"
    );
    assert!(t.scan(b"later", t0 + Duration::from_millis(1020)));
    assert_eq!(t.last_output(), Some(t0 + Duration::from_millis(1020)));
}

#[test]
fn a_notification_s_text_is_kept_escaped_and_looking_clears_it() {
    let t0 = Instant::now();
    let mut t = Tracker::default();
    t.scan("\x1b]9;done \u{202e}der\x08!\x1b\\".as_bytes(), t0);
    assert_eq!(
        t.attention(),
        Some("notification: done \\u{202e}der\\u{8}!")
    );
    assert!(t.looked());
    assert_eq!(t.attention(), None);
    assert!(!t.looked(), "nothing left to clear");
}
