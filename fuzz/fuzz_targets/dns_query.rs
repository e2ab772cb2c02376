//! A DNS query from the sandbox to the sidecar's forwarder: parsed, refused or answered here,
//! and its name decided against name rules.
#![no_main]

use lazaret::network::dns_message::{
    build_local_answer, build_response, error_response, parse_query, parse_response, Rcode,
    CLASS_IN, TYPE_A,
};
use lazaret::network::name_rules::{NameRules, NameVerdict};
use lazaret::network::run_rules::Target;
use libfuzzer_sys::fuzz_target;
use std::net::Ipv4Addr;

/// Presentation form: lower-case letters, digits, `-`, `_`, dots between labels and `\DDD`.
fn presentation_form(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.\\".contains(&b))
}

fuzz_target!(|data: &[u8]| {
    if let Some(refusal) = error_response(data, Rcode::FORMERR) {
        assert_eq!(refusal.len(), 12);
        assert_eq!(&refusal[..2], &data[..2]);
        assert!(refusal[2] & 0x80 != 0, "a response");
    }
    let Ok(query) = parse_query(data) else {
        return;
    };
    let name = &query.question.name;
    assert!(presentation_form(name), "{name:?}");
    assert!(name.len() <= 4 * 255);

    // The refusal the forwarder sends is a response to this very query.
    let refused = build_response(&query, Rcode::REFUSED);
    let r = parse_response(&refused).expect("our refusal parses");
    assert_eq!(
        (r.id, r.rcode, &r.question),
        (query.id, Rcode::REFUSED, &query.question)
    );
    assert!(r.a_records.is_empty());

    // The local name's answer carries exactly the one A record.
    let ttl = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
    let addr = Ipv4Addr::new(10, 0, 2, 2);
    let local = build_local_answer(&query, addr, ttl);
    let r = parse_response(&local).expect("our answer parses");
    assert_eq!((r.id, &r.question), (query.id, &query.question));
    let is_a = query.question.qtype == TYPE_A && query.question.qclass == CLASS_IN;
    let ttl = if ttl > i32::MAX as u32 { 0 } else { ttl };
    assert_eq!(r.a_records, if is_a { vec![(addr, ttl)] } else { vec![] });

    // Name rules decide only what they name.
    let rules = NameRules::parse(
        &["*.example.com", "api.anthropic.com"],
        &["evil.example.com"],
    )
    .expect("rules");
    match rules.decide(name) {
        NameVerdict::Allow => {
            assert!(name == "api.anthropic.com" || name.ends_with(".example.com"));
            assert_ne!(name, "evil.example.com");
        }
        NameVerdict::Deny => assert_eq!(name, "evil.example.com"),
        NameVerdict::Unlisted => {
            assert!(name != "api.anthropic.com" && !name.ends_with(".example.com"));
        }
    }
    // Whether the developer may be asked about it (`default = "ask"`).
    let _ = Target::parse(name);
});
