//! fugue's own REST API: what the CLI does, over HTTP, with the same views as the
//! CLI's `--json` and the MCP tools, and the daemon's error codes.

use crate::error::{ApiError, ApiResult, JsonBody, QueryParams};
use crate::AppState;
use axum::extract::{Path, State};
use axum::Json;
use fugue_client::protocol::{CaptureWhat, EnvVar, PaneSize, PermissionAnswer, ReadMode, RestartPolicy, SpawnSpec};
use fugue_client::views::{
    AnsweredView, CaptureView, DaemonView, OverviewView, PaneView, ReadView, SessionView, WaitView, WokenView,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// Run the command in a new container of an image on the web server's
    /// machine's engine, as `fugue run --sandbox` (docs/remote.md, "Sandboxed
    /// panes"); not when the server serves a daemon elsewhere.
    pub sandbox: Option<fugue_client::sandbox::Asked>,
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
pub struct GrepQuery {
    /// A regular expression, matched within single lines.
    pub pattern: String,
    /// Only this session's panes (default: every session's).
    pub session: Option<String>,
    /// Most matching lines returned (1 to 1000; default 200).
    pub max_matches: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Diff {
    /// Only files with lines added and removed, no hunks.
    #[serde(default)]
    pub stat: bool,
    /// `files` (default: JSON, each file's hunks) or `patch`: the body is a
    /// git patch (`text/x-diff`) that `git apply` takes on the base commit.
    #[serde(default)]
    pub format: fugue_client::diff::DiffFormat,
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
    /// What to wait for (the same fields as the MCP bridge's fugue_wait);
    /// `timeout_ms` at most 600000 here.
    #[serde(flatten)]
    pub wait: fugue_client::ops::WaitFor,
    /// Earlier name of `"on": "screen"`.
    #[serde(default)]
    pub on_screen: bool,
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
    let rows = state
        .daemon
        .get()
        .await?
        .overview_rows(filter.session.as_deref())
        .await?;
    Ok(Json(rows))
}

/// How long the fleet's overview is served from memory: asking every
/// endpoint is the costliest question this server asks, and a page asks often.
const FLEET_FRESH: std::time::Duration = std::time::Duration::from_secs(5);

/// The fleet's panes by endpoint; one asking at a time, its answer reused for
/// [`FLEET_FRESH`] (every page shares it).
pub async fn fleet(State(state): State<AppState>) -> ApiResult<Json<fugue_client::views::FleetView>> {
    let mut last = state.fleet.lock().await;
    if let Some((at, view)) = last.as_ref() {
        if at.elapsed() < FLEET_FRESH {
            return Ok(Json(view.clone()));
        }
    }
    let view = fugue_client::fleet::overview()
        .await
        .map_err(|why| ApiError::new(axum::http::StatusCode::BAD_REQUEST, "invalid_argument", why))?;
    *last = Some((std::time::Instant::now(), view.clone()));
    Ok(Json(view))
}

pub async fn grep(
    State(state): State<AppState>,
    QueryParams(query): QueryParams<GrepQuery>,
) -> ApiResult<Json<fugue_client::views::GrepView>> {
    let client = state.daemon.get().await?;
    let found = fugue_client::ops::grep(&client, &query.pattern, query.session.as_deref(), query.max_matches).await?;
    Ok(Json(fugue_client::views::GrepView::from(&found)))
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
    if let Some(sandbox) = body.sandbox {
        if state.defaults.remote {
            return Err(ApiError::invalid(
                "a sandbox runs on this machine's container engine, and this server serves a daemon elsewhere",
            ));
        }
        let program = spec.command.as_deref().and_then(|c| c.split_whitespace().next());
        let sandbox = fugue_client::sandbox::resolve(sandbox, program).map_err(ApiError::invalid)?;
        spec = fugue_client::sandbox::sandboxed(&sandbox, spec).await?;
    }
    let info = state.daemon.get().await?.create_pane(spec).await?;
    Ok(Json(PaneView::from(&info)))
}

pub async fn pane(State(state): State<AppState>, Path(pane): Path<String>) -> ApiResult<Json<PaneView>> {
    let info = state.daemon.get().await?.pane_status(&pane).await?;
    Ok(Json(PaneView::from(&info)))
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Release {
    /// Also remove the pane's worktree and branch with whatever work they hold.
    #[serde(default)]
    pub discard: bool,
}

/// A pane released, and what became of its worktree if it had one.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Released {
    pub ok: bool,
    /// The pane's worktree directory.
    pub worktree: Option<String>,
    /// `removed`, `kept` (it holds work; see `holds`) or `gone` (deleted outside fugue).
    pub outcome: Option<String>,
    pub holds: Vec<String>,
    /// Teardown commands that failed before the worktree was removed.
    pub notes: Vec<String>,
}

/// Releases a pane as `fugue release [--discard]` does: a worktree holding
/// work is kept unless `discard`.
pub async fn release_pane(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    QueryParams(query): QueryParams<Release>,
) -> ApiResult<Json<Released>> {
    let client = state.daemon.get().await?;
    let released = fugue_client::worktree::release_pane(&client, &pane, query.discard).await?;
    let mut body = Released {
        ok: true,
        worktree: None,
        outcome: None,
        holds: Vec::new(),
        notes: Vec::new(),
    };
    if let Some((record, released)) = released {
        body.worktree = Some(record.path);
        body.outcome = Some(released.outcome().into());
        body.holds = released.holds().to_vec();
        body.notes = released.notes().to_vec();
    }
    Ok(Json(body))
}

pub async fn rename_pane(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Title>,
) -> ApiResult<Json<PaneView>> {
    let info = state.daemon.get().await?.rename_pane(&pane, &body.title).await?;
    Ok(Json(PaneView::from(&info)))
}

pub async fn interrupt(State(state): State<AppState>, Path(pane): Path<String>) -> ApiResult<Json<Done>> {
    state.daemon.get().await?.interrupt(&pane).await?;
    Ok(DONE)
}

pub async fn agent(
    State(state): State<AppState>,
    Path(pane): Path<String>,
) -> ApiResult<Json<fugue_client::views::AgentStateView>> {
    let info = state.daemon.get().await?.agent_status(&pane).await?;
    Ok(Json(fugue_client::views::AgentStateView::from(&info)))
}

pub async fn resume(State(state): State<AppState>, Path(pane): Path<String>) -> ApiResult<Json<PaneView>> {
    let info = state.daemon.get().await?.resume_agent(&pane).await?;
    Ok(Json(PaneView::from(&info)))
}

pub async fn hibernate(State(state): State<AppState>, Path(pane): Path<String>) -> ApiResult<Json<PaneView>> {
    let info = state.daemon.get().await?.hibernate(&pane).await?;
    Ok(Json(PaneView::from(&info)))
}

pub async fn wake(State(state): State<AppState>, Path(pane): Path<String>) -> ApiResult<Json<WokenView>> {
    let woken = state.daemon.get().await?.wake(&pane).await?;
    Ok(Json(WokenView::from(&woken)))
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

/// A prompt for the agent CLI in a pane.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Prompt {
    pub text: String,
    /// An idempotency key: the same key again sends nothing and returns the
    /// first send's receipt.
    #[serde(default)]
    pub key: Option<String>,
}

pub async fn prompt(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Prompt>,
) -> ApiResult<Json<fugue_client::ops::PromptSent>> {
    let client = state.daemon.get().await?;
    Ok(Json(
        fugue_client::ops::send_prompt(&client, &pane, &body.text, body.key.as_deref()).await?,
    ))
}

/// An answer to an agent's permission prompt, by the id a person was shown.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Answer {
    /// The `prompt_id` of the prompt shown (the overview's `agent.prompt_id`):
    /// the answer is sent only while that same prompt is on screen.
    pub prompt_id: String,
}

pub async fn approve(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Answer>,
) -> ApiResult<Json<AnsweredView>> {
    answer(state, &pane, &body.prompt_id, PermissionAnswer::Approve).await
}

pub async fn deny(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Answer>,
) -> ApiResult<Json<AnsweredView>> {
    answer(state, &pane, &body.prompt_id, PermissionAnswer::Deny).await
}

async fn answer(
    state: AppState,
    pane: &str,
    prompt_id: &str,
    answer: PermissionAnswer,
) -> ApiResult<Json<AnsweredView>> {
    let client = state.daemon.get().await?;
    let answered = client.answer_permission(pane, prompt_id, answer).await?;
    Ok(Json(AnsweredView::from(&answered)))
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

/// A pane's changes in its worktree: git runs in this process, the user's.
/// As JSON, or with `format=patch` a git patch (`text/x-diff`).
pub async fn diff(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    QueryParams(query): QueryParams<Diff>,
) -> ApiResult<axum::response::Response> {
    use axum::response::IntoResponse;
    let client = state.daemon.get().await?;
    if query.format == fugue_client::diff::DiffFormat::Patch {
        let patch = fugue_client::worktree::pane_patch(&client, &pane).await?;
        return Ok(([(axum::http::header::CONTENT_TYPE, "text/x-diff")], patch).into_response());
    }
    let view = fugue_client::worktree::pane_diff(&client, &pane, query.stat).await?;
    Ok(Json(view).into_response())
}

/// Review comments on a pane's changes, for its agent as one prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Review {
    /// In the order the prompt lists them (at most 100).
    pub comments: Vec<fugue_client::review::ReviewComment>,
    /// Idempotency key: a retry under it sends nothing and returns the first receipt.
    pub key: Option<String>,
}

/// Sends review comments on what a pane changed to its agent, as one prompt
/// transaction (refused while it waits on a dialog or holds a draft).
pub async fn review(
    State(state): State<AppState>,
    Path(pane): Path<String>,
    JsonBody(body): JsonBody<Review>,
) -> ApiResult<Json<fugue_client::review::ReviewSent>> {
    let client = state.daemon.get().await?;
    Ok(Json(
        fugue_client::review::send_review(&client, &pane, &body.comments, body.key.as_deref()).await?,
    ))
}

/// How to merge a worktree's branch.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Merge {
    /// One commit of all the branch's changes instead of a merge commit.
    #[serde(default)]
    pub squash: bool,
    /// The branch to merge into (default: the one it started from).
    pub into: Option<String>,
    /// Commit the worktree's uncommitted files on its branch first.
    #[serde(default)]
    pub commit: bool,
}

/// Merges a worktree's branch (named by the worktree's name or its pane):
/// refused, nothing changed, while it has uncommitted files or would conflict.
pub async fn merge(
    State(state): State<AppState>,
    Path(worktree): Path<String>,
    JsonBody(body): JsonBody<Merge>,
) -> ApiResult<Json<fugue_client::worktree::Merged>> {
    let client = state.daemon.get().await?;
    let record = fugue_client::worktree::find_target(&client, &worktree).await?;
    if body.commit {
        let message = format!("fugue: the work of {}", record.name);
        fugue_client::worktree::commit_all(&record, &message)
            .await
            .map_err(fugue_client::ClientError::from)?;
    }
    Ok(Json(
        fugue_client::worktree::merge(&record, body.into.as_deref(), body.squash)
            .await
            .map_err(fugue_client::ClientError::from)?,
    ))
}

/// A discarded worktree.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Discarded {
    pub worktree: String,
    pub branch: String,
    /// `removed`, or `gone` (deleted outside fugue; forgotten now).
    pub outcome: String,
    /// Teardown commands that failed before the worktree was removed.
    pub notes: Vec<String>,
}

/// Discards the worktree this request names (by its name or its pane): its
/// pane released, the worktree and branch removed with whatever work they hold.
pub async fn discard(State(state): State<AppState>, Path(worktree): Path<String>) -> ApiResult<Json<Discarded>> {
    let client = state.daemon.get().await?;
    let record = fugue_client::worktree::find_target(&client, &worktree).await?;
    let released = fugue_client::worktree::discard(&client, &record).await?;
    Ok(Json(Discarded {
        worktree: record.path,
        branch: record.branch,
        outcome: released.outcome().into(),
        notes: released.notes().to_vec(),
    }))
}

/// Fan-out groups, by name.
pub async fn groups() -> ApiResult<Json<Vec<fugue_client::fanout::GroupRecord>>> {
    Ok(Json(
        fugue_client::fanout::groups().map_err(fugue_client::ClientError::from)?,
    ))
}

/// Whether a comparison runs the group's test.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Compare {
    /// Run the group's test in each done worktree whose content changed (default true).
    #[serde(default = "yes")]
    pub test: bool,
}

/// A fan-out group side by side, as `fugue compare` shows it.
pub async fn compare(
    State(state): State<AppState>,
    Path(group): Path<String>,
    QueryParams(query): QueryParams<Compare>,
) -> ApiResult<Json<fugue_client::fanout::Comparison>> {
    let client = state.daemon.get().await?;
    Ok(Json(fugue_client::fanout::compare(&client, &group, query.test).await?))
}

/// The member of a group to merge.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Pick {
    /// Its worktree's name or its pane.
    pub member: String,
    #[serde(default)]
    pub squash: bool,
}

/// A member picked: its merge, and the others (each discarded with `DELETE
/// /api/worktrees/{worktree}` if the person wants).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Picked {
    pub merged: fugue_client::worktree::Merged,
    pub others: Vec<fugue_client::fanout::Member>,
}

/// Picks a member: its uncommitted work committed on its branch, then merged.
pub async fn pick(Path(group): Path<String>, JsonBody(body): JsonBody<Pick>) -> ApiResult<Json<Picked>> {
    let (merged, others) = fugue_client::fanout::pick(&group, &body.member, body.squash).await?;
    Ok(Json(Picked { merged, others }))
}

pub async fn worktrees(State(state): State<AppState>) -> ApiResult<Json<Vec<fugue_client::worktree::WorktreeView>>> {
    let client = state.daemon.get().await?;
    Ok(Json(fugue_client::worktree::views(&client).await?))
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
    let mut wait = body.wait;
    if body.on_screen && wait.on.is_none() {
        wait.on = Some(fugue_protocol::MatchOn::Screen);
    }
    if wait.timeout_ms.is_some_and(|ms| ms == 0 || ms > MAX_WAIT_MS) {
        return Err(ApiError::invalid(format!(
            "timeout_ms must be 1-{MAX_WAIT_MS}, got {}",
            wait.timeout_ms.unwrap_or_default()
        )));
    }
    let outcome = fugue_client::ops::wait(&state.daemon.get().await?, &pane, &wait).await?;
    Ok(Json(WaitView::from(outcome)))
}
