//! Pairing a phone by QR code, end to end: `fugue web --qr` runs in a real pane
//! (so its code sits in the pane's output, where an agent could read it), a
//! device claims the code over HTTP, and nothing pairs until the person at
//! that terminal answers; the page's own pairing is confirmed or denied
//! through the API. A paired device's credential works on any fugue-web of the
//! daemon (it is the daemon's), is listed by `fugue web devices`, and gets
//! 401 once revoked.

use crate::web::Web;
use fugue_tests::{bin, Daemon};
use reqwest::header::{COOKIE, SET_COOKIE};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// A POST to a pairing route, from this server's own page.
async fn pair_post(http: &reqwest::Client, base: &str, port: u16, path: &str, body: Value) -> reqwest::Response {
    http.post(format!("{base}{path}"))
        .header("Origin", format!("http://127.0.0.1:{port}"))
        .header("Sec-Fetch-Site", "same-origin")
        .json(&body)
        .send()
        .await
        .expect("send")
}

/// The pairing code in a new pairing's URL (`.../pair#CODE`).
fn code_of(made: &Value) -> String {
    made["url"]
        .as_str()
        .unwrap()
        .split_once("/pair#")
        .unwrap()
        .1
        .to_string()
}

/// A request with the master token: its status and JSON reply.
async fn as_master(http: &reqwest::Client, base: &str, token: &str, method: Method, path: &str) -> (StatusCode, Value) {
    let response = http
        .request(method, format!("{base}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap_or(Value::Null))
}

/// The word after `prefix` in `text` (up to whitespace).
fn word_after<'a>(text: &'a str, prefix: &str) -> &'a str {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} not in:\n{text}"))
        + prefix.len();
    text[at..].split_whitespace().next().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_qr_code_pairs_once_and_only_when_its_terminal_says_yes() {
    let daemon = Daemon::start();
    daemon.cli(&["new-session", "web"]).ok();
    let socket = daemon.socket.display().to_string();
    let web_bin = bin("fugue-web").display().to_string();
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "web",
            "--size",
            "200x80",
            "--no-shell",
            "--",
            &web_bin,
            "--qr",
            "--listen",
            "127.0.0.1:0",
            "--socket",
            &socket,
        ])
        .ok()
        .trim()
        .to_string();
    // What the terminal shows (an agent reading the pane sees the same).
    let screen = tokio::task::block_in_place(|| daemon.wait_screen(&pane, "/pair#"));
    assert!(
        screen.contains('▀') || screen.contains('▄'),
        "a QR code in half blocks:\n{screen}"
    );
    let login = word_after(&screen, "http://127.0.0.1:");
    let port: u16 = login.split('/').next().unwrap().parse().expect("port");
    let base = format!("http://127.0.0.1:{port}");
    let token = word_after(&screen, "/?token=").to_string();
    let code = word_after(&screen, "/pair#").to_string();
    assert_eq!(code.len(), 64, "256 bits as hex: {code}");
    let http = reqwest::Client::new();
    let pair = |path: &'static str, body: Value| pair_post(&http, &base, port, path, body);

    // The routes outside the cookie take only this server's own pages.
    let foreign = http
        .post(format!("{base}/pair/claim"))
        .header("Origin", "https://evil.example")
        .json(&json!({"code": code, "name": "evil"}))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    let cross = http
        .post(format!("{base}/pair/claim"))
        .header("Origin", format!("http://127.0.0.1:{port}"))
        .header("Sec-Fetch-Site", "same-site")
        .json(&json!({"code": code, "name": "evil"}))
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);

    // A device claims the code: it waits, and the code is used up.
    let claimed = pair("/pair/claim", json!({"code": code, "name": "Pixel 8"})).await;
    assert_eq!(claimed.status(), StatusCode::OK);
    let claim = claimed.json::<Value>().await.unwrap()["claim"]
        .as_str()
        .unwrap()
        .to_string();
    let again = pair("/pair/claim", json!({"code": code, "name": "Copycat"})).await;
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED, "a code pairs once");
    let waiting = pair("/pair/status", json!({"claim": claim})).await;
    assert!(waiting.headers().get(SET_COOKIE).is_none());
    assert_eq!(waiting.json::<Value>().await.unwrap()["status"], "waiting");

    // The terminal asks; the person says yes: the device gets its credential, once.
    let asked = tokio::task::block_in_place(|| daemon.wait_screen(&pane, "Pair it? [y/N]"));
    assert!(asked.contains("\"Pixel 8\" (from 127.0.0.1)"), "{asked}");
    daemon.cli(&["send-keys", &pane, "y", "Enter"]).ok();
    // The answer is taken once fugue-web says so (asked at once, the claim
    // could still read "waiting": CI, 2026-11-29).
    tokio::task::block_in_place(|| daemon.wait_screen(&pane, "fugue-web: paired"));
    let paired = pair("/pair/status", json!({"claim": claim})).await;
    assert_eq!(paired.status(), StatusCode::OK);
    let cookie = paired
        .headers()
        .get(SET_COOKIE)
        .expect("the credential's cookie")
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Max-Age="),
        "{cookie}"
    );
    let credential = cookie.split(';').next().unwrap().split_once('=').unwrap().1.to_string();
    assert!(
        credential.starts_with("fugue_dev_") && !credential.contains(&token),
        "{credential}"
    );
    let device = paired.json::<Value>().await.unwrap()["device"].clone();
    assert_eq!(device["name"], "Pixel 8", "{device}");
    let spent = pair("/pair/status", json!({"claim": claim})).await;
    assert_eq!(
        spent.status(),
        StatusCode::UNAUTHORIZED,
        "the credential is handed out once"
    );

    // The device's cookie opens the API; on another fugue-web of the same daemon too.
    let as_device = |base: &str, port: u16| {
        http.get(format!("{base}/api/devices"))
            .header(COOKIE, format!("fugue_token_{port}={credential}"))
    };
    let listed = as_device(&base, port).send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    let other = Web::start(&daemon, &[]);
    let there = as_device(&other.base, other.port).send().await.unwrap();
    assert_eq!(
        there.status(),
        StatusCode::OK,
        "a device is the daemon's, not one server's"
    );

    // `fugue web devices` lists it; revoked, it gets 401 everywhere.
    let devices = daemon.cli(&["web", "devices", "--json"]).json();
    assert_eq!(devices[0]["id"], device["id"], "{devices}");
    assert!(
        !devices.to_string().contains(&credential),
        "never the credential: {devices}"
    );
    let id = device["id"].as_str().unwrap();
    daemon.cli(&["web", "devices", "revoke", id]).ok();
    for (base, port) in [(base.as_str(), port), (other.base.as_str(), other.port)] {
        let refused = as_device(base, port).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "a revoked device");
    }
    let text = daemon.cli(&["web", "devices"]).ok();
    assert!(text.contains("No paired devices"), "{text}");

    // A pairing the page makes is the page's to answer: denied, nothing pairs.
    let (_, made) = as_master(&http, &base, &token, Method::POST, "/api/pairings").await;
    assert!(made["qr_svg"].as_str().unwrap().contains("<svg"), "{made}");
    let code = code_of(&made);
    let claimed = pair("/pair/claim", json!({"code": code, "name": "Tablet"})).await;
    let claim = claimed.json::<Value>().await.unwrap()["claim"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, pending) = as_master(&http, &base, &token, Method::GET, "/api/pairings").await;
    assert_eq!(pending[0]["name"], "Tablet", "{pending}");
    let pairing = made["id"].as_str().unwrap();
    let deny = format!("/api/pairings/{pairing}/deny");
    let (denied, _) = as_master(&http, &base, &token, Method::POST, &deny).await;
    assert_eq!(denied, StatusCode::OK);
    let status = pair("/pair/status", json!({"claim": claim})).await;
    assert!(status.headers().get(SET_COOKIE).is_none());
    assert_eq!(status.json::<Value>().await.unwrap()["status"], "denied");
    let none = daemon.cli(&["web", "devices", "--json"]).json();
    assert_eq!(none, json!([]), "nothing paired");

    // Wrong codes close pairing: ten in two minutes (the used code and the
    // spent claim above were two), then even a right one is refused a while.
    let (_, made) = as_master(&http, &base, &token, Method::POST, "/api/pairings").await;
    let right = code_of(&made);
    for n in 0..8 {
        let guess = pair("/pair/claim", json!({"code": format!("{n:064}"), "name": "guess"})).await;
        assert_eq!(guess.status(), StatusCode::UNAUTHORIZED, "guess {n}");
    }
    let closed = pair("/pair/claim", json!({"code": right, "name": "late"})).await;
    assert_eq!(closed.status(), StatusCode::TOO_MANY_REQUESTS);
}

/// Pairs a device the way the page does (a code from `POST /api/pairings`,
/// claimed, confirmed on the page); its info and credential.
async fn pair_by_page(web: &Web, name: &str) -> (Value, String) {
    let (status, made) = web.call(Method::POST, "/api/pairings", None).await;
    assert_eq!(status, StatusCode::OK, "{made}");
    let code = code_of(&made);
    let pair = |path: &'static str, body: Value| pair_post(&web.http, &web.base, web.port, path, body);
    let claimed = pair("/pair/claim", json!({"code": code, "name": name})).await;
    let claim = claimed.json::<Value>().await.unwrap()["claim"]
        .as_str()
        .unwrap()
        .to_string();
    let pairing = made["id"].as_str().unwrap();
    let (status, _) = web
        .call(Method::POST, &format!("/api/pairings/{pairing}/confirm"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let paired = pair("/pair/status", json!({"claim": claim})).await;
    let cookie = paired
        .headers()
        .get(SET_COOKIE)
        .expect("a cookie")
        .to_str()
        .unwrap()
        .to_string();
    let credential = cookie.split(';').next().unwrap().split_once('=').unwrap().1.to_string();
    (paired.json::<Value>().await.unwrap()["device"].clone(), credential)
}

/// A device revoked on the page loses its open sockets at once (an attached
/// pane and the events), not only its next request; another device keeps its.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_device_loses_its_open_sockets() {
    use futures::StreamExt;
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let (phone, phone_credential) = pair_by_page(&web, "Phone").await;
    let (_, tablet_credential) = pair_by_page(&web, "Tablet").await;
    let cookie = |credential: &str| format!("fugue_token_{}={credential}", web.port);
    let mut phone_events = web
        .ws("/ws/events", &[("cookie", &cookie(&phone_credential))])
        .await
        .expect("the phone's socket");
    let mut tablet_events = web
        .ws("/ws/events", &[("cookie", &cookie(&tablet_credential))])
        .await
        .expect("the tablet's socket");
    let (status, revoked) = web
        .call(
            Method::DELETE,
            &format!("/api/devices/{}", phone["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{revoked}");
    let ended = tokio::time::timeout(fugue_tests::DEADLINE, async {
        while let Some(Ok(message)) = phone_events.next().await {
            if message.is_close() {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the revoked phone's socket stayed open");
    // The tablet still hears the daemon's events.
    daemon.cli(&["new-session", "after"]).ok();
    let heard = tokio::time::timeout(fugue_tests::DEADLINE, tablet_events.next()).await;
    assert!(matches!(heard, Ok(Some(Ok(_)))), "{heard:?}");
}
