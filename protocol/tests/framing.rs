//! Frames and the version handshake over real Unix socket pairs.

use lazaret_protocol::framing::{self, FrameError, MAX_FRAME};
use lazaret_protocol::messages::{
    client_handshake, server_handshake, ClientMessage, CoordinatorMessage, HandshakeError,
    RefusalCode,
};
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

fn pair() -> (
    framing::FramedStream<UnixStream>,
    framing::FramedStream<UnixStream>,
) {
    let (a, b) = UnixStream::pair().unwrap();
    (framing::framed(a), framing::framed(b))
}

#[tokio::test]
async fn messages_round_trip_as_frames() {
    let (mut a, mut b) = pair();
    let msg = ClientMessage::Hello {
        versions: vec![1],
        software: "t".into(),
    };
    framing::send(&mut a, &msg).await.unwrap();
    assert_eq!(
        framing::recv::<_, ClientMessage>(&mut b).await.unwrap(),
        msg
    );
}

#[tokio::test]
async fn wire_format_is_a_big_endian_length_then_json() {
    let (a, b) = UnixStream::pair().unwrap();
    let mut a = framing::framed(a);
    let mut raw = b;
    framing::send(&mut a, &CoordinatorMessage::Cancelled {})
        .await
        .unwrap();
    let mut buf = vec![0u8; 4 + 20];
    use tokio::io::AsyncReadExt;
    raw.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf[..4], &[0, 0, 0, 20]);
    assert_eq!(&buf[4..], br#"{"type":"cancelled"}"#);
}

#[tokio::test]
async fn an_announced_frame_over_max_frame_is_rejected_before_reading_it() {
    let (raw, b) = UnixStream::pair().unwrap();
    let mut raw = raw;
    let mut b = framing::framed(b);
    let too_long = u32::try_from(MAX_FRAME + 1).unwrap();
    raw.write_all(&too_long.to_be_bytes()).await.unwrap();
    raw.write_all(b"{}").await.unwrap(); // far fewer bytes than announced: nothing is awaited
    let err = framing::recv::<_, ClientMessage>(&mut b).await.unwrap_err();
    assert!(matches!(err, FrameError::TooLarge), "{err:?}");
}

#[tokio::test]
async fn a_frame_of_exactly_max_frame_is_accepted() {
    let (raw, b) = UnixStream::pair().unwrap();
    let mut raw = raw;
    let mut b = framing::framed(b);
    // A JSON string of MAX_FRAME bytes in all, quotes included.
    let mut payload = vec![b'a'; MAX_FRAME];
    payload[0] = b'"';
    payload[MAX_FRAME - 1] = b'"';
    let writer = tokio::spawn(async move {
        let len = u32::try_from(MAX_FRAME).unwrap();
        raw.write_all(&len.to_be_bytes()).await.unwrap();
        raw.write_all(&payload).await.unwrap();
        raw
    });
    let s: String = framing::recv(&mut b).await.unwrap();
    assert_eq!(s.len(), MAX_FRAME - 2);
    drop(writer.await.unwrap());
}

#[tokio::test]
async fn sending_more_than_max_frame_is_refused_and_nothing_is_written() {
    let (mut a, mut b) = pair();
    let huge = CoordinatorMessage::Error {
        message: "x".repeat(MAX_FRAME),
    };
    let err = framing::send(&mut a, &huge).await.unwrap_err();
    assert!(matches!(err, FrameError::TooLarge), "{err:?}");
    drop(a);
    assert!(matches!(
        framing::recv::<_, CoordinatorMessage>(&mut b).await,
        Err(FrameError::Closed)
    ));
}

#[tokio::test]
async fn end_of_stream_inside_a_frame_is_an_io_error() {
    let (raw, b) = UnixStream::pair().unwrap();
    let mut raw = raw;
    let mut b = framing::framed(b);
    raw.write_all(&10u32.to_be_bytes()).await.unwrap();
    raw.write_all(b"{\"ty").await.unwrap();
    drop(raw);
    let err = framing::recv::<_, ClientMessage>(&mut b).await.unwrap_err();
    assert!(matches!(err, FrameError::Io(_)), "{err:?}");
}

#[tokio::test]
async fn malformed_json_is_reported() {
    let (raw, b) = UnixStream::pair().unwrap();
    let mut raw = framing::framed(raw);
    let mut b = framing::framed(b);
    use futures_util::SinkExt;
    raw.send(bytes::Bytes::from_static(
        b"{\"type\":\"hello\",\"versions\":[1]}",
    ))
    .await
    .unwrap();
    let err = framing::recv::<_, ClientMessage>(&mut b).await.unwrap_err();
    assert!(matches!(err, FrameError::Malformed(_)), "{err:?}");
}

async fn negotiate(
    client_versions: &[u32],
    server_versions: &[u32],
) -> (
    Result<(u32, String), HandshakeError>,
    Result<u32, HandshakeError>,
) {
    let (mut s, mut c) = pair();
    tokio::join!(
        server_handshake(&mut s, server_versions),
        client_handshake(&mut c, client_versions, "lazaret test")
    )
}

#[tokio::test]
async fn handshake_picks_the_highest_common_version() {
    let (srv, cli) = negotiate(&[1, 2, 3], &[2, 3, 4]).await;
    assert_eq!(srv.unwrap().0, 3);
    assert_eq!(cli.unwrap(), 3);
    let (srv, cli) = negotiate(&[1], &[1]).await;
    assert_eq!(srv.unwrap().0, 1);
    assert_eq!(cli.unwrap(), 1);
}

#[tokio::test]
async fn handshake_without_a_common_version_is_refused_with_a_reason() {
    let (srv, cli) = negotiate(&[2, 3], &[1]).await;
    match srv.unwrap_err() {
        HandshakeError::NoCommonVersion { offered } => assert_eq!(offered, vec![2, 3]),
        other => panic!("{other:?}"),
    }
    match cli.unwrap_err() {
        HandshakeError::Refused { code, reason } => {
            assert_eq!(code, RefusalCode::Version);
            assert!(reason.contains("no common protocol version"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn handshake_must_start_with_hello() {
    let (mut s, mut c) = pair();
    framing::send(&mut c, &ClientMessage::Cancel {})
        .await
        .unwrap();
    let err = server_handshake(&mut s, &[1]).await.unwrap_err();
    assert!(matches!(err, HandshakeError::Unexpected(_)), "{err:?}");
    match framing::recv::<_, CoordinatorMessage>(&mut c)
        .await
        .unwrap()
    {
        CoordinatorMessage::Error { message } => assert!(message.contains("hello")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn client_rejects_a_version_it_did_not_offer() {
    let (mut s, mut c) = pair();
    let server = async {
        let _: ClientMessage = framing::recv(&mut s).await.unwrap();
        framing::send(&mut s, &CoordinatorMessage::Welcome { version: 9 })
            .await
            .unwrap();
    };
    let (_, cli) = tokio::join!(server, client_handshake(&mut c, &[1], "t"));
    assert!(matches!(cli.unwrap_err(), HandshakeError::Unexpected(_)));
}

#[tokio::test]
async fn data_frames_carry_raw_bytes_beside_json_messages() {
    use lazaret_protocol::framing::{recv_frame, send_data, Frame, MAX_DATA};
    let (a, b) = tokio::io::duplex(4 * 1024 * 1024);
    let (mut a, mut b) = (framing::framed(a), framing::framed(b));
    let big: Vec<u8> = (0..MAX_DATA + 10).map(|i| (i % 251) as u8).collect();
    send_data(&mut a, 9, b"\x1b[31mred\0").await.unwrap();
    framing::send(&mut a, &serde_json::json!({"type": "x"}))
        .await
        .unwrap();
    send_data(&mut a, 1, &big).await.unwrap();
    match recv_frame::<_, serde_json::Value>(&mut b).await.unwrap() {
        Frame::Data { channel, bytes } => {
            assert_eq!(channel, 9);
            assert_eq!(&bytes[..], b"\x1b[31mred\0");
        }
        other => panic!("{other:?}"),
    }
    match recv_frame::<_, serde_json::Value>(&mut b).await.unwrap() {
        Frame::Message(v) => assert_eq!(v["type"], "x"),
        other => panic!("{other:?}"),
    }
    let mut got = Vec::new();
    for _ in 0..2 {
        match recv_frame::<_, serde_json::Value>(&mut b).await.unwrap() {
            Frame::Data { channel: 1, bytes } => got.extend_from_slice(&bytes),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(got, big, "a payload over one frame arrives split, in order");
}

#[test]
fn a_data_frame_shorter_than_its_header_is_refused() {
    use lazaret_protocol::framing::{parse_frame, Frame, FrameError};
    let r = parse_frame::<serde_json::Value>(bytes::Bytes::from_static(&[0, 0, 1]));
    assert!(matches!(r, Err(FrameError::ShortData)), "{r:?}");
    let r = parse_frame::<serde_json::Value>(bytes::Bytes::from_static(&[0, 0, 0, 0, 2]));
    assert!(matches!(r, Ok(Frame::Data { channel: 2, ref bytes }) if bytes.is_empty()));
}
