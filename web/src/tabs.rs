//! The terminal-tabs API of the collaboration app fugue was specified from
//! (`/api/terminal/sessions`): a (project, session) pair is one fugue session whose
//! cwd is the project, and its tabs are that session's panes. Names and order are
//! the panes' titles and order, kept by the daemon's records (so they survive a
//! restart); there is no second copy here to drift.

use crate::error::{ApiError, ApiResult, JsonBody, QueryParams};
use crate::AppState;
use axum::extract::{Path as UrlPath, State};
use axum::http::HeaderMap;
use axum::Json;
use fugue_client::protocol::target::MAX_SESSION_NAME;
use fugue_client::protocol::{AgentKind, AgentState, Attention, ErrorCode, PaneInfo, PaneState, SpawnSpec};
use fugue_client::views::PaneView;
use fugue_client::Client;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Which tab bar: a project directory and a session name within it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TabScope {
    /// Absolute path of the project directory (the tabs' shells start there).
    pub project: String,
    /// The session within the project (1-64 characters).
    pub session: String,
}

/// One tab: a terminal (a fugue pane) in the tab bar.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TabView {
    /// The pane's id.
    pub id: String,
    pub name: String,
    /// Position in the tab bar, from 0.
    pub order: u32,
    /// `running`, `exited`, `restarting` or `lost`.
    pub status: String,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    /// When the terminal was started, ms since the Unix epoch.
    pub created: u64,
    /// Where to attach: `ws://HOST/ws/panes/ID`.
    pub ws_url: String,
    /// The agent CLI recognised in the terminal, if any, and its state.
    pub agent: Option<AgentBadge>,
    /// Everything else fugue knows of the pane.
    pub pane: PaneView,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AgentBadge {
    /// Which agent CLI it is.
    pub kind: AgentKind,
    /// What it is doing, in one word.
    pub state: AgentState,
    /// Whether it needs a person (`finished_unseen`: a turn ended and nobody
    /// looked since).
    pub needs: Attention,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TabList {
    /// Sorted by `order`.
    pub sessions: Vec<TabView>,
    /// Tabs whose terminal was gone (lost with a daemon that stopped), dropped
    /// by the reconcile this listing ran first.
    pub removed: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateTab {
    pub project: String,
    pub session: String,
    /// Default `Terminal N`.
    pub name: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RenameTab {
    /// Trimmed; an empty name becomes `Terminal`.
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReorderTabs {
    /// Every tab's id exactly once, in the new order.
    pub ordered_ids: Vec<String>,
    /// Also accepted in the query.
    pub project: Option<String>,
    pub session: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct OptionalScope {
    pub project: Option<String>,
    pub session: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Success {
    pub success: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RenamedTab {
    pub success: bool,
    pub session: TabView,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReorderedTabs {
    pub success: bool,
    pub sessions: Vec<TabView>,
}

/// A checked scope and the fugue session it maps to.
pub struct Scope {
    pub project: PathBuf,
    pub fugue_session: String,
}

impl Scope {
    /// `remote`: the daemon is elsewhere, where the project is; only its form
    /// is checked here (the daemon refuses a directory it does not have).
    pub fn new(project: &str, session: &str, remote: bool) -> ApiResult<Self> {
        let path = Path::new(project);
        if project.is_empty() || !path.is_absolute() || (!remote && !path.is_dir()) {
            return Err(ApiError::invalid(format!(
                "project must be the absolute path of an existing directory, got {project:?}"
            )));
        }
        let session = session.trim();
        let chars = session.chars().count();
        if chars == 0 || chars > MAX_SESSION_NAME || session.chars().any(char::is_control) {
            return Err(ApiError::invalid(format!(
                "session must be 1-{MAX_SESSION_NAME} characters without control characters, got {session:?}"
            )));
        }
        let project = match remote {
            true => path.to_path_buf(),
            false => path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
        };
        let fugue_session = fugue_session_name(&project, session);
        Ok(Self { project, fugue_session })
    }
}

/// `SESSION@PROJECT-HASH`: readable in `fugue ls`, unique per project directory
/// (the hash is of its full path), within the daemon's naming rules.
pub fn fugue_session_name(project: &Path, session: &str) -> String {
    fn clean(text: &str, max: usize) -> String {
        let cleaned: String = text
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .take(max)
            .collect();
        if cleaned.is_empty() {
            "x".into()
        } else {
            cleaned
        }
    }
    let base = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    let hash = fugue_client::protocol::socket::path_hash(project) & 0xff_ffff;
    format!("{}@{}-{hash:06x}", clean(session, 24), clean(&base, 24))
}

/// The address a page or script attaches to a pane at.
pub fn ws_url(headers: &HeaderMap, tls: bool, pane: &str) -> String {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let scheme = if tls { "wss" } else { "ws" };
    format!("{scheme}://{host}/ws/panes/{pane}")
}

async fn tab_view(client: &Client, pane: &PaneInfo, ws_url: String) -> TabView {
    let agent = match pane.state {
        PaneState::Running => client.agent_status(&pane.id.to_string()).await.ok(),
        _ => None,
    };
    let agent = agent.and_then(|a| {
        a.agent.map(|kind| AgentBadge {
            kind,
            state: a.state,
            needs: a.needs,
        })
    });
    let view = PaneView::from(pane);
    TabView {
        id: view.id.clone(),
        name: view.title.clone(),
        order: pane.index,
        status: view.state.status.clone(),
        exit_code: view.state.exit_code,
        signal: view.state.signal.clone(),
        created: pane.started_at_ms,
        ws_url,
        agent,
        pane: view,
    }
}

async fn tab_views(state: &AppState, headers: &HeaderMap, client: &Client, panes: &[PaneInfo]) -> Vec<TabView> {
    let views = panes.iter().map(|p| {
        let url = ws_url(headers, state.security.tls(), &p.id.to_string());
        tab_view(client, p, url)
    });
    let mut tabs = futures::future::join_all(views).await;
    tabs.sort_by_key(|t| t.order);
    tabs
}

/// The panes of a scope's session; none when the session does not exist yet.
async fn panes_of(client: &Client, scope: &Scope) -> ApiResult<Vec<PaneInfo>> {
    match client.list_panes(Some(&scope.fugue_session)).await {
        Ok(panes) => Ok(panes),
        Err(err) if err.code() == Some(ErrorCode::SessionNotFound) => Ok(Vec::new()),
        Err(err) => Err(err.into()),
    }
}

/// The pane `id` if it is one of the scope's tabs.
async fn tab_of(client: &Client, scope: Option<&Scope>, id: &str) -> ApiResult<PaneInfo> {
    let not_found = || ApiError::not_found(ErrorCode::PaneNotFound, format!("no tab with id {id:?}"));
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(not_found());
    }
    let pane = match client.pane_status(id).await {
        Ok(pane) => pane,
        Err(err) if err.code() == Some(ErrorCode::PaneNotFound) => return Err(not_found()),
        Err(err) => return Err(err.into()),
    };
    match scope {
        Some(scope) if pane.session_name != scope.fugue_session => Err(not_found()),
        _ => Ok(pane),
    }
}

fn optional_scope(project: Option<&str>, session: Option<&str>, remote: bool) -> ApiResult<Option<Scope>> {
    match (project, session) {
        (Some(project), Some(session)) => Scope::new(project, session, remote).map(Some),
        (None, None) => Ok(None),
        _ => Err(ApiError::invalid("give both project and session, or neither")),
    }
}

/// `GET /api/terminal/sessions?project=&session=`
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    QueryParams(query): QueryParams<TabScope>,
) -> ApiResult<Json<TabList>> {
    let scope = Scope::new(&query.project, &query.session, state.defaults.remote)?;
    let client = state.daemon.get().await?;
    let panes = panes_of(&client, &scope).await?;
    // Reconcile: a tab whose terminal is gone (it was running when a daemon went
    // away) cannot come back; drop it rather than show a dead terminal.
    let (lost, live): (Vec<PaneInfo>, Vec<PaneInfo>) = panes.into_iter().partition(|p| p.state == PaneState::Lost);
    let mut removed = 0u32;
    for pane in &lost {
        if client.release_pane(&pane.id.to_string()).await.is_ok() {
            removed += 1;
        }
    }
    if removed > 0 {
        tracing::info!(
            project = %scope.project.display(),
            session = %query.session,
            "reconciled: removed {removed} tabs whose terminal was gone"
        );
    }
    let sessions = tab_views(&state, &headers, &client, &live).await;
    Ok(Json(TabList { sessions, removed }))
}

/// `POST /api/terminal/sessions {project, session, name?}`
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(body): JsonBody<CreateTab>,
) -> ApiResult<Json<TabView>> {
    let scope = Scope::new(&body.project, &body.session, state.defaults.remote)?;
    let client = state.daemon.get().await?;
    match client
        .create_session(&scope.fugue_session, Some(&scope.project), Vec::new())
        .await
    {
        Ok(_) => {}
        Err(err) if err.code() == Some(ErrorCode::NameTaken) => {}
        Err(err) => return Err(err.into()),
    }
    let existing = panes_of(&client, &scope).await?;
    let name = match body.name.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => format!("Terminal {}", existing.len() + 1),
    };
    let mut spec = SpawnSpec::new(scope.fugue_session.clone());
    spec.title = Some(name);
    spec.purpose = Some("browser tab".into());
    let pane = client.create_pane(spec).await?;
    let url = ws_url(&headers, state.security.tls(), &pane.id.to_string());
    Ok(Json(tab_view(&client, &pane, url).await))
}

/// `DELETE /api/terminal/sessions/{id}?project=&session=`
pub async fn delete(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    QueryParams(query): QueryParams<OptionalScope>,
) -> ApiResult<Json<Success>> {
    let scope = optional_scope(
        query.project.as_deref(),
        query.session.as_deref(),
        state.defaults.remote,
    )?;
    let client = state.daemon.get().await?;
    let pane = tab_of(&client, scope.as_ref(), &id).await?;
    client.release_pane(&pane.id.to_string()).await?;
    Ok(Json(Success { success: true }))
}

/// `PATCH /api/terminal/sessions/{id} {name}`
pub async fn rename(
    State(state): State<AppState>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    QueryParams(query): QueryParams<OptionalScope>,
    JsonBody(body): JsonBody<RenameTab>,
) -> ApiResult<Json<RenamedTab>> {
    let scope = optional_scope(
        query.project.as_deref(),
        query.session.as_deref(),
        state.defaults.remote,
    )?;
    let client = state.daemon.get().await?;
    let pane = tab_of(&client, scope.as_ref(), &id).await?;
    let name = match body.name.trim() {
        "" => "Terminal",
        name => name,
    };
    let pane = client.rename_pane(&pane.id.to_string(), name).await?;
    let url = ws_url(&headers, state.security.tls(), &pane.id.to_string());
    let session = tab_view(&client, &pane, url).await;
    Ok(Json(RenamedTab { success: true, session }))
}

/// `PUT /api/terminal/sessions/reorder {orderedIds}`: every tab exactly once, or
/// a 400 naming the id at fault and nothing changes.
pub async fn reorder(
    State(state): State<AppState>,
    headers: HeaderMap,
    QueryParams(query): QueryParams<OptionalScope>,
    JsonBody(body): JsonBody<ReorderTabs>,
) -> ApiResult<Json<ReorderedTabs>> {
    let project = body.project.as_deref().or(query.project.as_deref());
    let session = body.session.as_deref().or(query.session.as_deref());
    let (Some(project), Some(session)) = (project, session) else {
        return Err(ApiError::invalid(
            "reorder needs project and session (in the query or the body)",
        ));
    };
    let scope = Scope::new(project, session, state.defaults.remote)?;
    let client = state.daemon.get().await?;
    let panes = panes_of(&client, &scope).await?;
    check_order(&body.ordered_ids, &panes)?;
    let panes = client.reorder_panes(&scope.fugue_session, &body.ordered_ids).await?;
    let sessions = tab_views(&state, &headers, &client, &panes).await;
    Ok(Json(ReorderedTabs {
        success: true,
        sessions,
    }))
}

/// Every tab exactly once: the first unknown, repeated or missing id is named.
fn check_order(ids: &[String], panes: &[PaneInfo]) -> ApiResult<()> {
    let known: Vec<String> = panes.iter().map(|p| p.id.to_string()).collect();
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        if !known.contains(id) {
            return Err(ApiError::invalid(format!(
                "unknown id {id:?}: it is not a tab of this session"
            )));
        }
        if !seen.insert(id.as_str()) {
            return Err(ApiError::invalid(format!(
                "duplicate id {id:?}: name every tab exactly once"
            )));
        }
    }
    if let Some(missing) = known.iter().find(|id| !seen.contains(id.as_str())) {
        return Err(ApiError::invalid(format!(
            "missing id {missing:?}: name all {} tabs exactly once",
            known.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_are_valid_readable_and_per_project() {
        let a = fugue_session_name(Path::new("/home/ann/work/my project"), "main");
        let b = fugue_session_name(Path::new("/home/bob/work/my project"), "main");
        assert!(a.starts_with("main@my-project-"), "{a}");
        assert_ne!(a, b);
        fugue_client::protocol::target::validate_session_name(&a).unwrap();
        let long = fugue_session_name(Path::new(&format!("/{}", "d".repeat(300))), &"s:/.".repeat(40));
        fugue_client::protocol::target::validate_session_name(&long).unwrap();
        let odd = fugue_session_name(Path::new("/"), "é ü");
        fugue_client::protocol::target::validate_session_name(&odd).unwrap();
    }
}
