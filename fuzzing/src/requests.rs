//! Everything the daemon does with a request before acting on it: decode it,
//! validate it, and (when valid) encode its keys and parse its targets. Also the
//! display helpers that print client-chosen text. None of it may panic or recurse
//! on client data.

use arbitrary::{Arbitrary, Unstructured};
use fugue_protocol::codec::IncomingFrame;
use fugue_protocol::keys::{encode_key, kitty_from_terminal, KeyMode};
use fugue_protocol::limits::{escape_for_display, strip_unsafe, truncate_for_display};
use fugue_protocol::requests as rq;
use fugue_protocol::target::{resolve, validate_session_name, Candidate, PaneTarget};
use fugue_protocol::{ClientFrame, ErrorCode, Request};

fn targets(text: &str) {
    let _ = PaneTarget::parse(text);
    let _ = validate_session_name(text);
    let ids = [
        uuid::Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0),
        uuid::Uuid::nil(),
    ];
    let candidates = ids.iter().map(|id| Candidate { id: *id, name: "dev" });
    let _ = resolve(text, candidates, "pane", ErrorCode::PaneNotFound);
}

/// A request made from the bytes by its `Arbitrary` derive (so every request,
/// new ones too, is reached with well-formed fields): validating it never panics,
/// and it survives the codec unchanged.
fn made_request(data: &[u8]) {
    let Ok(request) = Request::arbitrary(&mut Unstructured::new(data)) else {
        return;
    };
    let _ = request.validate();
    let bytes = fugue_protocol::codec::encode(&request).expect("a request encodes");
    let back: Request = fugue_protocol::codec::decode(&bytes).expect("an encoded request decodes");
    assert_eq!(back, request);
}

/// One input, as the fuzz target `requests` and the corpus replay give it.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    // Strings straight from the fuzzer, whatever a request would allow.
    let mode = KeyMode {
        app_cursor: data.first().is_some_and(|b| b & 1 == 1),
        kitty_flags: data.get(1).map_or(0, |b| b & 31),
    };
    let _ = encode_key(&text, mode);
    // What an attached terminal types, re-encoded for a kitty-protocol program.
    let _ = kitty_from_terminal(data, || mode);
    targets(&text);
    assert!(!escape_for_display(&text).chars().any(|c| c.is_control()));
    let _ = strip_unsafe(&text);
    let _ = truncate_for_display(&text, data.len() / 2);

    made_request(data);
    // The daemon's own reading: the first frame as a Hello (fields after the
    // fixed ones tolerated), later ones by kind, id and tag, the fields opened
    // only for a known tag. Whatever the bytes, it agrees with the typed decode.
    if let Ok(hello) = fugue_protocol::codec::decode_hello(data) {
        assert!(hello.display_name().len() < 1024);
    }
    let typed = fugue_protocol::codec::decode::<ClientFrame>(data).ok();
    let Ok(IncomingFrame::Request { request, .. }) = fugue_protocol::codec::decode_client_frame(data) else {
        return;
    };
    if let (Ok(read), Some(ClientFrame::Request { request: typed, .. })) = (&request, &typed) {
        assert_eq!(**read, *typed);
    }
    let Ok(request) = request.map(|r| *r) else {
        return;
    };
    if request.validate().is_err() {
        return;
    }
    // What the daemon does with a valid request's strings.
    match &request {
        Request::SendKeys(rq::SendKeys { keys, .. }) => {
            for key in keys {
                let _ = encode_key(key, KeyMode::default());
            }
        }
        Request::PaneStatus(rq::PaneStatus { pane })
        | Request::Capture(rq::Capture { pane, .. })
        | Request::ReadOutput(rq::ReadOutput { pane, .. }) => targets(pane),
        Request::ReorderPanes(rq::ReorderPanes { panes, .. }) => panes.iter().for_each(|p| targets(p)),
        _ => {}
    }
}
