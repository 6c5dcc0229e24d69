//! A small Kubernetes API server for the real `kubectl` (no cluster runs on the
//! machines fugue is tested on): discovery, the pods of namespace `agents`
//! (their list, watches of it, each pod), and exec into a pod over the
//! WebSocket protocol kubectl 1.30+ speaks (`v5.channel.k8s.io`), which runs
//! the command asked for on this machine, with this build's `fugue` on its
//! PATH and `FUGUE_SOCKET` naming the test's daemon: a pod whose fugue reaches
//! that daemon. Pod `no-fugue-0` has no fugue on its PATH.

use futures::{SinkExt, StreamExt};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;

/// The server; it runs until the test ends.
pub struct FakeApiServer {
    pub port: u16,
    /// The query of every pod list and watch, in order.
    pub queries: Arc<Mutex<Vec<String>>>,
    watchers: Arc<Watchers>,
    /// The socket exec'd commands reach fugued on.
    daemon_socket: Arc<Mutex<Option<PathBuf>>>,
    /// Every exec's command line, in order.
    pub execs: Arc<Mutex<Vec<Vec<String>>>>,
    /// The private directory an exec's runtime and home are in.
    _nowhere: tempfile::TempDir,
}

/// The open watches, and a signal when one opens.
#[derive(Default)]
struct Watchers {
    open: Mutex<Vec<TcpStream>>,
    opened: Condvar,
}

/// What the server answers: for the request's path and query.
struct Answers {
    pod_list: String,
    /// An exec's runtime directory and home: private, with no daemon in it,
    /// so that a pod that is not told of one reaches none (never the
    /// person's own on the default socket).
    nowhere: PathBuf,
    queries: Arc<Mutex<Vec<String>>>,
    watchers: Arc<Watchers>,
    daemon_socket: Arc<Mutex<Option<PathBuf>>>,
    execs: Arc<Mutex<Vec<Vec<String>>>>,
}

const NOT_FOUND: &str =
    r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"not here","reason":"NotFound","code":404}"#;

impl FakeApiServer {
    /// Namespace `agents` holds `running` pods named worker-N, one pending
    /// (`pending-0`) and `no-fugue-0`; each running one has container `main`.
    pub fn start(running: usize) -> FakeApiServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut pods: Vec<serde_json::Value> = (0..running).map(|n| pod(&format!("worker-{n}"), "Running")).collect();
        pods.push(pod("pending-0", "Pending"));
        let pod_list = serde_json::json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": pods})
            .to_string();
        let nowhere = crate::private_dir();
        let server = FakeApiServer {
            port,
            queries: Default::default(),
            watchers: Default::default(),
            daemon_socket: Default::default(),
            execs: Default::default(),
            _nowhere: nowhere,
        };
        let answers = Arc::new(Answers {
            pod_list,
            nowhere: server._nowhere.path().to_path_buf(),
            queries: server.queries.clone(),
            watchers: server.watchers.clone(),
            daemon_socket: server.daemon_socket.clone(),
            execs: server.execs.clone(),
        });
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let answers = answers.clone();
                std::thread::spawn(move || answers.serve(stream));
            }
        });
        server
    }

    /// Execs reach the daemon on `socket`.
    pub fn exec_into(&self, socket: &Path) {
        *self.daemon_socket.lock().unwrap() = Some(socket.to_path_buf());
    }

    /// A kubeconfig in `dir` whose only context is this server.
    pub fn kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:{}\n\
                 contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\n\
                 users:\n- name: fake\n  user: {{}}\n",
                self.port
            ),
        )
        .unwrap();
        path
    }

    /// Tells every watch that pod `name` was `kind` (ADDED, MODIFIED,
    /// DELETED), in `phase`.
    pub fn event(&self, kind: &str, name: &str, phase: &str) {
        let event = serde_json::json!({"type": kind, "object": pod(name, phase)});
        let line = format!("{event}\n");
        for watcher in self.watchers.open.lock().unwrap().iter_mut() {
            let _ = write!(watcher, "{:x}\r\n{line}\r\n", line.len());
            let _ = watcher.flush();
        }
    }

    /// Waits until a watch is open (woken when one opens).
    pub fn wait_watching(&self) {
        let open = self.watchers.open.lock().unwrap();
        let (open, _) = self
            .watchers
            .opened
            .wait_timeout_while(open, crate::DEADLINE, |open| open.is_empty())
            .unwrap();
        assert!(!open.is_empty(), "no watch of the pods within {:?}", crate::DEADLINE);
    }
}

fn pod(name: &str, phase: &str) -> serde_json::Value {
    serde_json::json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "agents", "resourceVersion": "2"},
        "spec": {"containers": [{"name": "main", "image": "fugue"}]},
        "status": {"phase": phase},
    })
}

impl Answers {
    fn serve(&self, mut stream: TcpStream) {
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        let head = String::from_utf8_lossy(&request).to_string();
        let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let pods = "/api/v1/namespaces/agents/pods";
        if path == pods && query.split('&').any(|q| q == "watch=true" || q == "watch=1") {
            self.queries.lock().unwrap().push(query.to_string());
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
            if stream.write_all(head.as_bytes()).is_ok() {
                self.watchers.open.lock().unwrap().push(stream);
                self.watchers.opened.notify_all();
            }
            return;
        }
        if let Some(pod) = path.strip_prefix(pods).and_then(|p| p.strip_prefix('/')) {
            if let Some(pod) = pod.strip_suffix("/exec") {
                return self.exec(stream, &head, pod, query);
            }
            let known = pod.starts_with("worker-") || pod == "no-fugue-0";
            let (status, body) = match known {
                true => ("200 OK", self::pod(pod, "Running").to_string()),
                // As the API server says it.
                false => (
                    "404 Not Found",
                    serde_json::json!({
                        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": format!("pods \"{pod}\" not found"), "reason": "NotFound",
                        "details": {"name": pod, "kind": "pods"}, "code": 404,
                    })
                    .to_string(),
                ),
            };
            return respond(&mut stream, status, &body);
        }
        let (status, body) = match path {
            "/api" => ("200 OK", r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}"#.to_string()),
            "/apis" => ("200 OK", r#"{"kind":"APIGroupList","apiVersion":"v1","groups":[]}"#.to_string()),
            "/api/v1" => ("200 OK", r#"{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get","list","watch"],"shortNames":["po"]},{"name":"pods/exec","singularName":"","namespaced":true,"kind":"PodExecOptions","verbs":["create","get"]}]}"#.to_string()),
            "/version" => ("200 OK", r#"{"major":"1","minor":"32","gitVersion":"v1.32.0"}"#.to_string()),
            _ if path == pods => {
                self.queries.lock().unwrap().push(query.to_string());
                ("200 OK", self.pod_list.clone())
            }
            "/api/v1/namespaces/agents" => ("200 OK", r#"{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"agents"},"status":{"phase":"Active"}}"#.to_string()),
            _ => ("404 Not Found", NOT_FOUND.to_string()),
        };
        respond(&mut stream, status, &body);
    }

    /// An exec: the WebSocket handshake, then the command run here with its
    /// stdin, stdout and stderr on channels 0, 1 and 2, its end on channel 3.
    fn exec(&self, mut stream: TcpStream, head: &str, pod: &str, query: &str) {
        let header = |name: &str| {
            head.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_string())
            })
        };
        let (Some(key), Some(protocols)) = (header("Sec-WebSocket-Key"), header("Sec-WebSocket-Protocol")) else {
            // kubectl falls back to SPDY only when this fails: say so plainly.
            return respond(
                &mut stream,
                "400 Bad Request",
                r#"{"kind":"Status","status":"Failure","message":"this test server speaks only WebSocket exec","code":400}"#,
            );
        };
        if !protocols.split(',').any(|p| p.trim() == "v5.channel.k8s.io") {
            return respond(
                &mut stream,
                "400 Bad Request",
                r#"{"kind":"Status","status":"Failure","message":"v5.channel.k8s.io only","code":400}"#,
            );
        }
        let command: Vec<String> = query
            .split('&')
            .filter_map(|q| q.strip_prefix("command="))
            .map(percent_decode)
            .collect();
        self.execs.lock().unwrap().push(command.clone());
        let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
        let upgraded = write!(
            stream,
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n"
        );
        if upgraded.is_err() {
            return;
        }
        // This build's fugue on the PATH, except in a pod without it.
        let bin_dir = crate::bin("fugue").parent().unwrap().to_path_buf();
        let path = match pod == "no-fugue-0" {
            true => "/usr/bin:/bin".to_string(),
            false => format!("{}:/usr/bin:/bin", bin_dir.display()),
        };
        let socket = self.daemon_socket.lock().unwrap().clone();
        let socket = socket.unwrap_or_else(|| self.nowhere.join("fugue.sock"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(run_exec(stream, command, path, socket, &self.nowhere));
    }
}

fn respond(stream: &mut TcpStream, status: &str, body: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => out.push(b),
                    Err(_) => out.extend_from_slice(&bytes[i..i + 3]),
                }
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `command` for one exec over the upgraded `stream`, as the kubelet
/// would: channel 0 in (255 closes it), 1 and 2 out, then a Status on 3.
async fn run_exec(stream: TcpStream, command: Vec<String>, path: String, socket: PathBuf, nowhere: &Path) {
    stream.set_nonblocking(true).unwrap();
    let stream = tokio::net::TcpStream::from_std(stream).unwrap();
    let ws = tokio_tungstenite::WebSocketStream::from_raw_socket(stream, Role::Server, None).await;
    let (mut sink, mut incoming) = ws.split();
    let (frames, mut to_send) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(async move {
        while let Some(frame) = to_send.recv().await {
            if sink.send(Message::Binary(frame.into())).await.is_err() {
                return;
            }
        }
        // A normal close: kubectl takes a close without a code for an error.
        use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode, CloseFrame};
        let normal = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        let _ = sink.send(Message::Close(Some(normal))).await;
        let _ = sink.close().await;
    });
    let Some((program, args)) = command.split_first() else {
        let _ = frames.send(status_frame(Err(Failed::Start("no command".into())))).await;
        drop(frames);
        let _ = writer.await;
        return drain(incoming).await;
    };
    let mut child = tokio::process::Command::new(program);
    child
        .args(args)
        .env_clear()
        .env("PATH", &path)
        .env("FUGUE_SOCKET", &socket)
        .env("XDG_RUNTIME_DIR", nowhere)
        .env("HOME", nowhere)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = match child.spawn() {
        Ok(child) => child,
        Err(e) => {
            // As runc says it.
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "executable file not found in $PATH".to_string(),
                _ => e.to_string(),
            };
            let message = format!(
                "OCI runtime exec failed: exec failed: unable to start container process: exec: \"{program}\": {why}: unknown"
            );
            let _ = frames.send(status_frame(Err(Failed::Start(message)))).await;
            drop(frames);
            let _ = writer.await;
            return drain(incoming).await;
        }
    };
    let mut stdin = child.stdin.take();
    let pipes = [
        (1u8, child.stdout.take().map(boxed)),
        (2u8, child.stderr.take().map(boxed)),
    ];
    let mut outputs = Vec::new();
    for (channel, pipe) in pipes {
        let (Some(mut pipe), frames) = (pipe, frames.clone()) else {
            continue;
        };
        outputs.push(tokio::spawn(async move {
            let mut buf = vec![0u8; 32 * 1024];
            loop {
                match pipe.read(&mut buf[1..]).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        buf[0] = channel;
                        if frames.send(buf[..=n].to_vec()).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }));
    }
    let reader = tokio::spawn(async move {
        while let Some(Ok(message)) = incoming.next().await {
            let data = match message {
                Message::Binary(data) => data,
                Message::Close(_) => return,
                _ => continue,
            };
            match data.first() {
                Some(0) => {
                    let written = match stdin.as_mut() {
                        Some(pipe) => pipe.write_all(&data[1..]).await.is_ok(),
                        None => true,
                    };
                    if !written {
                        stdin = None;
                    }
                }
                // v5: the client closed its stdin.
                Some(255) if data.get(1) == Some(&0) => drop(stdin.take()),
                _ => {}
            }
        }
    });
    let status = child.wait().await;
    for output in outputs {
        let _ = output.await;
    }
    let ended = match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(Failed::Exit(status.code().unwrap_or(1))),
        Err(e) => Err(Failed::Start(e.to_string())),
    };
    let _ = frames.send(status_frame(ended)).await;
    drop(frames);
    let _ = writer.await;
    // The client answers the close (see `drain`).
    let _ = tokio::time::timeout(CLOSE_WITHIN, reader).await;
}

/// How long the client gets to answer the close.
const CLOSE_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads what the client sends until it answers the close (unread bytes at
/// close would reset the connection before it read the status).
async fn drain<S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin>(
    mut incoming: S,
) {
    let _ = tokio::time::timeout(CLOSE_WITHIN, async {
        while let Some(Ok(message)) = incoming.next().await {
            if let Message::Close(_) = message {
                return;
            }
        }
    })
    .await;
}

fn boxed<R: tokio::io::AsyncRead + Unpin + Send + 'static>(r: R) -> Box<dyn tokio::io::AsyncRead + Unpin + Send> {
    Box::new(r)
}

/// How an exec ended, when not well.
enum Failed {
    /// The command exited with this code.
    Exit(i32),
    /// The command could not start.
    Start(String),
}

/// The Status frame (channel 3) that ends an exec, as the kubelet sends it.
fn status_frame(ended: Result<(), Failed>) -> Vec<u8> {
    let status = match ended {
        Ok(()) => serde_json::json!({"metadata": {}, "status": "Success"}),
        Err(Failed::Exit(code)) => serde_json::json!({
            "metadata": {}, "status": "Failure",
            "message": format!("command terminated with non-zero exit code: exit status {code}"),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
        }),
        Err(Failed::Start(message)) => serde_json::json!({
            "metadata": {}, "status": "Failure", "message": message, "reason": "InternalError",
        }),
    };
    let mut frame = vec![3u8];
    frame.extend_from_slice(status.to_string().as_bytes());
    frame
}
