//! Minimal, strict DNS wire format (RFC 1035): parse a query, build a refusal for it, and read an
//! upstream response far enough to check it answers that query and to collect its A records.
//!
//! Every read is bounds-checked and every failure is an [`DnsError`]; nothing here panics on
//! hostile input. Messages over [`MAX_MESSAGE_LEN`] bytes are refused. Names are returned in a
//! presentation form that is lower case and unambiguous: bytes other than `a-z 0-9 - _` are
//! written `\DDD` (so a label holding a dot is `a\046b`, never two labels). Compression pointers
//! are followed only backwards — each jump must land before every part of the name read so far,
//! and never in the header — with a hop limit and the 255-byte name limit as further guards, so
//! pointer loops end in an error. A query's own question may not be compressed.

use std::fmt;
use std::net::Ipv4Addr;

/// The largest message accepted (the UDP payload a client may advertise with EDNS).
pub const MAX_MESSAGE_LEN: usize = 4096;
pub const TYPE_A: u16 = 1;
pub const TYPE_CNAME: u16 = 5;
pub const CLASS_IN: u16 = 1;

const HEADER_LEN: usize = 12;
const MAX_WIRE_NAME: usize = 255;
const MAX_POINTER_HOPS: usize = 64;
const FLAG_QR: u16 = 0x8000;
const FLAG_TC: u16 = 0x0200;
const FLAG_RD: u16 = 0x0100;
const FLAG_RA: u16 = 0x0080;

/// A response code (the header's low four bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rcode(pub u8);

impl Rcode {
    pub const NOERROR: Rcode = Rcode(0);
    pub const FORMERR: Rcode = Rcode(1);
    pub const SERVFAIL: Rcode = Rcode(2);
    pub const NXDOMAIN: Rcode = Rcode(3);
    pub const NOTIMP: Rcode = Rcode(4);
    pub const REFUSED: Rcode = Rcode(5);
}

/// Why a message was rejected, and the response code a server would answer it with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DnsError {
    pub reason: &'static str,
    pub rcode: Rcode,
}

impl fmt::Display for DnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason)
    }
}

impl std::error::Error for DnsError {}

fn formerr(reason: &'static str) -> DnsError {
    DnsError {
        reason,
        rcode: Rcode::FORMERR,
    }
}

/// A question: name in presentation form (see the module docs), type and class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    pub name: String,
    pub qtype: u16,
    pub qclass: u16,
}

/// A parsed query: exactly one question, no answer or authority records (additional records
/// such as EDNS OPT are allowed and left alone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub id: u16,
    pub flags: u16,
    pub question: Question,
    /// The question exactly as it was on the wire (uncompressed), for echoing.
    wire_question: Vec<u8>,
}

/// What the proxy needs from an upstream response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub id: u16,
    pub rcode: Rcode,
    pub truncated: bool,
    pub question: Question,
    /// A records (class IN) in the answer section owned by the question's name or by a name
    /// reached from it through CNAMEs in the same answer; only for NOERROR. TTL as sent, except
    /// that a TTL with the top bit set counts as 0 (RFC 2181 §8).
    pub a_records: Vec<(Ipv4Addr, u32)>,
}

struct Header {
    id: u16,
    flags: u16,
    counts: [u16; 4],
}

fn be16(msg: &[u8], at: usize) -> Result<u16, DnsError> {
    match msg.get(at..at.saturating_add(2)) {
        Some(&[a, b]) => Ok(u16::from_be_bytes([a, b])),
        _ => Err(formerr("message truncated")),
    }
}

fn be32(msg: &[u8], at: usize) -> Result<u32, DnsError> {
    Ok((u32::from(be16(msg, at)?) << 16) | u32::from(be16(msg, at.saturating_add(2))?))
}

fn header(msg: &[u8]) -> Result<Header, DnsError> {
    if msg.len() > MAX_MESSAGE_LEN {
        return Err(formerr("message larger than 4096 bytes"));
    }
    let mut counts = [0u16; 4];
    for (i, c) in counts.iter_mut().enumerate() {
        *c = be16(msg, 4 + 2 * i)?;
    }
    Ok(Header {
        id: be16(msg, 0)?,
        flags: be16(msg, 2)?,
        counts,
    })
}

/// Reads the name at `start`; returns it and the offset just past it in the original stream.
fn read_name(msg: &[u8], start: usize, compressed: bool) -> Result<(String, usize), DnsError> {
    let (mut pos, mut floor, mut hops, mut wire_len) = (start, start, 0usize, 1usize);
    let mut end = None;
    let mut text = String::new();
    loop {
        let len = usize::from(*msg.get(pos).ok_or(formerr("name truncated"))?);
        match len & 0xC0 {
            0x00 if len == 0 => break,
            0x00 => {
                let label = msg
                    .get(pos + 1..pos + 1 + len)
                    .ok_or(formerr("label truncated"))?;
                wire_len += 1 + len;
                if wire_len > MAX_WIRE_NAME {
                    return Err(formerr("name longer than 255 bytes"));
                }
                if !text.is_empty() {
                    text.push('.');
                }
                for &b in label {
                    let b = b.to_ascii_lowercase();
                    if b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_' {
                        text.push(char::from(b));
                    } else {
                        text.push_str(&format!("\\{b:03}"));
                    }
                }
                pos += 1 + len;
            }
            0xC0 if compressed => {
                let low = usize::from(*msg.get(pos + 1).ok_or(formerr("pointer truncated"))?);
                let target = ((len & 0x3F) << 8) | low;
                hops += 1;
                if target < HEADER_LEN || target >= floor || hops > MAX_POINTER_HOPS {
                    return Err(formerr("compression pointer loops or points forward"));
                }
                end.get_or_insert(pos + 2);
                (pos, floor) = (target, target);
            }
            0xC0 => return Err(formerr("compressed name in a query's question")),
            _ => return Err(formerr("reserved label type")),
        }
    }
    if text.is_empty() {
        text.push('.');
    }
    Ok((text, end.unwrap_or(pos + 1)))
}

fn read_question(msg: &[u8], compressed: bool) -> Result<(Question, usize), DnsError> {
    let (name, pos) = read_name(msg, HEADER_LEN, compressed)?;
    let question = Question {
        name,
        qtype: be16(msg, pos)?,
        qclass: be16(msg, pos + 2)?,
    };
    Ok((question, pos + 4))
}

/// Parses a query from a client. Responses (QR=1) and malformed queries are errors with
/// FORMERR; opcodes other than QUERY are errors with NOTIMP.
pub fn parse_query(msg: &[u8]) -> Result<Query, DnsError> {
    let h = header(msg)?;
    if h.flags & FLAG_QR != 0 {
        return Err(formerr("a response, not a query"));
    }
    if (h.flags >> 11) & 0xF != 0 {
        return Err(DnsError {
            reason: "opcode other than QUERY",
            rcode: Rcode::NOTIMP,
        });
    }
    if h.counts[0] != 1 || h.counts[1] != 0 || h.counts[2] != 0 {
        return Err(formerr(
            "a query must hold exactly one question and no answers",
        ));
    }
    let (question, end) = read_question(msg, false)?;
    Ok(Query {
        id: h.id,
        flags: h.flags,
        question,
        wire_question: msg.get(HEADER_LEN..end).unwrap_or_default().to_vec(),
    })
}

/// A header-only response carrying `rcode` for a message that is at least a header and not
/// itself a response (for queries [`parse_query`] could not read); `None` otherwise.
pub fn error_response(msg: &[u8], rcode: Rcode) -> Option<Vec<u8>> {
    let h = header(msg).ok()?;
    if h.flags & FLAG_QR != 0 {
        return None;
    }
    let flags = FLAG_QR | (h.flags & (0x7800 | FLAG_RD)) | FLAG_RA | u16::from(rcode.0 & 0xF);
    let mut out = Vec::with_capacity(HEADER_LEN);
    out.extend_from_slice(&h.id.to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&[0; 8]);
    Some(out)
}

/// A response to `query` with `rcode` and no records: same id, QR=1, RD copied, RA=1, the
/// question echoed as the client sent it.
pub fn build_response(query: &Query, rcode: Rcode) -> Vec<u8> {
    let flags = FLAG_QR | (query.flags & FLAG_RD) | FLAG_RA | u16::from(rcode.0 & 0xF);
    let mut out = Vec::with_capacity(HEADER_LEN + query.wire_question.len());
    out.extend_from_slice(&query.id.to_be_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&query.wire_question);
    out
}

/// A NOERROR answer to `query` made here: one A record `addr` (TTL `ttl`) when it asks for an
/// A record of class IN, else no record (the name exists, the type does not).
pub fn build_local_answer(query: &Query, addr: std::net::Ipv4Addr, ttl: u32) -> Vec<u8> {
    let mut out = build_response(query, Rcode::NOERROR);
    if query.question.qtype == TYPE_A && query.question.qclass == CLASS_IN {
        out[7] = 1; // ANCOUNT
                    // The name as a pointer to the question (offset 12), type A, class IN, TTL, 4 bytes.
        out.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
        out.extend_from_slice(&ttl.to_be_bytes());
        out.extend_from_slice(&[0, 4]);
        out.extend_from_slice(&addr.octets());
    }
    out
}

/// Parses an upstream response: header, its one question, and the answer section (authority and
/// additional sections are not read). When the TC bit is set the answer section may be cut
/// short; the records read before the cut are kept.
pub fn parse_response(msg: &[u8]) -> Result<Response, DnsError> {
    let h = header(msg)?;
    if h.flags & FLAG_QR == 0 {
        return Err(formerr("a query, not a response"));
    }
    if h.counts[0] != 1 {
        return Err(formerr("a response must echo exactly one question"));
    }
    let (question, mut pos) = read_question(msg, true)?;
    let truncated = h.flags & FLAG_TC != 0;
    let mut cnames: Vec<(String, String)> = Vec::new();
    let mut a_records: Vec<(String, Ipv4Addr, u32)> = Vec::new();
    for _ in 0..h.counts[1] {
        match read_record(msg, pos, &mut cnames, &mut a_records) {
            Ok(next) => pos = next,
            Err(_) if truncated => break,
            Err(e) => return Err(e),
        }
    }
    let rcode = Rcode((h.flags & 0xF) as u8);
    let mut reached = vec![question.name.clone()];
    // Each pass adds at least one name or stops, so this ends within cnames.len() passes.
    while let Some((_, target)) = cnames
        .iter()
        .find(|(owner, target)| reached.contains(owner) && !reached.contains(target))
    {
        reached.push(target.clone());
    }
    let a_records = if rcode == Rcode::NOERROR {
        a_records
            .into_iter()
            .filter(|(owner, _, _)| reached.contains(owner))
            .map(|(_, ip, ttl)| (ip, ttl))
            .collect()
    } else {
        Vec::new()
    };
    Ok(Response {
        id: h.id,
        rcode,
        truncated,
        question,
        a_records,
    })
}

/// Reads one resource record at `pos`, noting IN CNAMEs and IN A records; returns the offset
/// past it.
fn read_record(
    msg: &[u8],
    pos: usize,
    cnames: &mut Vec<(String, String)>,
    a_records: &mut Vec<(String, Ipv4Addr, u32)>,
) -> Result<usize, DnsError> {
    let (owner, pos) = read_name(msg, pos, true)?;
    let (rtype, class, ttl) = (be16(msg, pos)?, be16(msg, pos + 2)?, be32(msg, pos + 4)?);
    let rdlen = usize::from(be16(msg, pos + 8)?);
    let (start, end) = (pos + 10, pos + 10 + rdlen);
    let rdata = msg
        .get(start..end)
        .ok_or(formerr("record data truncated"))?;
    let ttl = if ttl > i32::MAX as u32 { 0 } else { ttl };
    match (class, rtype, rdata) {
        (CLASS_IN, TYPE_A, &[a, b, c, d]) => {
            a_records.push((owner, Ipv4Addr::new(a, b, c, d), ttl))
        }
        (CLASS_IN, TYPE_A, _) => return Err(formerr("A record data is not 4 bytes")),
        (CLASS_IN, TYPE_CNAME, _) => {
            let (target, name_end) = read_name(msg, start, true)?;
            if name_end != end {
                return Err(formerr("CNAME data length does not match its name"));
            }
            cnames.push((owner, target));
        }
        _ => {}
    }
    Ok(end)
}
