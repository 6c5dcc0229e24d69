//! A model stub for running the real agent CLIs offline: just enough of Anthropic
//! Messages (SSE), OpenAI Responses (SSE), OpenAI Chat Completions (streamed, with
//! tool calls) and Gemini generateContent / streamGenerateContent to play one
//! scripted turn.
//!
//! The turn: a new user prompt gets a few streamed words (slowly, so the turn is
//! visibly running), then a request to run one shell command that writes a file
//! (`touch NAME`, NAME from `FILE=NAME` in the prompt), which brings up the CLI's
//! real permission prompt. Once the tool's result comes back the stub streams a
//! last sentence and ends the turn. Requests without tools (titles, summaries,
//! "who speaks next" checks) get a short plain answer.
//!
//! `model-stub --log FILE [--port N]` listens on 127.0.0.1 (an ephemeral port
//! unless `--port` names one: in a sandbox, beside the agent), prints
//! `listening PORT` on stdout, and appends one JSON line per event to FILE, each
//! with a Unix-ms `at`, so a test can tell when a real transition happened:
//! `turn_started`, `tool_requested`, `tool_result`, `turn_finished`.
//!
//! For Claude Code, a prompt with `ASK=` gets a question instead (its
//! AskUserQuestion tool: `question_asked`, then `question_answered` with the
//! answer it got, and `turn_finished`).
//!
//! A prompt with `DELEGATE=DIR`, to Claude Code offering fugue-mcp's tools,
//! calls `fugue_delegate` once (a child asked to make `child.txt` in a worktree
//! of DIR's repository) and records what came back as `mcp_result`.
//!
//! A prompt with `TMUX=APP`, to Claude Code, plays its TUI skill's flow with
//! its Bash tool, one call per request: `tmux new-session -d -s APP -x 120 -y
//! 40`, `send-keys` of a program that waits for a line and then prints
//! `ready-LINE`, `capture-pane -p` again and again (the model's own poll loop)
//! until the screen shows `ready-go` (at most 30 looks), then `kill-session`.
//! Each call is recorded as `tmux_call`, each result as `tmux_result`.
//!
//! A prompt with `TEAM=NAME,NAME`, to Claude Code with agent teams on, spawns
//! one teammate per name (its `Agent` tool with `name`), one call per request,
//! each asked to `touch teammate-NAME.txt` (the usual turn: the teammate's own
//! permission prompt), recorded as `team_call`; then sends the first teammate
//! `MSG=hello-NAME` (`SendMessage`, after `ToolSearch` loads it when it is
//! deferred), recorded as `team_message`; then the last words. A teammate's
//! request holding that message is recorded as `message_received`.
//!
//! A prompt with `LIMIT=SECONDS` is refused, once, with the API's own 429
//! (a usage or rate limit resetting in SECONDS), recorded as `limit_sent`.
//!
//! A prompt with `MCP=SESSION`, to a CLI that offers fugue-mcp's tools, plays
//! fugue's own tools instead of the shell: `fugue_exec` of an `echo` in SESSION,
//! `fugue_wait` for that terminal's exit, `fugue_read` of it and
//! `fugue_kill_session` of SESSION, one call per request, each recorded as
//! `mcp_call`; what came back to the model for each is recorded as `mcp_result`
//! (the tool, the text the CLI gave the model, whether it marked it an error).

use axum::body::{Body, Bytes};
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::{json, Value};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Words streamed before the tool call and after its result.
const BEFORE_TOOL: &[&str] = &["Let ", "me ", "create ", "that ", "file ", "for ", "you."];
const AFTER_TOOL: &[&str] = &["Done: ", "the ", "file ", "is ", "there."];
const PLAIN_ANSWER: &str = "Stub title";

struct Stub {
    log: Mutex<Option<std::fs::File>>,
    /// `API:STEP` of the `MCP=` script's results already recorded.
    mcp_seen: Mutex<Vec<String>>,
    /// `API:LIMIT=N` tokens already refused (each is refused once: a CLI
    /// that sends the refused prompt again with the next, merged into one
    /// user message, gets its turn).
    limits_sent: Mutex<Vec<String>>,
    /// Pause between streamed chunks, so a running turn lasts long enough to see.
    chunk_delay: Duration,
}

impl Stub {
    fn record(&self, event: &str, api: &str, detail: Value) {
        let line = json!({"at": unix_ms(), "event": event, "api": api, "detail": detail});
        eprintln!("model-stub: {line}");
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = log.as_mut() {
            let _ = writeln!(file, "{line}");
        }
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What the stub answers to one request.
enum Turn {
    /// No tools offered: a side request (title, summary, next speaker).
    Plain,
    /// A fresh prompt: words, then the shell call; `files`: every file the
    /// conversation asked for so far.
    AskTool { command: String, files: Vec<String> },
    /// The tool's result came back: words, then the end of the turn.
    Finish,
}

/// The turn for a request offering a shell tool. The prompt is the latest user
/// text naming a file (`FILE=NAME`, NAME of letters, digits and `._-`); the turn
/// asks to `touch NAME` unless that call is already in the conversation (then its
/// result, run or refused, is back and the turn ends). Deciding from the whole
/// conversation keeps it right whatever else a CLI adds (system notes, tool
/// results of earlier turns).
fn decide(user_texts: &[String], body: &str) -> Turn {
    let name = user_texts
        .iter()
        .rev()
        .find_map(|text| text.rsplit("FILE=").next().filter(|_| text.contains("FILE=")))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "fugue-stub.txt".into());
    let command = format!("touch {name}");
    match body.contains(&command) {
        true => Turn::Finish,
        false => Turn::AskTool {
            command,
            files: files_asked(user_texts),
        },
    }
}

/// Every `FILE=` name the conversation's user messages asked for, in order: a
/// resumed conversation carries the earlier ones (tests check it is the same).
fn files_asked(user_texts: &[String]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for text in user_texts {
        for part in text.split("FILE=").skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
                .collect();
            if !name.is_empty() && !files.contains(&name) {
                files.push(name);
            }
        }
    }
    files
}

/// The texts of the messages with `role` in a list of API messages.
fn texts_of(messages: &Value, role: &str, content_key: &str) -> Vec<String> {
    messages
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|m| m["role"] == role)
                .map(|m| text_of(&m[content_key]))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut log_path = None;
    let mut chunk_ms = 250u64;
    let mut port = 0u16;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--log" => log_path = args.next(),
            "--chunk-ms" => chunk_ms = args.next().and_then(|v| v.parse().ok()).unwrap_or(chunk_ms),
            "--port" => port = args.next().and_then(|v| v.parse().ok()).unwrap_or(port),
            other => {
                eprintln!("model-stub: unknown argument {other}; use --log FILE [--chunk-ms N] [--port N]");
                std::process::exit(2);
            }
        }
    }
    let log = log_path.map(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .unwrap_or_else(|e| panic!("cannot open log {p}: {e}"))
    });
    let stub = Arc::new(Stub {
        log: Mutex::new(log),
        mcp_seen: Mutex::new(Vec::new()),
        limits_sent: Mutex::new(Vec::new()),
        chunk_delay: Duration::from_millis(chunk_ms),
    });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind 127.0.0.1");
    let port = listener.local_addr().expect("local address").port();
    println!("listening {port}");
    let _ = std::io::stdout().flush();
    let app = axum::Router::new().fallback(move |method: Method, uri: Uri, body: Bytes| {
        let stub = stub.clone();
        async move { answer(stub, method, uri, body).await }
    });
    axum::serve(listener, app).await.expect("serve");
}

async fn answer(stub: Arc<Stub>, method: Method, uri: Uri, body: Bytes) -> Response {
    let path = uri.path().to_string();
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = String::from_utf8_lossy(&body).into_owned();
    if let Ok(dir) = std::env::var("MODEL_STUB_DUMP") {
        // For finding out what a new CLI version sends.
        let _ = std::fs::write(format!("{dir}/{}.json", unix_ms()), &body);
    }
    stub.record(
        "request",
        "",
        json!({"method": method.as_str(), "uri": uri.to_string(), "bytes": body.len()}),
    );
    if method == Method::GET && path.ends_with("/models") {
        return json_response(
            StatusCode::OK,
            json!({"object": "list", "data": [{"id": "gpt-stub", "object": "model", "owned_by": "stub"}]}),
        );
    }
    if method != Method::POST {
        return json_response(StatusCode::NOT_FOUND, json!({"error": {"message": "not here"}}));
    }
    if path.ends_with("/count_tokens") {
        return json_response(StatusCode::OK, json!({"input_tokens": 12}));
    }
    if let Some(refused) = limit_reached(&stub, &path, &request) {
        return refused;
    }
    if path.ends_with("/messages") {
        return anthropic(stub, &request, &text).await;
    }
    if path.ends_with("/responses") {
        return openai(stub, &request, &text).await;
    }
    if path.ends_with("/chat/completions") {
        return chat_completions(stub, &request, &text).await;
    }
    if path.contains(":countTokens") {
        return json_response(StatusCode::OK, json!({"totalTokens": 12}));
    }
    if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
        return gemini(stub, &request, &text, path.contains(":stream")).await;
    }
    json_response(
        StatusCode::NOT_FOUND,
        json!({"error": {"message": format!("model-stub has no {path}")}}),
    )
}

/// The API's own 429 when the newest user text of a turn (tools offered) says
/// `LIMIT=SECONDS`: Anthropic's `rate_limit_error` with `retry-after`, OpenAI's
/// `usage_limit_reached` with `resets_at` (what Codex reads), Gemini's
/// `RESOURCE_EXHAUSTED` with a `RetryInfo` delay. Each tells the CLI to wait
/// SECONDS, so a long one makes it stop at once instead of retrying; a later
/// prompt ("continue") gets the usual turn: each token is refused once.
fn limit_reached(stub: &Stub, path: &str, request: &Value) -> Option<Response> {
    let (api, texts, offers_tools) = if path.ends_with("/messages") {
        let tools = request["tools"].as_array().is_some_and(|t| !t.is_empty());
        ("anthropic", texts_of(&request["messages"], "user", "content"), tools)
    } else if path.ends_with("/responses") {
        let tools = request["tools"].as_array().is_some_and(|t| !t.is_empty());
        ("openai", texts_of(&request["input"], "user", "content"), tools)
    } else if path.contains(":generateContent") || path.contains(":streamGenerateContent") {
        let tools = request["tools"].as_array().is_some_and(|t| !t.is_empty());
        ("gemini", texts_of(&request["contents"], "user", "parts"), tools)
    } else {
        return None;
    };
    let seconds: u64 = texts
        .last()?
        .split("LIMIT=")
        .nth(1)?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    if !offers_tools {
        return None;
    }
    let token = format!("{api}:LIMIT={seconds}");
    {
        let mut sent = stub.limits_sent.lock().unwrap_or_else(|e| e.into_inner());
        if sent.contains(&token) {
            return None;
        }
        sent.push(token);
    }
    let resets_at = unix_ms() / 1000 + seconds;
    stub.record("limit_sent", api, json!({"seconds": seconds, "resets_at": resets_at}));
    let (body, retry) = match api {
        "anthropic" => (
            json!({"type": "error", "error": {"type": "rate_limit_error",
                "message": "This request would exceed your organization's rate limit of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."}}),
            Some(seconds),
        ),
        "openai" => (
            json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                "plan_type": "plus", "resets_at": resets_at, "resets_in_seconds": seconds}}),
            None,
        ),
        _ => (
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{seconds}s")}]}}),
            None,
        ),
    };
    let mut response = json_response(StatusCode::TOO_MANY_REQUESTS, body);
    if let Some(retry) = retry {
        if let Ok(value) = header::HeaderValue::from_str(&retry.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
    }
    Some(response)
}

fn json_response(status: StatusCode, value: Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(value.to_string()))
        .unwrap_or_default()
}

/// An SSE response whose events are sent one by one with the stub's delay between
/// them, up to and including `events[marker_at]`, which completes what the turn
/// asked for (the tool call, or the last words): `marker` is recorded right after
/// it is sent, and the events after it (the stream's bookkeeping) follow at once.
fn sse(
    stub: Arc<Stub>,
    events: Vec<String>,
    marker_at: usize,
    marker: Option<(&'static str, &'static str, Value)>,
) -> Response {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    tokio::spawn(async move {
        let mut marker = marker;
        for (n, event) in events.into_iter().enumerate() {
            if n > 0 && n <= marker_at {
                tokio::time::sleep(stub.chunk_delay).await;
            }
            if tx.send(Ok(Bytes::from(event))).await.is_err() {
                return;
            }
            if n >= marker_at {
                if let Some((event, api, detail)) = marker.take() {
                    stub.record(event, api, detail);
                }
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(tokio_stream_from(rx)))
        .unwrap_or_default()
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

fn sse_event(name: Option<&str>, data: &Value) -> String {
    match name {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// The text of the last user message, whatever shape the API gives it.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(" "),
        Value::Object(map) => ["text", "content", "parts"]
            .iter()
            .filter_map(|k| map.get(*k))
            .map(text_of)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

// ---- fugue's own tools, called through the CLI's MCP client ---------------------

/// The calls of the `MCP=` script, in order: fugue's tool names.
const MCP_SCRIPT: [&str; 4] = ["fugue_exec", "fugue_wait", "fugue_read", "fugue_kill_session"];

/// The session named by `MCP=SESSION` in the latest user text that has one.
fn mcp_session(user_texts: &[String]) -> Option<String> {
    let text = user_texts.iter().rev().find(|t| t.contains("MCP="))?;
    let rest = text.rsplit("MCP=").next()?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "_-".contains(*c))
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The prefix a CLI gives an MCP server's tools (`mcp__fugue__` for Claude
/// Code): whatever comes before `fugue_exec` in the offered tool's name.
fn mcp_prefix(tool_names: &[String]) -> Option<String> {
    tool_names
        .iter()
        .find_map(|name| name.strip_suffix("fugue_exec"))
        .map(str::to_string)
}

/// The call id of script step `step`.
fn mcp_call_id(step: usize) -> String {
    MCP_CALL_IDS[step].to_string()
}

/// What came back for one call of the script: (step, text, is_error).
type McpResult = (usize, String, bool);

/// The next call of the script given the results back so far, with its
/// arguments; `None` when every call has its result.
fn mcp_next(session: &str, results: &[McpResult]) -> Option<(usize, Value)> {
    let step = (0..MCP_SCRIPT.len()).find(|step| !results.iter().any(|(s, ..)| s == step))?;
    // The terminal fugue_exec started, from its result as the model saw it.
    let terminal = results
        .iter()
        .find(|(s, ..)| *s == 0)
        .and_then(|(_, text, _)| terminal_id_in(text))
        .unwrap_or_default();
    let input = match MCP_SCRIPT[step] {
        "fugue_exec" => json!({"command": format!("echo fugue-mcp-said-{session}"), "session": session}),
        // `needs` as a list (the schema's array form): each CLI checks a call
        // against the tool's input schema before it makes it.
        "fugue_wait" => {
            json!({"terminal_id": terminal, "exit": true, "needs": ["permission", "question"], "timeout_ms": 10000})
        }
        "fugue_read" => json!({"terminal_id": terminal}),
        _ => json!({"session": session}),
    };
    Some((step, input))
}

/// The first `terminal_id` value in a tool result's text (its JSON, possibly
/// escaped once more inside a string).
fn terminal_id_in(text: &str) -> Option<String> {
    let after = text.split("terminal_id").nth(1)?;
    let start = after.find(|c: char| c.is_ascii_hexdigit())?;
    let id: String = after[start..]
        .chars()
        .take_while(|c| c.is_ascii_hexdigit() || *c == '-')
        .collect();
    (id.len() >= 8).then_some(id)
}

/// Records each result of the script that came back (once per step).
fn record_mcp_results(stub: &Stub, api: &'static str, results: &[McpResult]) {
    for (step, text, is_error) in results {
        let key = format!("{api}:{step}");
        let mut seen = stub.mcp_seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        stub.record(
            "mcp_result",
            api,
            json!({"tool": MCP_SCRIPT[*step], "text": text, "is_error": is_error}),
        );
    }
}

// ---- Anthropic Messages -------------------------------------------------------

/// A prompt with `MCP=` and fugue's tools offered: the next call of the script,
/// or the last words once every result is back.
fn anthropic_mcp(stub: &Stub, request: &Value, body: &str) -> Option<(Vec<&'static str>, Option<ToolCall>)> {
    let names: Vec<String> = request["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    let session = mcp_session(&texts_of(&request["messages"], "user", "content"))?;
    let prefix = match mcp_prefix(&names) {
        Some(prefix) => prefix,
        // Claude Code 2.1.3xx defers MCP tools: only their names are listed, and
        // the model fetches their schemas with ToolSearch before calling them.
        None if names.iter().any(|n| n == "ToolSearch") => {
            if !body.contains(TOOL_SEARCH_CALL) {
                let select: Vec<String> = MCP_SCRIPT.iter().map(|t| format!("mcp__fugue__{t}")).collect();
                let input = json!({"query": format!("select:{}", select.join(","))});
                stub.record("mcp_call", "anthropic", json!({"tool": "ToolSearch", "input": input}));
                return Some((
                    BEFORE_TOOL.to_vec(),
                    Some(("ToolSearch".into(), TOOL_SEARCH_CALL, input)),
                ));
            }
            "mcp__fugue__".to_string()
        }
        None => return None,
    };
    let results: Vec<McpResult> = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|c| c["type"] == "tool_result")
        .filter_map(|c| {
            let id = c["tool_use_id"].as_str()?;
            let step = (0..MCP_SCRIPT.len()).find(|s| mcp_call_id(*s) == id)?;
            Some((step, text_of(&c["content"]), c["is_error"].as_bool().unwrap_or(false)))
        })
        .collect();
    record_mcp_results(stub, "anthropic", &results);
    let Some((step, input)) = mcp_next(&session, &results) else {
        return Some((AFTER_TOOL.to_vec(), None));
    };
    if step == 0 {
        stub.record(
            "turn_started",
            "anthropic",
            json!({"script": "mcp", "session": session}),
        );
    }
    let name = format!("{prefix}{}", MCP_SCRIPT[step]);
    stub.record(
        "mcp_call",
        "anthropic",
        json!({"tool": MCP_SCRIPT[step], "name": name, "input": input}),
    );
    let id: &'static str = MCP_CALL_IDS[step];
    Some((BEFORE_TOOL.to_vec(), Some((name, id, input))))
}

/// The ids of the `TMUX=` script's Bash calls, one per call.
const TMUX_CALL_IDS: [&str; 34] = [
    "toolu_tmux00",
    "toolu_tmux01",
    "toolu_tmux02",
    "toolu_tmux03",
    "toolu_tmux04",
    "toolu_tmux05",
    "toolu_tmux06",
    "toolu_tmux07",
    "toolu_tmux08",
    "toolu_tmux09",
    "toolu_tmux10",
    "toolu_tmux11",
    "toolu_tmux12",
    "toolu_tmux13",
    "toolu_tmux14",
    "toolu_tmux15",
    "toolu_tmux16",
    "toolu_tmux17",
    "toolu_tmux18",
    "toolu_tmux19",
    "toolu_tmux20",
    "toolu_tmux21",
    "toolu_tmux22",
    "toolu_tmux23",
    "toolu_tmux24",
    "toolu_tmux25",
    "toolu_tmux26",
    "toolu_tmux27",
    "toolu_tmux28",
    "toolu_tmux29",
    "toolu_tmux30",
    "toolu_tmux31",
    "toolu_tmux32",
    "toolu_tmux33",
];

/// Every piece of content of type `kind` in the conversation.
fn contents_of<'a>(request: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(move |c| c["type"] == kind)
}

/// A prompt with `TMUX=APP` and the Bash tool offered: the next call of
/// Claude Code's TUI skill's flow (see the module's doc), or the last words.
fn anthropic_tmux(stub: &Stub, request: &Value) -> Option<(Vec<&'static str>, Option<ToolCall>)> {
    let bash = request["tools"].as_array()?.iter().any(|t| t["name"] == "Bash");
    let users = texts_of(&request["messages"], "user", "content");
    let app: String = users
        .iter()
        .rev()
        .find_map(|t| t.split("TMUX=").nth(1))?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    if !bash || app.is_empty() {
        return None;
    }
    let calls: Vec<String> = contents_of(request, "tool_use")
        .filter(|c| c["id"].as_str().is_some_and(|id| TMUX_CALL_IDS.contains(&id)))
        .filter_map(|c| c["input"]["command"].as_str().map(str::to_string))
        .collect();
    let last_result = contents_of(request, "tool_result")
        .filter(|c| c["tool_use_id"].as_str().is_some_and(|id| TMUX_CALL_IDS.contains(&id)))
        .last()
        .map(|c| text_of(&c["content"]));
    if let Some(text) = &last_result {
        stub.record(
            "tmux_result",
            "anthropic",
            json!({"step": calls.len() - 1, "text": text}),
        );
    }
    let captures = calls.iter().filter(|c| c.contains("capture-pane")).count();
    let ready = last_result
        .as_deref()
        .is_some_and(|t| t.lines().any(|l| l.trim() == "ready-go"));
    let command = match calls.last().map(String::as_str) {
        None => format!("tmux new-session -d -s {app} -x 120 -y 40"),
        // The session is gone: the last words (recorded as `turn_finished`).
        Some(last) if last.contains("kill-session") => return Some((AFTER_TOOL.to_vec(), None)),
        Some(last) if last.contains("new-session") => {
            format!("tmux send-keys -t {app} 'read line; echo \"ready-$line\"' Enter")
        }
        Some(_) if ready || captures >= 30 => format!("tmux kill-session -t {app}"),
        Some(_) => format!("tmux capture-pane -t {app} -p"),
    };
    if calls.is_empty() {
        stub.record("turn_started", "anthropic", json!({"script": "tmux", "app": app}));
    }
    let id = TMUX_CALL_IDS[calls.len().min(TMUX_CALL_IDS.len() - 1)];
    stub.record(
        "tmux_call",
        "anthropic",
        json!({"step": calls.len(), "command": command}),
    );
    Some((
        BEFORE_TOOL.to_vec(),
        Some(("Bash".into(), id, json!({"command": command}))),
    ))
}

/// The ids of the `TEAM=` script's `Agent` calls, its `ToolSearch` and its
/// `SendMessage`.
const TEAM_CALL_IDS: [&str; 4] = ["toolu_team0", "toolu_team1", "toolu_team2", "toolu_team3"];
const TEAM_SEARCH_CALL: &str = "toolu_teamsearch";
const TEAM_MESSAGE_CALL: &str = "toolu_teammessage";

/// A prompt with `TEAM=A,B` and the Agent tool offered: the next teammate's
/// spawn, or the last words once every spawn's result is back.
fn anthropic_team(stub: &Stub, request: &Value) -> Option<(Vec<&'static str>, Option<ToolCall>)> {
    let offers = |name: &str| {
        request["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == name))
    };
    let offered = offers("Agent");
    let users = texts_of(&request["messages"], "user", "content");
    if !users.iter().any(|t| t.contains("TEAM=")) {
        if users.last().is_some_and(|t| t.contains("MSG=hello-")) {
            let text = users.last().cloned().unwrap_or_default();
            stub.record("message_received", "anthropic", json!({"text": text}));
        }
        return None;
    }
    let names: Vec<String> = users
        .iter()
        .find_map(|t| t.split("TEAM=").nth(1))?
        .split(|c: char| c.is_whitespace())
        .next()?
        .split(',')
        .map(|n| {
            n.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .take(TEAM_CALL_IDS.len())
        .collect();
    if !offered || names.is_empty() {
        return None;
    }
    let spawned = contents_of(request, "tool_use")
        .filter(|c| c["id"].as_str().is_some_and(|id| TEAM_CALL_IDS.contains(&id)))
        .count();
    for result in contents_of(request, "tool_result")
        .filter(|c| c["tool_use_id"].as_str().is_some_and(|id| TEAM_CALL_IDS.contains(&id)))
    {
        stub.record("team_result", "anthropic", json!({"text": text_of(&result["content"])}));
    }
    let Some(name) = names.get(spawned) else {
        let body = request["messages"].to_string();
        if body.contains(TEAM_MESSAGE_CALL) {
            return Some((AFTER_TOOL.to_vec(), None));
        }
        if offers("SendMessage") {
            let input = json!({"to": names[0], "message": format!("MSG=hello-{}", names[0])});
            stub.record("team_message", "anthropic", json!({"input": input}));
            return Some((
                BEFORE_TOOL.to_vec(),
                Some(("SendMessage".into(), TEAM_MESSAGE_CALL, input)),
            ));
        }
        if offers("ToolSearch") && !body.contains(TEAM_SEARCH_CALL) {
            let input = json!({"query": "select:SendMessage"});
            return Some((
                BEFORE_TOOL.to_vec(),
                Some(("ToolSearch".into(), TEAM_SEARCH_CALL, input)),
            ));
        }
        return Some((AFTER_TOOL.to_vec(), None));
    };
    if spawned == 0 {
        stub.record("turn_started", "anthropic", json!({"script": "team", "names": names}));
    }
    let input = json!({
        "description": format!("teammate {name}"),
        "prompt": format!("Create a file for me. FILE=teammate-{name}.txt"),
        "name": name,
    });
    stub.record("team_call", "anthropic", json!({"name": name, "input": input}));
    Some((
        BEFORE_TOOL.to_vec(),
        Some(("Agent".into(), TEAM_CALL_IDS[spawned], input)),
    ))
}

/// The call id of the stub's one `fugue_delegate` call.
const DELEGATE_CALL: &str = "toolu_fuguedelegate";
/// What the delegated child is asked (it makes a file, through its own
/// permission prompt).
const DELEGATED_PROMPT: &str = "Create a file for me. FILE=child.txt";

/// A prompt with `DELEGATE=DIR` and fugue's tools offered: one `fugue_delegate`
/// of [`DELEGATED_PROMPT`] in DIR (a worktree named `child`), recorded as
/// `mcp_call`; once its result is back (recorded as `mcp_result`), the last
/// words.
fn anthropic_delegate(stub: &Stub, request: &Value, body: &str) -> Option<(Vec<&'static str>, Option<ToolCall>)> {
    let texts = texts_of(&request["messages"], "user", "content");
    let dir: String = texts
        .iter()
        .rev()
        .find_map(|t| t.split("DELEGATE=").nth(1))?
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let names: Vec<String> = request["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    let name = match names.iter().find(|n| n.ends_with("fugue_delegate")) {
        Some(name) => name.clone(),
        None if names.iter().any(|n| n == "ToolSearch") => {
            if !body.contains(TOOL_SEARCH_CALL) {
                let input = json!({"query": "select:mcp__fugue__fugue_delegate"});
                stub.record("mcp_call", "anthropic", json!({"tool": "ToolSearch", "input": input}));
                return Some((
                    BEFORE_TOOL.to_vec(),
                    Some(("ToolSearch".into(), TOOL_SEARCH_CALL, input)),
                ));
            }
            "mcp__fugue__fugue_delegate".to_string()
        }
        None => return None,
    };
    let result = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .find(|c| c["type"] == "tool_result" && c["tool_use_id"] == DELEGATE_CALL);
    if let Some(result) = result {
        let mut seen = stub.mcp_seen.lock().unwrap_or_else(|e| e.into_inner());
        if !seen.iter().any(|k| k == DELEGATE_CALL) {
            seen.push(DELEGATE_CALL.to_string());
            let detail = json!({"tool": "fugue_delegate", "text": text_of(&result["content"]),
                "is_error": result["is_error"].as_bool().unwrap_or(false)});
            stub.record("mcp_result", "anthropic", detail);
        }
        // A CLI that ran the call as a task (Claude Code) brings its result in
        // a later message of its own: recorded once, as `task_result`.
        let task_result = texts.iter().rev().find(|t| t.contains("final_message"));
        if let Some(text) = task_result.filter(|_| !seen.iter().any(|k| k == "task_result")) {
            seen.push("task_result".to_string());
            stub.record(
                "task_result",
                "anthropic",
                json!({"tool": "fugue_delegate", "text": text}),
            );
        }
        return Some((AFTER_TOOL.to_vec(), None));
    }
    let input = json!({"prompt": DELEGATED_PROMPT, "working_dir": dir, "worktree": "child", "name": "child"});
    stub.record("turn_started", "anthropic", json!({"script": "delegate"}));
    stub.record(
        "mcp_call",
        "anthropic",
        json!({"tool": "fugue_delegate", "name": name, "input": input}),
    );
    Some((BEFORE_TOOL.to_vec(), Some((name, DELEGATE_CALL, input))))
}

/// The call id of the ToolSearch that loads fugue's deferred tools.
const TOOL_SEARCH_CALL: &str = "toolu_fuguesearch";

/// [`mcp_call_id`] of each step, as the `'static` ids a [`ToolCall`] holds.
const MCP_CALL_IDS: [&str; 4] = ["toolu_fugue0", "toolu_fugue1", "toolu_fugue2", "toolu_fugue3"];

fn anthropic_turn(request: &Value, body: &str) -> (Turn, Option<String>) {
    let tool = request["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == "Bash"))
        .map(|_| "Bash".to_string());
    if tool.is_none() {
        return (Turn::Plain, tool);
    }
    (decide(&texts_of(&request["messages"], "user", "content"), body), tool)
}

/// The question Claude Code is asked to put to a person (its AskUserQuestion
/// tool) when the prompt says `ASK=`, and the id of that call.
const QUESTION: &str = "Which colour should the file be?";
const QUESTION_CALL: &str = "toolu_stubq";

/// The ids of the stub's shell calls, one per call in a conversation: Claude
/// Code drops a tool call whose id an earlier one had, and asks again.
const SHELL_CALL_IDS: [&str; 8] = [
    "toolu_stub1",
    "toolu_stub2",
    "toolu_stub3",
    "toolu_stub4",
    "toolu_stub5",
    "toolu_stub6",
    "toolu_stub7",
    "toolu_stub8",
];

/// The id for the next shell call of the conversation in `body` (each earlier
/// call is there twice: its use and its result).
fn shell_call_id(body: &str) -> &'static str {
    let earlier = body.matches("\"toolu_stub").count() / 2;
    SHELL_CALL_IDS[earlier.min(SHELL_CALL_IDS.len() - 1)]
}

/// A tool call the stub makes: tool name, call id, input.
type ToolCall = (String, &'static str, Value);

/// A prompt with `ASK=` and the AskUserQuestion tool offered: ask the question,
/// or, once its answer is back, finish (recording the answer).
fn anthropic_question(stub: &Stub, request: &Value, body: &str) -> Option<(Vec<&'static str>, Option<ToolCall>)> {
    let offered = request["tools"]
        .as_array()?
        .iter()
        .any(|t| t["name"] == "AskUserQuestion");
    let users = texts_of(&request["messages"], "user", "content");
    if !offered || !users.iter().any(|t| t.contains("ASK=")) {
        return None;
    }
    if body.contains(&format!("\"tool_use_id\":\"{QUESTION_CALL}\"")) {
        let answer = request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .find(|c| c["tool_use_id"] == QUESTION_CALL)
            .map(|c| text_of(&c["content"]))
            .unwrap_or_default();
        stub.record("question_answered", "anthropic", json!({"answer": answer}));
        return Some((AFTER_TOOL.to_vec(), None));
    }
    stub.record("turn_started", "anthropic", json!({"question": QUESTION}));
    let input = json!({"questions": [{
        "question": QUESTION, "header": "Colour", "multiSelect": false,
        "options": [{"label": "Blue", "description": "A blue file"},
                    {"label": "Green", "description": "A green file"}]}]});
    Some((
        BEFORE_TOOL.to_vec(),
        Some(("AskUserQuestion".into(), QUESTION_CALL, input)),
    ))
}

async fn anthropic(stub: Arc<Stub>, request: &Value, body: &str) -> Response {
    let model = request["model"].as_str().unwrap_or("claude-stub").to_string();
    let streaming = request["stream"].as_bool().unwrap_or(false);
    let scripted = match anthropic_delegate(&stub, request, body)
        .or_else(|| anthropic_mcp(&stub, request, body))
        .or_else(|| anthropic_tmux(&stub, request))
        .or_else(|| anthropic_team(&stub, request))
    {
        Some((words, call)) => Some((words, call, "mcp_call_sent")),
        None => anthropic_question(&stub, request, body).map(|(words, call)| (words, call, "question_asked")),
    };
    let (words, tool_call, recorded) = match scripted {
        Some((words, call, sent)) => {
            let after = match &call {
                Some(_) if sent == "question_asked" => (sent, "anthropic", json!({"question": QUESTION})),
                Some((name, ..)) => (sent, "anthropic", json!({"name": name})),
                None => ("turn_finished", "anthropic", Value::Null),
            };
            (words, call, Some(after))
        }
        None => {
            let (turn, tool) = anthropic_turn(request, body);
            let (words, call) = match &turn {
                Turn::Plain => (vec![PLAIN_ANSWER], None),
                Turn::AskTool { command, .. } => (
                    BEFORE_TOOL.to_vec(),
                    tool.map(|name| (name, shell_call_id(body), json!({"command": command}))),
                ),
                Turn::Finish => (AFTER_TOOL.to_vec(), None),
            };
            (words, call, record_turn(&stub, "anthropic", &turn))
        }
    };
    let stop_reason = if tool_call.is_some() { "tool_use" } else { "end_turn" };
    if !streaming {
        let mut content = vec![json!({"type": "text", "text": words.concat()})];
        if let Some((name, id, input)) = &tool_call {
            content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
        }
        return json_response(
            StatusCode::OK,
            json!({"id": "msg_stub", "type": "message", "role": "assistant", "model": model,
                   "content": content, "stop_reason": stop_reason, "stop_sequence": null,
                   "usage": {"input_tokens": 12, "output_tokens": 8}}),
        );
    }
    let mut events = vec![sse_event(
        Some("message_start"),
        &json!({"type": "message_start", "message": {"id": "msg_stub", "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 12, "output_tokens": 1}}}),
    )];
    events.push(sse_event(
        Some("content_block_start"),
        &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ));
    for word in &words {
        events.push(sse_event(
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}}),
        ));
    }
    events.push(sse_event(
        Some("content_block_stop"),
        &json!({"type": "content_block_stop", "index": 0}),
    ));
    if let Some((name, id, input)) = &tool_call {
        events.push(sse_event(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": 1,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        ));
        events.push(sse_event(
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        ));
        events.push(sse_event(
            Some("content_block_stop"),
            &json!({"type": "content_block_stop", "index": 1}),
        ));
    }
    let marker_at = events.len() - 1;
    events.push(sse_event(
        Some("message_delta"),
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": 20}}),
    ));
    events.push(sse_event(Some("message_stop"), &json!({"type": "message_stop"})));
    sse(stub.clone(), events, marker_at, recorded)
}

/// Records the start of a turn now; returns what to record once it is streamed.
fn record_turn(stub: &Stub, api: &'static str, turn: &Turn) -> Option<(&'static str, &'static str, Value)> {
    match turn {
        Turn::Plain => None,
        Turn::AskTool { command, files } => {
            stub.record("turn_started", api, json!({"command": command, "files": files}));
            Some(("tool_requested", api, json!({"command": command})))
        }
        Turn::Finish => {
            stub.record("tool_result", api, Value::Null);
            Some(("turn_finished", api, Value::Null))
        }
    }
}

// ---- OpenAI Responses (Codex) --------------------------------------------------

/// The shell tool Codex offers, and the arguments that make it ask a person.
fn codex_tool_call(request: &Value, command: &str) -> Option<(String, Value)> {
    let tools = request["tools"].as_array()?;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let why = "to create the file the user asked for";
    if names.contains(&"shell_command") {
        return Some((
            "shell_command".into(),
            json!({"command": command, "sandbox_permissions": "require_escalated", "justification": why}),
        ));
    }
    if names.contains(&"exec_command") {
        return Some((
            "exec_command".into(),
            json!({"cmd": command, "sandbox_permissions": "require_escalated", "justification": why}),
        ));
    }
    if names.contains(&"shell") {
        return Some((
            "shell".into(),
            json!({"command": ["bash", "-lc", command], "sandbox_permissions": "require_escalated", "justification": why}),
        ));
    }
    None
}

/// Codex's side of the `MCP=` script. Codex 0.169 offers an MCP server's tools
/// as one tool of type `namespace` (`mcp__fugue`) holding the functions, and a
/// call names the function and its namespace. Returns the next call (function
/// item fields), `Some(None)` once every result is back, `None` without a script.
fn openai_mcp(stub: &Stub, request: &Value) -> Option<Option<Value>> {
    let tools = request["tools"].as_array()?;
    let namespace = tools.iter().find(|t| {
        t["type"] == "namespace"
            && t["tools"]
                .as_array()
                .is_some_and(|fs| fs.iter().any(|f| f["name"] == "fugue_exec"))
    })?;
    let namespace = namespace["name"].as_str()?.to_string();
    let session = mcp_session(&texts_of(&request["input"], "user", "content"))?;
    let results: Vec<McpResult> = request["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "function_call_output")
        .filter_map(|item| {
            let id = item["call_id"].as_str()?;
            let step = (0..MCP_SCRIPT.len()).find(|s| format!("call_fugue{s}") == id)?;
            let output = &item["output"];
            let text = match output {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Some((step, text, output["success"] == false))
        })
        .collect();
    record_mcp_results(stub, "openai", &results);
    let Some((step, input)) = mcp_next(&session, &results) else {
        return Some(None);
    };
    if step == 0 {
        stub.record("turn_started", "openai", json!({"script": "mcp", "session": session}));
    }
    stub.record(
        "mcp_call",
        "openai",
        json!({"tool": MCP_SCRIPT[step], "namespace": namespace, "input": input}),
    );
    Some(Some(
        json!({"type": "function_call", "id": format!("fc_fugue{step}"), "call_id": format!("call_fugue{step}"),
        "status": "completed", "name": MCP_SCRIPT[step], "namespace": namespace, "arguments": input.to_string()}),
    ))
}

async fn openai(stub: Arc<Stub>, request: &Value, body: &str) -> Response {
    let scripted = openai_mcp(&stub, request);
    let turn = match codex_tool_call(request, "") {
        None => Turn::Plain,
        Some(_) => decide(&texts_of(&request["input"], "user", "content"), body),
    };
    let call = match &turn {
        Turn::AskTool { command, .. } => codex_tool_call(request, command),
        _ => None,
    };
    let words: Vec<&str> = match turn {
        Turn::Plain => vec![PLAIN_ANSWER],
        Turn::AskTool { .. } => BEFORE_TOOL.to_vec(),
        Turn::Finish => AFTER_TOOL.to_vec(),
    };
    let event = |data: Value| sse_event(data["type"].as_str(), &data);
    let mut events = vec![event(
        json!({"type": "response.created", "response": {"id": "resp_stub", "status": "in_progress"}}),
    )];
    events.push(event(json!({"type": "response.output_item.added", "output_index": 0,
        "item": {"type": "message", "id": "msg_stub", "role": "assistant", "status": "in_progress", "content": []}})));
    for word in &words {
        events.push(event(
            json!({"type": "response.output_text.delta", "item_id": "msg_stub",
            "output_index": 0, "content_index": 0, "delta": word}),
        ));
    }
    events.push(event(json!({"type": "response.output_item.done", "output_index": 0,
        "item": {"type": "message", "id": "msg_stub", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": words.concat(), "annotations": []}]}})));
    let marker = match scripted {
        Some(Some(item)) => {
            let sent = ("mcp_call_sent", "openai", json!({"name": item["name"]}));
            events.push(event(
                json!({"type": "response.output_item.done", "output_index": 1, "item": item}),
            ));
            Some(sent)
        }
        Some(None) => Some(("turn_finished", "openai", Value::Null)),
        None => {
            if let (Turn::AskTool { .. }, Some((name, arguments))) = (&turn, &call) {
                events.push(event(json!({"type": "response.output_item.done", "output_index": 1,
                    "item": {"type": "function_call", "id": "fc_stub", "call_id": "call_stub1", "status": "completed",
                             "name": name, "arguments": arguments.to_string()}})));
            }
            record_turn(&stub, "openai", &turn)
        }
    };
    let marker_at = events.len() - 1;
    events.push(event(
        json!({"type": "response.completed", "response": {"id": "resp_stub", "status": "completed",
        "usage": {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 8, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 20}}}),
    ));
    sse(stub.clone(), events, marker_at, marker)
}

// ---- OpenAI Chat Completions (Qwen Code, opencode, aider) ----------------------

/// The shell tool a Chat Completions client offers, and the arguments for
/// running `command` with it.
fn chat_shell_call(request: &Value, command: &str) -> Option<(String, Value)> {
    let tools = request["tools"].as_array()?;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    let why = "Create the file the user asked for.";
    if names.contains(&"run_shell_command") {
        return Some((
            "run_shell_command".into(),
            json!({"command": command, "description": why, "is_background": false}),
        ));
    }
    if names.contains(&"bash") {
        return Some(("bash".into(), json!({"command": command, "description": why})));
    }
    None
}

async fn chat_completions(stub: Arc<Stub>, request: &Value, body: &str) -> Response {
    let model = request["model"].as_str().unwrap_or("gpt-stub").to_string();
    let users = texts_of(&request["messages"], "user", "content");
    let turn = match chat_shell_call(request, "") {
        Some(_) => decide(&users, body),
        // A client without tools (aider) runs what a fenced shell block says.
        None if users.last().is_some_and(|t| t.contains("FILE=")) => decide(&users, body),
        None => Turn::Plain,
    };
    let call = match &turn {
        Turn::AskTool { command, .. } => chat_shell_call(request, command),
        _ => None,
    };
    let fenced;
    let words: Vec<&str> = match &turn {
        Turn::Plain => vec![PLAIN_ANSWER],
        Turn::AskTool { command, .. } if call.is_none() => {
            fenced = format!("\n\n```bash\n{command}\n```\n");
            let mut words = BEFORE_TOOL.to_vec();
            words.push(&fenced);
            words
        }
        Turn::AskTool { .. } => BEFORE_TOOL.to_vec(),
        Turn::Finish => AFTER_TOOL.to_vec(),
    };
    let finish = if call.is_some() { "tool_calls" } else { "stop" };
    let usage = json!({"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20});
    if !request["stream"].as_bool().unwrap_or(false) {
        let mut message = json!({"role": "assistant", "content": words.concat()});
        if let Some((name, arguments)) = &call {
            message["tool_calls"] = json!([{"id": "call_stub1", "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}}]);
        }
        let recorded = record_turn(&stub, "chat", &turn);
        if let Some((event, api, detail)) = recorded {
            stub.record(event, api, detail);
        }
        return json_response(
            StatusCode::OK,
            json!({"id": "chatcmpl-stub", "object": "chat.completion", "created": unix_ms() / 1000,
                   "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                   "usage": usage}),
        );
    }
    let chunk = |delta: Value, finish: Option<&str>| {
        let chunk = json!({"id": "chatcmpl-stub", "object": "chat.completion.chunk",
            "created": unix_ms() / 1000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        sse_event(None, &chunk)
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    events.extend(words.iter().map(|w| chunk(json!({"content": w}), None)));
    if let Some((name, arguments)) = &call {
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_stub1", "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}}]}),
            None,
        ));
    }
    events.push(chunk(json!({}), Some(finish)));
    let marker_at = events.len() - 1;
    let usage_chunk = json!({"id": "chatcmpl-stub", "object": "chat.completion.chunk",
        "created": unix_ms() / 1000, "model": model, "choices": [], "usage": usage});
    events.push(sse_event(None, &usage_chunk));
    events.push("data: [DONE]\n\n".to_string());
    sse(stub.clone(), events, marker_at, record_turn(&stub, "chat", &turn))
}

// ---- Gemini generateContent -----------------------------------------------------

/// Gemini's side of the `MCP=` script: the next function call (with the name the
/// CLI gave the tool), or `None` when there is no script or it is done.
fn gemini_mcp(stub: &Stub, request: &Value) -> Option<Option<(String, Value)>> {
    let names: Vec<String> = request["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t["functionDeclarations"].as_array())
        .flatten()
        .filter_map(|d| d["name"].as_str().map(str::to_string))
        .collect();
    let prefix = mcp_prefix(&names)?;
    let session = mcp_session(&texts_of(&request["contents"], "user", "parts"))?;
    let results: Vec<McpResult> = request["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["parts"].as_array())
        .flatten()
        .filter_map(|part| {
            let response = part.get("functionResponse")?;
            let name = response["name"].as_str()?;
            let step = MCP_SCRIPT.iter().position(|tool| name.ends_with(tool))?;
            let is_error = response["response"].get("error").is_some();
            Some((step, response["response"].to_string(), is_error))
        })
        .collect();
    record_mcp_results(stub, "gemini", &results);
    let Some((step, input)) = mcp_next(&session, &results) else {
        return Some(None);
    };
    if step == 0 {
        stub.record("turn_started", "gemini", json!({"script": "mcp", "session": session}));
    }
    let name = format!("{prefix}{}", MCP_SCRIPT[step]);
    stub.record(
        "mcp_call",
        "gemini",
        json!({"tool": MCP_SCRIPT[step], "name": name, "input": input}),
    );
    Some(Some((name, input)))
}

async fn gemini(stub: Arc<Stub>, request: &Value, body: &str, streaming: bool) -> Response {
    let scripted = match streaming {
        true => gemini_mcp(&stub, request),
        false => None,
    };
    let offers_shell = request["tools"].as_array().is_some_and(|tools| {
        tools.iter().any(|t| {
            t["functionDeclarations"]
                .as_array()
                .is_some_and(|f| f.iter().any(|d| d["name"] == "run_shell_command"))
        })
    });
    let wants_json = request["generationConfig"]["responseMimeType"] == "application/json";
    let turn = match offers_shell {
        false => Turn::Plain,
        true => decide(&texts_of(&request["contents"], "user", "parts"), body),
    };
    let usage = json!({"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20});
    let chunk = |parts: Value, finish: Option<&str>| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(reason) = finish {
            candidate["finishReason"] = json!(reason);
        }
        json!({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-stub"})
    };
    if scripted.is_none() && (!streaming || matches!(turn, Turn::Plain)) {
        // Side requests: "who speaks next" and similar checks want JSON back.
        let text = if wants_json {
            json!({"reasoning": "The model finished its answer.", "next_speaker": "user"}).to_string()
        } else {
            PLAIN_ANSWER.to_string()
        };
        let body = chunk(json!([{"text": text}]), Some("STOP"));
        if streaming {
            return sse(stub, vec![sse_event(None, &body)], 0, None);
        }
        return json_response(StatusCode::OK, body);
    }
    let words: Vec<&str> = match &turn {
        Turn::AskTool { .. } => BEFORE_TOOL.to_vec(),
        _ => AFTER_TOOL.to_vec(),
    };
    let mut events: Vec<String> = words
        .iter()
        .map(|w| sse_event(None, &chunk(json!([{"text": w}]), None)))
        .collect();
    if let Some(call) = scripted {
        let (last, marker) = match call {
            Some((name, args)) => (
                chunk(json!([{"functionCall": {"name": name, "args": args}}]), Some("STOP")),
                ("mcp_call_sent", "gemini", json!({"name": name})),
            ),
            None => (
                chunk(json!([{"text": " "}]), Some("STOP")),
                ("turn_finished", "gemini", Value::Null),
            ),
        };
        events.push(sse_event(None, &last));
        let marker_at = events.len() - 1;
        return sse(stub.clone(), events, marker_at, Some(marker));
    }
    let last_chunk = match &turn {
        Turn::AskTool { command, .. } => chunk(
            json!([{"functionCall": {"name": "run_shell_command",
                "args": {"command": command, "description": "Create the file the user asked for."}}}]),
            Some("STOP"),
        ),
        _ => chunk(json!([{"text": " "}]), Some("STOP")),
    };
    events.push(sse_event(None, &last_chunk));
    let marker_at = events.len() - 1;
    sse(stub.clone(), events, marker_at, record_turn(&stub, "gemini", &turn))
}
