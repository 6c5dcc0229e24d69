//! Generates the Rust types fugued reads Codex's app-server with
//! (`daemon/src/agent/codex_protocol.rs`) from the JSON Schema the pinned
//! Codex prints (`codex app-server generate-json-schema --out DIR`), so the
//! build needs only cargo and a Codex whose protocol moved fails a test
//! (`tests/tests/agents/app_server.rs`) instead of a user.
//!
//! Only the fields fugued reads are kept, each an `Option` (what an older or
//! newer Codex leaves out reads as nothing, never as an error); a field the
//! schema no longer has is an error here. A union (`oneOf` of objects) is
//! one struct of every branch's fields.

use serde_json::{Map, Value};
use std::path::Path;

/// The types fugued reads, and the fields of each it keeps.
pub const WANTED: &[(&str, &[&str])] = &[
    ("ThreadStartedNotification", &["thread"]),
    ("Thread", &["id", "ephemeral", "parentThreadId", "status"]),
    ("ThreadStatusChangedNotification", &["threadId", "status"]),
    ("ThreadStatus", &["type", "activeFlags"]),
    ("TurnStartedNotification", &["threadId"]),
    ("TurnCompletedNotification", &["threadId"]),
    ("ServerRequestResolvedNotification", &["threadId", "requestId"]),
    ("ThreadTokenUsageUpdatedNotification", &["threadId", "tokenUsage"]),
    ("ThreadTokenUsage", &["total"]),
    (
        "TokenUsageBreakdown",
        &["inputTokens", "cachedInputTokens", "outputTokens"],
    ),
    ("AccountRateLimitsUpdatedNotification", &["rateLimits"]),
    ("RateLimitSnapshot", &["primary", "secondary", "rateLimitReachedType"]),
    ("RateLimitWindow", &["usedPercent", "resetsAt"]),
    ("ErrorNotification", &["threadId", "error", "willRetry"]),
    ("TurnError", &["message", "codexErrorInfo"]),
    (
        "CommandExecutionRequestApprovalParams",
        &["threadId", "itemId", "approvalId", "command", "cwd", "reason"],
    ),
    (
        "FileChangeRequestApprovalParams",
        &["threadId", "itemId", "reason", "grantRoot"],
    ),
];

/// The Rust source for [`WANTED`], from the schema bundle in `dir` (what
/// `generate-json-schema` wrote), headed with the Codex version.
pub fn generate(dir: &Path, codex_version: &str) -> Result<String, String> {
    let path = dir.join("codex_app_server_protocol.schemas.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bundle: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let top = bundle["definitions"].as_object().ok_or("no definitions")?;
    let v2 = top.get("v2").and_then(Value::as_object);
    let find = |name: &str| top.get(name).or_else(|| v2.and_then(|v2| v2.get(name)));
    let mut out = format!(
        "//! Codex's app-server protocol, as far as fugued reads it: generated from\n\
         //! `codex app-server generate-json-schema` (Codex {codex_version}) by\n\
         //! tests/src/codex_schema.rs. Do not edit: `FUGUE_WRITE_CODEX_TYPES=1 cargo\n\
         //! nextest run -p fugue-tests --test agents -E 'test(/app_server_types/)'`\n\
         //! writes it again. Every field is optional: what another Codex leaves out\n\
         //! reads as nothing.\n\n\
         #![allow(dead_code)]\n\n\
         use serde::Deserialize;\n"
    );
    for (name, fields) in WANTED {
        let schema = find(name).ok_or_else(|| format!("Codex's schema has no {name}"))?;
        let props = properties(schema);
        out.push_str(&format!(
            "\n#[derive(Clone, Debug, Default, Deserialize)]\n#[serde(default)]\npub struct {name} {{\n"
        ));
        for field in *fields {
            let prop = props
                .get(*field)
                .ok_or_else(|| format!("Codex's {name} has no field {field}"))?;
            let rust = rust_type(prop);
            out.push_str(&format!(
                "    #[serde(rename = \"{field}\")]\n    pub {}: Option<{rust}>,\n",
                snake(field)
            ));
        }
        out.push_str("}\n");
    }
    Ok(out)
}

/// An object's properties, or every branch's of a union.
fn properties(schema: &Value) -> Map<String, Value> {
    let mut props = schema["properties"].as_object().cloned().unwrap_or_default();
    for key in ["oneOf", "anyOf"] {
        for branch in schema[key].as_array().into_iter().flatten() {
            for (name, prop) in branch["properties"].as_object().into_iter().flatten() {
                props.entry(name.clone()).or_insert_with(|| prop.clone());
            }
        }
    }
    props
}

/// The Rust type of a property (inside the `Option` every field gets).
fn rust_type(prop: &Value) -> String {
    if let Some(reference) = prop["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap_or("");
        return match WANTED.iter().any(|(n, _)| *n == name) {
            true => name.to_string(),
            false => "serde_json::Value".into(),
        };
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = prop[key].as_array() {
            let real: Vec<&Value> = branches.iter().filter(|b| b["type"] != "null").collect();
            return match real.as_slice() {
                [only] => rust_type(only),
                _ => "serde_json::Value".into(),
            };
        }
    }
    let kinds: Vec<&str> = match &prop["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| *k != "null")
            .collect(),
        _ => Vec::new(),
    };
    match kinds.as_slice() {
        ["string"] => "String".into(),
        ["integer"] => "i64".into(),
        ["number"] => "f64".into(),
        ["boolean"] => "bool".into(),
        ["array"] if prop["items"]["type"] == "string" => "Vec<String>".into(),
        _ => "serde_json::Value".into(),
    }
}

/// `threadId` -> `thread_id`; `type` -> `kind`.
fn snake(name: &str) -> String {
    if name == "type" {
        return "kind".into();
    }
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
