//! The frame decoder on both sides, fed arbitrary bytes in arbitrary pieces: it
//! must return frames, ask for more, or refuse with an error; never panic, and never
//! allocate for a frame before its bytes arrived.

use bytes::BytesMut;
use fugue_protocol::codec::FrameCodec;
use fugue_protocol::limits::MAX_CLIENT_FRAME_BYTES;
use fugue_protocol::{ClientFrame, ServerFrame};
use tokio_util::codec::Decoder;

fn feed<C: Decoder>(codec: &mut C, data: &[u8], step: usize) {
    let mut buf = BytesMut::new();
    for piece in data.chunks(step.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(_)) => continue,
                Ok(None) => break,
                Err(_) => return,
            }
        }
        // Nothing is reserved ahead of the bytes that came in.
        assert!(
            buf.capacity() <= 2 * data.len() + 64 * 1024,
            "reserved {} for {} bytes",
            buf.capacity(),
            data.len()
        );
    }
}

/// One input, as the fuzz target `frame_decoder` and the corpus replay give it.
pub fn run(data: &[u8]) {
    let step = data.first().map_or(1, |b| *b as usize + 1);
    let data = data.get(1..).unwrap_or_default();
    feed(
        &mut FrameCodec::<ServerFrame, ClientFrame>::with_max_in(MAX_CLIENT_FRAME_BYTES),
        data,
        step,
    );
    feed(&mut FrameCodec::<ClientFrame, ServerFrame>::new(), data, step);
    // A payload alone, as the daemon decodes after the prefix.
    let _ = fugue_protocol::codec::decode::<ClientFrame>(data);
}
