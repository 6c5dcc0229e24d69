//! Target syntax and resolution, shared by every request that names a session or pane.
//!
//! A session target is a full UUID, a unique UUID prefix (at least 4 hex digits), or a
//! name. A pane target is a full UUID or unique prefix, or `SESSION:INDEX` /
//! `SESSION:TITLE`.

use crate::error::{ErrorCode, ErrorReply};
use uuid::Uuid;

/// Shortest UUID prefix accepted as a target.
pub const MIN_PREFIX: usize = 4;

/// Longest session name.
pub const MAX_SESSION_NAME: usize = 64;

/// A pane target, parsed but not yet resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaneTarget<'a> {
    /// A full UUID or a prefix of one.
    Id(&'a str),
    /// A pane inside a named (or id'd) session.
    InSession { session: &'a str, pane: PaneSelector<'a> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PaneSelector<'a> {
    Index(u32),
    Title(&'a str),
}

impl<'a> PaneTarget<'a> {
    pub fn parse(text: &'a str) -> Result<Self, ErrorReply> {
        let Some((session, pane)) = text.split_once(':') else {
            if text.is_empty() {
                return Err(ErrorReply::invalid(
                    "empty pane target; use an id, a prefix, or SESSION:INDEX",
                ));
            }
            return Ok(PaneTarget::Id(text));
        };
        if session.is_empty() || pane.is_empty() {
            return Err(ErrorReply::invalid(format!(
                "bad pane target '{text}'; use SESSION:INDEX or SESSION:TITLE"
            )));
        }
        let pane = match pane.parse::<u32>() {
            Ok(index) => PaneSelector::Index(index),
            Err(_) => PaneSelector::Title(pane),
        };
        Ok(PaneTarget::InSession { session, pane })
    }
}

/// Checks a session name: 1-64 characters, none of `.` `:` `/`, whitespace,
/// control or bidi-override characters (see [`crate::limits::is_unsafe_char`]).
pub fn validate_session_name(name: &str) -> Result<(), ErrorReply> {
    let len = name.chars().count();
    if len == 0 || len > MAX_SESSION_NAME {
        return Err(ErrorReply::invalid(format!(
            "session name must be 1-{MAX_SESSION_NAME} characters, got {len}"
        )));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| matches!(c, '.' | ':' | '/') || c.is_whitespace() || crate::limits::is_unsafe_char(*c))
    {
        return Err(ErrorReply::invalid(format!(
            "session name {} contains {}; names may not contain '.', ':', '/', whitespace, control or bidi-override characters",
            crate::limits::escape_for_display(name),
            crate::limits::escape_for_display(&bad.to_string())
        )));
    }
    Ok(())
}

/// One thing a target may name.
pub struct Candidate<'a> {
    pub id: Uuid,
    pub name: &'a str,
}

/// Resolves `query` against `candidates`: full UUID, then exact name, then unique
/// UUID prefix. `kind` ("session", "pane") and `not_found` shape the messages.
pub fn resolve<'a>(
    query: &str,
    candidates: impl Iterator<Item = Candidate<'a>> + Clone,
    kind: &str,
    not_found: ErrorCode,
) -> Result<Uuid, ErrorReply> {
    if let Ok(id) = Uuid::parse_str(query) {
        if candidates.clone().any(|c| c.id == id) {
            return Ok(id);
        }
        return Err(ErrorReply::new(not_found, format!("{kind} not found: {id}")));
    }
    let by_name: Vec<Uuid> = candidates.clone().filter(|c| c.name == query).map(|c| c.id).collect();
    match by_name.as_slice() {
        [id] => return Ok(*id),
        [] => {}
        many => {
            return Err(ErrorReply::new(
                ErrorCode::Ambiguous,
                format!(
                    "{kind} '{query}' is ambiguous: {} {kind}s have that name; use an id",
                    many.len()
                ),
            ))
        }
    }
    if is_prefix(query) {
        let needle = query.to_ascii_lowercase();
        let matches: Vec<Candidate> = candidates
            .clone()
            .filter(|c| {
                c.id.hyphenated().to_string().starts_with(&needle) || c.id.simple().to_string().starts_with(&needle)
            })
            .collect();
        match matches.as_slice() {
            [one] => return Ok(one.id),
            [] => {}
            many => {
                let list: Vec<String> = many.iter().map(|c| format!("{} ({})", c.id, c.name)).collect();
                return Err(ErrorReply::new(
                    ErrorCode::Ambiguous,
                    format!("{kind} prefix '{query}' is ambiguous: {}", list.join(", ")),
                ));
            }
        }
    }
    let names: Vec<&str> = candidates.map(|c| c.name).collect();
    let known = if names.is_empty() {
        format!("there are no {kind}s")
    } else {
        format!("{kind}s: {}", names.join(", "))
    };
    Err(ErrorReply::new(
        not_found,
        format!("{kind} not found: '{query}'; {known}"),
    ))
}

fn is_prefix(query: &str) -> bool {
    let hex = query.chars().filter(|c| *c != '-').count();
    hex >= MIN_PREFIX && query.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> Vec<(Uuid, &'static str)> {
        vec![
            (Uuid::parse_str("aaaa1111-0000-4000-8000-000000000001").unwrap(), "api"),
            (Uuid::parse_str("aaaa2222-0000-4000-8000-000000000002").unwrap(), "web"),
        ]
    }

    fn run(query: &str) -> Result<Uuid, ErrorReply> {
        let list = ids();
        resolve(
            query,
            list.iter().map(|(id, name)| Candidate { id: *id, name }),
            "session",
            ErrorCode::SessionNotFound,
        )
    }

    #[test]
    fn resolves_uuid_name_and_prefix() {
        let list = ids();
        assert_eq!(run(&list[0].0.to_string()).unwrap(), list[0].0);
        assert_eq!(run("web").unwrap(), list[1].0);
        assert_eq!(run("aaaa1").unwrap(), list[0].0);
        assert_eq!(run("AAAA2222").unwrap(), list[1].0);
    }

    #[test]
    fn ambiguous_and_missing() {
        let err = run("aaaa").unwrap_err();
        assert_eq!(err.code, ErrorCode::Ambiguous);
        assert!(
            err.message.contains("(api)") && err.message.contains("(web)"),
            "{}",
            err.message
        );
        let err = run("dev").unwrap_err();
        assert_eq!(err.code, ErrorCode::SessionNotFound);
        assert_eq!(err.message, "session not found: 'dev'; sessions: api, web");
        // Three hex digits are too short to be a prefix.
        assert_eq!(run("aaa").unwrap_err().code, ErrorCode::SessionNotFound);
    }

    #[test]
    fn pane_targets() {
        assert_eq!(PaneTarget::parse("abcd").unwrap(), PaneTarget::Id("abcd"));
        assert_eq!(
            PaneTarget::parse("dev:2").unwrap(),
            PaneTarget::InSession {
                session: "dev",
                pane: PaneSelector::Index(2)
            }
        );
        assert_eq!(
            PaneTarget::parse("dev:server").unwrap(),
            PaneTarget::InSession {
                session: "dev",
                pane: PaneSelector::Title("server")
            }
        );
        assert!(PaneTarget::parse("dev:").is_err());
        assert!(PaneTarget::parse("").is_err());
    }

    #[test]
    fn session_names() {
        assert!(validate_session_name("dev-1_x").is_ok());
        for bad in [
            "",
            "a.b",
            "a:b",
            "a/b",
            "a b",
            "a\tb",
            "a\u{7}",
            &"x".repeat(65),
            "a\u{202e}b",
            "\u{2066}x",
        ] {
            assert!(validate_session_name(bad).is_err(), "{bad:?}");
        }
        let message = validate_session_name("gnp\u{202e}exe").unwrap_err().message;
        assert_eq!(
            message,
            "session name gnp\\u{202e}exe contains \\u{202e}; names may not contain '.', ':', '/', whitespace, control or bidi-override characters"
        );
    }
}
