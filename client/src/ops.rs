//! Operations every front end offers, with one set of parameters, names and
//! defaults: the CLI, the MCP bridge and the HTTP API take these types (or map
//! their flags onto them) and call these functions, so a wait means the same
//! thing whichever way it was asked for.

use crate::{Client, ClientError, Result};
use fugue_protocol::{
    AgentState, Attention, ErrorReply, MatchOn, PromptOutcome, PromptReceipt, ReadMode, StateSource, WaitOutcome,
    WaitUntil,
};
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// How long a wait lasts when it names no timeout (`fugue wait` passes its own:
/// a shell command waits as long as it is let).
pub const DEFAULT_WAIT_MS: u64 = 30_000;

/// Lines a grep returns when it names no limit (`fugue grep`, `fugue_grep`,
/// `GET /api/grep`).
pub const DEFAULT_GREP_MATCHES: u32 = 200;

/// Searches every pane's text and scrollback (of one session, or of all) for
/// `pattern`: at most `max_matches` lines ([`DEFAULT_GREP_MATCHES`] when `None`).
pub async fn grep(
    client: &Client,
    pattern: &str,
    session: Option<&str>,
    max_matches: Option<u32>,
) -> Result<fugue_protocol::GrepResult> {
    client
        .grep(pattern, session, max_matches.unwrap_or(DEFAULT_GREP_MATCHES))
        .await
}

/// What a wait waits for: the first condition that holds ends it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct WaitFor {
    /// Return when the process exits. (A wait always ends when the process exits.)
    pub exit: Option<bool>,
    /// A regular expression, matched within single lines.
    pub pattern: Option<String>,
    /// Where the pattern is looked for: `output` (default: the ANSI-stripped
    /// text output from `since` on) or `screen` (what the terminal shows now).
    pub on: Option<MatchOn>,
    /// Output offset to search from (a previous read's or wait's next_offset):
    /// lines that changed after it. Default: all kept output.
    #[serde(alias = "since_offset")]
    pub since: Option<u64>,
    /// Return once the terminal printed nothing for this many milliseconds.
    pub idle_ms: Option<u64>,
    /// Return when the agent CLI reaches any of these states.
    #[cfg_attr(feature = "schema", schemars(with = "Option<Vec<AgentState>>"))]
    pub agent_state: Option<Names>,
    /// Return when the agent CLI needs a person for any of these reasons
    /// (`finished_unseen`: a turn ended while nobody watched; `any`: all three).
    // (`default`: with a schema of its own, schemars would call it required,
    // and Gemini CLI refuses a call without it.)
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(schema_with = "needs_schema"))]
    pub needs: Option<Names>,
    /// Give up after this many milliseconds. Default 30000.
    pub timeout_ms: Option<u64>,
}

/// Names given as a list: an array (`["idle", "busy"]`), or, for one release,
/// the string of earlier releases with `|` or `,` between them (`"idle|busy"`).
/// Each name is checked where it is used, with a one-line error naming the
/// bad one and every good one.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Names {
    List(Vec<String>),
    Joined(String),
}

impl Names {
    /// The names as the old joined string, which the protocol's list parsers read.
    fn joined(&self) -> String {
        match self {
            Names::List(names) => names.join("|"),
            Names::Joined(text) => text.clone(),
        }
    }
}

impl From<&str> for Names {
    fn from(text: &str) -> Names {
        Names::Joined(text.into())
    }
}

/// The schema of `needs`: an array of `Attention`'s reasons, and `any`.
#[cfg(feature = "schema")]
fn needs_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut words: Vec<&str> = Attention::ANY.iter().map(Attention::as_str).collect();
    words.push("any");
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "string", "enum": words},
    })
}

impl WaitFor {
    /// The daemon's conditions and the timeout; a one-line error for a wait
    /// that names nothing to wait for or a word it does not know.
    pub fn until(&self) -> std::result::Result<(WaitUntil, Duration), String> {
        let on = self.on.unwrap_or_default();
        if on == MatchOn::Screen && self.pattern.is_none() {
            return Err("on \"screen\" needs a pattern to look for".into());
        }
        let agent_states = self
            .agent_state
            .as_ref()
            .map(|names| AgentState::parse_list(&names.joined()))
            .transpose()?;
        let agent_needs = self
            .needs
            .as_ref()
            .map(|names| Attention::parse_list(&names.joined()))
            .transpose()?;
        let until = WaitUntil {
            exit: self.exit.unwrap_or(false),
            pattern: self.pattern.clone(),
            on,
            since: self.since,
            idle_ms: self.idle_ms,
            agent_states: agent_states.unwrap_or_default(),
            agent_needs: agent_needs.unwrap_or_default(),
        };
        if !until.exit
            && until.pattern.is_none()
            && until.idle_ms.is_none()
            && until.agent_states.is_empty()
            && until.agent_needs.is_empty()
        {
            return Err("wait for something: exit, pattern, idle_ms, agent_state or needs".into());
        }
        let timeout = Duration::from_millis(self.timeout_ms.unwrap_or(DEFAULT_WAIT_MS));
        Ok((until, timeout))
    }
}

/// Waits (in the daemon, on events) for the first condition of `wait` in `pane`.
pub async fn wait(client: &Client, pane: &str, wait: &WaitFor) -> Result<WaitOutcome> {
    let (until, timeout) = wait.until().map_err(|e| ClientError::Daemon(ErrorReply::invalid(e)))?;
    client.wait_for(pane, until, timeout).await
}

/// The pane's output offset now: what comes after it is the reaction to what
/// is sent next.
pub async fn output_end(client: &Client, pane: &str) -> Result<u64> {
    let now = ReadMode::Raw {
        since: None,
        max_bytes: Some(0),
    };
    Ok(client.read_output(pane, now).await?.next_offset)
}

/// Waits for the program to react to what was just sent: its first output
/// after offset `since` (up to 3 s: a program that echoes nothing is not
/// waited for longer), then `quiet_ms` of quiet (up to `settle`). A screen long
/// quiet before the input says nothing, so quiet alone is not enough.
pub async fn wait_reaction(client: &Client, pane: &str, since: u64, quiet_ms: u64, settle: Duration) -> Result<()> {
    let reacted = WaitUntil {
        pattern: Some("[\\s\\S]".into()),
        since: Some(since),
        ..WaitUntil::default()
    };
    let settled = WaitUntil {
        idle_ms: Some(quiet_ms),
        ..WaitUntil::default()
    };
    for (until, timeout) in [(reacted, Duration::from_secs(3)), (settled, settle)] {
        client.wait_for(pane, until, timeout).await?;
    }
    Ok(())
}

/// The receipt of [`send_prompt`]: whether a turn started, with the evidence
/// and when, or that none did within the deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct PromptSent {
    /// `started` (the agent showed a turn running or asked for permission) or
    /// `prompt_stalled` (no turn within 5 s: it may still sit in the input box).
    pub outcome: PromptOutcome,
    /// Whether the agent started a turn within 5 seconds (its busy marker or a
    /// permission prompt appeared; redrawing the input box does not count).
    pub went_busy: bool,
    /// The agent's state then.
    pub state: AgentState,
    /// Where that state was read (hook, terminal, session_file, screen), and
    /// the lines or reports that showed it.
    pub source: StateSource,
    pub evidence: Vec<String>,
    /// Unix ms when the turn was seen started (or the deadline passed).
    pub at: u64,
    /// The idempotency key it was sent under, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// This is the receipt of an earlier send under the same key: nothing was
    /// sent this time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repeated: bool,
    /// What happened, in a sentence (also when the turn did not start).
    pub message: String,
}

impl From<PromptReceipt> for PromptSent {
    fn from(receipt: PromptReceipt) -> Self {
        let state = receipt.state.as_str();
        let message = match receipt.outcome {
            PromptOutcome::Started => format!("prompt submitted; the agent is {state}"),
            PromptOutcome::Stalled => format!(
                "prompt_stalled: the prompt was pasted and Enter sent, but no turn started within 5 s (the agent is {state}); \
it may still sit in the input box: look at its screen"
            ),
        };
        let message = match receipt.repeated {
            true => format!("{message} (the receipt of the earlier send under this key: nothing was sent now)"),
            false => message,
        };
        PromptSent {
            outcome: receipt.outcome,
            went_busy: receipt.outcome == PromptOutcome::Started,
            state: receipt.state,
            source: receipt.source,
            evidence: receipt.evidence,
            at: receipt.at_ms,
            key: receipt.key,
            repeated: receipt.repeated,
            message,
        }
    }
}

/// Sends a prompt to the agent CLI in `pane` as a person would: pasted, then
/// Enter once the input box has taken the paste in (its echo, then 150 ms of
/// quiet: some agent CLIs, Gemini's, ignore an Enter that comes right after a
/// bracketed paste). A program that echoes nothing gets Enter after 3 s.
///
/// A transaction the daemon runs (`SendPrompt`), with a receipt built from what
/// it saw: refused (`agent_blocked`, nothing sent) while the agent waits for a
/// person, or (`draft_present`) while a person's unsent text sits in its input
/// box; with `key`, the same key again sends nothing and returns the first
/// receipt (`prompt_in_flight` while that send is still under way).
pub async fn send_prompt(client: &Client, pane: &str, text: &str, key: Option<&str>) -> Result<PromptSent> {
    Ok(client.send_prompt(pane, text, key).await?.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_meaning_whichever_front_end_asked() {
        let asked: WaitFor =
            serde_json::from_str(r#"{"pattern": "ready", "on": "screen", "since_offset": 7, "needs": "any"}"#).unwrap();
        let (until, timeout) = asked.until().unwrap();
        assert_eq!(
            (until.on, until.since, timeout),
            (MatchOn::Screen, Some(7), Duration::from_secs(30))
        );
        assert_eq!(until.agent_needs, Attention::ANY);
        let nothing = WaitFor::default().until().unwrap_err();
        assert!(nothing.contains("wait for something"), "{nothing}");
        let bad = WaitFor {
            agent_state: Some("sleepy".into()),
            ..Default::default()
        };
        assert!(bad.until().unwrap_err().contains("unknown agent state 'sleepy'"));
        let screen_alone = WaitFor {
            on: Some(MatchOn::Screen),
            exit: Some(true),
            ..Default::default()
        };
        assert!(screen_alone.until().unwrap_err().contains("needs a pattern"));
    }

    /// Lists are arrays now; the joined string of earlier releases still
    /// means the same, and a bad name in either says which.
    #[test]
    fn lists_are_arrays_and_the_old_string_still_reads() {
        let array: WaitFor =
            serde_json::from_str(r#"{"agent_state": ["idle", "waiting_for_answer"], "needs": ["question"]}"#).unwrap();
        let joined: WaitFor =
            serde_json::from_str(r#"{"agent_state": "idle|waiting_for_answer", "needs": "question"}"#).unwrap();
        let (from_array, _) = array.until().unwrap();
        let (from_joined, _) = joined.until().unwrap();
        assert_eq!(from_array, from_joined);
        assert_eq!(
            from_array.agent_states,
            [AgentState::Idle, AgentState::WaitingForAnswer]
        );
        assert_eq!(from_array.agent_needs, [Attention::Question]);
        let any: WaitFor = serde_json::from_str(r#"{"needs": ["any"]}"#).unwrap();
        assert_eq!(any.until().unwrap().0.agent_needs, Attention::ANY);
        let bad: WaitFor = serde_json::from_str(r#"{"agent_state": ["idle", "sleepy"]}"#).unwrap();
        let error = bad.until().unwrap_err();
        assert!(
            error.contains("unknown agent state 'sleepy'") && error.contains("hibernated"),
            "{error}"
        );
        let wrong_on = serde_json::from_str::<WaitFor>(r#"{"pattern": "x", "on": "everywhere"}"#).unwrap_err();
        assert!(wrong_on.to_string().contains("`output`"), "{wrong_on}");
    }
}
