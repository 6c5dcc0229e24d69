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

/// Encodes one value as a whole frame, length prefix included, into one
/// allocation of exactly its size: its size is counted first (a pass that
/// writes nothing), so a 1 MiB reply never takes a growing buffer of up to
/// twice that and a copy on the way.
pub fn encode_frame<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let malformed = |e: bincode::error::EncodeError| CodecError::Malformed(e.to_string());
    let mut size = bincode::enc::write::SizeWriter::default();
    bincode::serde::encode_into_writer(value, &mut size, config()).map_err(malformed)?;
    let len = size.bytes_written;
    if len > MAX_FRAME_BYTES {
        return Err(CodecError::FrameTooLarge {
            len,
            max: MAX_FRAME_BYTES,
        });
    }
    let mut frame = Vec::with_capacity(PREFIX_BYTES + len);
    frame.extend_from_slice(&(len as u32).to_be_bytes());
    bincode::serde::encode_into_std_write(value, &mut frame, config()).map_err(malformed)?;
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

/// Decodes the value at the start of `payload` and says how many bytes it took;
/// what follows is left for the caller.
pub fn decode_prefix<T: DeserializeOwned>(payload: &[u8]) -> Result<(T, usize), CodecError> {
    bincode::serde::decode_from_slice(payload, config()).map_err(|e| CodecError::Malformed(e.to_string()))
}

/// A client frame as the daemon reads it: the request is opened by its tag, so
/// one this build does not know (a newer client's) is answered, not fatal.
#[derive(Debug)]
pub enum IncomingFrame {
    /// A Hello after the handshake (a protocol error).
    Hello,
    Request {
        id: u64,
        /// Boxed: a request is large beside the Hello variant.
        request: Result<Box<crate::Request>, crate::requests::UnreadableRequest>,
    },
}

/// `ClientFrame`'s variant indexes: Hello is 0 forever, Request 1.
const CLIENT_HELLO: u32 = 0;
const CLIENT_REQUEST: u32 = 1;

/// Reads a client frame after the handshake. The frame's kind, the request id
/// and the request's tag come first (bincode varints); the request's fields are
/// the rest of the payload, read by [`crate::Request::decode_body`] only for a
/// tag this build knows. An error here means the frame itself is broken.
pub fn decode_client_frame(payload: &[u8]) -> Result<IncomingFrame, CodecError> {
    let (kind, read): (u32, usize) = decode_prefix(payload)?;
    match kind {
        CLIENT_HELLO => Ok(IncomingFrame::Hello),
        CLIENT_REQUEST => {
            let rest = &payload[read..];
            let ((id, tag), head): ((u64, u32), usize) = decode_prefix(rest)?;
            Ok(IncomingFrame::Request {
                id,
                request: crate::Request::decode_body(tag, &rest[head..]).map(Box::new),
            })
        }
        other => Err(CodecError::Malformed(format!("unknown frame kind {other}"))),
    }
}

/// The Hello a client's first frame carries. Hello's first three fields are fixed
/// forever; fields appended later (from generation 10 on: `revision`) are read
/// when present and bytes after them ignored, so a daemon can always tell the
/// version of a client that speaks another one, and a newer client may say more.
pub fn decode_hello(payload: &[u8]) -> Result<crate::Hello, CodecError> {
    let (kind, read): (u32, usize) = decode_prefix(payload)?;
    if kind != CLIENT_HELLO {
        return Err(CodecError::Malformed("the first frame must be Hello".into()));
    }
    let rest = &payload[read..];
    if let Ok((hello, _)) = decode_prefix::<crate::Hello>(rest) {
        return Ok(hello);
    }
    // A client of generation 9 or older: its version is enough to refuse it clearly.
    let ((protocol_version, client_name, client_version), _): ((u32, String, String), usize) = decode_prefix(rest)?;
    Ok(crate::Hello {
        protocol_version,
        client_name,
        client_version,
        revision: 0,
    })
}

/// The payload length a buffer's prefix announces, if the prefix is complete.
pub fn announced_len(src: &[u8]) -> Option<usize> {
    let prefix: [u8; PREFIX_BYTES] = src.get(..PREFIX_BYTES)?.try_into().ok()?;
    Some(u32::from_be_bytes(prefix) as usize)
}

/// Takes the next whole frame's payload off `src`: `None` until it has all
/// arrived; a length prefix over `max_in` is refused as soon as it is read.
fn split_frame(src: &mut BytesMut, max_in: usize) -> Result<Option<BytesMut>, CodecError> {
    let Some(len) = announced_len(src) else { return Ok(None) };
    if len > max_in {
        return Err(CodecError::FrameTooLarge { len, max: max_in });
    }
    if src.len() < PREFIX_BYTES + len {
        return Ok(None);
    }
    src.advance(PREFIX_BYTES);
    Ok(Some(src.split_to(len)))
}

/// A tokio codec that writes `Out` frames and reads `In` frames of at most
/// `max_in` payload bytes. The client uses `FrameCodec<ClientFrame, ServerFrame>`,
/// the daemon the reverse with a smaller `max_in`.
pub struct FrameCodec<Out, In> {
    max_in: usize,
    /// Bytes after the value are ignored rather than refused: set for the
    /// handshake's frames, whose structs may gain fields at their end.
    lenient: bool,
    _types: PhantomData<fn(Out) -> In>,
}

impl<Out, In> FrameCodec<Out, In> {
    pub fn new() -> Self {
        Self::with_max_in(MAX_FRAME_BYTES)
    }

    pub fn with_max_in(max_in: usize) -> Self {
        Self {
            max_in: max_in.min(MAX_FRAME_BYTES),
            lenient: false,
            _types: PhantomData,
        }
    }

    /// Ignore bytes after a frame's value (the handshake) or refuse them (after).
    pub fn set_lenient(&mut self, lenient: bool) {
        self.lenient = lenient;
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
        let Some(payload) = split_frame(src, self.max_in)? else {
            return Ok(None);
        };
        match self.lenient {
            true => decode_prefix(&payload).map(|(value, _)| Some(value)),
            false => decode(&payload).map(Some),
        }
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

/// Splits a byte stream into frame payloads without decoding them (the daemon
/// decodes a client's frames itself: see [`decode_client_frame`]).
pub struct RawFrames {
    max_in: usize,
}

impl RawFrames {
    pub fn with_max_in(max_in: usize) -> Self {
        Self {
            max_in: max_in.min(MAX_FRAME_BYTES),
        }
    }

    pub fn set_max_in(&mut self, max_in: usize) {
        self.max_in = max_in.min(MAX_FRAME_BYTES);
    }
}

impl Decoder for RawFrames {
    type Item = BytesMut;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<BytesMut>, CodecError> {
        split_frame(src, self.max_in)
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
        let table = crate::requests::TABLE.len();
        assert_eq!(requests.len(), table, "made only {requests:?}");
        assert_eq!(replies.len(), table, "made only {replies:?}");
    }

    proptest! {
        #[test]
        fn client_frames_roundtrip(id: u64, bytes in bytes(), version: u32, name in string()) {
            if let Some(request) = made::<Request>(&bytes) {
                roundtrip(ClientFrame::Request { id, request });
            }
            roundtrip(ClientFrame::Hello(Hello { protocol_version: version, client_name: name.clone(), client_version: name, revision: version / 2 }));
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
            roundtrip(ServerFrame::Welcome(Welcome { protocol_version: 1, daemon_version: "x".into(), pid: 7, revision: 2, requests: vec![0, 36] }));
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
            let _ = decode_client_frame(&bytes);
            let _ = decode_hello(&bytes);
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

    proptest! {
        /// Whatever a client sends, the daemon's reading of it agrees with the
        /// client's encoding: the same id and request, or the tag it does not know.
        #[test]
        fn the_daemon_reads_what_a_client_wrote(id: u64, bytes in bytes()) {
            if let Some(request) = made::<Request>(&bytes) {
                let payload = encode(&ClientFrame::Request { id, request: request.clone() }).unwrap();
                match decode_client_frame(&payload).unwrap() {
                    IncomingFrame::Request { id: read, request: Ok(back) } => {
                        prop_assert_eq!(read, id);
                        prop_assert_eq!(*back, request);
                    }
                    other => prop_assert!(false, "read {:?}", other),
                }
            }
        }
    }

    #[test]
    fn an_unknown_tag_keeps_its_id() {
        let mut payload = encode(&ClientFrame::Request {
            id: 77,
            request: Request::Ping(crate::requests::Ping {}),
        })
        .unwrap();
        // Kind 1, id 77, tag 0: make the tag one no build has, with fields after it.
        assert_eq!(payload, vec![1, 77, 0]);
        payload[2] = 250;
        payload.extend_from_slice(&[0, 1, 2, 3]);
        match decode_client_frame(&payload).unwrap() {
            IncomingFrame::Request {
                id: 77,
                request: Err(crate::requests::UnreadableRequest::Unknown { tag }),
            } => {
                assert_eq!(tag, 250)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hellos_of_older_and_newer_clients_are_read() {
        let hello = Hello {
            protocol_version: 10,
            client_name: "fugue".into(),
            client_version: "1.0".into(),
            revision: 3,
        };
        let mut newer = encode(&ClientFrame::Hello(hello.clone())).unwrap();
        newer.extend_from_slice(&[9, 9, 9]); // fields a later revision appended
        assert_eq!(decode_hello(&newer).unwrap(), hello);
        // Generation 9's Hello had three fields.
        let mut older = vec![0u8];
        older.extend(encode(&(9u32, "fugue".to_string(), "0.9".to_string())).unwrap());
        let read = decode_hello(&older).unwrap();
        assert_eq!((read.protocol_version, read.revision), (9, 0));
        let request = encode(&ClientFrame::Request {
            id: 1,
            request: Request::Ping(crate::requests::Ping {}),
        })
        .unwrap();
        assert!(decode_hello(&request).is_err());
    }

    #[test]
    fn a_lenient_codec_reads_a_welcome_with_more_fields() {
        let welcome = Welcome {
            protocol_version: 10,
            daemon_version: "1".into(),
            pid: 1,
            revision: 0,
            requests: vec![1, 2],
        };
        let mut payload = encode(&ServerFrame::Welcome(welcome.clone())).unwrap();
        payload.extend_from_slice(&[5, 5]);
        let mut framed = BytesMut::new();
        framed.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        framed.extend_from_slice(&payload);
        let mut strict = FrameCodec::<ClientFrame, ServerFrame>::new();
        assert!(strict.decode(&mut framed.clone()).is_err());
        let mut lenient = FrameCodec::<ClientFrame, ServerFrame>::new();
        lenient.set_lenient(true);
        assert_eq!(
            lenient.decode(&mut framed).unwrap(),
            Some(ServerFrame::Welcome(welcome))
        );
    }
}
