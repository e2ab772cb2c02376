//! An upstream DNS response to the sidecar's forwarder (checked against the query before it is
//! relayed to the sandbox; its A records feed the allowed address set).
#![no_main]

use lazaret::network::dns_message::{parse_response, Rcode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(r) = parse_response(data) else {
        return;
    };
    let ancount = usize::from(u16::from_be_bytes([data[6], data[7]]));
    assert!(r.a_records.len() <= ancount);
    assert_eq!(r.id, u16::from_be_bytes([data[0], data[1]]));
    assert_eq!(r.truncated, data[2] & 0x02 != 0);
    if r.rcode != Rcode::NOERROR {
        assert!(r.a_records.is_empty());
    }
    for (_, ttl) in &r.a_records {
        assert!(*ttl <= i32::MAX as u32);
    }
    let name = &r.question.name;
    assert!(name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.\\".contains(&b)));
});
