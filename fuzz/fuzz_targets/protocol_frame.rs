//! Frames on a client ↔ coordinator connection: the length-delimited codec fed a byte stream
//! in arbitrary reads, then each payload parsed as a data frame or as a message of either
//! direction.
#![no_main]

use bytes::BytesMut;
use lazaret_fuzz::{chunks, Bytes};
use lazaret_protocol::framing::{codec, data_frame, parse_frame, Frame, MAX_FRAME};
use lazaret_protocol::messages::{ClientMessage, CoordinatorMessage};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt::Debug;
use tokio_util::codec::Decoder;

/// A parsed message re-encodes to JSON that parses back to the same message.
fn check<M: DeserializeOwned + Serialize + PartialEq + Debug>(payload: &[u8]) {
    match parse_frame::<M>(payload.to_vec().into()) {
        Ok(Frame::Message(m)) => {
            let json = serde_json::to_vec(&m).expect("a parsed message encodes");
            let again: M = serde_json::from_slice(&json).expect("its encoding parses");
            assert_eq!(again, m);
        }
        Ok(Frame::Data { channel, bytes }) => {
            assert_eq!(data_frame(channel, &bytes).as_ref(), payload);
        }
        Err(_) => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes::new(data);
    let sizes = input.piece();
    let stream = input.rest();

    let mut codec = codec();
    let mut buf = BytesMut::new();
    let mut consumed = 0usize;
    'reads: for read in chunks(stream, sizes) {
        buf.extend_from_slice(read);
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(frame)) => {
                    assert!(frame.len() <= MAX_FRAME);
                    consumed += 4 + frame.len();
                    check::<ClientMessage>(&frame);
                    check::<CoordinatorMessage>(&frame);
                }
                Ok(None) => break,
                // An oversized length ends the connection.
                Err(_) => break 'reads,
            }
        }
    }
    assert!(consumed <= stream.len());
});
