//! `fugue-web` for real: a real fugued, the real fugue-web binary on a loopback
//! port, and a real HTTP and WebSocket client (the page in a real browser is
//! in `browser.rs`).

use fugue_tests::{bin, private_dir, wait_for, Daemon, DEADLINE};
use futures::{SinkExt, StreamExt};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// A `fugue-web` serving one test's daemon; killed when dropped.
pub(crate) struct Web {
    pub(crate) child: Child,
    /// `http://127.0.0.1:PORT`
    pub(crate) base: String,
    pub(crate) port: u16,
    pub(crate) token: String,
    /// The URL it printed.
    pub(crate) login: String,
    pub(crate) http: reqwest::Client,
}

impl Web {
    pub(crate) fn start(daemon: &Daemon, extra: &[&str]) -> Web {
        Self::start_with_env(daemon, extra, &[])
    }

    pub(crate) fn start_with_env(daemon: &Daemon, extra: &[&str], env: &[(&str, &str)]) -> Web {
        let mut command = Self::command(daemon, extra);
        command.envs(env.iter().copied());
        Self::spawn(command)
    }

    /// Runs `command` (a fugue-web) and reads the URL it prints.
    pub(crate) fn spawn(mut command: Command) -> Web {
        let mut child = command.stdout(Stdio::piped()).spawn().expect("start fugue-web");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let login = rx
            .recv_timeout(DEADLINE)
            .expect("fugue-web printed its URL")
            .trim()
            .to_string();
        let (scheme, rest) = login.split_once("://").expect("a URL");
        let rest = rest.split_once(':').expect("host:port").1;
        let (port, token) = rest.split_once("/?token=").expect("URL with a token");
        Web {
            child,
            base: format!("{scheme}://127.0.0.1:{port}"),
            port: port.parse().expect("port"),
            token: token.to_string(),
            login,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("http client"),
        }
    }

    pub(crate) fn command(daemon: &Daemon, extra: &[&str]) -> Command {
        Self::command_on(daemon, &daemon.socket, extra)
    }

    /// A fugue-web for `daemon`'s tests whose own socket is `socket`.
    pub(crate) fn command_on(daemon: &Daemon, socket: &Path, extra: &[&str]) -> Command {
        let mut command = Command::new(bin("fugue-web"));
        command
            .args(["--listen", "127.0.0.1:0", "--socket"])
            .arg(socket)
            .args(extra)
            .env("FUGUE_LOG", "info")
            // Where the CLI (XDG_STATE_HOME under the daemon's dir) makes them.
            .env("FUGUE_WORKTREE_ROOT", daemon.dir.path().join("state/fugue/worktrees"))
            // The tests' own git identity, for the commits a merge makes.
            .env("GIT_AUTHOR_NAME", "fugue test")
            .env("GIT_AUTHOR_EMAIL", "test@fugue.invalid")
            .env("GIT_COMMITTER_NAME", "fugue test")
            .env("GIT_COMMITTER_EMAIL", "test@fugue.invalid")
            .stdin(Stdio::null());
        command
    }

    /// An authorised request (Bearer token).
    pub(crate) fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    pub(crate) async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("send");
        let status = response.status();
        let value = response.json::<Value>().await.unwrap_or(Value::Null);
        (status, value)
    }

    pub(crate) async fn ws(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Result<WsStream, tokio_tungstenite::tungstenite::Error> {
        let mut request = format!("ws://127.0.0.1:{}{path}", self.port).into_client_request()?;
        for (name, value) in headers {
            request.headers_mut().insert(
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                value.parse().expect("value"),
            );
        }
        tokio_tungstenite::connect_async(request)
            .await
            .map(|(stream, _)| stream)
    }

    /// Opens a tab (a shell in `project`) and returns its pane's id.
    pub(crate) async fn new_tab(&self, project: &Path, session: &str) -> String {
        let body = json!({"project": project, "session": session});
        let (status, tab) = self.call(Method::POST, "/api/terminal/sessions", Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{tab}");
        tab["id"].as_str().expect("id").to_string()
    }

    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

impl Drop for Web {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

type WsStream = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Messages from `stream` until `done` says enough (or the deadline passes).
async fn ws_until(stream: &mut WsStream, what: &str, mut done: impl FnMut(&Message) -> bool) -> Vec<Message> {
    let mut seen = Vec::new();
    let result = tokio::time::timeout(DEADLINE, async {
        while let Some(message) = stream.next().await {
            let message = message.expect("websocket message");
            let stop = done(&message);
            seen.push(message);
            if stop {
                return;
            }
        }
    })
    .await;
    assert!(result.is_ok(), "timed out waiting for {what}; got {seen:?}");
    seen
}

/// Output from `stream` until it contains `needle`.
async fn ws_output_until(stream: &mut WsStream, what: &str, needle: &str) {
    let mut output = Vec::new();
    ws_until(stream, what, |m| {
        if let Message::Binary(data) = m {
            output.extend_from_slice(data);
        }
        String::from_utf8_lossy(&output).contains(needle)
    })
    .await;
}

fn tabs_query(project: &Path, session: &str) -> String {
    format!("project={}&session={session}", project.display())
}

async fn tab_names(web: &Web, project: &Path) -> Vec<String> {
    let (status, list) = web
        .call(
            Method::GET,
            &format!("/api/terminal/sessions?{}", tabs_query(project, "s")),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect()
}

fn assert_error(status: StatusCode, body: &Value, want_status: StatusCode, code: &str, mentions: &str) {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["code"], code, "{body}");
    let message = body["message"].as_str().expect("message");
    assert!(message.contains(mentions), "{message:?} should mention {mentions:?}");
    assert!(!message.contains('\n'));
}

#[tokio::test]
async fn the_tabs_api_creates_lists_renames_reorders_and_closes() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let project = private_dir();
    let project = project.path();
    let create = |name: Option<&str>| {
        let mut body = json!({"project": project, "session": "s"});
        if let Some(name) = name {
            body["name"] = json!(name);
        }
        web.call(Method::POST, "/api/terminal/sessions", Some(body))
    };

    let (status, first) = create(None).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["name"], "Terminal 1");
    assert_eq!(first["status"], "running");
    assert_eq!(first["order"], 0);
    let id = first["id"].as_str().unwrap().to_string();
    assert_eq!(first["wsUrl"], format!("ws://127.0.0.1:{}/ws/panes/{id}", web.port));
    assert_eq!(first["pane"]["cwd"], project.display().to_string());
    let (_, second) = create(Some("  logs  ")).await;
    assert_eq!(second["name"], "logs");
    let (_, third) = create(None).await;
    assert_eq!(third["name"], "Terminal 3");
    let ids: Vec<String> = [&first, &second, &third]
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tab_names(&web, project).await, ["Terminal 1", "logs", "Terminal 3"]);

    // The shell runs in the project directory, as the user's shell.
    let pane = daemon.cli(&["--json", "status", &id]).json();
    assert_eq!(pane["cwd"], project.display().to_string());

    // Rename: trimmed, and empty becomes "Terminal".
    let (status, renamed) = web
        .call(
            Method::PATCH,
            &format!("/api/terminal/sessions/{id}"),
            Some(json!({"name": "  build "})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["success"], true);
    assert_eq!(renamed["session"]["name"], "build");
    let (_, renamed) = web
        .call(
            Method::PATCH,
            &format!("/api/terminal/sessions/{}?{}", ids[2], tabs_query(project, "s")),
            Some(json!({"name": "   "})),
        )
        .await;
    assert_eq!(renamed["session"]["name"], "Terminal");

    // Reorder: every id exactly once.
    let reorder_path = format!("/api/terminal/sessions/reorder?{}", tabs_query(project, "s"));
    let reorder = |ids: Vec<&str>| web.call(Method::PUT, &reorder_path, Some(json!({"orderedIds": ids})));
    let (status, reordered) = reorder(vec![&ids[2], &ids[0], &ids[1]]).await;
    assert_eq!(status, StatusCode::OK, "{reordered}");
    assert_eq!(tab_names(&web, project).await, ["Terminal", "build", "logs"]);
    let before = tab_names(&web, project).await;
    let unknown = uuid::Uuid::new_v4().to_string();
    let (status, body) = reorder(vec![&ids[2], &ids[0]]).await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        &format!("missing id \"{}\"", ids[1]),
    );
    let (status, body) = reorder(vec![&ids[2], &ids[0], &ids[1], &unknown]).await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        &format!("unknown id \"{unknown}\""),
    );
    let (status, body) = reorder(vec![&ids[2], &ids[0], &ids[0], &ids[1]]).await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        &format!("duplicate id \"{}\"", ids[0]),
    );
    assert_eq!(
        tab_names(&web, project).await,
        before,
        "a refused reorder changes nothing"
    );

    // Delete: the tab and its terminal go; a tab of another scope is not found.
    let other = private_dir();
    let (status, body) = web
        .call(
            Method::DELETE,
            &format!("/api/terminal/sessions/{}?{}", ids[1], tabs_query(other.path(), "s")),
            None,
        )
        .await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "pane_not_found", &ids[1]);
    let (status, body) = web
        .call(
            Method::DELETE,
            &format!("/api/terminal/sessions/{}?{}", ids[1], tabs_query(project, "s")),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true);
    assert_eq!(tab_names(&web, project).await, ["Terminal", "build"]);
    assert!(!daemon.cli(&["status", &ids[1]]).status.success(), "the pane is gone");
    let (status, body) = web
        .call(Method::DELETE, &format!("/api/terminal/sessions/{unknown}"), None)
        .await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "pane_not_found", &unknown);

    // Another session of the same project is another tab bar.
    let (_, list) = web
        .call(
            Method::GET,
            &format!("/api/terminal/sessions?{}", tabs_query(project, "other")),
            None,
        )
        .await;
    assert_eq!(list["sessions"], json!([]));
}

#[tokio::test]
async fn bad_tab_requests_get_one_line_errors_and_change_nothing() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let project = private_dir();
    // (method, path, body, status, code, what the message names)
    type Case = (Method, String, Option<Value>, StatusCode, &'static str, &'static str);
    let cases: Vec<Case> = vec![
        (
            Method::GET,
            "/api/terminal/sessions?project=relative/dir&session=s".into(),
            None,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "absolute path",
        ),
        (
            Method::GET,
            "/api/terminal/sessions?project=/no/such/dir&session=s".into(),
            None,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "existing directory",
        ),
        (
            Method::GET,
            format!("/api/terminal/sessions?project={}", project.path().display()),
            None,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "session",
        ),
        (
            Method::GET,
            format!("/api/terminal/sessions?{}", tabs_query(project.path(), &"x".repeat(65))),
            None,
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "1-64 characters",
        ),
        (
            Method::POST,
            "/api/terminal/sessions".into(),
            Some(json!({"project": project.path()})),
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "session",
        ),
        (
            Method::PUT,
            "/api/terminal/sessions/reorder".into(),
            Some(json!({"orderedIds": []})),
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "project and session",
        ),
        (
            Method::PATCH,
            "/api/terminal/sessions/not-a-uuid".into(),
            Some(json!({"name": "x"})),
            StatusCode::NOT_FOUND,
            "pane_not_found",
            "not-a-uuid",
        ),
        (
            Method::GET,
            "/api/nothing-here".into(),
            None,
            StatusCode::NOT_FOUND,
            "not_found",
            "/api/nothing-here",
        ),
    ];
    for (method, path, body, status, code, mentions) in cases {
        let (got, reply) = web.call(method.clone(), &path, body).await;
        assert_error(got, &reply, status, code, mentions);
    }
    // Not JSON, and not declared JSON.
    let response = web
        .request(Method::POST, "/api/terminal/sessions")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "invalid JSON body",
    );
    let response = web
        .request(Method::POST, "/api/terminal/sessions")
        .body(json!({"project": project.path(), "session": "s"}).to_string())
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_error(
        status,
        &body,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "application/json",
    );
    let sessions = daemon.client().await.list_sessions().await.unwrap();
    assert!(sessions.is_empty(), "nothing was created: {sessions:?}");
}

/// The daemon dies under fugue-web and comes back: fugue-web reconnects, and the
/// listing reconciles (tabs whose terminal was lost with the old daemon are dropped).
#[tokio::test]
async fn a_daemon_restart_is_survived_and_lost_tabs_are_reconciled_away() {
    let mut daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let project = private_dir();
    for _ in 0..2 {
        web.new_tab(project.path(), "s").await;
    }
    // Wait until both panes are on disk, then kill the daemon outright.
    let db = daemon.state_db();
    fugue_tests::files::until_recorded(&db, "both tabs in the records", |records| {
        let n: i64 = records.query_row("SELECT count(*) FROM panes", [], |r| r.get(0)).ok()?;
        (n == 2).then_some(())
    })
    .await;
    daemon.signal_and_wait(libc::SIGKILL);
    daemon.restart(&[]);
    // Polled: fugue-web reconnects on its own backoff and says so to nobody.
    let list = wait_for("fugue-web to reach the new daemon", DEADLINE, || async {
        let (status, list) = web
            .call(
                Method::GET,
                &format!("/api/terminal/sessions?{}", tabs_query(project.path(), "s")),
                None,
            )
            .await;
        (status == StatusCode::OK).then_some(list)
    })
    .await;
    assert_eq!(list["removed"], 2, "{list}");
    assert_eq!(list["sessions"], json!([]));
    let panes = daemon.client().await.list_panes(None).await.unwrap();
    assert!(panes.is_empty(), "the lost panes were released: {panes:?}");
}

#[tokio::test]
async fn the_rest_api_does_what_the_cli_does() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let (status, session) = web
        .call(
            Method::POST,
            "/api/sessions",
            Some(json!({"name": "api", "env": {"GREETING": "hello"}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{session}");
    assert_eq!(session["name"], "api");
    let (status, body) = web
        .call(Method::POST, "/api/sessions", Some(json!({"name": "api"})))
        .await;
    assert_error(status, &body, StatusCode::CONFLICT, "name_taken", "api");

    let spec = json!({"session": "api", "command": ["sh", "-c", "echo $GREETING-$((6*7)); read line; echo got-$line; exit 4"], "shell": false, "title": "worker", "cols": 100, "rows": 30});
    let (status, pane) = web.call(Method::POST, "/api/panes", Some(spec)).await;
    assert_eq!(status, StatusCode::OK, "{pane}");
    assert_eq!((pane["cols"].as_u64(), pane["rows"].as_u64()), (Some(100), Some(30)));
    let id = pane["id"].as_str().unwrap().to_string();

    let (status, waited) = web
        .call(
            Method::POST,
            &format!("/api/panes/{id}/wait"),
            Some(json!({"pattern": "hello-42", "timeout_ms": 10000})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{waited}");
    assert_eq!(waited["condition"], "pattern");
    let (_, read) = web
        .call(Method::GET, &format!("/api/panes/{id}/read?lines=10"), None)
        .await;
    assert!(
        read["lines"].as_array().unwrap().iter().any(|l| l == "hello-42"),
        "{read}"
    );
    let (_, capture) = web.call(Method::GET, &format!("/api/panes/{id}/capture"), None).await;
    assert_eq!(capture["lines"][0], "hello-42");
    assert_eq!(capture["cols"], 100);

    let (status, _) = web
        .call(
            Method::POST,
            &format!("/api/panes/{id}/write"),
            Some(json!({"text": "typed", "enter": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, waited) = web
        .call(
            Method::POST,
            &format!("/api/panes/{id}/wait"),
            Some(json!({"exit": true, "timeout_ms": 10000})),
        )
        .await;
    assert_eq!(waited["condition"], "exit", "{waited}");
    assert_eq!(waited["exit_code"], 4);
    let (_, status_view) = web.call(Method::GET, &format!("/api/panes/{id}"), None).await;
    assert_eq!(status_view["status"], "exited");
    let (_, text) = web.call(Method::GET, &format!("/api/panes/{id}/read"), None).await;
    assert!(text["text"].as_str().unwrap().contains("got-typed"), "{text}");

    let (_, list) = web.call(Method::GET, "/api/panes?session=api", None).await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    let (_, overview) = web.call(Method::GET, "/api/overview?session=api", None).await;
    assert_eq!(overview[0]["pane"]["id"], id.as_str(), "{overview}");
    assert_eq!(overview[0]["last_line"], "got-typed", "{overview}");
    let (status, renamed) = web
        .call(
            Method::PATCH,
            &format!("/api/panes/{id}"),
            Some(json!({"title": "done"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["title"], "done");
    let (status, _) = web.call(Method::DELETE, &format!("/api/panes/{id}"), None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = web.call(Method::GET, &format!("/api/panes/{id}"), None).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "pane_not_found", &id[..8]);

    // Keys, kill, and the limits the daemon applies, with its codes.
    let (_, sleeper) = web
        .call(
            Method::POST,
            "/api/panes",
            Some(json!({"session": "api", "command": ["sleep", "60"], "shell": false})),
        )
        .await;
    let sleeper = sleeper["id"].as_str().unwrap().to_string();
    let (status, body) = web
        .call(
            Method::POST,
            &format!("/api/panes/{sleeper}/keys"),
            Some(json!({"keys": ["NoSuchKey"]})),
        )
        .await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid_argument", "NoSuchKey");
    let (status, killed) = web
        .call(
            Method::POST,
            &format!("/api/panes/{sleeper}/kill"),
            Some(json!({"signal": "KILL"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{killed}");
    let (status, body) = web
        .call(
            Method::POST,
            &format!("/api/panes/{sleeper}/wait"),
            Some(json!({"exit": true, "timeout_ms": 0})),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "timeout_ms must be 1-600000",
    );
    let (status, body) = web
        .call(
            Method::POST,
            &format!("/api/panes/{sleeper}/wait"),
            Some(json!({"needs": "permission|nap", "timeout_ms": 100})),
        )
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "unknown need 'nap'",
    );
    // Not an agent: the wait ends with the pane's exit, not with a need.
    let (status, body) = web
        .call(
            Method::POST,
            &format!("/api/panes/{sleeper}/wait"),
            Some(json!({"needs": "any", "agent_state": "waiting_for_answer", "timeout_ms": 10000})),
        )
        .await;
    assert_eq!(
        (status, body["condition"].as_str()),
        (StatusCode::OK, Some("exit")),
        "{body}"
    );

    let (status, daemon_view) = web.call(Method::GET, "/api/daemon", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(daemon_view["socket"], daemon.socket.display().to_string());
    let (status, removed) = web.call(Method::DELETE, "/api/sessions/api", None).await;
    assert_eq!(status, StatusCode::OK, "{removed}");
    let (_, sessions) = web.call(Method::GET, "/api/sessions", None).await;
    assert_eq!(sessions, json!([]));

    // The document describes every route.
    let (status, doc) = web.call(Method::GET, "/api/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(doc["openapi"], "3.1.0");
    for path in [
        "/api/terminal/sessions",
        "/api/terminal/sessions/reorder",
        "/api/panes/{pane}/wait",
        "/ws/panes/{pane}",
    ] {
        assert!(
            doc["paths"][path].is_object(),
            "{path} missing from the OpenAPI document"
        );
    }
}

/// The prompt operation the MCP bridge and `fugue prompt` use, over HTTP: to
/// a program that is no agent, the text arrives with its Enter, and the answer
/// says no turn started. The wait takes the MCP bridge's field names too.
#[tokio::test]
async fn a_worktree_s_diff_and_the_worktrees_over_http() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let repo = crate::worktrees::repository(&daemon);
    daemon.cli(&["new", "w", "--cwd", repo.to_str().unwrap()]).ok();
    let script = "echo changed > a.txt && echo done; exec sleep 600";
    let (pane, _, _) = crate::worktrees::run_in_worktree(&daemon, "web", script);
    fugue_tests::wait_for_text(&daemon.client().await, &pane, "done").await;
    let (status, diff) = web.call(Method::GET, &format!("/api/panes/{pane}/diff"), None).await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    assert_eq!(diff["files"][0]["path"], "a.txt");
    assert_eq!(diff["files"][0]["hunks"][0]["lines"], json!(["-hello", "+changed"]));
    let (_, stat) = web
        .call(Method::GET, &format!("/api/panes/{pane}/diff?stat=true"), None)
        .await;
    assert_eq!(stat["files"][0]["hunks"], json!([]));
    let (status, listed) = web.call(Method::GET, "/api/worktrees", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(
        (listed[0]["name"].as_str(), listed[0]["pane"].as_str()),
        (Some("web"), Some(pane.as_str()))
    );
    let shell = daemon.cli(&["run", "-s", "w", "--no-shell", "--", "sleep", "600"]).ok();
    let (status, body) = web.call(Method::GET, &format!("/api/panes/{shell}/diff"), None).await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "works in no worktree",
    );

    // Review comments go to the pane as one prompt quoting the code.
    let comments = json!({"comments": [{"path": "a.txt", "line": 1, "comment": "Say hello."}]});
    let (status, sent) = web
        .call(Method::POST, &format!("/api/panes/{pane}/review"), Some(comments))
        .await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    assert_eq!(sent["comments"], 1, "{sent}");
    let prompt = sent["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("1. a.txt, line 1:\n   > +changed\n   Say hello.\n"),
        "{prompt}"
    );
    fugue_tests::wait_for_text(&daemon.client().await, &pane, "Say hello.").await;
    let elsewhere = json!({"comments": [{"path": "../x", "comment": "no"}]});
    let (status, body) = web
        .call(Method::POST, &format!("/api/panes/{pane}/review"), Some(elsewhere))
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "'../x' is not a file this change touches",
    );

    // Merge refuses uncommitted work unless asked to commit it first;
    // discard names the worktree and removes it.
    let (status, body) = web
        .call(Method::POST, "/api/worktrees/web/merge", Some(json!({})))
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "uncommitted",
    );
    let (status, merged) = web
        .call(Method::POST, "/api/worktrees/web/merge", Some(json!({"commit": true})))
        .await;
    assert_eq!(status, StatusCode::OK, "{merged}");
    assert_eq!(
        (&merged["commits"], &merged["into"]),
        (&json!(1), &json!("main")),
        "{merged}"
    );
    let (status, gone) = web.call(Method::DELETE, "/api/worktrees/web", None).await;
    assert_eq!(status, StatusCode::OK, "{gone}");
    assert_eq!(gone["outcome"], "removed", "{gone}");
    assert!(!std::path::Path::new(gone["worktree"].as_str().unwrap()).exists());
    let (status, body) = web.call(Method::DELETE, "/api/worktrees/web", None).await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "no worktree",
    );
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "changed\n");
}

#[tokio::test]
async fn a_prompt_and_a_wait_take_the_same_fields_as_mcp() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    daemon.cli(&["new-session", "p"]).ok();
    let id = daemon
        .cli(&[
            "run",
            "-s",
            "p",
            "--no-shell",
            "--",
            "sh",
            "-c",
            "read line; echo got-$line; exec sleep 60",
        ])
        .ok();
    let (status, sent) = web
        .call(
            Method::POST,
            &format!("/api/panes/{id}/prompt"),
            Some(json!({"text": "hello", "key": "hello-1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    assert_eq!(sent["went_busy"], false, "{sent}");
    assert_eq!(sent["outcome"], "prompt_stalled", "{sent}");
    assert!(sent["message"].as_str().unwrap().contains("no turn started"), "{sent}");
    let wait = json!({"pattern": "got-hello", "on": "output", "since_offset": 0, "timeout_ms": 10000});
    let (status, waited) = web
        .call(Method::POST, &format!("/api/panes/{id}/wait"), Some(wait))
        .await;
    assert_eq!(status, StatusCode::OK, "{waited}");
    assert_eq!(waited["condition"], "pattern", "{waited}");
    // The same key again: the first receipt back, nothing typed.
    let (status, again) = web
        .call(
            Method::POST,
            &format!("/api/panes/{id}/prompt"),
            Some(json!({"text": "hello", "key": "hello-1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        (&again["repeated"], &again["at"]),
        (&json!(true), &sent["at"]),
        "{again}"
    );
    let output = daemon.cli(&["read", &id]).ok();
    assert_eq!(
        output.matches("hello").count(),
        2,
        "the echo and got-hello only: {output}"
    );
    let (status, body) = web
        .call(
            Method::POST,
            &format!("/api/panes/{id}/wait"),
            Some(json!({"on": "sideways"})),
        )
        .await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid_argument", "sideways");
    let (status, body) = web
        .call(Method::POST, &format!("/api/panes/{id}/wait"), Some(json!({})))
        .await;
    assert_error(
        status,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "wait for something",
    );
}

#[tokio::test]
async fn a_websocket_attaches_with_a_redraw_then_streams_and_takes_input() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let project = private_dir();
    let id = web.new_tab(project.path(), "s").await;
    let path = format!("/ws/panes/{id}?cols=90&rows=20");
    let mut socket = web
        .ws(&path, &[("authorization", &web.bearer())])
        .await
        .expect("attach");
    let first = ws_until(&mut socket, "the redraw", |_| true).await;
    assert_eq!(first[0], Message::Text(json!({"type": "redraw"}).to_string().into()));
    ws_until(&mut socket, "the redraw's bytes", |m| matches!(m, Message::Binary(_))).await;
    let pane = daemon.cli(&["--json", "status", &id]).json();
    assert_eq!((pane["cols"].as_u64(), pane["rows"].as_u64()), (Some(90), Some(20)));

    socket
        .send(Message::Binary(b"echo ws-$((6*7))\r".to_vec().into()))
        .await
        .unwrap();
    ws_output_until(&mut socket, "the echo", "ws-42").await;
    socket
        .send(Message::Text(
            json!({"type": "resize", "cols": 70, "rows": 15}).to_string().into(),
        ))
        .await
        .unwrap();
    // Polled: a pane's size change is not an event fugued pushes.
    wait_for("the browser's size", DEADLINE, || async {
        let pane = daemon.cli(&["--json", "status", &id]).json();
        (pane["cols"] == 70 && pane["rows"] == 15).then_some(())
    })
    .await;
    socket.send(Message::Text("{\"type\":\"dance\"}".into())).await.unwrap();
    let error = ws_until(&mut socket, "an error for a bad control message", |m| {
        matches!(m, Message::Text(_))
    })
    .await;
    assert!(format!("{error:?}").contains("bad control message"), "{error:?}");

    // A read-only socket sees the output and can neither type nor resize.
    let path = format!("/ws/panes/{id}?cols=40&rows=10&read_only=true");
    let mut watcher = web.ws(&path, &[("authorization", &web.bearer())]).await.expect("watch");
    ws_until(&mut watcher, "the watcher's redraw", |m| {
        matches!(m, Message::Binary(_))
    })
    .await;
    watcher
        .send(Message::Binary(b"echo typed-by-$((1+1))-watchers\r".to_vec().into()))
        .await
        .unwrap();
    socket
        .send(Message::Binary(b"echo after-$((2+3))\r".to_vec().into()))
        .await
        .unwrap();
    ws_output_until(&mut watcher, "the next echo, on the watcher", "after-5").await;
    let text = daemon.cli(&["read", &id]).ok();
    assert!(!text.contains("typed-by"), "a read-only socket typed: {text}");
    let pane = daemon.cli(&["--json", "status", &id]).json();
    assert_eq!(pane["cols"], 70, "a read-only socket resized");

    // The shell exits: the socket says how.
    socket.send(Message::Binary(b"exit 5\r".to_vec().into())).await.unwrap();
    let end = ws_until(
        &mut socket,
        "the exit",
        |m| matches!(m, Message::Text(t) if t.contains("exited")),
    )
    .await;
    let last = end.last().unwrap().to_text().unwrap().to_string();
    let last: Value = serde_json::from_str(&last).unwrap();
    assert_eq!(last["code"], 5);

    // An unknown pane is a 404 before any upgrade.
    let unknown = format!("/ws/panes/{}", uuid::Uuid::new_v4());
    let refused = web.ws(&unknown, &[("authorization", &web.bearer())]).await;
    assert_http_refusal(refused, 404);
}

#[tokio::test]
async fn every_open_page_hears_of_tab_changes() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let mut events = web
        .ws("/ws/events", &[("authorization", &web.bearer())])
        .await
        .expect("events");
    // The CLI makes the change; the socket reports it.
    daemon.cli(&["new-session", "elsewhere"]).ok();
    let pane = daemon
        .cli(&["run", "-s", "elsewhere", "--title", "cli-tab", "--", "sh"])
        .ok();
    let pane = pane.trim().to_string();
    let seen = ws_until(&mut events, "pane_created", |m| {
        m.to_text().is_ok_and(|t| t.contains("pane_created"))
    })
    .await;
    let created: Value = serde_json::from_str(seen.last().unwrap().to_text().unwrap()).unwrap();
    assert_eq!(created["pane"]["id"], pane);
    assert_eq!(created["pane"]["title"], "cli-tab");
    daemon.cli(&["rename-pane", &pane, "renamed"]).ok();
    ws_until(&mut events, "pane_renamed", |m| {
        m.to_text().is_ok_and(|t| t.contains("pane_renamed"))
    })
    .await;
    daemon.cli(&["release", &pane]).ok();
    let seen = ws_until(&mut events, "pane_removed", |m| {
        m.to_text().is_ok_and(|t| t.contains("pane_removed"))
    })
    .await;
    assert!(seen.last().unwrap().to_text().unwrap().contains(&pane));
}

fn assert_http_refusal(result: Result<WsStream, tokio_tungstenite::tungstenite::Error>, status: u16) {
    match result {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), status, "{response:?}")
        }
        Err(other) => panic!("expected HTTP {status}, got {other}"),
        Ok(_) => panic!("expected HTTP {status}, the socket opened"),
    }
}

/// One test per attack a web page (or a rebinding DNS name) could make on a
/// local terminal server; each is refused with the right status, and nothing
/// happens to any pane.
#[tokio::test]
async fn cross_site_attacks_are_refused() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let project = private_dir();
    let id = web.new_tab(project.path(), "s").await;
    let attach = format!("/ws/panes/{id}");
    let own_origin = web.base.clone();

    // A WebSocket from a foreign page: right token (as a cookie), wrong Origin.
    let cookie = format!("fugue_token_{}={}", web.port, web.token);
    let refused = web
        .ws(&attach, &[("origin", "http://evil.example"), ("cookie", &cookie)])
        .await;
    assert_http_refusal(refused, 403);
    let refused = web.ws(&attach, &[("origin", "null"), ("cookie", &cookie)]).await;
    assert_http_refusal(refused, 403);
    // DNS rebinding: the right token, a foreign Host.
    let response = web
        .request(Method::GET, "/api/daemon")
        .header("host", format!("evil.example:{}", web.port))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response = web
        .http
        .get(format!("{}/", web.base))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "even the page is not served to a rebinding name"
    );
    // No token, a wrong token, a token in the URL.
    for (path, auth) in [
        ("/api/daemon", None),
        ("/api/daemon", Some("Bearer nope")),
        (attach.as_str(), None),
    ] {
        let mut request = web.http.get(format!("{}{path}", web.base));
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        assert_eq!(
            request.send().await.unwrap().status(),
            StatusCode::UNAUTHORIZED,
            "{path} {auth:?}"
        );
    }
    let refused = web.ws(&attach, &[]).await;
    assert_http_refusal(refused, 401);
    let response = web
        .http
        .get(format!("{}/api/daemon?token={}", web.base, web.token))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let refused = web.ws(&format!("{attach}?token={}", web.token), &[]).await;
    assert_http_refusal(refused, 401);
    // The login link followed from another site: no cookie for it.
    let response = web
        .http
        .get(&web.login)
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.headers().get("set-cookie").is_none());
    // A form POST from another origin, cookie and all (a "simple" request).
    let form = web
        .http
        .post(format!("{}/api/terminal/sessions", web.base))
        .header("origin", "http://evil.example")
        .header("cookie", &cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("project={}&session=s", project.path().display()))
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), StatusCode::FORBIDDEN);
    // The same without an Origin (an old browser, a script): not JSON, refused.
    let form = web
        .http
        .post(format!("{}/api/terminal/sessions", web.base))
        .header("cookie", &cookie)
        .header("content-type", "text/plain")
        .body(json!({"project": project.path(), "session": "s"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // A cross-site fetch carrying the token in a header still fails on Origin.
    let response = web
        .request(Method::GET, "/api/daemon")
        .header("origin", "http://127.0.0.1:1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    // Nothing happened: one tab, nothing typed into it.
    assert_eq!(tab_names(&web, project.path()).await, ["Terminal 1"]);
    let panes = daemon.client().await.list_panes(None).await.unwrap();
    assert_eq!(panes.len(), 1, "{panes:?}");
    let text = daemon.cli(&["read", &id]).ok();
    assert!(!text.contains("session=s") && !text.contains("project"), "{text}");

    // The legitimate ways in: the login URL gives a strict cookie, which works,
    // from our own origin.
    let response = web.http.get(&web.login).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()["location"], "/");
    let set_cookie = response.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(set_cookie.starts_with(&cookie), "{set_cookie}");
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set_cookie.contains(attribute), "{set_cookie} lacks {attribute}");
    }
    let response = web
        .http
        .get(format!("{}/api/daemon", web.base))
        .header("cookie", &cookie)
        .header("origin", &own_origin)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let socket = web.ws(&attach, &[("origin", &own_origin), ("cookie", &cookie)]).await;
    assert!(socket.is_ok(), "our own page may attach");

    // Every answer carries the policy headers.
    let page = web.http.get(format!("{}/", web.base)).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.starts_with("default-src 'self'"), "{csp}");
    assert!(csp.contains("script-src 'self';"), "{csp}");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
}

#[test]
fn only_loopback_without_tls_and_token_files_must_be_private() {
    let daemon = Daemon::start();
    let output = Web::command(&daemon, &[])
        .args(["--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refusing to listen on 0.0.0.0:0"), "{stderr}");
    assert!(stderr.contains("ssh -L"), "{stderr}");
    // `fugue web` is the same program, with the CLI's socket passed on.
    let via_cli = daemon.cli(&["web", "--listen", "0.0.0.0:0"]);
    assert!(!via_cli.status.success());
    assert!(
        via_cli.stderr.contains("refusing to listen on 0.0.0.0:0"),
        "{}",
        via_cli.stderr
    );

    let dir = private_dir();
    let file = dir.path().join("token");
    std::fs::write(&file, "a-fixed-token-of-some-length\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = Web::command(&daemon, &["--token-file", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("readable by others (mode 644)"), "{stderr}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let web = Web::start(&daemon, &["--token-file", file.to_str().unwrap()]);
    assert_eq!(web.token, "a-fixed-token-of-some-length");
}

/// HTTPS with the user's certificate; with it, listening beyond loopback is allowed.
#[test]
fn tls_serves_https_and_allows_other_addresses() {
    let daemon = Daemon::start();
    let dir = private_dir();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
        ])
        .args([
            "-subj",
            "/CN=fugue-test",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("run openssl (the README's test command installs it)");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let tls = ["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()];
    let web = Web::start(&daemon, &tls);
    assert!(web.login.starts_with("https://127.0.0.1:"), "{}", web.login);
    let curl = |url: &str, extra: &[&str]| {
        Command::new("curl")
            .args(["-sS", "--max-time", "10", "--cacert", cert.to_str().unwrap()])
            .args(extra)
            .arg(url)
            .output()
            .expect("run curl")
    };
    let auth = format!("Authorization: Bearer {}", web.token);
    let answer = curl(&format!("{}/api/daemon", web.base), &["-H", &auth]);
    assert!(answer.status.success(), "{}", String::from_utf8_lossy(&answer.stderr));
    let view: Value = serde_json::from_slice(&answer.stdout).expect("JSON over HTTPS");
    assert_eq!(view["socket"], daemon.socket.display().to_string());
    // The login over HTTPS sets a Secure cookie.
    let login = curl(&web.login, &["-D", "-", "-o", "/dev/null"]);
    let headers = String::from_utf8_lossy(&login.stdout).to_lowercase();
    assert!(
        headers.contains("set-cookie:") && headers.contains("; secure"),
        "{headers}"
    );
    // Plain HTTP to the HTTPS port gets nothing.
    let plain = curl(&format!("http://127.0.0.1:{}/api/daemon", web.port), &["-H", &auth]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("socket"));

    // Beyond loopback, with TLS: it starts, on every address.
    let mut wide = Web::command(&daemon, &tls)
        .args(["--listen", "0.0.0.0:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(wide.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = wide.kill();
    let _ = wide.wait();
    assert!(line.starts_with("https://") && line.contains("/?token="), "{line}");

    // A key that is not the certificate's is refused at start, in one line.
    let other_key = dir.path().join("other-key.pem");
    let made = Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-out",
        ])
        .arg(&other_key)
        .output()
        .unwrap();
    assert!(made.status.success());
    let mismatched = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        other_key.to_str().unwrap(),
    ];
    let output = Web::command(&daemon, &mismatched).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("do not go together"), "{stderr}");
    let output = Web::command(&daemon, &["--tls-cert", cert.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--tls-key"));
}

/// A page that stops acknowledging output (flow control) is sent no more than
/// the window; when it catches up it is resynchronised with a redraw, and the
/// pane never waited for it.
#[tokio::test]
async fn a_page_that_falls_behind_gets_a_bounded_window_then_a_redraw() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    let (status, body) = web
        .call(Method::POST, "/api/sessions", Some(json!({"name": "flow"})))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let script = "read x; head -c 30000000 /dev/zero | tr '\\0' x; echo; echo flow-$((1+1))-done; exec sleep 60";
    let spec = json!({"session": "flow", "command": ["sh", "-c", script], "shell": false});
    let (status, pane) = web.call(Method::POST, "/api/panes", Some(spec)).await;
    assert_eq!(status, StatusCode::OK, "{pane}");
    let id = pane["id"].as_str().unwrap().to_string();
    let path = format!("/ws/panes/{id}?cols=80&rows=24&flow=true");
    let mut socket = web
        .ws(&path, &[("authorization", &web.bearer())])
        .await
        .expect("attach");
    ws_until(&mut socket, "the first redraw", |m| matches!(m, Message::Binary(_))).await;

    // 30 MB of output, and this page acknowledges nothing; the pane is not held up.
    daemon.cli(&["write", &id, "go", "--enter"]).ok();
    daemon
        .cli(&["wait", &id, "--pattern", "flow-2-done", "--timeout", "60"])
        .ok();
    let mut unacked = 0usize;
    while let Ok(Some(Ok(message))) = tokio::time::timeout(Duration::from_millis(500), socket.next()).await {
        if let Message::Binary(data) = message {
            unacked += data.len();
        }
    }
    assert!(
        unacked <= 1 << 20,
        "{unacked} bytes were sent past a 512 KiB window with nothing acknowledged"
    );

    // Catching up, acknowledging everything as it comes: a redraw brings the end.
    let ack = |bytes: usize| Message::Text(json!({"type": "ack", "bytes": bytes}).to_string().into());
    socket.send(ack(unacked)).await.unwrap();
    let (mut redrawn, mut screen) = (false, Vec::new());
    let caught_up = tokio::time::timeout(DEADLINE, async {
        while let Some(Ok(message)) = socket.next().await {
            match message {
                Message::Text(t) if t.contains("\"redraw\"") => {
                    redrawn = true;
                    screen.clear();
                }
                Message::Binary(data) => {
                    screen.extend_from_slice(&data);
                    socket.send(ack(data.len())).await.unwrap();
                }
                _ => {}
            }
            if redrawn && String::from_utf8_lossy(&screen).contains("flow-2-done") {
                return;
            }
        }
    })
    .await;
    assert!(caught_up.is_ok(), "no redraw with the pane's end (redrawn: {redrawn})");
}

/// The HTTP API lists a pane whose program's file name holds an OSC title
/// sequence and a bidi override under a clean title (issue 27).
#[tokio::test]
async fn names_reach_the_browser_clean() {
    let daemon = Daemon::start();
    let client = daemon.client().await;
    client.create_session("web", None, vec![]).await.unwrap();
    let spec = fugue_tests::evil_program_spec(daemon.dir.path(), "web");
    client.create_pane(spec).await.unwrap();
    let web = Web::start(&daemon, &[]);
    let (status, panes) = web.call(Method::GET, "/api/panes", None).await;
    assert_eq!(status, StatusCode::OK, "{panes}");
    assert_eq!(panes[0]["title"], fugue_tests::EVIL_TITLE, "{panes}");
}

/// What a hostile client or program puts in a command, a line, a title or a
/// prompt: escape sequences, C1 and DEL, bidi overrides, isolates and marks,
/// and zero-width characters.
const HOSTILE: &[&str] = &[
    "\u{1b}]0;PWNED\u{7}",
    "\u{1b}[2J",
    "\u{9b}31m",
    "\u{7f}",
    "\u{202e}",
    "\u{2066}",
    "\u{200f}",
    "\u{61c}",
    "\u{200d}",
    "\u{200b}",
    "\u{feff}",
];

/// The characters fugue's output rule (docs/output.md) never writes raw, found
/// in `bytes` (newlines and tabs are JSON's and a table's own whitespace).
fn raw_unsafe(bytes: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(bytes)
        .chars()
        .filter(|c| fugue_client::protocol::limits::is_unsafe_char(*c) && !matches!(c, '\n' | '\r' | '\t'))
        .collect()
}

/// Every hostile character, in every field a client or program controls, in
/// every output: the CLI's tables and `--json`, the HTTP API, MCP over stdio
/// and over HTTP (the bytes on the wire). A pane's command carries the whole
/// hostile set; its program prints it in lines and its title; an agent shows
/// it in its evidence and the prompt's receipt. No output writes one raw, and
/// JSON keeps it losslessly (`\u` escapes): a program reads the command back
/// exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_output_leaves_unsafe_characters_escaped() {
    let daemon = Daemon::start();
    let hostile: String = HOSTILE.concat();
    let script =
        r#"printf '\033]0;T%s\007' "$1"; printf 'MARK one %s end\n' "$1"; printf 'MARK two %s\n' "$1"; exec sleep 600"#;
    let (plain, agent) = tokio::task::block_in_place(|| {
        daemon.cli(&["new-session", "bidi"]).ok();
        let plain = daemon
            .cli(&[
                "run",
                "-s",
                "bidi",
                "--no-shell",
                "--",
                "sh",
                "-c",
                script,
                "sh",
                &hostile,
            ])
            .ok();
        let agent = daemon.run_fake_claude("bidi");
        daemon.wait_agent_state(&agent, "idle");
        daemon.wait_text(plain.trim(), "MARK two");
        (plain, agent)
    });
    // The prompt's text reaches the agent's screen, its evidence and the receipt.
    let prompt = "go\u{200d}now\u{feff}x\u{200b}y".to_string();
    let mut outputs: Vec<(String, Vec<u8>)> = tokio::task::block_in_place(|| {
        let receipt = daemon.cli(&["--json", "prompt", &agent, &prompt]);
        let mut outputs = vec![("fugue --json prompt".to_string(), receipt.ok().into_bytes())];
        for args in [
            vec!["--json", "panes", "bidi"],
            vec!["--json", "status", &plain],
            vec!["--json", "overview"],
            vec!["--json", "grep", "MARK"],
            vec!["--json", "agent", &agent, "--explain"],
            vec!["--json", "capture", &agent],
            vec!["panes", "bidi"],
            vec!["status", &plain],
            vec!["overview"],
            vec!["grep", "MARK"],
            vec!["agent", &agent, "--explain"],
        ] {
            outputs.push((format!("fugue {}", args.join(" ")), daemon.cli(&args).ok().into_bytes()));
        }
        outputs
    });
    let web = Web::start(&daemon, &[]);
    for path in [
        "/api/panes?session=bidi".to_string(),
        format!("/api/panes/{plain}"),
        "/api/overview".to_string(),
        "/api/grep?pattern=MARK".to_string(),
        format!("/api/panes/{agent}/agent"),
    ] {
        let response = web.request(Method::GET, &path).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        outputs.push((format!("GET {path}"), response.bytes().await.unwrap().to_vec()));
    }
    let calls = [
        ("fugue_list", json!({"session": "bidi"})),
        ("fugue_list_agents", json!({})),
        ("fugue_grep", json!({"pattern": "MARK"})),
        ("fugue_read", json!({"terminal_id": plain})),
        ("fugue_capture", json!({"terminal_id": agent})),
        ("fugue_agent_status", json!({"terminal_id": agent})),
    ];
    outputs.push(("fugue-mcp (stdio)".into(), mcp_stdio_bytes(&daemon, &calls).await));
    outputs.push(("fugue-mcp --http".into(), mcp_http_bytes(&daemon, &calls).await));

    for (what, bytes) in &outputs {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            raw_unsafe(bytes).is_empty(),
            "{what} wrote {:?} raw: {text}",
            raw_unsafe(bytes)
        );
    }
    let shown = |what: &str| {
        let (_, bytes) = outputs.iter().find(|(w, _)| w == what).unwrap();
        String::from_utf8_lossy(bytes).into_owned()
    };
    // Kept, escaped: the command's whole hostile set, the program's lines'
    // zero-width characters, the prompt's in the agent's evidence.
    let status: Value = serde_json::from_str(&shown(&format!("fugue --json status {plain}"))).unwrap();
    assert_eq!(status["command"][4], hostile.as_str(), "{status}");
    assert!(
        shown("fugue --json grep MARK").contains("\\u200d\\u200b\\ufeff"),
        "{}",
        shown("fugue --json grep MARK")
    );
    assert!(
        shown("fugue grep MARK").contains("\\u{200d}"),
        "{}",
        shown("fugue grep MARK")
    );
    let receipt: Value = serde_json::from_str(&shown("fugue --json prompt")).unwrap();
    assert_eq!(receipt["outcome"], "started", "{receipt}");
    assert!(
        receipt["evidence"].to_string().contains(&prompt),
        "the prompt in the evidence: {receipt}"
    );
    for (what, bytes) in outputs.iter().filter(|(w, _)| w.starts_with("fugue-mcp")) {
        let text = String::from_utf8_lossy(bytes);
        assert!(text.contains("\\u200d") && text.contains("\\u202e"), "{what}: {text}");
    }
}

/// The bytes `fugue-mcp` writes to stdout for an `initialize` and `calls`, read
/// as they leave it (an SDK client would hide what was escaped).
async fn mcp_stdio_bytes(daemon: &Daemon, calls: &[(&str, Value)]) -> Vec<u8> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut bridge = fugue_tests::mcp::bridge_command(daemon)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn fugue-mcp");
    let mut stdin = bridge.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(bridge.stdout.take().unwrap()).split(b'\n');
    let mut sent = vec![json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})];
    sent.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (id, (tool, arguments)) in calls.iter().enumerate() {
        sent.push(json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
    }
    for message in sent {
        stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    let mut bytes = Vec::new();
    for _ in 0..=calls.len() {
        let line = tokio::time::timeout(DEADLINE, lines.next_segment())
            .await
            .expect("fugue-mcp answers")
            .unwrap()
            .expect("a line");
        let reply: Value = serde_json::from_slice(&line).expect("JSON-RPC");
        assert!(
            reply.get("error").is_none() && reply["result"]["isError"] != true,
            "{reply}"
        );
        bytes.extend(line);
        bytes.push(b'\n');
    }
    bytes
}

/// The bytes `fugue-mcp --http` sends for `calls` (its JSON and event-stream
/// bodies, as they come off the socket).
async fn mcp_http_bytes(daemon: &Daemon, calls: &[(&str, Value)]) -> Vec<u8> {
    let bridge = fugue_tests::mcp::HttpBridge::start(daemon, &[]).await;
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&bridge.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .bearer_auth(bridge.token.as_deref().unwrap_or_default())
            .json(&body);
        if let Some(session) = session {
            request = request.header("Mcp-Session-Id", session);
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let opened = post(initialize, None).await.expect("initialize");
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let mut bytes = opened.bytes().await.unwrap().to_vec();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(initialized, Some(&session)).await.expect("initialized");
    for (id, (tool, arguments)) in calls.iter().enumerate() {
        let call = json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let reply = post(call, Some(&session)).await.expect("tools/call");
        assert!(reply.status().is_success(), "{tool}: {}", reply.status());
        let body = reply.bytes().await.unwrap();
        assert!(
            String::from_utf8_lossy(&body).contains("\"result\""),
            "{tool}: {body:?}"
        );
        bytes.extend_from_slice(&body);
    }
    bytes
}

/// Hibernate and wake over HTTP: the pane reads hibernated, then running and
/// its agent idle; a pane with no agent is refused with the reason.
#[tokio::test]
async fn an_agent_hibernates_and_wakes_over_http() {
    let daemon = Daemon::start();
    let web = Web::start(&daemon, &[]);
    daemon.cli(&["new-session", "rest"]).ok();
    let pane = daemon.run_fake_claude_keeping_status("rest", &[]);
    daemon
        .cli(&["wait", &pane, "--agent-state", "idle", "--timeout", "30"])
        .ok();
    daemon.agent_session_id(&pane);
    let (status, slept) = web
        .call(Method::POST, &format!("/api/panes/{pane}/hibernate"), None)
        .await;
    assert_eq!(
        (status, slept["status"].as_str()),
        (StatusCode::OK, Some("hibernated")),
        "{slept}"
    );
    let (_, agent) = web.call(Method::GET, &format!("/api/panes/{pane}/agent"), None).await;
    assert_eq!(agent["state"], "hibernated", "{agent}");
    let (status, woke) = web.call(Method::POST, &format!("/api/panes/{pane}/wake"), None).await;
    assert_eq!(
        (status, woke["status"].as_str()),
        (StatusCode::OK, Some("running")),
        "{woke}"
    );
    let (_, agent) = web.call(Method::GET, &format!("/api/panes/{pane}/agent"), None).await;
    assert_eq!(agent["state"], "idle", "{agent}");
    let shell = daemon
        .cli(&["run", "-s", "rest", "--no-shell", "--", "sleep", "60"])
        .ok();
    let (status, refused) = web
        .call(Method::POST, &format!("/api/panes/{}/hibernate", shell.trim()), None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(refused.to_string().contains("no agent CLI"), "{refused}");
}

/// `fugue-web --host docker://C`: the page serves the daemon in a container;
/// a project is a directory there (`/work` exists only in the container), the
/// tab's shell runs there, and its output comes back over the WebSocket.
#[tokio::test]
async fn fugue_web_serves_a_daemon_in_a_container() {
    fugue_tests::require!("docker", "dockerd");
    if !fugue_tests::containers::engine_or_skip() {
        return;
    }
    assert!(!Path::new("/work/.fugue-web-test").exists());
    let daemon = Daemon::start();
    let container = fugue_tests::containers::Container::start(&["--network", "none"]);
    let address = container.address();
    let web = Web::start(&daemon, &["--host", &address, "--project", "/work"]);
    let (status, defaults) = web.call(Method::GET, "/api/web/defaults", None).await;
    assert_eq!(status, StatusCode::OK, "{defaults}");
    assert_eq!(
        (&defaults["project"], &defaults["remote"]),
        (&json!("/work"), &json!(true))
    );
    let id = web.new_tab(Path::new("/work"), "boxed").await;
    // The pane is the container's daemon's, in its /work.
    let at = |args: &[&str]| {
        let mut all = vec!["--host", address.as_str()];
        all.extend_from_slice(args);
        fugue_tests::cli_with_env(&daemon.socket, &daemon.dir, &all, &[])
    };
    let status: Value = serde_json::from_str(&at(&["--json", "status", &id]).ok()).unwrap();
    assert_eq!(status["cwd"], "/work", "{status}");
    assert!(
        daemon.cli(&["--json", "panes"]).ok().trim() == "[]",
        "a pane was made here"
    );
    let mut stream = web
        .ws(&format!("/ws/panes/{id}"), &[("authorization", &web.bearer())])
        .await
        .expect("attach over the WebSocket");
    stream
        .send(Message::Binary(
            b"echo in-box-$((5*5)) > .fugue-web-test; read -r x < .fugue-web-test; echo \"$x\"\r"
                .to_vec()
                .into(),
        ))
        .await
        .unwrap();
    ws_output_until(&mut stream, "the shell's echo from the container", "in-box-25").await;
    assert!(
        !Path::new("/work/.fugue-web-test").exists(),
        "the file was written here"
    );
    // A directory the container does not have: the daemon there says so.
    let body = json!({"project": "/nowhere-in-the-box", "session": "x"});
    let (status, error) = web.call(Method::POST, "/api/terminal/sessions", Some(body)).await;
    assert!(status.is_client_error(), "{status}: {error}");
}

/// `POST /api/panes` with a sandbox starts the pane's command in a container
/// of its own, as `fugue run --sandbox` does; a bad sandbox is a 400 naming
/// what was wrong, and nothing starts.
#[tokio::test]
async fn the_http_api_starts_a_sandboxed_pane() {
    use fugue_tests::containers::{docker, engine_or_skip, fugue_image};
    fugue_tests::require!("docker", "dockerd");
    if !engine_or_skip() {
        return;
    }
    let daemon = Daemon::start();
    let dir = daemon.dir.path().join("boxed");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(1000), Some(1000)).unwrap();
    daemon.cli(&["new-session", "web"]).ok();
    let web = Web::start(&daemon, &[]);
    let image = fugue_image();
    let body = json!({"session": "web", "command": ["sh", "-c", "echo in-$(id -u); exec sleep 600"],
                      "cwd": dir, "sandbox": {"image": image, "memory": "64m"}});
    let (status, pane) = web.call(Method::POST, "/api/panes", Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{pane}");
    let id = pane["id"].as_str().unwrap().to_string();
    daemon.wait_text(&id, "in-1000");
    let filter = format!("label=fugue.pane={id}");
    // The program's output can reach the pane before the engine lists its
    // container as running (it marks it once the runtime said it started).
    let ids = fugue_tests::containers::until_engine_event(
        "docker",
        &[&filter, "event=start"],
        "the pane's container listed as running",
        DEADLINE,
        || Some(docker(&["ps", "--quiet", "--filter", &filter])).filter(|ids| !ids.is_empty()),
    );
    assert_eq!(
        docker(&["inspect", "--format", "{{.HostConfig.Memory}}", &ids]),
        "67108864"
    );
    let bad = json!({"session": "web", "command": ["true"], "sandbox": {"image": image, "network": "wide"}});
    let (status, error) = web.call(Method::POST, "/api/panes", Some(bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert!(error.to_string().contains("unknown sandbox network 'wide'"), "{error}");
    daemon.cli(&["release", &id]).ok();
    fugue_tests::containers::wait_containers_gone(&format!("fugue.pane={id}"), "the container to go");
}

/// `fugue-web --host exec:COMMAND`: the page's API and its WebSocket reach the
/// daemon behind a command whose stdio is `fugue proxy` (a hosted sandbox's
/// CLI would run it), from a server whose own socket does not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fugue_web_serves_a_daemon_through_exec() {
    let daemon = Daemon::start();
    let address = format!(
        "exec:{} --socket {} proxy",
        bin("fugue").display(),
        daemon.socket.display()
    );
    let project = daemon.dir.path().join("far-project");
    std::fs::create_dir_all(&project).unwrap();
    // Its own socket leads nowhere: only the address reaches the daemon.
    let nowhere = daemon.dir.path().join("no-daemon-here.sock");
    let extra = ["--host", &address, "--project", project.to_str().unwrap()];
    let web = Web::spawn(Web::command_on(&daemon, &nowhere, &extra));
    let id = web.new_tab(&project, "far").await;
    let (status, overview) = web.call(Method::GET, "/api/overview", None).await;
    assert_eq!(status, StatusCode::OK, "{overview}");
    assert!(overview.to_string().contains(&id), "{overview}");
    let mut stream = web
        .ws(&format!("/ws/panes/{id}"), &[("authorization", &web.bearer())])
        .await
        .expect("attach over the WebSocket");
    stream
        .send(Message::Binary(b"echo through-exec-$((6*7))\r".to_vec().into()))
        .await
        .unwrap();
    ws_output_until(&mut stream, "the shell's echo through exec:", "through-exec-42").await;
    let listed = tokio::task::block_in_place(|| daemon.cli(&["ls"]).ok());
    assert!(listed.contains("far"), "the pane is the daemon's: {listed}");
}
