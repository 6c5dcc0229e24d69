//! Notification sinks from the config file, end to end: a real HTTP server
//! receives the webhook, a command writes what it got to a file, and a webhook
//! that never answers plus a command that hangs slow down nobody.

use fugue_tests::{bin, Daemon, DEADLINE};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A one-route HTTP server: every POST's body goes to the channel, answered 200.
fn webhook_server() -> (u16, mpsc::Receiver<serde_json::Value>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(value) = lower.strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_ok() {
                if let Ok(json) = serde_json::from_slice(&body) {
                    let _ = tx.send(json);
                }
            }
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    (port, rx)
}

/// A server that accepts connections and never answers.
fn silent_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_and_command_sinks_get_needs_and_notifications() {
    let config_dir = tempfile::tempdir().unwrap();
    let (port, posted) = webhook_server();
    let silent = silent_server();
    let received = config_dir.path().join("received.jsonl");
    let config = config_dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            r#"
# A webhook that never answers and a command that hangs come first.
[[notify]]
webhook = "http://127.0.0.1:{silent}/hook"

[[notify]]
command = ["sh", "-c", "sleep 30"]

[[notify]]
webhook = "http://127.0.0.1:{port}/hook"
events = ["permission"]

[[notify]]
command = ["sh", "-c", "cat >> '{}'"]
"#,
            received.display()
        ),
    )
    .unwrap();
    let daemon = Daemon::start_with(&["--config", config.to_str().unwrap()]);
    daemon.cli(&["new-session", "ag"]).ok();
    let agent = daemon.run_fake_claude("ag");
    daemon.wait_agent_state(&agent, "idle");
    // A fugue-web serving this daemon: the events link to the pane in its page.
    let mut web = std::process::Command::new(bin("fugue-web"))
        .args(["--socket", daemon.socket.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .env("HOME", daemon.dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start fugue-web");
    let mut login = String::new();
    BufReader::new(web.stdout.take().unwrap())
        .read_line(&mut login)
        .unwrap();
    let base = login.trim().split("/?token=").next().unwrap().to_string();

    // The agent asks for permission: the webhook and the command get it.
    let started = Instant::now();
    let sent = daemon.cli(&["--json", "prompt", &agent, "ship it"]).json();
    assert_eq!(sent["outcome"], "started", "{sent}");
    let hook = posted.recv_timeout(DEADLINE).expect("the webhook was posted");
    println!("webhook sink: posted {:?} after the prompt", started.elapsed());
    assert_eq!(hook["event"], "permission", "{hook}");
    assert_eq!(hook["label"], "ag:0", "{hook}");
    assert_eq!(hook["pane"], agent.as_str(), "{hook}");
    assert_eq!(hook["agent"], "claude", "{hook}");
    assert!(
        hook["prompt"].as_str().unwrap().contains("Do you want to proceed?"),
        "{hook}"
    );
    assert!(hook["prompt_id"].as_str().is_some_and(|id| !id.is_empty()), "{hook}");
    assert_eq!(hook["message"], "ag:0: claude asks for permission", "{hook}");
    assert_eq!(hook["url"], format!("{base}/?view=all&pane={agent}"), "{hook}");
    let lines = tokio::task::block_in_place(|| fugue_tests::files::until_file_holds(&received, "\"permission\""));
    let line: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(line["prompt_id"], hook["prompt_id"], "{line}");

    // A program's notification reaches the command (not the permission-only webhook).
    daemon
        .cli(&[
            "run",
            "-s",
            "ag",
            "--no-shell",
            "--",
            "sh",
            "-c",
            r"printf '\033]9;Build done\007'; exec sleep 600",
        ])
        .ok();
    let text = tokio::task::block_in_place(|| fugue_tests::files::until_file_holds(&received, "\"notification\""));
    let note: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(note["notification_body"], "Build done", "{note}");
    assert_eq!(note["label"], "ag:1", "{note}");

    // With the two stuck sinks holding their threads, the daemon answers at once.
    let client = daemon.client().await;
    let mut worst = Duration::ZERO;
    for _ in 0..50 {
        let asked = Instant::now();
        client.list_sessions().await.unwrap();
        worst = worst.max(asked.elapsed());
    }
    println!("stuck sinks: worst of 50 ListSessions {worst:?}");
    assert!(worst < Duration::from_millis(500), "{worst:?}");
    // Approve: the agent goes on; the permission webhook got exactly one post.
    let status = daemon.cli(&["--json", "agent", &agent]).json();
    let prompt_id = status["prompt_id"].as_str().unwrap().to_string();
    daemon.cli(&["approve", &agent, &prompt_id]).ok();
    assert!(posted.try_recv().is_err(), "one prompt, one post");
    let _ = web.kill();
    let _ = web.wait();
}

#[test]
fn a_wrong_sink_is_skipped_and_the_daemon_starts() {
    let config_dir = tempfile::tempdir().unwrap();
    let config = config_dir.path().join("config.toml");
    std::fs::write(&config, "[[notify]]\nwebhook = \"ftp://nowhere\"\n").unwrap();
    let daemon = Daemon::start_with(&["--config", config.to_str().unwrap()]);
    daemon.cli(&["new-session", "fine"]).ok();
    let log = daemon.until_logged("notification sink skipped");
    assert!(log.contains("is no http:// or https:// URL"), "{log}");
}
