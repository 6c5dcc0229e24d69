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
    use crate::{ErrorCode, ErrorReply, PaneId, SessionId};
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

    prop_compose! {
        fn pane_info()(
            session_name in string(), title in string(), purpose in string(),
            command in prop::collection::vec(string(), 0..4), index: u32, pid: u32,
            code in prop::option::of(any::<i32>()), signal in prop::option::of(any::<i32>()),
            cols: u16, rows: u16, started: u64, exited in prop::option::of(any::<u64>()),
            running: bool, shell: bool,
        ) -> PaneInfo {
            PaneInfo {
                id: PaneId::new(), session_id: SessionId::new(), session_name, index, title,
                purpose: purpose.clone(), command, shell, cwd: "/tmp".into(),
                state: if running { PaneState::Running } else { PaneState::Exited },
                pid, exit: Some(ExitStatus { code, signal }), size: PaneSize { cols, rows },
                started_at_ms: started, exited_at_ms: exited,
                restart: RestartPolicy::OnFailure, restarts: index, last_exit: None,
                agent_session: running.then(|| AgentSession { agent: AgentKind::Codex, id: purpose.clone() }),
            }
        }
    }

    prop_compose! {
        fn session_info()(name in string(), cwd in string(), panes: u32, running: u32, at: u64)
            -> SessionInfo {
            SessionInfo { id: SessionId::new(), name, cwd, panes, running_panes: running, created_at_ms: at }
        }
    }

    fn env() -> impl Strategy<Value = Vec<EnvVar>> {
        prop::collection::vec(
            (string(), string()).prop_map(|(name, value)| EnvVar { name, value }),
            0..3,
        )
    }

    fn spawn_spec() -> impl Strategy<Value = SpawnSpec> {
        (
            string(),
            prop::option::of(string()),
            prop::collection::vec(string(), 0..3),
            env(),
            prop::option::of(string()),
            any::<bool>(),
            prop::option::of(string()),
            prop::option::of((any::<u16>(), any::<u16>())),
            prop::option::of(any::<u64>()),
        )
            .prop_map(
                |(session, command, args, env, cwd, shell, title, size, limit)| SpawnSpec {
                    session,
                    command,
                    args,
                    env,
                    cwd,
                    shell,
                    title: title.clone(),
                    purpose: title,
                    size: size.map(|(cols, rows)| PaneSize { cols, rows }),
                    output_byte_limit: limit,
                    restart: RestartPolicy::Always,
                    max_restarts: limit.map(|l| l as u32),
                },
            )
    }

    fn request() -> impl Strategy<Value = Request> {
        let s = string;
        prop_oneof![
            Just(Request::Ping),
            Just(Request::DaemonStatus),
            Just(Request::Shutdown),
            Just(Request::ListSessions),
            Just(Request::Subscribe),
            (s(), prop::option::of(s()), env()).prop_map(|(name, cwd, env)| Request::CreateSession { name, cwd, env }),
            s().prop_map(|session| Request::DestroySession { session }),
            (s(), s()).prop_map(|(session, name)| Request::RenameSession { session, name }),
            spawn_spec().prop_map(Request::CreatePane),
            prop::option::of(s()).prop_map(|session| Request::ListPanes { session }),
            s().prop_map(|pane| Request::PaneStatus { pane }),
            (s(), prop::collection::vec(any::<u8>(), 0..64), any::<bool>())
                .prop_map(|(pane, data, paste)| Request::WriteInput { pane, data, paste }),
            (
                s(),
                prop::option::of(any::<i64>()),
                prop::option::of(any::<i64>()),
                any::<bool>(),
                any::<bool>(),
                0..3u8
            )
                .prop_map(|(pane, start, end, ansi, join_wrapped, w)| Request::Capture {
                    pane,
                    start,
                    end,
                    ansi,
                    join_wrapped,
                    what: [CaptureWhat::Screen, CaptureWhat::Scrollback, CaptureWhat::All][w as usize],
                }),
            (s(), any::<bool>(), prop::option::of((any::<u16>(), any::<u16>()))).prop_map(|(pane, read_only, size)| {
                Request::Attach {
                    pane,
                    read_only,
                    size: size.map(|(cols, rows)| PaneSize { cols, rows }),
                }
            }),
            s().prop_map(|pane| Request::Detach { pane }),
            (
                s(),
                any::<bool>(),
                prop::option::of(s()),
                any::<bool>(),
                prop::option::of(any::<u64>()),
                prop::option::of(any::<u64>()),
                0..7u8,
                any::<u64>()
            )
                .prop_map(|(pane, exit, pattern, screen, since, idle_ms, state, timeout_ms)| {
                    Request::WaitFor {
                        pane,
                        until: WaitUntil {
                            exit,
                            pattern,
                            on: if screen { MatchOn::Screen } else { MatchOn::Output },
                            since,
                            idle_ms,
                            agent_states: [
                                vec![],
                                vec![AgentState::Busy],
                                vec![AgentState::Idle, AgentState::WaitingForAnswer],
                                vec![AgentState::WaitingForPermission],
                                vec![AgentState::Exited],
                                vec![AgentState::Starting],
                                vec![AgentState::Unknown],
                            ][state as usize]
                                .clone(),
                            agent_needs: match state {
                                0 => vec![],
                                1 => Attention::ANY.to_vec(),
                                _ => vec![Attention::Question],
                            },
                        },
                        timeout_ms,
                    }
                }),
            s().prop_map(|pane| Request::AgentStatus { pane }),
            any::<u64>().prop_map(|id| Request::Cancel { id }),
            (s(), any::<u16>(), any::<u16>()).prop_map(|(pane, cols, rows)| Request::ClientResize {
                pane,
                size: PaneSize { cols, rows }
            }),
            (s(), 0..3u8).prop_map(|(pane, p)| Request::SetSizePolicy {
                pane,
                policy: [SizePolicy::Latest, SizePolicy::Smallest, SizePolicy::Largest][p as usize],
            }),
            (s(), prop::collection::vec(s(), 0..4)).prop_map(|(pane, keys)| Request::SendKeys { pane, keys }),
            s().prop_map(|pane| Request::Interrupt { pane }),
            (s(), prop::option::of(s())).prop_map(|(pane, signal)| Request::KillPane { pane, signal }),
            s().prop_map(|pane| Request::ReleasePane { pane }),
            (s(), any::<u16>(), any::<u16>()).prop_map(|(pane, cols, rows)| Request::ResizePane {
                pane,
                size: PaneSize { cols, rows }
            }),
            (s(), s()).prop_map(|(pane, title)| Request::RenamePane { pane, title }),
            (s(), prop::collection::vec(s(), 0..4))
                .prop_map(|(session, panes)| Request::ReorderPanes { session, panes }),
            (s(), any::<u32>(), prop::option::of(any::<u64>())).prop_map(|(pane, lines, since)| Request::ReadOutput {
                pane,
                mode: ReadMode::Text { lines, since }
            }),
            (s(), prop::option::of(any::<u64>()), prop::option::of(any::<u64>())).prop_map(
                |(pane, since, max_bytes)| Request::ReadOutput {
                    pane,
                    mode: ReadMode::Raw { since, max_bytes }
                }
            ),
            (s(), prop::option::of(any::<u64>()))
                .prop_map(|(pane, timeout_ms)| Request::WaitForExit { pane, timeout_ms }),
        ]
    }

    fn response() -> impl Strategy<Value = Response> {
        prop_oneof![
            Just(Response::Pong),
            Just(Response::Ok),
            Just(Response::ShuttingDown),
            (string(), any::<u32>(), any::<u64>()).prop_map(|(socket, n, at)| Response::Daemon(DaemonInfo {
                pid: n,
                version: "0.1.0".into(),
                protocol_version: 1,
                socket: socket.clone(),
                socket_why: String::new(),
                started_at_ms: at,
                sessions: n,
                panes: n,
                running_panes: n,
                state_path: socket,
                recovery: String::new(),
                unpersisted_writes: at,
                client_memory_used: at,
                client_memory_limit: at,
            })),
            session_info().prop_map(Response::Session),
            (session_info(), string())
                .prop_map(|(session, previous_name)| Response::SessionRenamed { session, previous_name }),
            prop::collection::vec(session_info(), 0..3).prop_map(Response::Sessions),
            pane_info().prop_map(Response::Pane),
            prop::collection::vec(pane_info(), 0..3).prop_map(Response::Panes),
            (
                pane_info(),
                prop::collection::vec(any::<u8>(), 0..64),
                prop::collection::vec(string(), 0..3),
                any::<u64>(),
                any::<bool>()
            )
                .prop_map(|(pane, data, lines, off, truncated)| Response::Output(OutputChunk {
                    pane,
                    data,
                    lines,
                    start_offset: off / 2,
                    next_offset: off,
                    truncated,
                })),
            (pane_info(), any::<bool>()).prop_map(|(pane, exited)| Response::Waited { pane, exited }),
            pane_info().prop_map(Response::Attached),
            (pane_info(), 0..5u8, prop::option::of(string()), any::<u64>()).prop_map(|(pane, c, matched, n)| {
                Response::WaitDone(WaitOutcome {
                    condition: [
                        WaitCondition::Exit,
                        WaitCondition::Pattern,
                        WaitCondition::Idle,
                        WaitCondition::AgentState,
                        WaitCondition::Timeout,
                    ][c as usize],
                    matched,
                    elapsed_ms: n,
                    pane,
                    next_offset: n,
                })
            }),
            (0..4u8, prop::collection::vec(string(), 0..3), any::<u64>()).prop_map(|(k, evidence, since_ms)| {
                Response::Agent(AgentInfo {
                    agent: [
                        None,
                        Some(AgentKind::Claude),
                        Some(AgentKind::Codex),
                        Some(AgentKind::Gemini),
                    ][k as usize],
                    state: AgentState::Idle,
                    needs: Attention::FinishedUnseen,
                    source: StateSource::Screen,
                    version: evidence.first().cloned(),
                    session_id: None,
                    since_ms,
                    prompt_id: evidence.last().cloned(),
                    evidence,
                })
            }),
            (
                prop::collection::vec(string(), 0..4),
                any::<i64>(),
                any::<u16>(),
                any::<u16>(),
                any::<bool>(),
                string(),
                any::<u32>()
            )
                .prop_map(|(lines, first_line, row, col, alt, title, sb)| Response::Captured(
                    CaptureResult {
                        lines,
                        first_line,
                        cursor_row: row,
                        cursor_col: col,
                        cursor_visible: !alt,
                        size: PaneSize { cols: col, rows: row },
                        alternate_screen: alt,
                        title,
                        scrollback_lines: sb,
                    }
                )),
        ]
    }

    fn event() -> impl Strategy<Value = Event> {
        prop_oneof![
            session_info().prop_map(Event::SessionCreated),
            string().prop_map(|name| Event::SessionDestroyed {
                id: SessionId::new(),
                name
            }),
            (string(), string()).prop_map(|(previous_name, name)| Event::SessionRenamed {
                id: SessionId::new(),
                previous_name,
                name
            }),
            pane_info().prop_map(Event::PaneCreated),
            pane_info().prop_map(Event::PaneExited),
            pane_info().prop_map(Event::PaneRenamed),
            Just(Event::PaneRemoved {
                id: PaneId::new(),
                session_id: SessionId::new()
            }),
            Just(Event::PanesReordered {
                session_id: SessionId::new(),
                panes: vec![PaneId::new(), PaneId::new()]
            }),
            any::<u64>().prop_map(|missed| Event::Lagged { missed }),
            prop::collection::vec(any::<u8>(), 0..64).prop_map(|data| Event::Redraw {
                pane: PaneId::new(),
                data
            }),
            prop::collection::vec(any::<u8>(), 0..64).prop_map(|data| Event::Output {
                pane: PaneId::new(),
                data
            }),
            string().prop_map(|title| Event::Title {
                pane: PaneId::new(),
                title
            }),
            Just(Event::Bell { pane: PaneId::new() }),
            (prop::option::of(any::<i32>()), prop::option::of(any::<i32>())).prop_map(|(code, signal)| Event::Exited {
                pane: PaneId::new(),
                status: ExitStatus { code, signal }
            }),
        ]
    }

    proptest! {
        #[test]
        fn client_frames_roundtrip(id: u64, request in request(), version: u32, name in string()) {
            roundtrip(ClientFrame::Request { id, request });
            roundtrip(ClientFrame::Hello(Hello { protocol_version: version, client_name: name.clone(), client_version: name }));
        }

        #[test]
        fn server_frames_roundtrip(id: u64, response in response(), event in event(), msg in string()) {
            roundtrip(ServerFrame::Reply { id, result: Ok(response) });
            roundtrip(ServerFrame::Reply { id, result: Err(ErrorReply::new(ErrorCode::Ambiguous, msg.clone())) });
            roundtrip(ServerFrame::Event(event));
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
            request: Request::WriteInput {
                pane: "p".into(),
                data: vec![],
                paste: false,
            },
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
            request: Request::Ping,
        })
        .unwrap();
        payload.push(0);
        assert!(matches!(decode::<ClientFrame>(&payload), Err(CodecError::Malformed(_))));
    }
}
