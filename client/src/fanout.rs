//! Fan-out: one prompt to several agents at once, each in a worktree of its
//! own with a free `$PORT`, under one group name; `compare` shows them side
//! by side (state, diff stat, and once an agent is done, the group's test run
//! in its worktree); picking one merges it.
//!
//! A group's record sits under the worktree root, `groups/NAME.json`, beside
//! the members' own worktree records; test results are kept in it, keyed by
//! the exact content they ran on, so a compare runs a test again only when the
//! worktree changed.

use crate::diff::content_id;
use crate::worktree::{self, check_name, NewWorktree, WorktreeError, WorktreeRecord};
use crate::{Client, ClientError};
use fugue_protocol::{AgentState, EnvVar, SpawnSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// Most agents one fan-out starts.
pub const MAX_MEMBERS: u32 = 12;
/// Longest a group's test may run in one worktree.
const TEST_TIMEOUT: Duration = Duration::from_secs(600);
/// Characters of a test's output kept (its end).
const TEST_TAIL_CHARS: usize = 2000;
/// Members compared at once (each a git diff, maybe a test).
const COMPARED_AT_ONCE: usize = 4;

/// A group as its record keeps it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct GroupRecord {
    pub name: String,
    /// The repository's main checkout.
    pub repo: String,
    pub prompt: String,
    /// The session its panes run in (named as the group).
    pub session: String,
    /// The command run in each finished member's worktree.
    pub test: Option<String>,
    pub members: Vec<Member>,
    pub created_at_ms: u64,
}

/// One agent of a group.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Member {
    /// Its worktree's name (`GROUP-KIND-N`).
    pub worktree: String,
    pub agent: String,
    pub pane: String,
    /// The `$PORT` it was given, free when it started.
    pub port: u16,
    /// The last test run, on the content it ran on.
    #[serde(default)]
    pub test: Option<TestRun>,
}

/// A test run in a member's worktree.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct TestRun {
    /// The worktree's content it ran on (a git tree id).
    pub content: String,
    pub passed: bool,
    /// `None` when it was killed (timed out) or could not run.
    pub exit_code: Option<i32>,
    /// The end of its output.
    pub output: String,
    pub seconds: f64,
}

/// What a fan-out starts.
#[derive(Clone, Debug, Default)]
pub struct Fanout {
    /// A directory in the repository.
    pub dir: PathBuf,
    /// The group's name (default `fan-` and 6 hex digits).
    pub name: Option<String>,
    /// Agent kinds and how many of each, in order.
    pub agents: Vec<(String, u32)>,
    /// Agent kind -> its command line (the prompt is added as its last argument).
    pub commands: BTreeMap<String, String>,
    pub prompt: String,
    pub base: Option<String>,
    pub test: Option<String>,
}

/// How each agent kind starts: by its own name, unless `overrides` (each
/// `KIND=COMMAND`, as `--agent-command` takes them) say otherwise.
pub fn agent_commands(overrides: &[String]) -> Result<BTreeMap<String, String>, WorktreeError> {
    let mut commands: BTreeMap<String, String> = fugue_protocol::AgentKind::ALL
        .iter()
        .map(|k| (k.as_str().to_string(), k.as_str().to_string()))
        .collect();
    for entry in overrides {
        let Some((name, command)) = entry
            .split_once('=')
            .filter(|(n, c)| !n.is_empty() && !c.trim().is_empty())
        else {
            return Err(WorktreeError::Invalid(format!(
                "bad --agent-command '{entry}'; use NAME=CMD"
            )));
        };
        commands.insert(name.to_string(), command.to_string());
    }
    Ok(commands)
}

/// `claude:2,codex:1` (a kind alone counts one).
pub fn parse_agents(text: &str) -> Result<Vec<(String, u32)>, WorktreeError> {
    let invalid = |why: String| WorktreeError::Invalid(format!("--agents '{text}': {why}"));
    let mut agents = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (kind, count) = match part.split_once(':') {
            Some((kind, count)) => {
                let count = count
                    .parse::<u32>()
                    .map_err(|_| invalid(format!("'{count}' is not a count")))?;
                (kind.trim(), count)
            }
            None => (part, 1),
        };
        if count == 0 {
            return Err(invalid(format!("{kind}: a count of 0 starts nothing")));
        }
        agents.push((kind.to_string(), count));
    }
    let total: u64 = agents.iter().map(|(_, n)| u64::from(*n)).sum();
    if agents.is_empty() {
        return Err(invalid("name at least one agent, as claude:2,codex:1".into()));
    }
    if total > u64::from(MAX_MEMBERS) {
        return Err(invalid(format!("{total} agents; at most {MAX_MEMBERS} at once")));
    }
    Ok(agents)
}

fn groups_dir() -> Result<PathBuf, WorktreeError> {
    Ok(worktree::root()?.join("groups"))
}

fn group_path(name: &str) -> Result<PathBuf, WorktreeError> {
    Ok(groups_dir()?.join(format!("{name}.json")))
}

fn save(group: &GroupRecord) -> Result<(), WorktreeError> {
    let dir = groups_dir()?;
    let io = |e: std::io::Error| WorktreeError::Io(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(io)?;
    let text = serde_json::to_vec_pretty(group).map_err(|e| WorktreeError::Io(e.to_string()))?;
    let temporary = dir.join(format!(".{}.json.tmp", group.name));
    std::fs::write(&temporary, text).map_err(io)?;
    std::fs::rename(&temporary, group_path(&group.name)?).map_err(io)
}

/// The group named `name`.
pub fn find_group(name: &str) -> Result<GroupRecord, WorktreeError> {
    check_name(name)?;
    let path = group_path(name)?;
    let text = std::fs::read(&path).map_err(|_| {
        WorktreeError::Invalid(format!(
            "no fan-out group is named '{name}' (`fugue compare` lists them)"
        ))
    })?;
    serde_json::from_slice(&text).map_err(|e| WorktreeError::Io(format!("{}: {e}", path.display())))
}

/// Every group, by name.
pub fn groups() -> Result<Vec<GroupRecord>, WorktreeError> {
    let Ok(entries) = std::fs::read_dir(groups_dir()?) else {
        return Ok(Vec::new());
    };
    let mut groups: Vec<GroupRecord> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(groups)
}

/// The group `pane` belongs to, if any.
pub fn group_of(pane: &str) -> Result<Option<GroupRecord>, WorktreeError> {
    Ok(groups()?.into_iter().find(|g| g.members.iter().any(|m| m.pane == pane)))
}

/// Starts every agent of `fanout`, each in its own worktree with the same
/// prompt and a distinct free `$PORT`, in a new session named as the group.
/// If one cannot start, those started are released again (their worktrees
/// hold nothing yet) and nothing is left behind.
pub async fn fanout(client: &Client, fanout: &Fanout) -> Result<(GroupRecord, Vec<String>), ClientError> {
    let name = match &fanout.name {
        Some(name) => name.clone(),
        None => format!("fan-{}", &fugue_protocol::SessionId::new().simple()[..6]),
    };
    check_name(&name)?;
    if group_path(&name)?.exists() {
        return Err(WorktreeError::Invalid(format!("a fan-out group named '{name}' exists; pick another name")).into());
    }
    for (kind, _) in &fanout.agents {
        if !fanout.commands.contains_key(kind) {
            let known: Vec<&str> = fanout.commands.keys().map(String::as_str).collect();
            return Err(WorktreeError::Invalid(format!("unknown agent '{kind}'; agents: {}", known.join(", "))).into());
        }
    }
    if fanout.prompt.trim().is_empty() {
        return Err(WorktreeError::Invalid("the prompt is empty".into()).into());
    }
    let repo = worktree::toplevel(&fanout.dir).await?;
    if client.list_sessions().await?.iter().any(|s| s.name == name) {
        return Err(WorktreeError::Invalid(format!("a session named '{name}' exists; pick another group name")).into());
    }
    client.create_session(&name, Some(&repo), Vec::new()).await?;
    let ports = free_ports(fanout.agents.iter().map(|(_, n)| *n as usize).sum())?;
    let mut group = GroupRecord {
        name: name.clone(),
        repo: repo.to_string_lossy().into_owned(),
        prompt: fanout.prompt.clone(),
        session: name.clone(),
        test: fanout.test.clone(),
        members: Vec::new(),
        created_at_ms: crate::views::now_ms(),
    };
    let mut notes = Vec::new();
    let members = fanout
        .agents
        .iter()
        .flat_map(|(kind, count)| (1..=*count).map(move |n| (kind, n)));
    for ((kind, n), port) in members.zip(ports) {
        match start_member(client, fanout, &group, kind, n, port).await {
            Ok((member, said)) => {
                notes.extend(said);
                group.members.push(member);
            }
            Err(err) => {
                undo(client, &group).await;
                return Err(err);
            }
        }
    }
    notes.dedup();
    if let Err(err) = save(&group) {
        undo(client, &group).await;
        return Err(err.into());
    }
    Ok((group, notes))
}

async fn start_member(
    client: &Client,
    fanout: &Fanout,
    group: &GroupRecord,
    kind: &str,
    n: u32,
    port: u16,
) -> Result<(Member, Vec<String>), ClientError> {
    let command = fanout.commands.get(kind).map(String::as_str).unwrap_or(kind);
    let mut words = shlex::split(command).unwrap_or_default().into_iter();
    let mut spec = SpawnSpec::new(&group.session);
    spec.command = words.next();
    spec.args = words.chain(std::iter::once(fanout.prompt.clone())).collect();
    spec.shell = false;
    spec.title = Some(format!("{kind} {n}"));
    spec.purpose = Some(format!("fan-out {}: {kind} {n}", group.name));
    spec.env.push(EnvVar {
        name: "PORT".into(),
        value: port.to_string(),
    });
    let new = NewWorktree {
        dir: PathBuf::from(&group.repo),
        name: Some(format!("{}-{kind}-{n}", group.name)),
        base: fanout.base.clone(),
    };
    let started = worktree::start_in_worktree(&new, spec, |spec| client.create_pane(spec)).await?;
    let member = Member {
        worktree: started.worktree.name,
        agent: kind.to_string(),
        pane: started.pane.id.to_string(),
        port,
        test: None,
    };
    Ok((member, started.notes))
}

/// Takes back a fan-out that failed part-way: its panes, worktrees, session.
async fn undo(client: &Client, group: &GroupRecord) {
    for member in &group.members {
        if let Ok(Some(record)) = worktree::find(&member.worktree, Some(&member.pane)) {
            let _ = worktree::discard(client, &record).await;
        }
    }
    let _ = client.destroy_session(&group.session).await;
}

/// `count` distinct loopback ports free now (each held until all are found).
fn free_ports(count: usize) -> Result<Vec<u16>, WorktreeError> {
    let held: Vec<std::net::TcpListener> = (0..count)
        .map(|_| std::net::TcpListener::bind(("127.0.0.1", 0)))
        .collect::<Result<_, _>>()
        .map_err(|e| WorktreeError::Io(format!("cannot find a free port: {e}")))?;
    held.iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<Result<_, _>>()
        .map_err(|e| WorktreeError::Io(format!("cannot find a free port: {e}")))
}

/// A member as `compare` shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct MemberView {
    #[serde(flatten)]
    pub member: Member,
    pub branch: Option<String>,
    /// `running`, `exited`, or `gone` (released).
    pub pane_status: String,
    pub agent_state: Option<AgentState>,
    /// Done: the agent is idle or exited (its turn ended), so its test is run.
    pub done: bool,
    pub files: usize,
    pub added: u64,
    pub removed: u64,
    /// Why the worktree could not be read (removed outside fugue, say).
    pub problem: Option<String>,
}

/// A group side by side.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Comparison {
    pub group: String,
    pub repo: String,
    pub prompt: String,
    pub test: Option<String>,
    pub members: Vec<MemberView>,
}

/// Each member's state and diff stat; with `run_tests`, the group's test in
/// each done member's worktree whose content changed since its last run.
pub async fn compare(client: &Client, name: &str, run_tests: bool) -> Result<Comparison, ClientError> {
    use futures::StreamExt;
    let mut group = find_group(name)?;
    let test = group.test.clone().filter(|_| run_tests);
    let views: Vec<MemberView> = futures::stream::iter(group.members.clone())
        .map(|member| compare_member(client, member, test.as_deref()))
        .buffered(COMPARED_AT_ONCE)
        .collect()
        .await;
    group.members = views.iter().map(|v| v.member.clone()).collect();
    save(&group)?;
    Ok(Comparison {
        group: group.name,
        repo: group.repo,
        prompt: group.prompt,
        test: group.test,
        members: views,
    })
}

async fn compare_member(client: &Client, mut member: Member, test: Option<&str>) -> MemberView {
    let (pane_status, agent_state) = match client.pane_status(&member.pane).await {
        Ok(info) => {
            let agent = client.agent_status(&member.pane).await.ok().map(|a| a.state);
            (info.state.as_str().to_string(), agent)
        }
        Err(_) => ("gone".to_string(), None),
    };
    let done = pane_status != "running" || matches!(agent_state, Some(AgentState::Idle | AgentState::Exited));
    let mut view = MemberView {
        branch: None,
        pane_status,
        agent_state,
        done,
        files: 0,
        added: 0,
        removed: 0,
        problem: None,
        member: member.clone(),
    };
    let record = match worktree::find(&member.worktree, Some(&member.pane)) {
        Ok(Some(record)) => record,
        Ok(None) => {
            view.problem = Some("its worktree is gone (merged or discarded)".into());
            return view;
        }
        Err(err) => {
            view.problem = Some(err.to_string());
            return view;
        }
    };
    view.branch = Some(record.branch.clone());
    match crate::diff::diff(&record, true).await {
        Ok(diff) => {
            view.files = diff.files.len();
            view.added = diff.added;
            view.removed = diff.removed;
        }
        Err(err) => view.problem = Some(err.to_string()),
    }
    if let (Some(test), true, None) = (test, done, &view.problem) {
        if let Some(run) = run_test(&record, &member, test).await {
            member.test = Some(run);
        }
    }
    view.member = member;
    view
}

/// Runs `test` in the member's worktree unless its last run was on the same
/// content; `None` when the content cannot be read.
async fn run_test(record: &WorktreeRecord, member: &Member, test: &str) -> Option<TestRun> {
    let content = content_id(record).await.ok()?;
    if let Some(last) = member.test.as_ref().filter(|t| t.content == content) {
        return Some(last.clone());
    }
    let started = Instant::now();
    let mut command = tokio::process::Command::new("sh");
    command
        .args(["-c", test])
        .current_dir(&record.path)
        .env("PORT", member.port.to_string())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let (exit_code, output) = match tokio::time::timeout(TEST_TIMEOUT, command.output()).await {
        Ok(Ok(out)) => (
            out.status.code(),
            String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned(),
        ),
        Ok(Err(e)) => (None, format!("could not run: {e}")),
        Err(_) => (
            None,
            format!("timed out after {} s and was killed", TEST_TIMEOUT.as_secs()),
        ),
    };
    Some(TestRun {
        content,
        passed: exit_code == Some(0),
        exit_code,
        output: tail(&output, TEST_TAIL_CHARS),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The last `chars` characters of `text`, without what must not reach a
/// terminal raw (newlines and tabs stay).
fn tail(text: &str, chars: usize) -> String {
    let clean = fugue_protocol::limits::strip_unsafe(text);
    let count = clean.chars().count();
    clean.chars().skip(count.saturating_sub(chars)).collect()
}

/// Picks `member` of the group: its uncommitted work committed on its own
/// branch (agents often leave it so), then merged into the base as `fugue
/// merge` does; the others are left for the person to discard.
pub async fn pick(name: &str, member: &str, squash: bool) -> Result<(worktree::Merged, Vec<Member>), ClientError> {
    let group = find_group(name)?;
    let chosen = group
        .members
        .iter()
        .find(|m| m.worktree == member || m.pane == member)
        .ok_or_else(|| WorktreeError::Invalid(format!("group {name} has no member '{member}'")))?;
    let record = worktree::find(&chosen.worktree, Some(&chosen.pane))?
        .ok_or_else(|| WorktreeError::Invalid(format!("the worktree of {} is gone", chosen.worktree)))?;
    let message = format!("fugue fan-out {name}: {} ({})", chosen.worktree, chosen.agent);
    worktree::commit_all(&record, &message).await?;
    let merged = worktree::merge(&record, None, squash).await?;
    let others = group
        .members
        .iter()
        .filter(|m| m.worktree != chosen.worktree)
        .cloned()
        .collect();
    Ok((merged, others))
}

/// Forgets a group whose members are all gone.
pub fn forget_if_empty(name: &str) -> Result<bool, WorktreeError> {
    let group = find_group(name)?;
    let left = group
        .members
        .iter()
        .any(|m| matches!(worktree::find(&m.worktree, Some(&m.pane)), Ok(Some(_))));
    if left {
        return Ok(false);
    }
    let _ = std::fs::remove_file(group_path(name)?);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_parsed_with_counts_and_limits() {
        assert_eq!(
            parse_agents("claude:2, codex:1,gemini").unwrap(),
            [
                ("claude".to_string(), 2),
                ("codex".to_string(), 1),
                ("gemini".to_string(), 1)
            ]
        );
        let err = |t: &str| parse_agents(t).unwrap_err().to_string();
        assert!(err("claude:x").contains("'x' is not a count"));
        assert!(err("claude:0").contains("a count of 0"));
        assert!(err("").contains("name at least one agent"));
        assert!(err("claude:13").contains("13 agents; at most 12"));
    }

    #[test]
    fn free_ports_are_distinct() {
        let ports = free_ports(5).unwrap();
        let mut unique = ports.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 5);
    }
}
