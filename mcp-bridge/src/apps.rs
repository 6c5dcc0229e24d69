//! MCP Apps (the `io.modelcontextprotocol/ui` extension, 2026-01-26): views a
//! host draws beside a tool's result, in a sandboxed iframe.
//!
//! - `ui://fugue/screen`: a pane's live screen (`fugue_capture` points at it);
//! - `ui://fugue/permission`: a permission card with Approve and Deny
//!   (`fugue_agent_status`);
//! - `ui://fugue/diff`: what a worktree changed (`fugue_diff`).
//!
//! Each is one HTML document with its script and style inline (mcp-bridge/apps,
//! committed and written by hand: building needs no Node). An app calls tools
//! back through the host's `ui/*` bridge, so under the same guards as any tool
//! call: Approve sends `fugue_approve` with the prompt_id of the prompt shown,
//! and only on a person's click. A program's output is set as text, never as
//! HTML, so it cannot draw a button or call a tool. "Live": hosts forward no
//! resource subscriptions to an app, so the screen app calls `fugue_capture`
//! again every 2 s while it is visible, for 10 minutes after it was last shown
//! or clicked.

use rmcp::model::{MetaObject, ReadResourceResult, ResourceContents};
use serde_json::json;

/// The MIME type hosts look for.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

const BRIDGE: &str = include_str!("../apps/bridge.js");
const STYLE: &str = include_str!("../apps/app.css");

/// (uri, name, description, the tool that points at it, the document)
const APPS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "ui://fugue/screen",
        "terminal screen",
        "A terminal's screen, followed live while it is shown.",
        "fugue_capture",
        include_str!("../apps/screen.html"),
    ),
    (
        "ui://fugue/permission",
        "permission card",
        "What an agent asks, with Approve and Deny for the prompt shown.",
        "fugue_agent_status",
        include_str!("../apps/permission.html"),
    ),
    (
        "ui://fugue/diff",
        "worktree changes",
        "What a worktree changed: files, lines added and removed, hunks.",
        "fugue_diff",
        include_str!("../apps/diff.html"),
    ),
];

/// The app `tool` points at, if any.
pub fn of_tool(tool: &str) -> Option<&'static str> {
    APPS.iter().find(|app| app.3 == tool).map(|app| app.0)
}

/// `_meta` for a tool with an app: `{"ui": {"resourceUri": URI}}`.
pub fn tool_meta(uri: &str) -> MetaObject {
    let mut meta = serde_json::Map::new();
    meta.insert("ui".into(), json!({ "resourceUri": uri }));
    MetaObject(meta)
}

/// The apps, as `resources/list` lists them.
pub fn resources() -> Vec<rmcp::model::Resource> {
    APPS.iter()
        .map(|(uri, name, description, ..)| {
            rmcp::model::Resource::new(*uri, *name)
                .with_description(*description)
                .with_mime_type(MIME_TYPE)
        })
        .collect()
}

/// The document of app `uri`, with its script and style in it.
pub fn read(uri: &str) -> Option<ReadResourceResult> {
    let (uri, .., html) = APPS.iter().find(|app| app.0 == uri)?;
    let text = html.replacen("/*CSS*/", STYLE, 1).replacen("/*BRIDGE*/", BRIDGE, 1);
    let mut meta = serde_json::Map::new();
    // Nothing from elsewhere: no origin to connect to or load from.
    meta.insert(
        "ui".into(),
        json!({ "csp": { "connectDomains": [], "resourceDomains": [] }, "prefersBorder": true }),
    );
    Some(ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
        uri: (*uri).to_string(),
        mime_type: Some(MIME_TYPE.into()),
        text,
        meta: Some(MetaObject(meta)),
    }]))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_app_is_whole_and_sets_no_html() {
        for (uri, .., tool, _) in super::APPS {
            assert_eq!(super::of_tool(tool), Some(*uri));
            let read = super::read(uri).unwrap();
            let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
                panic!("{uri} is text");
            };
            assert!(
                !text.contains("/*BRIDGE*/") && !text.contains("/*CSS*/"),
                "{uri} has its script and style"
            );
            assert!(text.contains("ui/initialize"), "{uri} speaks the bridge");
            // What a program printed is never parsed as HTML.
            for sink in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
            ] {
                assert!(!text.contains(sink), "{uri} uses {sink}");
            }
            assert!(!text.contains("src=\"http"), "{uri} loads nothing from elsewhere");
        }
    }
}
