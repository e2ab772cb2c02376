//! Frames: a 4-byte big-endian length followed by that many bytes of one JSON message, at most
//! [`MAX_FRAME`] bytes. Longer frames are refused in both directions before any buffering.
//!
//! A frame whose payload starts with the byte [`DATA_TAG`] (0x00, which no JSON text starts
//! with) is a **data frame** instead: terminal bytes of an attached session, without the cost of
//! JSON escaping — `0x00`, a 4-byte big-endian channel number (named by the `attached` message
//! that opened it), then the bytes. Coordinator → client it is a session's output; client →
//! coordinator, input for it.

pub use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::{Framed, LengthDelimitedCodec, LengthDelimitedCodecError};

/// Largest frame payload, in bytes (1 MiB).
pub const MAX_FRAME: usize = 1024 * 1024;

/// Bytes of the length prefix.
pub const LENGTH_PREFIX_LEN: usize = 4;

/// A connection carrying Lazaret frames.
pub type FramedStream<T> = Framed<T, LengthDelimitedCodec>;

/// Why a frame could not be sent or received.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The peer closed the connection cleanly between frames.
    #[error("the peer closed the connection")]
    Closed,
    #[error("frame exceeds the maximum of {MAX_FRAME} bytes")]
    TooLarge,
    #[error("malformed message: {0}")]
    Malformed(#[from] serde_json::Error),
    #[error("a data frame shorter than its header")]
    ShortData,
    #[error("connection I/O: {0}")]
    Io(io::Error),
}

impl From<io::Error> for FrameError {
    fn from(e: io::Error) -> FrameError {
        let too_large = e
            .get_ref()
            .is_some_and(|inner| inner.is::<LengthDelimitedCodecError>());
        if too_large {
            FrameError::TooLarge
        } else {
            FrameError::Io(e)
        }
    }
}

/// The codec: 4-byte big-endian length prefix, payload at most [`MAX_FRAME`].
pub fn codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .length_field_length(LENGTH_PREFIX_LEN)
        .big_endian()
        .max_frame_length(MAX_FRAME)
        .new_codec()
}

/// Wraps a byte stream (e.g. a TLS stream) for [`send`] and [`recv`].
pub fn framed<T: AsyncRead + AsyncWrite>(io: T) -> FramedStream<T> {
    Framed::new(io, codec())
}

/// Serializes `msg` as JSON and sends it as one frame (flushed).
pub async fn send<T, M>(conn: &mut FramedStream<T>, msg: &M) -> Result<(), FrameError>
where
    T: AsyncRead + AsyncWrite + Unpin,
    M: Serialize + ?Sized,
{
    let payload = serde_json::to_vec(msg)?;
    if payload.len() > MAX_FRAME {
        return Err(FrameError::TooLarge);
    }
    conn.send(Bytes::from(payload)).await?;
    Ok(())
}

/// Receives one frame and parses it as `M`. A clean end of stream between frames is
/// [`FrameError::Closed`]; one inside a frame is [`FrameError::Io`].
pub async fn recv<T, M>(conn: &mut FramedStream<T>) -> Result<M, FrameError>
where
    T: AsyncRead + AsyncWrite + Unpin,
    M: DeserializeOwned,
{
    match conn.next().await {
        None => Err(FrameError::Closed),
        Some(frame) => Ok(serde_json::from_slice(&frame?)?),
    }
}

/// First byte of a data frame.
pub const DATA_TAG: u8 = 0;

/// Header bytes of a data frame before its payload.
pub const DATA_HEADER_LEN: usize = 5;

/// Largest payload of one data frame.
pub const MAX_DATA: usize = MAX_FRAME - DATA_HEADER_LEN;

/// One received frame: a message, or terminal bytes on a channel.
#[derive(Debug)]
pub enum Frame<M> {
    Message(M),
    Data { channel: u32, bytes: Bytes },
}

/// Sends `bytes` on `channel` as data frames of at most [`MAX_DATA`] bytes each (flushed).
pub async fn send_data<T>(
    conn: &mut FramedStream<T>,
    channel: u32,
    bytes: &[u8],
) -> Result<(), FrameError>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    for chunk in bytes.chunks(MAX_DATA) {
        conn.feed(data_frame(channel, chunk)).await?;
    }
    SinkExt::<Bytes>::flush(conn).await?;
    Ok(())
}

/// The payload of one data frame (`bytes` at most [`MAX_DATA`]).
pub fn data_frame(channel: u32, bytes: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(DATA_HEADER_LEN + bytes.len());
    out.push(DATA_TAG);
    out.extend_from_slice(&channel.to_be_bytes());
    out.extend_from_slice(bytes);
    Bytes::from(out)
}

/// Receives one frame: a data frame, or a message parsed as `M`. Errors as [`recv`].
pub async fn recv_frame<T, M>(conn: &mut FramedStream<T>) -> Result<Frame<M>, FrameError>
where
    T: AsyncRead + AsyncWrite + Unpin,
    M: DeserializeOwned,
{
    match conn.next().await {
        None => Err(FrameError::Closed),
        Some(frame) => parse_frame(frame?.freeze()),
    }
}

/// Parses a received payload as a data frame or a message.
pub fn parse_frame<M: DeserializeOwned>(payload: Bytes) -> Result<Frame<M>, FrameError> {
    if payload.first() != Some(&DATA_TAG) {
        return Ok(Frame::Message(serde_json::from_slice(&payload)?));
    }
    if payload.len() < DATA_HEADER_LEN {
        return Err(FrameError::ShortData);
    }
    let channel = u32::from_be_bytes([payload[1], payload[2], payload[3], payload[4]]);
    Ok(Frame::Data {
        channel,
        bytes: payload.slice(DATA_HEADER_LEN..),
    })
}

/// Flushes and shuts the connection down for writing. On a TLS stream this sends close_notify,
/// so the peer's [`recv`] sees [`FrameError::Closed`]; merely dropping a TLS stream looks like
/// truncation to the peer ([`FrameError::Io`]).
pub async fn close<T>(conn: &mut FramedStream<T>) -> Result<(), FrameError>
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    SinkExt::<Bytes>::close(conn).await?;
    Ok(())
}
