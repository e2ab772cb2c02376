use super::*;
use crate::network::run_rules::{RunRules, Target};
use std::net::Ipv4Addr;

const A: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 7);

fn key(port: u16) -> HeldKey {
    (A, "tcp".to_owned(), port)
}

#[test]
fn a_held_connection_waits_until_its_deadline_then_is_refused_and_recorded() {
    let mut held = HeldConnections::new(30);
    let rules = RunRules::default();
    let step = held.update(1000, &[(key(443), 1)], &rules);
    assert_eq!(step.held.len(), 1);
    assert_eq!(step.held[0].target, "203.0.113.7:443");
    assert_eq!((step.held[0].since, step.held[0].deadline), (1000, 1030));
    assert!(step.expired.is_empty() && step.ledger.is_empty());
    let step = held.update(1029, &[(key(443), 4)], &rules);
    assert_eq!(step.held[0].count, 4);
    assert_eq!(step.held[0].since, 1000, "the first sighting counts");
    let step = held.update(1030, &[(key(443), 5)], &rules);
    assert!(step.held.is_empty());
    assert_eq!(step.expired, vec![key(443)]);
    assert_eq!(step.ledger.len(), 1);
    assert_eq!(step.ledger[0].rule, expired_reason(30));
    assert_eq!(step.ledger[0].count, 5);
}

#[test]
fn a_run_rule_settles_a_held_connection_and_a_deny_is_recorded() -> Result<(), String> {
    let mut held = HeldConnections::new(30);
    let mut rules = RunRules::default();
    held.update(1000, &[(key(443), 1), (key(80), 1), (key(22), 1)], &rules);
    rules.allow(Target::Port(A, 443), 1001)?;
    rules.deny(Target::Port(A, 80), 1001)?;
    let step = held.update(1002, &[(key(443), 2), (key(80), 2), (key(22), 2)], &rules);
    assert_eq!(step.settled, vec![key(443), key(80)]);
    assert_eq!(step.ledger.len(), 1);
    assert_eq!(step.ledger[0].port, 80);
    assert_eq!(step.ledger[0].rule, RUN_DENY_REASON);
    assert_eq!(step.held.len(), 1, "22 is still held");
    rules.revoke(&Target::Port(A, 443));
    let step = held.update(1003, &[(key(443), 3), (key(22), 3)], &rules);
    assert_eq!(
        step.held
            .iter()
            .find(|h| h.target.ends_with(":443"))
            .map(|h| h.since),
        Some(1003),
        "held again after the revoke, with a fresh deadline"
    );
    Ok(())
}

#[test]
fn an_address_rule_decides_every_port_and_a_deny_wins_over_an_allow() -> Result<(), String> {
    let mut rules = RunRules::default();
    rules.allow(Target::Address(A), 1)?;
    assert_eq!(rules.decides(A, 9), Some(true));
    rules.deny(Target::Port(A, 9), 2)?;
    assert_eq!(rules.decides(A, 9), Some(false));
    assert_eq!(rules.decides(A, 10), Some(true));
    assert_eq!(rules.decides(Ipv4Addr::new(198, 51, 100, 1), 9), None);
    Ok(())
}
