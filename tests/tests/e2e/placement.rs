//! Every request placed on every front end, and every command, tool and route
//! documented. `PLACEMENT` says, for each request of the wire table, which CLI
//! command, MCP tool and HTTP route expose it, or why one does not; the tests
//! check each named place exists (the CLI's help, the bridge's tools/list,
//! fugue-web's route table) and that the docs name every CLI command, MCP tool
//! and HTTP route. A request added without a line here fails.

use fugue_protocol::requests::TABLE;
use fugue_tests::{bin, Daemon};
use std::collections::BTreeSet;
use std::path::Path;

/// Where a request is exposed: a place, or `Not(reason)`.
#[derive(Clone, Copy)]
enum At {
    /// The CLI command (`fugue grep`), MCP tool (`fugue_grep`) or HTTP route
    /// (`GET /api/grep`) that makes it.
    Is(&'static str),
    Not(&'static str),
}
use At::{Is, Not};

const PERSON_ONLY: &str = "the daemon's lifecycle belongs to the person who runs it, not to an agent or a page";
const ATTACH: &str =
    "part of attaching a terminal: an agent reads and writes instead, the page attaches over /ws/panes/{pane}";

const PAGE_ONLY: &str = "a browser's push subscription is made by the page that receives it";
const NO_AGENT: &str = "devices and pushes reach the person; an agent has no part in them";

/// (request, CLI, MCP, HTTP)
const PLACEMENT: &[(&str, At, At, At)] = &[
    (
        "Ping",
        Not("every client's handshake shows the daemon answers"),
        Not("every MCP session starts with a daemon request"),
        Not("every page load asks the daemon"),
    ),
    (
        "DaemonStatus",
        Is("fugue daemon status"),
        Not(PERSON_ONLY),
        Is("GET /api/daemon"),
    ),
    ("Shutdown", Is("fugue daemon stop"), Not(PERSON_ONLY), Not(PERSON_ONLY)),
    (
        "CreateSession",
        Is("fugue new-session"),
        Is("fugue_create_session"),
        Is("POST /api/sessions"),
    ),
    (
        "DestroySession",
        Is("fugue kill-session"),
        Is("fugue_kill_session"),
        Is("DELETE /api/sessions/{session}"),
    ),
    (
        "ListSessions",
        Is("fugue ls"),
        Is("fugue_list_sessions"),
        Is("GET /api/sessions"),
    ),
    (
        "RenameSession",
        Is("fugue rename-session"),
        Is("fugue_rename_session"),
        Is("PATCH /api/sessions/{session}"),
    ),
    ("CreatePane", Is("fugue run"), Is("fugue_start"), Is("POST /api/panes")),
    ("ListPanes", Is("fugue panes"), Is("fugue_list"), Is("GET /api/panes")),
    (
        "PaneStatus",
        Is("fugue status"),
        Not("fugue_list and fugue_kill give a terminal's status"),
        Is("GET /api/panes/{pane}"),
    ),
    (
        "WriteInput",
        Is("fugue write"),
        Is("fugue_write"),
        Is("POST /api/panes/{pane}/write"),
    ),
    (
        "SendKeys",
        Is("fugue send-keys"),
        Is("fugue_send_keys"),
        Is("POST /api/panes/{pane}/keys"),
    ),
    (
        "Interrupt",
        Is("fugue interrupt"),
        Is("fugue_interrupt"),
        Is("POST /api/panes/{pane}/interrupt"),
    ),
    (
        "KillPane",
        Is("fugue kill"),
        Is("fugue_kill"),
        Is("POST /api/panes/{pane}/kill"),
    ),
    (
        "ReleasePane",
        Is("fugue release"),
        Is("fugue_release"),
        Is("DELETE /api/panes/{pane}"),
    ),
    (
        "ResizePane",
        Is("fugue resize"),
        Not("fugue_start takes cols and rows; a running terminal's size is its viewers'"),
        Not(ATTACH),
    ),
    (
        "RenamePane",
        Is("fugue rename-pane"),
        Not("fugue_start takes a title; renaming is for people arranging panes"),
        Is("PATCH /api/panes/{pane}"),
    ),
    (
        "ReorderPanes",
        Is("fugue reorder"),
        Not("the order is how people arrange a session"),
        Is("PUT /api/terminal/sessions/reorder"),
    ),
    (
        "ReadOutput",
        Is("fugue read"),
        Is("fugue_read"),
        Is("GET /api/panes/{pane}/read"),
    ),
    (
        "WaitForExit",
        Is("fugue wait"),
        Is("fugue_exec"),
        Is("POST /api/panes/{pane}/wait"),
    ),
    (
        "Subscribe",
        Is("fugue events"),
        Not("MCP clients follow terminals with resources/subscribe on fugue:// resources"),
        Is("GET /ws/events"),
    ),
    (
        "Capture",
        Is("fugue capture"),
        Is("fugue_capture"),
        Is("GET /api/panes/{pane}/capture"),
    ),
    ("Attach", Is("fugue attach"), Not(ATTACH), Is("GET /ws/panes/{pane}")),
    ("Detach", Is("fugue attach"), Not(ATTACH), Is("GET /ws/panes/{pane}")),
    (
        "ClientResize",
        Is("fugue attach"),
        Not(ATTACH),
        Is("GET /ws/panes/{pane}"),
    ),
    (
        "SetSizePolicy",
        Is("fugue set-size-policy"),
        Not(ATTACH),
        Not("the page's viewers follow the pane's policy; set it with the CLI"),
    ),
    (
        "WaitFor",
        Is("fugue wait"),
        Is("fugue_wait"),
        Is("POST /api/panes/{pane}/wait"),
    ),
    (
        "AgentStatus",
        Is("fugue agent"),
        Is("fugue_agent_status"),
        Is("GET /api/panes/{pane}/agent"),
    ),
    (
        "ReportHook",
        Is("fugue agent-event"),
        Not("only the agent's own hooks report, with the pane's token"),
        Not("only the agent's own hooks report, with the pane's token"),
    ),
    (
        "AnswerPermission",
        Is("fugue approve"),
        Is("fugue_approve"),
        Is("POST /api/panes/{pane}/approve"),
    ),
    (
        "ResumeAgent",
        Is("fugue resume"),
        Is("fugue_resume"),
        Is("POST /api/panes/{pane}/resume"),
    ),
    (
        "HibernatePane",
        Is("fugue hibernate"),
        Is("fugue_hibernate"),
        Is("POST /api/panes/{pane}/hibernate"),
    ),
    (
        "WakePane",
        Is("fugue wake"),
        Is("fugue_wake"),
        Is("POST /api/panes/{pane}/wake"),
    ),
    (
        "Tmux",
        Is("fugue tmux"),
        Not("an agent drives panes with fugue's own typed tools; tmux's command line is for programs that speak only tmux"),
        Not("the page and scripts have typed routes; tmux's command line is for programs that speak only tmux"),
    ),
    (
        "PushKey",
        Not(PAGE_ONLY),
        Not(NO_AGENT),
        Is("GET /api/push/vapid"),
    ),
    (
        "AddPushSubscription",
        Not(PAGE_ONLY),
        Not(NO_AGENT),
        Is("POST /api/push/subscriptions"),
    ),
    (
        "RemovePushSubscription",
        Not("a subscription goes with its page (Stop notifying) or its device (fugue web devices revoke)"),
        Not(NO_AGENT),
        Is("DELETE /api/push/subscriptions"),
    ),
    (
        "AnswerFromPush",
        Not("the token is a notification's: fugue approve answers at a terminal"),
        Not("an agent answers with fugue_approve, under its own guards; a push's token is the person's"),
        Is("POST /push/answer"),
    ),
    (
        "AddDevice",
        Not("a device pairs by QR code and a person's confirmation (fugue web --qr), never by a command alone"),
        Not(NO_AGENT),
        Is("POST /pair/status"),
    ),
    (
        "ListDevices",
        Is("fugue web devices"),
        Not(NO_AGENT),
        Is("GET /api/devices"),
    ),
    (
        "RevokeDevice",
        Is("fugue web devices revoke"),
        Not(NO_AGENT),
        Is("DELETE /api/devices/{device}"),
    ),
    (
        "CheckDevice",
        Not("fugue-web's guard asks it of every request a device makes"),
        Not("fugue-web's guard asks it of every request a device makes"),
        Not("fugue-web's guard asks it of every request a device makes"),
    ),
    (
        "BackgroundAgents",
        Is("fugue overview"),
        Is("fugue_overview"),
        Is("GET /api/overview"),
    ),
    (
        "Cancel",
        Not("sent by the client library when a caller stops waiting (Ctrl-C)"),
        Not("a cancelled MCP request cancels its daemon request"),
        Not("a closed HTTP request cancels its daemon request"),
    ),
    (
        "UpgradeDaemon",
        Is("fugue daemon upgrade"),
        Not(PERSON_ONLY),
        Not(PERSON_ONLY),
    ),
    (
        "Overview",
        Is("fugue overview"),
        Is("fugue_list_agents"),
        Is("GET /api/overview"),
    ),
    ("Grep", Is("fugue grep"), Is("fugue_grep"), Is("GET /api/grep")),
    (
        "SendPrompt",
        Is("fugue prompt"),
        Is("fugue_send_prompt"),
        Is("POST /api/panes/{pane}/prompt"),
    ),
];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// README.md and every docs/*.md, as one text.
fn docs() -> String {
    let mut text = std::fs::read_to_string(root().join("README.md")).unwrap();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            text.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    text
}

/// The commands `fugue --help` lists (words of its "Commands:" section).
fn cli_commands() -> BTreeSet<String> {
    let help = std::process::Command::new(bin("fugue")).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    help.split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("Options:").next())
        .unwrap_or_default()
        .lines()
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help")
        .map(str::to_string)
        .collect()
}

/// `METHOD /path` of every route fugue-web serves.
fn http_routes() -> BTreeSet<String> {
    let document = fugue_web::routes::document();
    let mut routes = BTreeSet::new();
    for (path, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            routes.insert(format!("{} {path}", method.to_uppercase()));
        }
    }
    routes
}

#[test]
fn every_request_is_placed_once() {
    let placed: Vec<&str> = PLACEMENT.iter().map(|(name, ..)| *name).collect();
    let table: Vec<&str> = TABLE.iter().map(|e| e.name).collect();
    for name in &table {
        assert!(
            placed.contains(name),
            "request {name} is not placed: add its line to PLACEMENT in tests/tests/e2e/placement.rs \
             (its CLI command, MCP tool and HTTP route, or why not) and document them"
        );
    }
    for name in &placed {
        assert!(
            table.contains(name),
            "PLACEMENT names {name}, which the wire table has no more"
        );
    }
    assert_eq!(placed.len(), table.len(), "a request is placed twice");
    for (name, cli, mcp, http) in PLACEMENT {
        for at in [cli, mcp, http] {
            if let Not(reason) = at {
                assert!(reason.len() >= 10, "{name}: say why it is not exposed, not `{reason}`");
            }
        }
    }
}

#[test]
fn every_cli_place_is_a_command() {
    let commands = cli_commands();
    assert!(commands.contains("grep") && commands.contains("run"), "{commands:?}");
    for (name, cli, ..) in PLACEMENT {
        let Is(place) = cli else { continue };
        let words: Vec<&str> = place.split_whitespace().skip(1).collect();
        assert!(
            commands.contains(words[0]),
            "{name}: `{place}` is not a command fugue lists"
        );
        // A subcommand (`fugue daemon stop`) must answer --help.
        let status = std::process::Command::new(bin("fugue"))
            .args(&words)
            .arg("--help")
            .output()
            .unwrap()
            .status;
        assert!(status.success(), "{name}: `{place} --help` failed");
    }
}

#[test]
fn every_http_place_is_a_route() {
    let routes = http_routes();
    for (name, _, _, http) in PLACEMENT {
        if let Is(route) = http {
            assert!(
                routes.contains(*route),
                "{name}: `{route}` is not a route fugue-web serves"
            );
        }
    }
}

#[tokio::test]
async fn every_mcp_place_is_a_tool_and_every_front_end_is_documented() {
    let daemon = Daemon::start();
    let mcp = fugue_tests::mcp::stdio_bridge(&daemon).await;
    let tools: BTreeSet<String> = mcp
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let _ = mcp.cancel().await;
    for (name, _, mcp_place, _) in PLACEMENT {
        if let Is(tool) = mcp_place {
            assert!(tools.contains(*tool), "{name}: `{tool}` is not a tool fugue-mcp lists");
        }
    }
    let docs = docs();
    let mut missing = Vec::new();
    for command in cli_commands() {
        if !docs.contains(&format!("`fugue {command}")) {
            missing.push(format!("the CLI command `fugue {command}`"));
        }
    }
    for tool in &tools {
        if !docs.contains(&format!("`{tool}")) {
            missing.push(format!("the MCP tool `{tool}`"));
        }
    }
    for route in http_routes() {
        let (method, path) = route.split_once(' ').unwrap();
        if !docs.contains(&format!("| {method} | `{path}` |")) {
            missing.push(format!("the HTTP route `{route}`"));
        }
    }
    assert!(
        missing.is_empty(),
        "not documented in README.md or docs/: {}",
        missing.join(", ")
    );
}
