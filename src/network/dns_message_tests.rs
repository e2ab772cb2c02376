//! Wire-format tests: hand-built captures, and hostile input that must fail without panicking.

use std::net::Ipv4Addr;

use super::dns_message::*;

/// `name` in uncompressed wire form.
pub(super) fn wire_name(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for label in name.split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out
}

/// A query as `dig` sends it: RD and AD set, one question, an EDNS OPT record (1232 bytes).
pub(super) fn query_bytes(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    raw_query(id, &wire_name(name), qtype)
}

fn raw_query(id: u16, wire_name: &[u8], qtype: u16) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&[0x01, 0x20, 0, 1, 0, 0, 0, 0, 0, 1]);
    q.extend_from_slice(wire_name);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&[0, 1]);
    q.extend_from_slice(&[0, 0, 0x29, 0x04, 0xd0, 0, 0, 0, 0, 0, 0]);
    q
}

fn record(out: &mut Vec<u8>, owner: &[u8], rtype: u16, ttl: u32, rdata: &[u8]) {
    out.extend_from_slice(owner);
    out.extend_from_slice(&rtype.to_be_bytes());
    out.extend_from_slice(&[0, 1]);
    out.extend_from_slice(&ttl.to_be_bytes());
    out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
    out.extend_from_slice(rdata);
}

/// registry.npmjs.org: CNAME edge.npmjs.org (compressed against the question), two A records for
/// edge.npmjs.org (owner compressed to the CNAME's data), one A record for an unrelated name.
fn cname_response() -> Vec<u8> {
    let mut r = vec![0x1a, 0x2b, 0x81, 0x80, 0, 1, 0, 4, 0, 0, 0, 0];
    r.extend(wire_name("Registry.NPMJS.org"));
    r.extend_from_slice(&[0, 1, 0, 1]);
    let npmjs = 12 + 9; // offset of "npmjs.org" inside the question
    let cname_data = r.len() + 2 + 10; // the CNAME's rdata follows its 2-byte owner pointer
    record(
        &mut r,
        &[0xc0, 12],
        TYPE_CNAME,
        300,
        &[4, b'e', b'd', b'g', b'e', 0xc0, npmjs],
    );
    let edge = [0xc0, cname_data as u8];
    record(&mut r, &edge, TYPE_A, 300, &[104, 16, 0, 34]);
    record(&mut r, &edge, TYPE_A, 0x8000_0000, &[104, 16, 1, 34]);
    let other = [5, b'o', b't', b'h', b'e', b'r', 0xc0, npmjs];
    record(&mut r, &other, TYPE_A, 300, &[192, 0, 2, 1]);
    r
}

#[test]
fn parses_a_real_query_and_refuses_it() {
    let bytes = query_bytes(0x1a2b, "registry.npmjs.org", TYPE_A);
    let q = parse_query(&bytes).unwrap();
    assert_eq!(q.id, 0x1a2b);
    assert_eq!(q.question.name, "registry.npmjs.org");
    assert_eq!((q.question.qtype, q.question.qclass), (TYPE_A, CLASS_IN));

    let refused = build_response(&q, Rcode::REFUSED);
    assert_eq!(&refused[..4], &[0x1a, 0x2b, 0x81, 0x85]); // QR, RD, RA, REFUSED
    assert_eq!(&refused[4..12], &[0, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&refused[12..], &bytes[12..bytes.len() - 11]); // question echoed, no OPT
    let back = parse_response(&refused).unwrap();
    assert_eq!(
        (back.id, back.rcode, back.question),
        (q.id, Rcode::REFUSED, q.question.clone())
    );
    let nx = build_response(&q, Rcode::NXDOMAIN);
    assert_eq!(nx[3], 0x83);
}

#[test]
fn names_are_lower_case_and_escaped() {
    let bytes = raw_query(1, &[3, b'A', b'.', 0xff, 3, b'c', b'o', b'M', 0], TYPE_A);
    let q = parse_query(&bytes).unwrap();
    assert_eq!(q.question.name, "a\\046\\255.com");
    assert_eq!(
        parse_query(&query_bytes(1, "", TYPE_A))
            .unwrap()
            .question
            .name,
        "."
    );
}

#[test]
fn response_follows_cnames_with_compression() {
    let r = parse_response(&cname_response()).unwrap();
    assert_eq!(
        (r.id, r.rcode, r.truncated),
        (0x1a2b, Rcode::NOERROR, false)
    );
    assert_eq!(r.question.name, "registry.npmjs.org");
    assert_eq!(
        r.a_records,
        vec![
            (Ipv4Addr::new(104, 16, 0, 34), 300),
            (Ipv4Addr::new(104, 16, 1, 34), 0)
        ]
    );
}

#[test]
fn nxdomain_and_truncated_answers() {
    let mut bytes = cname_response();
    bytes[3] = 0x83;
    let r = parse_response(&bytes).unwrap();
    assert_eq!((r.rcode, r.a_records.len()), (Rcode::NXDOMAIN, 0));

    // TC set and the answer section cut inside the second A record: the records before stay.
    let mut bytes = cname_response();
    bytes[2] |= 0x02;
    let cut = bytes.len() - (8 + 10 + 4) - (2 + 10 + 4) + 5;
    bytes.truncate(cut);
    let r = parse_response(&bytes).unwrap();
    assert!(r.truncated);
    assert_eq!(r.a_records, vec![(Ipv4Addr::new(104, 16, 0, 34), 300)]);
    // Without TC the same cut is an error.
    bytes[2] &= !0x02;
    assert!(parse_response(&bytes).is_err());
}

#[test]
fn header_only_error_responses() {
    let bytes = query_bytes(0x4242, "a.com", TYPE_A);
    let reply = error_response(&bytes, Rcode::FORMERR).unwrap();
    assert_eq!(reply, vec![0x42, 0x42, 0x81, 0x81, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(error_response(&bytes[..11], Rcode::FORMERR), None);
    assert_eq!(error_response(&cname_response(), Rcode::FORMERR), None); // never answer answers
}

#[test]
fn rejects_malformed_queries() {
    let good = query_bytes(7, "a.com", TYPE_A);
    for len in 0..good.len() - 11 {
        assert!(parse_query(&good[..len]).is_err(), "prefix of {len} bytes");
    }
    let mut response = good.clone();
    response[2] |= 0x80;
    assert!(parse_query(&response).is_err());
    let mut notify = good.clone();
    notify[2] |= 4 << 3;
    assert_eq!(parse_query(&notify).unwrap_err().rcode, Rcode::NOTIMP);
    let mut two_questions = good.clone();
    two_questions[5] = 2;
    assert!(parse_query(&two_questions).is_err());
    let mut compressed = good.clone();
    compressed[12..14].copy_from_slice(&[0xc0, 0x0c]);
    assert!(parse_query(&compressed).is_err());
    let mut oversize = good;
    oversize.resize(MAX_MESSAGE_LEN + 1, 0);
    assert!(parse_query(&oversize).unwrap_err().reason.contains("4096"));
    oversize.truncate(MAX_MESSAGE_LEN);
    assert!(parse_query(&oversize).is_ok());
}

#[test]
fn rejects_long_labels_and_names() {
    let mut q = query_bytes(7, "a.com", TYPE_A);
    q.splice(
        12..14,
        [64].into_iter().chain(std::iter::repeat_n(b'a', 64)),
    );
    assert!(parse_query(&q).is_err()); // 64 has the reserved 01 label-type bits
    let long = vec!["a".repeat(63); 4].join("."); // 4 * 64 + 1 = 257 wire bytes
    assert!(parse_query(&query_bytes(7, &long, TYPE_A)).is_err());
    let just = format!("{}.{}", vec!["a".repeat(63); 3].join("."), "a".repeat(61)); // 255
    assert!(parse_query(&query_bytes(7, &just, TYPE_A)).is_ok());
}

#[test]
fn pointer_loops_and_forward_pointers_fail() {
    let base = {
        let mut r = cname_response();
        r.truncate(12 + 20 + 4); // header and question only
        r[7] = 1; // one answer
        r
    };
    let at = base.len();
    // Owner pointing at itself; at the next pointer (forward); into the header; a label then
    // a pointer back to that label; a pointer to a pointer to itself.
    let loops: Vec<Vec<u8>> = vec![
        vec![0xc0, at as u8],
        vec![0xc0, at as u8 + 2, 0xc0, 12],
        vec![0xc0, 2],
        vec![1, b'a', 0xc0, at as u8],
        vec![0xc0, at as u8 + 2, 0xc0, at as u8],
    ];
    for owner in loops {
        let mut r = base.clone();
        record(&mut r, &owner, TYPE_A, 1, &[1, 2, 3, 4]);
        assert!(parse_response(&r).is_err(), "{owner:?}");
    }
    let mut fine = base.clone();
    record(&mut fine, &[0xc0, 12], TYPE_A, 1, &[1, 2, 3, 4]);
    assert_eq!(parse_response(&fine).unwrap().a_records.len(), 1);
}

#[test]
fn record_data_must_fit_its_type() {
    let mut base = cname_response();
    base.truncate(12 + 20 + 4);
    base[7] = 1;
    let mut short_a = base.clone();
    record(&mut short_a, &[0xc0, 12], TYPE_A, 1, &[1, 2, 3]);
    assert!(parse_response(&short_a).is_err());
    let mut long_cname = base.clone();
    record(
        &mut long_cname,
        &[0xc0, 12],
        TYPE_CNAME,
        1,
        &[1, b'x', 0, 0],
    );
    assert!(parse_response(&long_cname).is_err());
    let mut overrun = base;
    record(&mut overrun, &[0xc0, 12], 16, 1, &[1, 2]);
    let len = overrun.len();
    overrun[len - 3] = 9; // rdlength past the end
    assert!(parse_response(&overrun).is_err());
}

use crate::test_rng::Rng;

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..1000 {
        let len = (rng.next_u64() % 600) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let _ = parse_query(&bytes);
        let _ = parse_response(&bytes);
        let _ = error_response(&bytes, Rcode::FORMERR);
    }
    let seeds = [
        cname_response(),
        query_bytes(9, "registry.npmjs.org", TYPE_A),
    ];
    for i in 0..2000 {
        let mut bytes = seeds[i % 2].clone();
        for _ in 0..1 + rng.next_u64() % 4 {
            let at = (rng.next_u64() as usize) % bytes.len();
            bytes[at] = rng.next_u64() as u8;
        }
        bytes.truncate(1 + (rng.next_u64() as usize) % (bytes.len() + 8));
        if let Ok(q) = parse_query(&bytes) {
            let _ = parse_response(&build_response(&q, Rcode::REFUSED));
        }
        let _ = parse_response(&bytes);
    }
}
