//! What a page hands fugued for Web Push, and what a program makes it push:
//! an endpoint, a subscription's keys, and a notification's title and body
//! (NUL-separated). Parsing the endpoint and the keys must never panic; a
//! push's payload is JSON within what a push may carry, whatever the text.
//! (Resolving the endpoint's host is left out: a fuzzer must not ask DNS.)

use fugue_daemon::notify::NotifyEvent;
use fugue_daemon::push;

/// One input, as the fuzz target `push_subscription` and the corpus replay give it.
pub fn run(data: &[u8]) {
    let mut parts = data
        .split(|b| *b == 0)
        .map(|part| String::from_utf8_lossy(part).into_owned());
    let mut next = || parts.next().unwrap_or_default();
    let (endpoint, p256dh, auth, title, body) = (next(), next(), next(), next(), next());
    for allow_loopback in [false, true] {
        if let Ok(parsed) = push::parse_endpoint(&endpoint, allow_loopback) {
            assert!(!parsed.host.is_empty());
            assert!(parsed.scheme == "https" || (allow_loopback && parsed.scheme == "http"));
        }
    }
    let _ = push::user_agent_keys(&p256dh, &auth);
    let notice = NotifyEvent {
        event: "notification".into(),
        pane: uuid::Uuid::nil().to_string(),
        session: "s".into(),
        label: "s:0".into(),
        title: String::new(),
        agent: None,
        state: None,
        prompt: Some(body.clone()),
        prompt_id: None,
        notification_title: Some(title.clone()),
        notification_body: Some(body),
        at: 0,
        message: format!("s:0: {title}"),
        needs_you: false,
        url: None,
    };
    let tokens = ("a".repeat(64), "d".repeat(64));
    let payload = push::payload(&notice, Some(&tokens));
    assert!(payload.len() <= push::MAX_PAYLOAD_BYTES, "{} bytes", payload.len());
    assert!(serde_json::from_str::<serde_json::Value>(&payload).is_ok(), "{payload}");
}
