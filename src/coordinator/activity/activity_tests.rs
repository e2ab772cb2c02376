use super::*;

#[test]
fn the_activity_word_follows_the_status_fields_in_order_of_need() {
    let now = 100_000;
    assert_eq!(Activity::of(false, "bell", now, now), Activity::Ending);
    assert_eq!(
        Activity::of(true, "bell", now, now),
        Activity::Attention("bell".into())
    );
    assert_eq!(Activity::of(true, "", now - 4_999, now), Activity::Working);
    assert_eq!(Activity::of(true, "", now - 5_000, now), Activity::Idle);
    assert_eq!(Activity::of(true, "", 0, now), Activity::Idle);
    assert_eq!(Activity::Attention("x".into()).word(), "attention");
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
