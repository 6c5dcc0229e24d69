//! The names of the protocol's enums as people and JSON see them, derived with
//! strum (`snake_case` unless a variant says otherwise), and parsing them back
//! with an error that lists what would work. serde writes the same names (a
//! test holds them equal), and with the `schema` feature each enum's JSON
//! Schema is a string enum of them: the MCP tools' schemas and the OpenAPI
//! document list the values instead of a hand-kept sentence.

use std::str::FromStr;
use strum::VariantNames;

/// `text` as one of `T`'s names; else a one-line error naming what was given
/// and every name `T` has, then `extra` (words the caller accepts besides).
pub fn parse<T: FromStr + VariantNames>(text: &str, what: &str, extra: &[&str]) -> Result<T, String> {
    text.parse().map_err(|_| {
        let names: Vec<&str> = T::VARIANTS.iter().chain(extra).copied().collect();
        format!("unknown {what} '{text}'; use one of {}", names.join(", "))
    })
}

/// `impl JsonSchema` for string enums: `{"type": "string", "enum": [names]}`
/// from strum's names, inlined (no `$ref`: a plain enum is what every MCP
/// client's schema reader takes, Gemini's strict one included).
#[cfg(feature = "schema")]
macro_rules! string_enum_schemas {
    ($($enum:ty),+ $(,)?) => {$(
        impl schemars::JsonSchema for $enum {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($enum).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "enum": <$enum as VariantNames>::VARIANTS,
                })
            }
        }
    )+};
}

#[cfg(feature = "schema")]
string_enum_schemas!(
    crate::AgentKind,
    crate::AgentState,
    crate::TurnState,
    crate::Attention,
    crate::StateSource,
    crate::PromptOutcome,
    crate::WaitCondition,
    crate::MatchOn,
    crate::RowOrigin,
);

#[cfg(test)]
mod tests {
    use crate::{
        AgentKind, AgentState, Attention, ErrorCode, PaneState, PromptOutcome, RestartPolicy, SizePolicy, StateSource,
        TurnState, WaitCondition,
    };
    use strum::VariantArray;

    /// serde's name of every variant is strum's (what the CLI prints and
    /// parses, and the JSON Schema lists), and, where `old_names_read`, the
    /// name serde wrote before (the variant's own, as in records kept on
    /// disk) still reads.
    fn serde_names_are_strum_names<T>(as_str: fn(&T) -> &'static str, old_names_read: bool)
    where
        T: VariantArray + Copy + std::fmt::Debug + PartialEq + serde::Serialize + serde::de::DeserializeOwned,
    {
        for variant in T::VARIANTS {
            let json = serde_json::to_value(variant).unwrap();
            assert_eq!(json, as_str(variant), "{variant:?}");
            let old = serde_json::Value::String(format!("{variant:?}"));
            assert_eq!(
                serde_json::from_value::<T>(old).ok(),
                old_names_read.then_some(*variant)
            );
        }
    }

    #[test]
    fn json_says_what_the_cli_says() {
        use crate::MatchOn;
        serde_names_are_strum_names(AgentKind::as_str, true);
        serde_names_are_strum_names(AgentState::as_str, true);
        serde_names_are_strum_names(TurnState::as_str, true);
        serde_names_are_strum_names(Attention::as_str, true);
        serde_names_are_strum_names(StateSource::as_str, true);
        serde_names_are_strum_names(PromptOutcome::as_str, true);
        serde_names_are_strum_names(WaitCondition::as_str, true);
        // Only ever read from a person or an agent (never kept on disk): a
        // bad one is refused naming just the two good ones.
        serde_names_are_strum_names(MatchOn::as_str, false);
        serde_names_are_strum_names(crate::RowOrigin::as_str, true);
    }

    /// Every name, in declaration order: they are what JSON, the CLI, MCP and
    /// HTTP say, so a renamed variant must not change one unnoticed.
    fn names<T: VariantArray + Copy>(as_str: fn(&T) -> &'static str) -> Vec<&'static str> {
        T::VARIANTS.iter().map(as_str).collect()
    }

    #[test]
    fn names_are_the_published_ones() {
        let kinds = ["claude", "codex", "gemini", "qwen", "opencode", "aider"];
        assert_eq!(names(AgentKind::as_str), kinds);
        let states = [
            "waiting_for_permission",
            "busy",
            "idle",
            "exited",
            "starting",
            "unknown",
            "waiting_for_answer",
            "hibernated",
            "limited",
        ];
        assert_eq!(names(AgentState::as_str), states);
        assert_eq!(names(TurnState::as_str), ["running", "not_running", "unknown"]);
        let needs = ["nothing", "permission", "question", "finished_unseen"];
        assert_eq!(names(Attention::as_str), needs);
        let sources = ["app_server", "hook", "terminal", "session_file", "screen"];
        assert_eq!(names(StateSource::as_str), sources);
        assert_eq!(names(PromptOutcome::as_str), ["started", "prompt_stalled"]);
        assert_eq!(names(crate::RowOrigin::as_str), ["pane", "claude_background"]);
        assert_eq!(names(RestartPolicy::as_str), ["never", "on-failure", "always"]);
        let conditions = ["exit", "pattern", "idle", "agent_state", "agent_needs", "timeout"];
        assert_eq!(names(WaitCondition::as_str), conditions);
        assert_eq!(names(SizePolicy::as_str), ["latest", "smallest", "largest"]);
        assert_eq!(
            names(PaneState::as_str),
            ["running", "exited", "restarting", "lost", "hibernated"]
        );
        assert_eq!(ErrorCode::ALL.len(), 19);
        assert_eq!(ErrorCode::PaneNotFound.as_str(), "pane_not_found");
        assert_eq!(ErrorCode::UnsupportedRequest.as_str(), "unsupported_request");
    }

    #[test]
    fn names_parse_back_and_errors_list_what_would_work() {
        for kind in AgentKind::ALL {
            assert_eq!(AgentKind::parse(kind.as_str()), Ok(*kind));
        }
        for state in AgentState::VARIANTS {
            assert_eq!(AgentState::parse(state.as_str()), Ok(*state));
        }
        assert_eq!(RestartPolicy::parse("on_failure"), Ok(RestartPolicy::OnFailure));
        assert_eq!(SizePolicy::parse("Smallest"), Ok(SizePolicy::Smallest));
        assert_eq!(
            AgentKind::parse("vim"),
            Err("unknown agent 'vim'; use one of claude, codex, gemini, qwen, opencode, aider".into())
        );
        assert_eq!(
            RestartPolicy::parse("sometimes"),
            Err("unknown restart policy 'sometimes'; use one of never, on-failure, always".into())
        );
        let need = Attention::parse("coffee").unwrap_err();
        assert_eq!(
            need,
            "unknown need 'coffee'; use one of nothing, permission, question, finished_unseen, any"
        );
    }
}
