//! Every route, once: the table builds both the router and the OpenAPI document,
//! so the document cannot describe a route that does not exist (or miss one).

use crate::error::ErrorBody;
use crate::{api, devices, tabs, ws, AppState};
use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{MethodFilter, MethodRouter};
use axum::Router;
use fugue_client::protocol::devices::{DeviceInfo, PushSubscribed, VapidKey};
use fugue_client::views::{
    AnsweredView, CaptureView, DaemonView, OverviewView, PaneView, ReadView, SessionView, WaitView,
};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

pub struct Route {
    method: Method,
    path: &'static str,
    summary: &'static str,
    query: Option<SchemaFn>,
    body: Option<SchemaFn>,
    response: Option<SchemaFn>,
    /// A WebSocket endpoint: answered with 101 Switching Protocols.
    websocket: bool,
    handler: MethodRouter<AppState>,
}

impl Route {
    fn new<H, T>(method: Method, path: &'static str, summary: &'static str, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        // The table only names standard methods, each of which has a filter.
        let filter = MethodFilter::try_from(method.clone()).unwrap_or(MethodFilter::GET);
        Self {
            method,
            path,
            summary,
            query: None,
            body: None,
            response: None,
            websocket: false,
            handler: axum::routing::on(filter, handler),
        }
    }

    fn query<T: JsonSchema>(mut self) -> Self {
        self.query = Some(schema_of::<T>);
        self
    }

    fn body<T: JsonSchema>(mut self) -> Self {
        self.body = Some(schema_of::<T>);
        self
    }

    fn returns<T: JsonSchema>(mut self) -> Self {
        self.response = Some(schema_of::<T>);
        self
    }

    fn websocket(mut self) -> Self {
        self.websocket = true;
        self
    }
}

pub fn table() -> Vec<Route> {
    use Method as M;
    vec![
        // The terminal-tabs API.
        Route::new(
            M::GET,
            "/api/terminal/sessions",
            "List the tabs of a project's session (reconciling first)",
            tabs::list,
        )
        .query::<tabs::TabScope>()
        .returns::<tabs::TabList>(),
        Route::new(
            M::POST,
            "/api/terminal/sessions",
            "Open a new tab: a shell in the project directory",
            tabs::create,
        )
        .body::<tabs::CreateTab>()
        .returns::<tabs::TabView>(),
        Route::new(
            M::PUT,
            "/api/terminal/sessions/reorder",
            "Reorder the tabs: every id exactly once",
            tabs::reorder,
        )
        .query::<tabs::OptionalScope>()
        .body::<tabs::ReorderTabs>()
        .returns::<tabs::ReorderedTabs>(),
        Route::new(
            M::DELETE,
            "/api/terminal/sessions/{id}",
            "Close a tab (its terminal is ended)",
            tabs::delete,
        )
        .query::<tabs::OptionalScope>()
        .returns::<tabs::Success>(),
        Route::new(M::PATCH, "/api/terminal/sessions/{id}", "Rename a tab", tabs::rename)
            .query::<tabs::OptionalScope>()
            .body::<tabs::RenameTab>()
            .returns::<tabs::RenamedTab>(),
        Route::new(
            M::GET,
            "/api/web/defaults",
            "The project and session a page opens by default",
            defaults,
        )
        .returns::<crate::Defaults>(),
        // fugue's own API.
        Route::new(M::GET, "/api/daemon", "The daemon's status", api::daemon).returns::<DaemonView>(),
        Route::new(M::GET, "/api/sessions", "List sessions", api::sessions).returns::<Vec<SessionView>>(),
        Route::new(M::POST, "/api/sessions", "Create a session", api::create_session)
            .body::<api::NewSession>()
            .returns::<SessionView>(),
        Route::new(
            M::DELETE,
            "/api/sessions/{session}",
            "Destroy a session and its panes",
            api::destroy_session,
        )
        .returns::<SessionView>(),
        Route::new(
            M::PATCH,
            "/api/sessions/{session}",
            "Rename a session",
            api::rename_session,
        )
        .body::<api::Rename>()
        .returns::<SessionView>(),
        Route::new(
            M::GET,
            "/api/overview",
            "Every pane with its agent's state and last line",
            api::overview,
        )
        .query::<api::SessionFilter>()
        .returns::<Vec<OverviewView>>(),
        Route::new(
            M::GET,
            "/api/fleet",
            "The fleet's panes by endpoint: every daemon the hosts file's [[fleet]] sources find (at most 500, asked 32 at a time, each within 10 s; reused for 5 s)",
            api::fleet,
        )
        .returns::<fugue_client::views::FleetView>(),
        Route::new(
            M::GET,
            "/api/grep",
            "Search every pane's text and scrollback for a regular expression",
            api::grep,
        )
        .query::<api::GrepQuery>()
        .returns::<fugue_client::views::GrepView>(),
        Route::new(M::GET, "/api/panes", "List panes", api::panes)
            .query::<api::SessionFilter>()
            .returns::<Vec<PaneView>>(),
        Route::new(M::POST, "/api/panes", "Start a pane", api::create_pane)
            .body::<api::NewPane>()
            .returns::<PaneView>(),
        Route::new(M::GET, "/api/panes/{pane}", "A pane's status", api::pane).returns::<PaneView>(),
        Route::new(
            M::DELETE,
            "/api/panes/{pane}",
            "Release a pane (killing it if it runs); its worktree goes too unless it holds work (?discard=true: even then)",
            api::release_pane,
        )
        .query::<api::Release>()
        .returns::<api::Released>(),
        Route::new(M::PATCH, "/api/panes/{pane}", "Set a pane's title", api::rename_pane)
            .body::<api::Title>()
            .returns::<PaneView>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/kill",
            "Signal a pane's processes",
            api::kill_pane,
        )
        .body::<api::Kill>()
        .returns::<PaneView>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/interrupt",
            "SIGINT to the pane's foreground process (the shell stays)",
            api::interrupt,
        )
        .returns::<api::Done>(),
        Route::new(
            M::GET,
            "/api/panes/{pane}/agent",
            "What the agent CLI in a pane is doing",
            api::agent,
        )
        .returns::<fugue_client::views::AgentStateView>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/resume",
            "Start the pane's agent CLI again on its recorded session, as a new pane",
            api::resume,
        )
        .returns::<PaneView>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/hibernate",
            "Put the pane's idle agent to rest (its program ends, the pane stays, hibernated); refused while it is busy, waits for a person or holds a draft",
            api::hibernate,
        )
        .returns::<PaneView>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/wake",
            "Resume a hibernated agent in its pane on its recorded session (afresh, with started_fresh saying why, when no turn ran in it); answers once it is ready for a prompt",
            api::wake,
        )
        .returns::<fugue_client::views::WokenView>(),
        Route::new(M::POST, "/api/panes/{pane}/write", "Type text into a pane", api::write)
            .body::<api::Write>()
            .returns::<api::Done>(),
        Route::new(M::POST, "/api/panes/{pane}/keys", "Press keys in a pane", api::keys)
            .body::<api::Keys>()
            .returns::<api::Done>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/prompt",
            "Send a prompt to the agent CLI in a pane",
            api::prompt,
        )
        .body::<api::Prompt>()
        .returns::<fugue_client::ops::PromptSent>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/approve",
            "Approve the agent's permission prompt prompt_id (only while it is on screen)",
            api::approve,
        )
        .body::<api::Answer>()
        .returns::<AnsweredView>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/deny",
            "Deny the agent's permission prompt prompt_id (only while it is on screen)",
            api::deny,
        )
        .body::<api::Answer>()
        .returns::<AnsweredView>(),
        Route::new(M::GET, "/api/panes/{pane}/read", "Read a pane's output", api::read)
            .query::<api::Read>()
            .returns::<ReadView>(),
        Route::new(
            M::GET,
            "/api/panes/{pane}/capture",
            "Capture a pane's screen",
            api::capture,
        )
        .query::<api::Capture>()
        .returns::<CaptureView>(),
        Route::new(
            M::GET,
            "/api/panes/{pane}/diff",
            "What a pane changed in its worktree against the commit it started from; `?format=patch` a git patch (`text/x-diff`) that `git apply` takes on the base commit",
            api::diff,
        )
        .query::<api::Diff>()
        .returns::<fugue_client::diff::DiffView>(),
        Route::new(
            M::GET,
            "/api/worktrees",
            "The worktrees fugue made, with where each stands",
            api::worktrees,
        )
        .returns::<Vec<fugue_client::worktree::WorktreeView>>(),
        Route::new(M::GET, "/api/groups", "Fan-out groups", api::groups)
            .returns::<Vec<fugue_client::fanout::GroupRecord>>(),
        Route::new(
            M::GET,
            "/api/groups/{group}/compare",
            "A fan-out group side by side (the group's test run in each done worktree)",
            api::compare,
        )
        .query::<api::Compare>()
        .returns::<fugue_client::fanout::Comparison>(),
        Route::new(
            M::POST,
            "/api/groups/{group}/pick",
            "Merge one member of a fan-out group (its uncommitted work committed first)",
            api::pick,
        )
        .body::<api::Pick>()
        .returns::<api::Picked>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/review",
            "Send review comments on what a pane changed to its agent, as one prompt",
            api::review,
        )
        .body::<api::Review>()
        .returns::<fugue_client::review::ReviewSent>(),
        Route::new(
            M::POST,
            "/api/worktrees/{worktree}/merge",
            "Merge a worktree's branch (by its name or its pane) into the branch it started from",
            api::merge,
        )
        .body::<api::Merge>()
        .returns::<fugue_client::worktree::Merged>(),
        Route::new(
            M::DELETE,
            "/api/worktrees/{worktree}",
            "Discard a worktree (by its name or its pane) and its branch, with whatever work they hold",
            api::discard,
        )
        .returns::<api::Discarded>(),
        Route::new(
            M::POST,
            "/api/panes/{pane}/wait",
            "Wait for output, exit or quiet",
            api::wait,
        )
        .body::<api::Wait>()
        .returns::<WaitView>(),
        // Devices, pairing and push (docs/browser.md, "From a phone").
        Route::new(
            M::GET,
            "/api/devices",
            "The paired devices (browsers and phones with a credential of their own)",
            devices::list,
        )
        .returns::<Vec<DeviceInfo>>(),
        Route::new(
            M::DELETE,
            "/api/devices/{device}",
            "Revoke a paired device: its credential stops working (401) and its push subscriptions go",
            devices::revoke,
        )
        .returns::<DeviceInfo>(),
        Route::new(
            M::POST,
            "/api/pairings",
            "Pair a phone: a one-use code (2 minutes) as a URL and its QR code; the claim waits for a person's confirmation",
            devices::create,
        )
        .returns::<devices::NewPairing>(),
        Route::new(
            M::GET,
            "/api/pairings",
            "Claims waiting for a person's confirmation",
            devices::pending,
        )
        .returns::<Vec<devices::PendingClaim>>(),
        Route::new(
            M::POST,
            "/api/pairings/{pairing}/confirm",
            "Confirm the device that claimed a pairing: it gets its credential",
            devices::confirm,
        )
        .returns::<devices::Decided>(),
        Route::new(
            M::POST,
            "/api/pairings/{pairing}/deny",
            "Refuse the device that claimed a pairing",
            devices::deny,
        )
        .returns::<devices::Decided>(),
        Route::new(
            M::POST,
            "/pair/claim",
            "A device claims a pairing with its code (no token; Origin must be this server's); 10 wrong codes in 2 minutes close pairing",
            devices::claim,
        )
        .body::<devices::ClaimBody>()
        .returns::<devices::Claimed>(),
        Route::new(
            M::POST,
            "/pair/status",
            "Where a claim stands; once confirmed, the device's credential is set as its cookie (once)",
            devices::status,
        )
        .body::<devices::StatusBody>()
        .returns::<devices::PairStatus>(),
        Route::new(
            M::GET,
            "/api/push/vapid",
            "fugued's VAPID public key (RFC 8292): the applicationServerKey to subscribe with",
            devices::vapid,
        )
        .returns::<VapidKey>(),
        Route::new(
            M::POST,
            "/api/push/subscriptions",
            "Register a browser's PushSubscription.toJSON() with fugued (https endpoints on public hosts only)",
            devices::subscribe,
        )
        .body::<devices::SubscriptionBody>()
        .returns::<PushSubscribed>(),
        Route::new(
            M::DELETE,
            "/api/push/subscriptions",
            "Forget a push subscription",
            devices::unsubscribe,
        )
        .body::<devices::Unsubscribe>()
        .returns::<devices::Unsubscribed>(),
        Route::new(
            M::POST,
            "/push/answer",
            "A notification's Approve or Deny: its one-use action token (no cookie; Origin must be this server's), under fugue approve's guards",
            devices::answer,
        )
        .body::<devices::ActionBody>()
        .returns::<devices::ActionAnswered>(),
        Route::new(M::GET, "/api/openapi.json", "This document", openapi_json),
        // WebSockets.
        Route::new(
            M::GET,
            "/ws/panes/{pane}",
            "Attach: a redraw, then output; binary input and JSON resize back",
            ws::attach,
        )
        .query::<ws::AttachQuery>()
        .websocket(),
        Route::new(
            M::GET,
            "/ws/events",
            "Lifecycle events of sessions and panes, as JSON",
            ws::events,
        )
        .websocket(),
    ]
}

/// The router for the table (state still to be supplied).
pub fn router() -> Router<AppState> {
    table()
        .into_iter()
        .fold(Router::new(), |router, route| router.route(route.path, route.handler))
}

async fn defaults(axum::extract::State(state): axum::extract::State<AppState>) -> axum::Json<crate::Defaults> {
    axum::Json(crate::Defaults {
        project: state.defaults.project.clone(),
        session: state.defaults.session.clone(),
        project_given: state.defaults.project_given,
        remote: state.defaults.remote,
    })
}

async fn openapi_json() -> axum::Json<Value> {
    axum::Json(document())
}

/// The OpenAPI 3.1 document of [`table`].
pub fn document() -> Value {
    let settings = |s: SchemaSettings| s.with(|s| s.definitions_path = "/components/schemas".into());
    let mut requests = settings(SchemaSettings::draft2020_12()).into_generator();
    let mut responses = settings(SchemaSettings::draft2020_12().for_serialize()).into_generator();
    let mut inline = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let error = schema_of::<ErrorBody>(&mut responses);
    let mut paths = Map::new();
    for route in table() {
        let mut parameters: Vec<Value> = route
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        if let Some(query) = route.query {
            parameters.extend(query_parameters(query(&mut inline)));
        }
        let mut responses_of = Map::new();
        let ok = match (route.websocket, route.response) {
            (true, _) => ("101", json!({"description": "Switching Protocols: the WebSocket"})),
            (false, Some(schema)) => (
                "200",
                json!({"description": "OK", "content": {"application/json": {"schema": schema(&mut responses)}}}),
            ),
            (false, None) => ("200", json!({"description": "OK", "content": {"application/json": {}}})),
        };
        responses_of.insert(ok.0.into(), ok.1);
        responses_of.insert(
            "default".into(),
            json!({"description": "An error: {code, message}", "content": {"application/json": {"schema": error}}}),
        );
        let mut operation = json!({
            "summary": route.summary,
            "operationId": operation_id(&route.method, route.path),
            "parameters": parameters,
            "responses": responses_of,
        });
        if let Some(body) = route.body {
            operation["requestBody"] = json!({
                "required": true,
                "content": {"application/json": {"schema": body(&mut requests)}},
            });
        }
        let item = paths
            .entry(route.path.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        item[route.method.as_str().to_ascii_lowercase()] = operation;
    }
    let mut schemas = requests.take_definitions(true);
    schemas.extend(responses.take_definitions(true));
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "fugue-web",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "fugue's terminals over HTTP. Every request needs the token: `Authorization: Bearer TOKEN`, or the cookie the page gets.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    })
}

/// One query parameter per property of an (inlined) object schema.
fn query_parameters(schema: Schema) -> Vec<Value> {
    let value = schema.to_value();
    let required: Vec<&str> = value["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = value["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, schema)| {
            let mut parameter = json!({
                "name": name,
                "in": "query",
                "required": required.contains(&name.as_str()),
                "schema": schema,
            });
            if let Some(description) = schema.get("description") {
                parameter["description"] = description.clone();
            }
            parameter
        })
        .collect()
}

/// `get_api_panes_pane_read` from `GET /api/panes/{pane}/read`.
fn operation_id(method: &Method, path: &str) -> String {
    let mut id = method.as_str().to_ascii_lowercase();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        id.push('_');
        id.push_str(&part.replace(['{', '}', '.'], "").replace('-', "_"));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_documented_once_with_its_method() {
        let doc = document();
        let mut count = 0;
        for route in table() {
            let op = &doc["paths"][route.path][route.method.as_str().to_ascii_lowercase()];
            assert!(op.is_object(), "{} {} missing", route.method, route.path);
            count += 1;
        }
        let documented: usize = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|p| p.as_object().unwrap().len())
            .sum();
        assert_eq!(documented, count);
    }

    #[test]
    fn references_resolve() {
        let doc = document();
        let text = doc.to_string();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for reference in text.split("\"$ref\":\"").skip(1) {
            let target = reference.split('"').next().unwrap();
            let name = target
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{target}"));
            assert!(schemas.contains_key(name), "{target} does not resolve");
        }
    }

    #[test]
    fn query_types_become_parameters() {
        let doc = document();
        let params = doc["paths"]["/api/terminal/sessions"]["get"]["parameters"]
            .as_array()
            .unwrap();
        let names: Vec<&str> = params.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["project", "session"]);
        assert!(params.iter().all(|p| p["required"] == true));
    }

    /// docs/http-api.md: every route, written from this table.
    fn reference() -> String {
        let mut out = String::from(
            "# HTTP API reference\n\n\
             Every route fugue-web serves, written from its route table (`web/src/routes.rs`) by\n\
             `FUGUE_WRITE_DOCS=1 cargo test -p fugue-web --lib http_reference`; a test fails when it is\n\
             stale. Requests and replies are JSON; errors are `{code, message}`. The whole schema is\n\
             served at `GET /api/openapi.json` (OpenAPI 3.1). Every route needs the token (the\n\
             `fugue_token_PORT` cookie the login URL sets, or `Authorization: Bearer TOKEN`).\n\n\
             | Method | Path | What it does |\n|---|---|---|\n",
        );
        for route in table() {
            let summary = match route.websocket {
                true => format!("{} (WebSocket)", route.summary),
                false => route.summary.to_string(),
            };
            out.push_str(&format!("| {} | `{}` | {} |\n", route.method, route.path, summary));
        }
        out
    }

    #[test]
    fn http_reference_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/http-api.md");
        let now = reference();
        if std::env::var_os("FUGUE_WRITE_DOCS").is_some() {
            std::fs::write(path, &now).unwrap();
        }
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            written == now,
            "docs/http-api.md is stale: run FUGUE_WRITE_DOCS=1 cargo test -p fugue-web --lib http_reference"
        );
    }
}
