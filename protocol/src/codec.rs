//! All (de)serialisation of the protocol: a 4-byte big-endian length prefix around
//! a bincode 2 payload.
//!
//! Decoding is size-limited twice: a frame whose length prefix exceeds the reader's
//! limit is refused as soon as the prefix is read (nothing is buffered for it, and
//! nothing is reserved up front for frames that are still arriving), and bincode's
//! own limit stops a hostile length inside a payload from allocating before reading.
//! Every payload must be consumed exactly.

use crate::MAX_FRAME_BYTES;
use bytes::{Buf, BufMut, BytesMut};
use serde::{de::DeserializeOwned, Serialize};
use std::marker::PhantomData;
use tokio_util::codec::{Decoder, Encoder};

/// Bytes of the length prefix.
pub const PREFIX_BYTES: usize = 4;

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_FRAME_BYTES>()
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("frame of {len} bytes exceeds the maximum {max}")]
    FrameTooLarge { len: usize, max: usize },
    #[error("malformed frame: {0}")]
    Malformed(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Encodes one value as a payload (without the length prefix).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let payload = bincode::serde::encode_to_vec(value, config()).map_err(|e| CodecError::Malformed(e.to_string()))?;
    if payload.len() > MAX_FRAME_BYTES {
        return Err(CodecError::FrameTooLarge {
            len: payload.len(),
            max: MAX_FRAME_BYTES,
        });
    }
    Ok(payload)
}

/// Encodes one value as a whole frame, length prefix included.
pub fn encode_frame<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let payload = encode(value)?;
    let mut frame = Vec::with_capacity(PREFIX_BYTES + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    frame.extend_from_slice(&payload);
    Ok(frame)
}

/// Decodes one payload; trailing bytes are an error.
pub fn decode<T: DeserializeOwned>(payload: &[u8]) -> Result<T, CodecError> {
    let (value, read) =
        bincode::serde::decode_from_slice(payload, config()).map_err(|e| CodecError::Malformed(e.to_string()))?;
    if read != payload.len() {
        return Err(CodecError::Malformed(format!(
            "{} trailing bytes after the message",
            payload.len() - read
        )));
    }
    Ok(value)
}

/// The payload length a buffer's prefix announces, if the prefix is complete.
pub fn announced_len(src: &[u8]) -> Option<usize> {
    let prefix: [u8; PREFIX_BYTES] = src.get(..PREFIX_BYTES)?.try_into().ok()?;
    Some(u32::from_be_bytes(prefix) as usize)
}

/// A tokio codec that writes `Out` frames and reads `In` frames of at most
/// `max_in` payload bytes. The client uses `FrameCodec<ClientFrame, ServerFrame>`,
/// the daemon the reverse with a smaller `max_in`.
pub struct FrameCodec<Out, In> {
    max_in: usize,
    _types: PhantomData<fn(Out) -> In>,
}

impl<Out, In> FrameCodec<Out, In> {
    pub fn new() -> Self {
        Self::with_max_in(MAX_FRAME_BYTES)
    }

    pub fn with_max_in(max_in: usize) -> Self {
        Self {
            max_in: max_in.min(MAX_FRAME_BYTES),
            _types: PhantomData,
        }
    }

    pub fn set_max_in(&mut self, max_in: usize) {
        self.max_in = max_in.min(MAX_FRAME_BYTES);
    }

    pub fn max_in(&self) -> usize {
        self.max_in
    }
}

impl<Out, In> Default for FrameCodec<Out, In> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Out, In: DeserializeOwned> Decoder for FrameCodec<Out, In> {
    type Item = In;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<In>, CodecError> {
        let Some(len) = announced_len(src) else { return Ok(None) };
        if len > self.max_in {
            return Err(CodecError::FrameTooLarge { len, max: self.max_in });
        }
        if src.len() < PREFIX_BYTES + len {
            return Ok(None);
        }
        src.advance(PREFIX_BYTES);
        let payload = src.split_to(len);
        decode(&payload).map(Some)
    }
}

impl<Out: Serialize, In> Encoder<Out> for FrameCodec<Out, In> {
    type Error = CodecError;

    fn encode(&mut self, item: Out, dst: &mut BytesMut) -> Result<(), CodecError> {
        let payload = encode(&item)?;
        dst.reserve(PREFIX_BYTES + payload.len());
        dst.put_u32(payload.len() as u32);
        dst.extend_from_slice(&payload);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::*;
    use crate::{ErrorCode, ErrorReply, Request, Response};
    use proptest::prelude::*;

    fn roundtrip<T>(value: T)
    where
        T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug + Clone,
    {
        let mut codec = FrameCodec::<T, T>::new();
        let mut buf = BytesMut::new();
        codec.encode(value.clone(), &mut buf).unwrap();
        let back = codec.decode(&mut buf).unwrap().unwrap();
        assert_eq!(back, value);
        assert!(buf.is_empty());
    }

    fn string() -> impl Strategy<Value = String> {
        ".{0,24}"
    }

    /// A value made from random bytes by its `Arbitrary` derive: every request,
    /// reply and event type has one, so a new request is covered here unwritten.
    fn made<T: for<'a> arbitrary::Arbitrary<'a>>(bytes: &[u8]) -> Option<T> {
        T::arbitrary(&mut arbitrary::Unstructured::new(bytes)).ok()
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(any::<u8>(), 0..2048)
    }

    /// Random bytes from a fixed seed (xorshift), for the coverage check below.
    fn seeded_bytes(seed: &mut u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                *seed as u8
            })
            .collect()
    }

    #[test]
    fn random_bytes_make_every_request_and_reply() {
        use std::collections::HashSet;
        let (mut requests, mut replies) = (HashSet::new(), HashSet::new());
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let bytes = seeded_bytes(&mut seed, 256);
            if let Some(request) = made::<Request>(&bytes) {
                roundtrip(ClientFrame::Request {
                    id: 1,
                    request: request.clone(),
                });
                requests.insert(request.name());
            }
            if let Some(response) = made::<Response>(&bytes) {
                replies.insert(response.name());
            }
        }
        assert_eq!(requests.len(), Request::NAMES.len(), "made only {requests:?}");
        assert_eq!(replies.len(), Request::NAMES.len(), "made only {replies:?}");
    }

    proptest! {
        #[test]
        fn client_frames_roundtrip(id: u64, bytes in bytes(), version: u32, name in string()) {
            if let Some(request) = made::<Request>(&bytes) {
                roundtrip(ClientFrame::Request { id, request });
            }
            roundtrip(ClientFrame::Hello(Hello { protocol_version: version, client_name: name.clone(), client_version: name }));
        }

        #[test]
        fn server_frames_roundtrip(id: u64, bytes in bytes(), msg in string()) {
            if let Some(response) = made::<Response>(&bytes) {
                roundtrip(ServerFrame::Reply { id, result: Ok(response) });
            }
            if let Some(event) = made::<Event>(&bytes) {
                roundtrip(ServerFrame::Event(event));
            }
            roundtrip(ServerFrame::Reply { id, result: Err(ErrorReply::new(ErrorCode::Ambiguous, msg.clone())) });
            roundtrip(ServerFrame::Fatal(ErrorReply::new(ErrorCode::FrameTooLarge, msg)));
            roundtrip(ServerFrame::Welcome(Welcome { protocol_version: 1, daemon_version: "x".into(), pid: 7 }));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let mut a = FrameCodec::<ServerFrame, ClientFrame>::new();
            let mut b = FrameCodec::<ClientFrame, ServerFrame>::new();
            let mut buf = BytesMut::from(&bytes[..]);
            while let Ok(Some(_)) = a.decode(&mut buf) {}
            let mut buf = BytesMut::from(&bytes[..]);
            while let Ok(Some(_)) = b.decode(&mut buf) {}
            let _ = decode::<ClientFrame>(&bytes);
            let _ = decode::<ServerFrame>(&bytes);
        }

        #[test]
        fn arbitrary_payload_in_a_valid_frame_is_an_error_or_a_frame(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            let mut framed = BytesMut::new();
            framed.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
            framed.extend_from_slice(&bytes);
            let mut codec = FrameCodec::<ServerFrame, ClientFrame>::new();
            match codec.decode(&mut framed) {
                Ok(Some(_)) | Err(CodecError::Malformed(_)) => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn oversize_length_is_frame_too_large() {
        let mut codec = FrameCodec::<ServerFrame, ClientFrame>::new();
        let mut buf = BytesMut::from(&((MAX_FRAME_BYTES as u32) + 1).to_be_bytes()[..]);
        assert!(matches!(codec.decode(&mut buf), Err(CodecError::FrameTooLarge { .. })));
    }

    #[test]
    fn huge_vec_length_inside_payload_does_not_allocate() {
        // A WriteInput whose byte vector claims u32::MAX entries in a tiny frame.
        let mut payload = encode(&ClientFrame::Request {
            id: 1,
            request: Request::WriteInput(crate::requests::WriteInput {
                pane: "p".into(),
                data: vec![],
                paste: false,
            }),
        })
        .unwrap();
        // Drop the empty length and the paste flag, claim a huge length instead.
        payload.truncate(payload.len() - 2);
        payload.extend_from_slice(&[0xFC, 0xFF, 0xFF, 0xFF, 0xFF]);
        assert!(decode::<ClientFrame>(&payload).is_err());
    }

    #[test]
    fn trailing_bytes_are_refused() {
        let mut payload = encode(&ClientFrame::Request {
            id: 1,
            request: Request::Ping(crate::requests::Ping {}),
        })
        .unwrap();
        payload.push(0);
        assert!(matches!(decode::<ClientFrame>(&payload), Err(CodecError::Malformed(_))));
    }
}
