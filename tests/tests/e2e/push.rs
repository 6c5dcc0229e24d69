//! Web Push end to end, with no browser: web-push-testing (npm 1.2.2, pinned in
//! tests/browser) is the push service. It checks fugued's VAPID JWT and
//! decrypts its aes128gcm message as a browser would; what it decrypted is
//! what these tests read. fugued runs with `FUGUE_TEST_PUSH_LOOPBACK=1`, the
//! switch that lets a loopback http endpoint through.

use crate::web::Web;
use fugue_tests::{Daemon, DEADLINE};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// A web-push-testing server on a port of its own; killed when dropped.
struct PushService {
    child: Child,
    base: String,
    http: reqwest::Client,
}

impl PushService {
    /// Starts it and waits for the line it prints once it listens.
    fn start() -> PushService {
        let server =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("browser/node_modules/web-push-testing/src/bin/server.js");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut child = Command::new("node")
            .arg(&server)
            .arg(port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start web-push-testing");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("Server running on port") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(DEADLINE).expect("web-push-testing listens");
        PushService {
            child,
            base: format!("http://localhost:{port}"),
            http: reqwest::Client::new(),
        }
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .expect("web-push-testing answers");
        // Some routes answer with no JSON (expire-subscription).
        response.json().await.unwrap_or(Value::Null)
    }

    /// A subscription to fugued's key, as a browser's `PushManager.subscribe` makes one.
    async fn subscribe(&self, key: &str) -> Value {
        let reply = self
            .post(
                "/subscribe",
                json!({"userVisibleOnly": "true", "applicationServerKey": key}),
            )
            .await;
        reply["data"].clone()
    }

    /// The messages it received and decrypted for `client_hash`, once fugued
    /// has logged `pushed` deliveries `count` times (the service stores a
    /// message before it answers).
    async fn messages(&self, daemon: &Daemon, client_hash: &str, count: usize) -> Vec<Value> {
        let log = daemon.dir.path().join("fugued.stderr");
        tokio::task::block_in_place(|| {
            fugue_tests::files::until_changed(&log, "fugued's pushes", DEADLINE, || {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                (text.matches(": pushed endpoint=").count() >= count).then_some(())
            })
        });
        let reply = self
            .post("/get-notifications", json!({"clientHash": client_hash}))
            .await;
        let messages = reply["data"]["messages"].as_array().cloned().unwrap_or_default();
        messages
            .iter()
            .map(|m| serde_json::from_str(m.as_str().expect("text")).expect("a JSON payload"))
            .collect()
    }
}

impl Drop for PushService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A POST to one of the routes outside the cookie, from this server's own page.
async fn open_post(web: &Web, path: &str, body: Value) -> (StatusCode, Value) {
    let response = web
        .http
        .post(format!("{}{path}", web.base))
        .header("Origin", format!("http://127.0.0.1:{}", web.port))
        .header("Sec-Fetch-Site", "same-origin")
        .json(&body)
        .send()
        .await
        .expect("send");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_is_pushed_encrypted_and_answered_once_from_its_action() {
    fugue_tests::require!("node", "tests/browser/node_modules/web-push-testing");
    let daemon = Daemon::start_with_env(&[("FUGUE_TEST_PUSH_LOOPBACK", "1")]);
    let web = Web::start(&daemon, &[]);
    let service = PushService::start();

    // Subscribed with fugued's key, registered through fugue-web.
    let (status, key) = web.call(Method::GET, "/api/push/vapid", None).await;
    assert_eq!(status, StatusCode::OK, "{key}");
    let key = key["public_key"].as_str().expect("a key").to_string();
    assert_eq!(key.len(), 87, "an uncompressed P-256 point in base64url: {key}");
    let subscription = service.subscribe(&key).await;
    let hash = subscription["clientHash"].as_str().expect("clientHash").to_string();
    let body = json!({"endpoint": subscription["endpoint"], "keys": subscription["keys"], "expirationTime": null});
    let (status, kept) = web.call(Method::POST, "/api/push/subscriptions", Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{kept}");
    assert_eq!(kept["content_free"], false, "{kept}");

    // An endpoint that is no push service's is refused, saying why.
    for (endpoint, why) in [
        ("http://push.example.com/send/1", "must be https"),
        ("https://10.1.2.3/send/1", "not a public address"),
        ("https://169.254.169.254/latest/meta-data", "not a public address"),
    ] {
        let body = json!({"endpoint": endpoint, "keys": subscription["keys"]});
        let (status, error) = web.call(Method::POST, "/api/push/subscriptions", Some(body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{endpoint}: {error}");
        assert!(error["message"].as_str().unwrap().contains(why), "{endpoint}: {error}");
    }

    // An agent asks for permission: the push service gets fugued's message.
    daemon.cli(&["new-session", "ag"]).ok();
    let agent = daemon.run_fake_claude("ag");
    daemon.wait_agent_state(&agent, "idle");
    let asked = Instant::now();
    let sent = daemon.cli(&["--json", "prompt", &agent, "ship it"]).json();
    assert_eq!(sent["outcome"], "started", "{sent}");
    let pushed = service.messages(&daemon, &hash, 1).await;
    assert_eq!(pushed.len(), 1, "one push");
    println!("pushed and decrypted {:?} after the prompt", asked.elapsed());
    let push = &pushed[0];
    assert_eq!(push["event"], "permission", "{push}");
    assert_eq!(push["label"], "ag:0", "{push}");
    assert_eq!(push["agent"], "claude", "{push}");
    assert_eq!(push["pane"], agent.as_str(), "{push}");
    assert_eq!(push["url"], format!("/?view=all&pane={agent}"), "{push}");
    assert_eq!(push["title"], "ag:0: claude asks for permission", "{push}");
    assert!(
        !push["body"].as_str().unwrap().is_empty(),
        "the prompt's first line: {push}"
    );
    let text = push.to_string();
    assert!(!text.contains(&web.token), "a push never carries the page's token");
    let actions = push["actions"].as_array().expect("Approve and Deny");
    assert_eq!(actions.len(), 2, "{push}");
    let approve = actions[0]["token"].as_str().unwrap().to_string();
    let deny = actions[1]["token"].as_str().unwrap().to_string();
    assert_eq!(
        (actions[0]["action"].as_str(), actions[1]["action"].as_str()),
        (Some("approve"), Some("deny"))
    );

    // The action route keeps the Origin and Sec-Fetch checks.
    let forged = web
        .http
        .post(format!("{}/push/answer", web.base))
        .header("Origin", "https://evil.example")
        .json(&json!({"token": approve}))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let no_origin = web
        .http
        .post(format!("{}/push/answer", web.base))
        .json(&json!({"token": approve}))
        .send()
        .await
        .unwrap();
    assert_eq!(no_origin.status(), StatusCode::FORBIDDEN);
    let (status, wrong) = open_post(&web, "/push/answer", json!({"token": "0".repeat(64)})).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a guessed token answers nothing: {wrong}"
    );

    // Approve answers the prompt on screen, once; its replay and its twin nothing.
    let (status, answered) = open_post(&web, "/push/answer", json!({"token": approve})).await;
    assert_eq!(status, StatusCode::OK, "{answered}");
    assert_eq!(answered["answer"], "approved", "{answered}");
    assert_eq!(answered["pane"], agent.as_str(), "{answered}");
    tokio::task::block_in_place(|| daemon.wait_screen(&agent, "approved: ship it"));
    for token in [&approve, &deny] {
        let (status, replayed) = open_post(&web, "/push/answer", json!({"token": token})).await;
        assert_eq!(
            status,
            StatusCode::FORBIDDEN,
            "a replayed action answers nothing: {replayed}"
        );
        assert!(
            replayed["message"].as_str().unwrap().contains("used already"),
            "{replayed}"
        );
    }
    assert!(daemon.log().contains("answered from a push"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_subscriptions_go_and_a_hanging_push_service_delays_nobody() {
    fugue_tests::require!("node", "tests/browser/node_modules/web-push-testing");
    let daemon = Daemon::start_with_env(&[("FUGUE_TEST_PUSH_LOOPBACK", "1")]);
    let web = Web::start(&daemon, &[]);
    let service = PushService::start();
    let (_, key) = web.call(Method::GET, "/api/push/vapid", None).await;
    let key = key["public_key"].as_str().unwrap().to_string();
    // A push service that takes the connection and never answers, subscribed first.
    let hanging = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hanging_port = hanging.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in hanging.incoming().flatten() {
            held.push(stream);
        }
    });
    let live = service.subscribe(&key).await;
    let expiring = service.subscribe(&key).await;
    let register = |endpoint: &Value, keys: &Value, content_free: bool| json!({"endpoint": endpoint, "keys": keys, "content_free": content_free});
    let hanging_endpoint = json!(format!("http://127.0.0.1:{hanging_port}/push/1"));
    for body in [
        register(&hanging_endpoint, &live["keys"], false),
        register(&live["endpoint"], &live["keys"], true),
        register(&expiring["endpoint"], &expiring["keys"], false),
    ] {
        let (status, kept) = web.call(Method::POST, "/api/push/subscriptions", Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{kept}");
    }
    let expired_hash = expiring["clientHash"].as_str().unwrap().to_string();
    service
        .post(&format!("/expire-subscription/{expired_hash}"), json!({}))
        .await;

    // Five notifications from one program: three are pushed (a minute's share).
    daemon.cli(&["new-session", "notes"]).ok();
    let started = Instant::now();
    daemon
        .cli(&[
            "run",
            "-s",
            "notes",
            "--no-shell",
            "--",
            "sh",
            "-c",
            r"for n in 1 2 3 4 5; do printf '\033]9;note %s\007' $n; done; exec sleep 600",
        ])
        .ok();
    let live_hash = live["clientHash"].as_str().unwrap();
    let pushed = service.messages(&daemon, live_hash, 3).await;
    assert_eq!(pushed.len(), 3, "three pushes");
    println!("3 pushes beside a hanging push service in {:?}", started.elapsed());
    // A content-free subscription hears what, never where or which words.
    for push in &pushed {
        assert_eq!(push["title"], "fugue", "{push}");
        assert_eq!(push["body"], "A program sent a notification", "{push}");
        assert!(push.get("pane").is_none() && push.get("actions").is_none(), "{push}");
    }
    tokio::task::block_in_place(|| {
        daemon.until_logged("program notification not pushed");
        daemon.until_logged("push subscription expired; forgotten");
    });
    // The daemon answered all along, and the expired subscription is gone:
    // removing it finds nothing.
    let (status, removed) = web
        .call(
            Method::DELETE,
            "/api/push/subscriptions",
            Some(json!({"endpoint": expiring["endpoint"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(removed["removed"], false, "{removed}");
    let (status, removed) = web
        .call(
            Method::DELETE,
            "/api/push/subscriptions",
            Some(json!({"endpoint": live["endpoint"]})),
        )
        .await;
    assert_eq!((status, removed["removed"].as_bool()), (StatusCode::OK, Some(true)));
    let reply = service
        .post("/get-notifications", json!({"clientHash": live_hash}))
        .await;
    assert_eq!(
        reply["data"]["messages"].as_array().unwrap().len(),
        3,
        "exactly three: {reply}"
    );
}
