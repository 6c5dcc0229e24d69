//! fugue's own REST API: what the CLI does, over HTTP, with the same views as the
//! CLI's `--json` and the MCP tools, and the daemon's error codes.

use crate::error::{ApiError, ApiResult, JsonBody, QueryParams};
use crate::AppState;
use axum::extract::{Path, State};
use axum::Json;
use fugue_client::protocol::{
    AgentState, Attention, CaptureWhat, EnvVar, MatchOn, PaneSize, ReadMode, RestartPolicy, SpawnSpec, WaitUntil,
};
use fugue_client::views::{CaptureView, DaemonView, OverviewView, PaneView, ReadView, SessionView, WaitView};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The longest wait one request may ask for.
const MAX_WAIT_MS: u64 = 600_000;

#[derive(Debug, Serialize, JsonSchema)]
pub struct Done {
    pub ok: bool,
}

const DONE: Json<Done> = Json(Done { ok: true });

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NewSession {
    pub name: String,
    /// Absolute directory; the daemon's when absent.
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Rename {
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionFilter {
    /// Only this session's panes.
    pub session: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NewPane {
    pub session: String,
    /// Program and arguments. Empty: the user's shell.
    #[serde(default)]
    pub command: Vec<String>,
    /// Run through the user's shell (default), so it stays when the command ends.
    #[serde(default = "yes")]
    pub shell: bool,
    pub cwd: Option<String>,
    pub title: Option<String>,
    pub purpose: Option<String>,
    pub cols: Option<u16>,
    pub rows: Option<u16>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `never` (default), `on-failure` or `always`.
    pub restart: Option<String>,
    pub max_restarts: Option<u32>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Title {
    pub title: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Kill {
    /// Signal name or number (default TERM, escalating to KILL).
    pub signal: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Write {
    pub text: String,
    /// Send as a paste (bracketed when the program asked for it).
    #[serde(default)]
    pub paste: bool,
    /// Press Enter afterwards.
    #[serde(default)]
    pub enter: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Keys {
    /// Key names: `Enter`, `C-c`, `Up`, `F5`, ...
    pub keys: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Read {
    /// Text lines to return (default 200).
    pub lines: Option<u32>,
    /// Only output after this byte offset (a previous read's `next_offset`).
    pub since: Option<u64>,
    /// The raw bytes (lossily as UTF-8) instead of the text view.
    #[serde(default)]
    pub raw: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Capture {
    /// Include the scrollback above the screen.
    #[serde(default)]
    pub scrollback: bool,
    /// First line (0: top of the screen, negative: scrollback).
    pub start: Option<i64>,
    /// Last line, inclusive.
    pub end: Option<i64>,
    /// Colours and attributes as SGR sequences.
    #[serde(default)]
    pub ansi: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Wait {
    /// A regular expression, matched within single lines of output.
    pub pattern: Option<String>,
    /// Match against the visible screen instead of the output.
    #[serde(default)]
    pub on_screen: bool,
    /// Search output from this offset on.
    pub since: Option<u64>,
    /// The process exited.
    #[serde(default)]
    pub exit: bool,
    /// No output for this many milliseconds.
    pub idle_ms: Option<u64>,
    /// The agent CLI reaches one of these states, separated by `|` or `,`:
    /// waiting_for_permission, waiting_for_answer, busy, idle, starting, unknown, exited.
    pub agent_state: Option<String>,
    /// The agent CLI needs a person for one of these reasons, separated by `|` or
    /// `,`: permission, question, finished_unseen, or any.
    pub needs: Option<String>,
    /// Give up after this many milliseconds (at most 600000).
    pub timeout_ms: u64,
}

fn env_list(env: BTreeMap<String, String>) -> Vec<EnvVar> {
    env.into_iter().map(|(name, value)| EnvVar { name, value }).collect()
}

pub async fn daemon(State(state): State<AppState>) -> ApiResult<Json<DaemonView>> {
    let info = state.daemon.get().await?.daemon_status().await?;
    Ok(Json(DaemonView::from(&info)))
}

pub async fn sessions(State(state): State<AppState>) -> ApiResult<Json<Vec<SessionView>>> {
    let list = state.daemon.get().await?.list_sessions().await?;
    Ok(Json(list.iter().map(SessionView::from).collect()))
}

pub async fn create_session(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<NewSession>,
) -> ApiResult<Json<SessionView>> {
    let cwd = body.cwd.as_deref().map(std::path::Path::new);
    let info = state
        .daemon
        .get()
        .await?
        .create_session(&body.name, cwd, env_list(body.env))
        .await?;
    Ok(Json(SessionView::from(&info)))
}

pub async fn destroy_session(
    State(state): State<AppState>,
    Path(session): Path<String>,
) -> ApiResult<Json<SessionView>> {
    let info = state.daemon.get().await?.destroy_session(&session).await?;
    Ok(Json(SessionView::from(&info)))
}

pub async fn rename_session(
    State(state): State<AppState>,
    Path(session): Path<String>,
    JsonBody(body): JsonBody<Rename>,
) -> ApiResult<Json<SessionView>> {
    let (info, _old) = state.daemon.get().await?.rename_session(&session, &body.name).await?;
    Ok(Json(SessionView::from(&info)))
}

pub async fn panes(
    State(state): State<AppState>,
    QueryParams(filter): QueryParams<SessionFilter>,
) -> ApiResult<Json<Vec<PaneView>>> {
    let list = state.daemon.get().await?.list_panes(filter.session.as_deref()).await?;
    Ok(Json(list.iter().map(PaneView::from).collect()))
}

pub async fn overview(
    State(state): State<AppState>,
    QueryParams(filter): QueryParams<SessionFilter>,
) -> ApiResult<Json<Vec<OverviewView>>> {
    let list = state.daemon.get().await?.overview(filter.session.as_deref()).await?;
    Ok(Json(list.iter().map(OverviewView::from).collect()))
}

pub async fn create_pane(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<NewPane>,
) -> ApiResult<Json<PaneView>> {
    let mut spec = SpawnSpec::new(body.session);
    let mut command = body.command.into_iter();
    spec.command = command.next();
    spec.args = command.collect();
    spec.shell = body.shell;
    spec.cwd = body.cwd;
    spec.title = body.title;
    spec.purpose = body.purpose;
    spec.env = env_list(body.env);
    spec.size = match (body.cols, body.rows) {
        (Some(cols), Some(rows)) => Some(PaneSize { cols, rows }),
        (None, None) => None,
        _ => return Err(ApiError::invalid("give both cols and rows, or neither")),
    };
    spec.restart = match body.restart.as_deref() {
        Some(policy) => RestartPolicy::parse(policy).map_err(ApiError::invalid)?,
        None => RestartPolicy::Never,
    };
    spec.max_restarts = body.max_restarts;
    let info = state.daemon.get().await?.create_pane(spec).await?;
    Ok(Json(PaneView::from(&info)))
}

pub async fn pane(State(state): State<AppState>, Path(pane): Path<String>) -> ApiResult<Json<PaneView>> {
    let info = state.daemon.get().await?.pane_status(&pane).await?;
    Ok(Json(PaneView::from(&info)))
}

pub async fn release_pane(State(state): State<AppState>, Path(pane): Path<String>) -> ApiResult<Json<Done>> {
    state.daemon.get().await?.release_pane(&pane).await?;
    Ok(DONE)
}

pub async fn rename_pane(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Title>,
) -> ApiResult<Json<PaneView>> {
    let info = state.daemon.get().await?.rename_pane(&pane, &body.title).await?;
    Ok(Json(PaneView::from(&info)))
}

pub async fn kill_pane(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Kill>,
) -> ApiResult<Json<PaneView>> {
    let info = state
        .daemon
        .get()
        .await?
        .kill_pane(&pane, body.signal.as_deref())
        .await?;
    Ok(Json(PaneView::from(&info)))
}

pub async fn write(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Write>,
) -> ApiResult<Json<Done>> {
    let client = state.daemon.get().await?;
    match body.paste {
        true => client.paste(&pane, body.text.as_bytes()).await?,
        false => client.write_input(&pane, body.text.as_bytes()).await?,
    }
    if body.enter {
        client.send_keys(&pane, &["Enter".to_string()]).await?;
    }
    Ok(DONE)
}

pub async fn keys(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Keys>,
) -> ApiResult<Json<Done>> {
    state.daemon.get().await?.send_keys(&pane, &body.keys).await?;
    Ok(DONE)
}

pub async fn read(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    QueryParams(query): QueryParams<Read>,
) -> ApiResult<Json<ReadView>> {
    let mode = match query.raw {
        true => ReadMode::Raw {
            since: query.since,
            max_bytes: None,
        },
        false => ReadMode::Text {
            lines: query.lines.unwrap_or(200),
            since: query.since,
        },
    };
    let chunk = state.daemon.get().await?.read_output(&pane, mode).await?;
    let (text, lines) = match query.raw {
        true => (String::from_utf8_lossy(&chunk.data).into_owned(), None),
        false => (chunk.lines.join("\n"), Some(chunk.lines.clone())),
    };
    Ok(Json(ReadView::new(&chunk, text, lines)))
}

pub async fn capture(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    QueryParams(query): QueryParams<Capture>,
) -> ApiResult<Json<CaptureView>> {
    let what = match query.scrollback {
        true => CaptureWhat::All,
        false => CaptureWhat::Screen,
    };
    let capture = state
        .daemon
        .get()
        .await?
        .capture(&pane, what, (query.start, query.end), query.ansi, false)
        .await?;
    Ok(Json(CaptureView::from(capture)))
}

pub async fn wait(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Wait>,
) -> ApiResult<Json<WaitView>> {
    if body.timeout_ms == 0 || body.timeout_ms > MAX_WAIT_MS {
        return Err(ApiError::invalid(format!(
            "timeout_ms must be 1-{MAX_WAIT_MS}, got {}",
            body.timeout_ms
        )));
    }
    let agent_states = body
        .agent_state
        .as_deref()
        .map(AgentState::parse_list)
        .transpose()
        .map_err(ApiError::invalid)?;
    let agent_needs = body
        .needs
        .as_deref()
        .map(Attention::parse_list)
        .transpose()
        .map_err(ApiError::invalid)?;
    let (agent_states, agent_needs) = (agent_states.unwrap_or_default(), agent_needs.unwrap_or_default());
    if body.pattern.is_none()
        && !body.exit
        && body.idle_ms.is_none()
        && agent_states.is_empty()
        && agent_needs.is_empty()
    {
        return Err(ApiError::invalid(
            "wait for something: pattern, exit, idle_ms, agent_state or needs",
        ));
    }
    let until = WaitUntil {
        exit: body.exit,
        pattern: body.pattern,
        on: match body.on_screen {
            true => MatchOn::Screen,
            false => MatchOn::Output,
        },
        since: body.since,
        idle_ms: body.idle_ms,
        agent_states,
        agent_needs,
    };
    let outcome = state
        .daemon
        .get()
        .await?
        .wait_for(&pane, until, Duration::from_millis(body.timeout_ms))
        .await?;
    Ok(Json(WaitView::from(outcome)))
}
