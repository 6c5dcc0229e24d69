//! The JSON an agent CLI gives a hook command on stdin, boiled down to what
//! fugue uses (`fugue agent-event`). Claude Code, Codex, Gemini CLI and Qwen Code
//! share the field names: `hook_event_name`, `session_id`, `notification_type`, `tool_name`.

use fugue_protocol::limits::MAX_HOOK_FIELD_CHARS;
use fugue_protocol::{AgentHook, AgentKind};
use serde_json::Value;

/// The hook report in `input` from `agent` (an [`AgentKind`] name, or unsaid).
pub fn parse(input: &[u8], agent: Option<&str>) -> Result<AgentHook, String> {
    let agent = agent.map(parse_agent).transpose()?;
    let json: Value = serde_json::from_slice(input).map_err(|e| format!("the hook's input is not JSON: {e}"))?;
    let field = |name: &str| -> Option<String> {
        let text = json.get(name)?.as_str()?;
        // Kept within the protocol's bound, without control characters.
        Some(
            text.chars()
                .filter(|c| !c.is_control())
                .take(MAX_HOOK_FIELD_CHARS)
                .collect(),
        )
    };
    let event = field("hook_event_name").ok_or("the hook's input has no hook_event_name")?;
    Ok(AgentHook {
        agent,
        event,
        session_id: field("session_id"),
        notification: field("notification_type"),
        tool: field("tool_name"),
    })
}

fn parse_agent(name: &str) -> Result<AgentKind, String> {
    AgentKind::parse(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_input_of_each_agent() {
        let claude = br#"{"session_id":"aff6","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch a"}}"#;
        let hook = parse(claude, Some("claude")).unwrap();
        assert_eq!(hook.agent, Some(AgentKind::Claude));
        assert_eq!(hook.event, "PermissionRequest");
        assert_eq!(hook.session_id.as_deref(), Some("aff6"));
        assert_eq!(hook.tool.as_deref(), Some("Bash"));
        let gemini = br#"{"session_id":"55a5","hook_event_name":"Notification","notification_type":"ToolPermission","timestamp":"x"}"#;
        let hook = parse(gemini, None).unwrap();
        assert_eq!(hook.notification.as_deref(), Some("ToolPermission"));
        assert_eq!(hook.agent, None);
    }

    #[test]
    fn bad_input_says_what_is_wrong() {
        assert!(parse(b"not json", None).unwrap_err().contains("not JSON"));
        assert!(parse(b"{}", None).unwrap_err().contains("hook_event_name"));
        assert!(parse(b"{}", Some("vim"))
            .unwrap_err()
            .contains("unknown agent 'vim'; use one of claude,"));
        let long = format!(r#"{{"hook_event_name":"{}\u0007"}}"#, "x".repeat(1000));
        let hook = parse(long.as_bytes(), None).unwrap();
        assert_eq!(hook.event.len(), MAX_HOOK_FIELD_CHARS);
    }
}
