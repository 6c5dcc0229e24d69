//! Per agent kind policies from the config file (`config.toml`, the file that
//! names notification sinks):
//!
//! ```toml
//! [agents.claude]
//! hibernate_after = "30m"   # an idle Claude Code is put to rest after 30 minutes
//! resume_after_limit = true # stopped by a usage limit: "continue" once it resets
//! resume_prompt = "continue"
//! [agents.codex]
//! app_server = false        # read Codex from its screen, not its app-server
//! [agents."*"]
//! hibernate_after = "2h"    # any other resumable agent
//! ```
//!
//! A policy that is wrong is skipped with a warning naming what was wrong: a
//! typo must not keep the daemon from starting.

use fugue_protocol::AgentKind;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The shortest `hibernate_after` taken: a shorter one would put agents to
/// rest between two prompts.
pub const MIN_HIBERNATE_AFTER: Duration = Duration::from_secs(1);

#[derive(Debug, Default, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    agents: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentPolicy {
    hibernate_after: Option<String>,
    resume_after_limit: Option<bool>,
    resume_prompt: Option<String>,
    app_server: Option<bool>,
}

/// The prompt `resume_after_limit` sends unless `resume_prompt` names another.
pub const RESUME_PROMPT: &str = "continue";
/// The longest `resume_prompt` taken.
const MAX_RESUME_PROMPT: usize = 4096;

/// One kind's policy, as read (unset keys fall back to `[agents."*"]`).
#[derive(Clone, Debug, Default)]
struct Policy {
    hibernate_after: Option<Duration>,
    resume_after_limit: Option<bool>,
    resume_prompt: Option<String>,
    app_server: Option<bool>,
}

/// What each kind of agent is policed by: how long it may sit idle (or
/// limited) before it is hibernated, and whether it is told to go on once a
/// usage limit that stopped it resets.
#[derive(Clone, Debug, Default)]
pub struct HibernateAfter {
    kinds: Vec<(AgentKind, Policy)>,
    any: Policy,
}

impl HibernateAfter {
    fn policy(&self, kind: AgentKind) -> Option<&Policy> {
        self.kinds.iter().find(|(k, _)| *k == kind).map(|(_, p)| p)
    }

    /// After how long idle an agent of `kind` is hibernated, if ever.
    pub fn of(&self, kind: AgentKind) -> Option<Duration> {
        self.policy(kind)
            .and_then(|p| p.hibernate_after)
            .or(self.any.hibernate_after)
    }

    /// Whether an agent of `kind` runs as a client of its own app-server
    /// (Codex), read through it: yes unless `app_server = false`.
    pub fn app_server(&self, kind: AgentKind) -> bool {
        let own = self.policy(kind).and_then(|p| p.app_server);
        own.or(self.any.app_server).unwrap_or(true)
    }

    /// The prompt sent once a limit that stopped an agent of `kind` resets,
    /// when `resume_after_limit` is on for it.
    pub fn resume_after_limit(&self, kind: AgentKind) -> Option<String> {
        let own = self.policy(kind);
        let on = own.and_then(|p| p.resume_after_limit).or(self.any.resume_after_limit)?;
        let prompt = own
            .and_then(|p| p.resume_prompt.clone())
            .or(self.any.resume_prompt.clone());
        on.then(|| prompt.unwrap_or_else(|| RESUME_PROMPT.into()))
    }

    /// Reads the policies of `path` (none when it does not exist or does not parse).
    pub fn read(path: &Path) -> Self {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Self::default();
        };
        match toml::from_str::<ConfigFile>(&text) {
            Ok(config) => Self::from_tables(&config.agents, path),
            Err(_) => Self::default(), // notify reports a file that does not parse
        }
    }

    fn from_tables(tables: &BTreeMap<String, toml::Value>, path: &Path) -> Self {
        let mut policy = Self::default();
        for (name, table) in tables {
            match parse_one(name, table) {
                Ok((None, one)) => policy.any = one,
                Ok((Some(kind), one)) => {
                    policy.kinds.retain(|(k, _)| *k != kind);
                    policy.kinds.push((kind, one));
                }
                Err(why) => tracing::warn!(path = %path.display(), agent = %name, why, "agent policy skipped"),
            }
        }
        policy
    }
}

fn parse_one(name: &str, table: &toml::Value) -> Result<(Option<AgentKind>, Policy), String> {
    let kind = match name {
        "*" => None,
        name => Some(AgentKind::parse(name)?),
    };
    let policy: AgentPolicy = table
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    let after = policy.hibernate_after.as_deref().map(parse_duration).transpose()?;
    if let Some(after) = after.filter(|a| *a < MIN_HIBERNATE_AFTER) {
        return Err(format!(
            "hibernate_after {after:?} is below the minimum of {MIN_HIBERNATE_AFTER:?}"
        ));
    }
    if let Some(prompt) = &policy.resume_prompt {
        if prompt.trim().is_empty() || prompt.len() > MAX_RESUME_PROMPT {
            return Err(format!(
                "resume_prompt must hold 1 to {MAX_RESUME_PROMPT} bytes, not {}",
                prompt.len()
            ));
        }
    }
    Ok((
        kind,
        Policy {
            hibernate_after: after,
            resume_after_limit: policy.resume_after_limit,
            resume_prompt: policy.resume_prompt,
            app_server: policy.app_server,
        },
    ))
}

/// `300`, `90s`, `30m`, `2h`, `500ms`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("bad duration '{text}'; use e.g. 300, 90s, 5m, 500ms"))?;
    let seconds = |factor: u64| {
        n.checked_mul(factor)
            .map(Duration::from_secs)
            .ok_or(format!("'{text}' is too long"))
    };
    match unit {
        "" | "s" => seconds(1),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => seconds(60),
        "h" => seconds(3600),
        _ => Err(format!("bad duration unit in '{text}'; use ms, s, m or h")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_the_default_are_read_and_mistakes_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let text = "[agents.claude]\nhibernate_after = \"30m\"\n[agents.\"*\"]\nhibernate_after = \"2h\"\n\
                    [agents.codex]\nhibernate_after = \"10ms\"\n[agents.nope]\nhibernate_after = \"1m\"\n\
                    [agents.gemini]\nhibernate_afterr = \"1m\"\n[[notify]]\ncommand = [\"true\"]\n";
        std::fs::write(&path, text).unwrap();
        let policy = HibernateAfter::read(&path);
        assert_eq!(policy.of(AgentKind::Claude), Some(Duration::from_secs(1800)));
        // Too short, and a misspelt key: skipped, so the default applies.
        assert_eq!(policy.of(AgentKind::Codex), Some(Duration::from_secs(7200)));
        assert_eq!(policy.of(AgentKind::Gemini), Some(Duration::from_secs(7200)));
        assert_eq!(
            HibernateAfter::read(&dir.path().join("none.toml")).of(AgentKind::Claude),
            None
        );
        assert!(parse_duration("99999999999999999h").is_err());
        assert_eq!(policy.resume_after_limit(AgentKind::Claude), None);
    }

    #[test]
    fn resume_after_limit_per_kind_with_its_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let text = "[agents.codex]\nresume_after_limit = true\n[agents.claude]\nresume_after_limit = true\n\
                    resume_prompt = \"go on\"\n[agents.gemini]\nresume_after_limit = true\nresume_prompt = \" \"\n";
        std::fs::write(&path, text).unwrap();
        let policy = HibernateAfter::read(&path);
        assert_eq!(
            policy.resume_after_limit(AgentKind::Codex).as_deref(),
            Some(RESUME_PROMPT)
        );
        assert_eq!(policy.resume_after_limit(AgentKind::Claude).as_deref(), Some("go on"));
        // An empty prompt is a mistake: that kind's policy is skipped.
        assert_eq!(policy.resume_after_limit(AgentKind::Gemini), None);
        assert_eq!(policy.resume_after_limit(AgentKind::Qwen), None);
        assert!(policy.app_server(AgentKind::Codex));
        std::fs::write(&path, "[agents.codex]\napp_server = false\n").unwrap();
        assert!(!HibernateAfter::read(&path).app_server(AgentKind::Codex));
    }
}
