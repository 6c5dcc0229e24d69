//! One pane's agent CLI: what was seen of it between two looks, the look itself,
//! and the state it is in, published for every reader.
//!
//! The pane's watcher ([`super::watch`]) looks; requests and waits read what it
//! published ([`Tracker::status`], [`Tracker::news`]) instead of looking again
//! each, and a request that must be current asks the watcher for a look and
//! shares it with everyone who asked meanwhile. A look reads the screen (a copy,
//! taken under the screen's lock), then `/proc` and the agent's status file, so
//! it always runs on a blocking thread, never on a runtime worker.

use super::detect::{self as detect, AgentMemory, HookSeen};
use super::process_files;
use crate::sync::lock;
use crate::terminal::pane_output::{AgentInputs, PaneOutput};
use fugue_protocol::{
    AgentInfo, AgentKind, AgentState, Attention, ErrorCode, ErrorReply, PermissionAnswer, PromptReceipt, SignalReading,
    StateSource, TurnState,
};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Notify};

/// Answered prompts remembered per agent process (a prompt older than that
/// many answers is long gone from its screen, so answering it is refused).
const MAX_ANSWERED_PROMPTS: usize = 64;
/// Agent changes kept for the watcher at most (the oldest go first).
const MAX_PENDING_CHANGES: usize = 16;
/// Longest a request waits for the watcher's look before it reads what was
/// published last.
const FRESH_LOOK_WAIT: Duration = Duration::from_secs(2);

/// The process a look is about.
#[derive(Clone, Debug)]
pub struct Proc {
    pub command: Vec<String>,
    pub pid: u32,
    /// When it started (Unix ms).
    pub started_at_ms: u64,
    pub exited: bool,
}

impl Proc {
    pub fn of(info: &fugue_protocol::PaneInfo) -> Self {
        Proc {
            command: info.command.clone(),
            pid: info.pid,
            started_at_ms: info.started_at_ms,
            exited: info.exit.is_some(),
        }
    }
}

/// A look's result, numbered by the requests it answers.
#[derive(Clone, Debug, Default)]
struct Published {
    /// Requests for a look up to this number were asked before this look began.
    serves: u64,
    info: Option<AgentInfo>,
}

/// What is remembered of the agent CLI in a pane between two looks.
struct AgentSide {
    /// The last state reported, and since when (Unix ms).
    seen: Option<(AgentState, u64)>,
    /// The process all below is about: a restarted pane's new process starts
    /// from nothing.
    pid: u32,
    /// What was seen of it before (its interface, a turn).
    memory: AgentMemory,
    /// Its last hook report.
    hook: Option<HookSeen>,
    /// The session id its hooks gave.
    hook_session: Option<String>,
    /// The session id found by looking at the process (Codex), and when it was
    /// last looked for.
    found_session: Option<String>,
    session_looked_at: Option<Instant>,
    /// When its last turn ended, and when a person last looked at the pane
    /// (attached or typed).
    finished_at: Option<Instant>,
    looked_at: Instant,
    /// The last state and needs reported, and the changes not yet pushed.
    last_change: Option<(AgentState, Attention)>,
    changes: Vec<AgentInfo>,
    /// The permission prompts answered (most recent last).
    answered: VecDeque<(String, PermissionAnswer)>,
    /// The dialog block (see [`detect::dialog_on`]) of the last look, and the
    /// one shown when its prompt was last answered: a dialog with the same
    /// markers but another block after an answer is a new prompt.
    last_block: Option<u64>,
    answered_block: Option<u64>,
    /// Per signal source (hook, terminal, status file, screen): what it meant
    /// at the last look and since when (Unix ms), for `--explain`.
    signal_since: [(Option<AgentState>, u64); 5],
    /// Where its status file is (Claude Code), once found: the watcher follows it.
    status_file: Option<PathBuf>,
    /// Codex's transcript, once found.
    rollout: Option<PathBuf>,
    /// Since when the app-server and the screen disagree, and whether that
    /// was logged.
    disagree: Option<(Instant, bool)>,
}

impl AgentSide {
    fn new() -> Self {
        Self {
            seen: None,
            pid: 0,
            memory: AgentMemory::default(),
            hook: None,
            hook_session: None,
            found_session: None,
            session_looked_at: None,
            finished_at: None,
            looked_at: Instant::now(),
            last_change: None,
            changes: Vec::new(),
            answered: VecDeque::new(),
            last_block: None,
            answered_block: None,
            signal_since: [(None, 0); 5],
            status_file: None,
            rollout: None,
            disagree: None,
        }
    }

    /// Forgets a previous process's agent.
    fn for_process(&mut self, pid: u32) {
        if self.pid != pid {
            *self = AgentSide {
                pid,
                ..AgentSide::new()
            };
        }
    }

    /// Records that `state` is what is reported now; returns since when (Unix ms).
    /// `watched`: a client is attached to the pane, so a turn ending is seen.
    fn report(&mut self, state: AgentState, watched: bool) -> u64 {
        match self.seen {
            Some((seen, since)) if seen == state => since,
            previous => {
                let turn_ended = self.memory.turn_seen
                    && previous.is_some_and(|(p, _)| p.turn() == TurnState::Running)
                    && state == AgentState::Idle;
                if turn_ended && !watched {
                    self.finished_at = Some(Instant::now());
                }
                let now = fugue_protocol::now_ms();
                self.seen = Some((state, now));
                now
            }
        }
    }

    /// The signals read at a look, each with since when it has meant what it
    /// means now (its record kept per source).
    fn readings(&mut self, readings: Vec<(StateSource, String, Option<AgentState>)>) -> Vec<SignalReading> {
        let now = fugue_protocol::now_ms();
        readings
            .into_iter()
            .map(|(source, reading, means)| {
                let slot = &mut self.signal_since[source_slot(source)];
                if slot.0 != means || slot.1 == 0 {
                    *slot = (means, now);
                }
                SignalReading {
                    source,
                    reading,
                    means,
                    since_ms: slot.1,
                }
            })
            .collect()
    }

    fn needs(&self, state: AgentState) -> Attention {
        let unseen = self.finished_at.is_some_and(|at| at > self.looked_at);
        match state {
            AgentState::Idle if unseen => Attention::FinishedUnseen,
            state => state.needs(),
        }
    }

    /// Queues `info` for the watcher to push if its state or needs changed.
    fn note_change(&mut self, info: &AgentInfo) -> bool {
        if self.last_change == Some((info.state, info.needs)) {
            return false;
        }
        self.last_change = Some((info.state, info.needs));
        let excess = (self.changes.len() + 1).saturating_sub(MAX_PENDING_CHANGES);
        self.changes.drain(..excess);
        self.changes.push(info.clone());
        true
    }
}

/// A prompt's idempotency key: its receipt once sent.
struct PromptKey {
    key: String,
    receipt: Option<PromptReceipt>,
    claimed_at: Instant,
}

/// What claiming a prompt's idempotency key found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyClaim {
    /// Nobody used the key before: the claimant sends the prompt.
    Claimed,
    /// A send under it is under way (its receipt is not recorded yet).
    InFlight,
    /// Sent before: the receipt recorded then.
    Done(PromptReceipt),
}

/// Keys remembered per pane (each receipt at most
/// `limits::MAX_PROMPT_RECEIPT_BYTES`): 8 x ~4 KiB per pane at most.
const MAX_PROMPT_KEYS: usize = 8;
/// A claim whose receipt never came (the daemon finishes every send it starts,
/// so only a send stuck longer than this) is given to the next claimant.
const PROMPT_KEY_CLAIM_LIMIT: Duration = Duration::from_secs(60);

/// Where a source's record is kept in [`AgentSide::signal_since`].
fn source_slot(source: StateSource) -> usize {
    match source {
        StateSource::Hook => 0,
        StateSource::Terminal => 1,
        StateSource::SessionFile => 2,
        StateSource::Screen => 3,
        StateSource::AppServer => 4,
    }
}

/// A permission prompt's id: a digest of the agent's process, when it began
/// waiting and the dialog's marker lines, so it stays the same while the prompt
/// waits, whatever else on the screen animates.
fn prompt_id(pid: u32, since_ms: u64, dialog_digest: u64) -> String {
    let text = format!("{pid}\n{since_ms}\n{dialog_digest:016x}");
    format!("{:016x}", fugue_protocol::socket::stable_hash(text.as_bytes()))
}

/// Looks taken at agents since the daemon started, all panes together: a count
/// that stays flat while every pane is quiet (`fugue daemon status` shows it).
static LOOKS: AtomicU64 = AtomicU64::new(0);

/// How many looks have been taken at agents since the daemon started.
pub fn looks_taken() -> u64 {
    LOOKS.load(Ordering::Relaxed)
}

/// One pane's agent (see the module's comment). Shared by the pane's handle and
/// its watcher.
pub struct Tracker {
    side: Mutex<AgentSide>,
    /// Idempotency keys of prompts sent to this pane's agent, oldest first.
    prompt_keys: Mutex<VecDeque<PromptKey>>,
    /// A prompt is being sent to this pane's agent now (see `requests::prompt`).
    prompt_sending: AtomicBool,
    published: watch::Sender<Published>,
    /// Looks asked for by requests so far.
    asked: AtomicU64,
    /// A watcher runs for the pane's process and looks at its agent.
    watching: AtomicBool,
    /// Wakes the watcher: a hook reported, a person looked, a request asked.
    wake: Notify,
    /// The secret the process got in `FUGUE_PANE_TOKEN`, which its hook reports
    /// must carry; `None` until known (a pane handed over by an upgrade learns
    /// it from the process's environment).
    hook_token: Mutex<Option<String>>,
    /// Bumped when the agent's state may have changed with no output (a hook
    /// reported, a person looked, a look was published), for waits.
    news: watch::Sender<u64>,
    /// Its pane was put to rest: once the process has ended, the agent is
    /// `hibernated`, not exited.
    hibernating: AtomicBool,
    /// When a client last typed into the pane.
    typed_at: Mutex<Option<Instant>>,
    /// What its transcript said of the tokens used so far.
    token_count: Mutex<super::transcript::TokenCount>,
    /// A Codex pane's app-server connection: the first source when it speaks.
    app_server: std::sync::OnceLock<Arc<super::app_server::AppServer>>,
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker {
            side: Mutex::new(AgentSide::new()),
            prompt_keys: Mutex::new(VecDeque::new()),
            prompt_sending: AtomicBool::new(false),
            published: watch::channel(Published::default()).0,
            asked: AtomicU64::new(0),
            watching: AtomicBool::new(false),
            wake: Notify::new(),
            news: watch::channel(0).0,
            hook_token: Mutex::new(None),
            hibernating: AtomicBool::new(false),
            typed_at: Mutex::new(None),
            token_count: Mutex::new(Default::default()),
            app_server: std::sync::OnceLock::new(),
        }
    }
}

impl Tracker {
    /// What the agent is doing now. A pane whose watcher looks at its agent
    /// answers with the watcher's next look (one look for everyone asking
    /// meanwhile); any other pane is looked at here, on a blocking thread.
    pub async fn status(self: &Arc<Self>, output: &Arc<PaneOutput>, proc: Proc) -> AgentInfo {
        if self.watching.load(Ordering::Acquire) && !proc.exited {
            if let Some(info) = self.fresh().await {
                return info;
            }
        }
        self.look_off_runtime(output, proc).await
    }

    /// What the watcher published last, if it looks at this pane's agent.
    pub fn published(&self) -> Option<AgentInfo> {
        match self.watching.load(Ordering::Acquire) {
            true => self.published.borrow().info.clone(),
            false => None,
        }
    }

    /// Asks the watcher for a look and waits for it (at most [`FRESH_LOOK_WAIT`]).
    async fn fresh(&self) -> Option<AgentInfo> {
        let ticket = self.asked.fetch_add(1, Ordering::AcqRel) + 1;
        let mut published = self.published.subscribe();
        self.wake.notify_one();
        let looked = tokio::time::timeout(FRESH_LOOK_WAIT, published.wait_for(|p| p.serves >= ticket)).await;
        match looked {
            Ok(Ok(published)) => published.info.clone(),
            _ => None,
        }
    }

    /// A look, on a blocking thread (it reads `/proc` and files).
    pub async fn look_off_runtime(self: &Arc<Self>, output: &Arc<PaneOutput>, proc: Proc) -> AgentInfo {
        let (tracker, output) = (self.clone(), output.clone());
        let fallback = proc.clone();
        crate::sync::off_runtime(&crate::sync::AGENT_LOOKS, move || tracker.look(&output, &proc))
            .await
            .unwrap_or_else(|| unknown(&fallback))
    }

    /// The watcher's look: published for readers, and what requests asked
    /// for up to now answered with it.
    pub fn look_and_publish(&self, output: &PaneOutput, proc: &Proc) -> AgentInfo {
        let serves = self.asked.load(Ordering::Acquire);
        let info = self.look(output, proc);
        self.published.send_replace(Published {
            serves,
            info: Some(info.clone()),
        });
        self.news.send_modify(|n| *n += 1);
        info
    }

    /// The watcher starts (`true`) or ends (`false`) looking at this pane's agent.
    pub fn set_watching(&self, watching: bool) {
        self.watching.store(watching, Ordering::Release);
        if !watching {
            // Nobody looks for the requests waiting: they read for themselves.
            self.published.send_modify(|p| p.serves = u64::MAX);
        } else {
            self.published.send_replace(Published::default());
        }
    }

    /// Resolves when a hook reported, a person looked or a request asked for a
    /// look since the last call.
    pub async fn woken(&self) {
        self.wake.notified().await
    }

    /// Bumped when the agent's state may have changed with no output.
    pub fn news(&self) -> watch::Receiver<u64> {
        self.news.subscribe()
    }

    /// What the agent CLI in the pane (if any) is doing: from its hooks, its
    /// status file where it keeps one (Claude Code), what it told its terminal,
    /// and its screen. Reads `/proc` and files: call it off the runtime.
    pub fn look(&self, output: &PaneOutput, proc: &Proc) -> AgentInfo {
        LOOKS.fetch_add(1, Ordering::Relaxed);
        let inputs = output.agent_inputs();
        if proc.exited && self.hibernating.load(Ordering::Acquire) {
            return self.at_rest(proc, &inputs);
        }
        let Some(kind) = detect::detect_kind(&proc.command, &inputs.screen) else {
            return self.plain(&inputs, proc.exited);
        };
        let (verdict, evidence_lines, version, hook, signalled, dialog, mut readings) = {
            let mut side = lock(&self.side);
            side.for_process(proc.pid);
            let age = Duration::from_millis(fugue_protocol::now_ms().saturating_sub(proc.started_at_ms));
            let look = detect::ScreenLook {
                screen: &inputs.screen,
                quiet: inputs.quiet,
                age,
                drawn: inputs.drawn,
                exited: proc.exited,
                first_prompt: detect::started_with_prompt(kind, &proc.command),
            };
            let (state, evidence) = detect::detect_state(kind, &look, &mut side.memory);
            // The dialog it shows, if any (for the verdict and the prompt's id).
            let dialog = detect::dialog_on(kind, &inputs.screen);
            let verdict = detect::ScreenVerdict {
                state,
                sure: !evidence.is_empty(),
                prompt_shown: dialog.is_some(),
                changed_at: inputs.last_output,
            };
            let version = detect::version(kind, &inputs.screen);
            let hook_seen = side.hook.filter(|_| !proc.exited);
            let hook = hook_seen.and_then(|h| detect::state_from_hook(h, &verdict));
            let terminal = detect::terminal_signal(kind, &inputs.signals);
            let signalled = terminal
                .clone()
                .and_then(|(signal, line)| Some((detect::state_from_signal(signal, &verdict)?, line)));
            let mut readings = Vec::new();
            if let Some(seen) = hook_seen {
                let reading = format!("reported {}", seen.state.as_str());
                readings.push((StateSource::Hook, reading, hook));
            }
            if let Some((_, line)) = terminal {
                let means = signalled.as_ref().map(|(state, _)| *state);
                readings.push((StateSource::Terminal, line, means));
            }
            let screen_reading = match evidence.is_empty() {
                true => format!("no marker; quiet {} ms", inputs.quiet.as_millis()),
                false => evidence.join(" | "),
            };
            readings.push((StateSource::Screen, screen_reading, Some(state)));
            (verdict, evidence, version, hook, signalled, dialog, readings)
        };
        // The status file and the process are read outside the lock.
        let (status_file, file) = match (kind, proc.exited) {
            (AgentKind::Claude, false) => self.claude_status_file(proc.pid),
            _ => (None, None),
        };
        let found_session = match (kind, proc.exited) {
            (AgentKind::Codex, false) => self.look_for_codex_session(proc.pid),
            _ => None,
        };
        // What the terminal signals say counts like a marker on screen.
        let (screen_state, screen_sure) = match &signalled {
            Some((state, _)) => (*state, true),
            None => (verdict.state, verdict.sure),
        };
        let from_file = file
            .as_ref()
            .and_then(|f| detect::state_from_session_file(&f.status, screen_state, screen_sure));
        if let Some(file) = &file {
            readings.push((StateSource::SessionFile, format!("status: {}", file.status), from_file));
        }
        let (state, source, evidence) = match (hook, &file, from_file, signalled) {
            (Some(state), ..) => (state, StateSource::Hook, vec![format!("hook: {}", state.as_str())]),
            (None, Some(file), Some(state), _) => (
                state,
                StateSource::SessionFile,
                vec![format!("status: {}", file.status)],
            ),
            (.., Some((state, line))) => (state, StateSource::Terminal, vec![line]),
            _ => (verdict.state, StateSource::Screen, evidence_lines),
        };
        // Read elsewhere than on the screen, a permission is still asked there:
        // its lines are what a person answering from the page or a push reads.
        let mut evidence = evidence;
        if state == AgentState::WaitingForPermission && source != StateSource::Screen {
            evidence.extend(detect::dialog_lines(kind, &inputs.screen).unwrap_or_default());
        }
        let limit = super::limit::limit_on(kind, &inputs.screen, chrono::Local::now());
        let tokens = match proc.exited {
            false => self.tokens(kind, file.as_ref()),
            true => None,
        };
        let mut side = lock(&self.side);
        // Output flowing with no marker is a guess of busy (an agent drawing
        // itself at start-up, say), no turn: one that ends is no finished turn.
        let guessed = source == StateSource::Screen && evidence.is_empty();
        let app = self.app_server().and_then(|server| server.reading());
        let screen_said = state;
        let screen = super::limit::with_limit(&mut side.memory, (state, source, evidence), &verdict, limit);
        let (state, source, evidence, resets_at_ms) = match &app {
            // The app-server's own account comes first; the screen's stays
            // the cross-check.
            Some(said) => {
                super::app_server::cross_check(&mut side.disagree, said.state, screen_said);
                readings.push((
                    StateSource::AppServer,
                    format!("thread {}", said.state.as_str()),
                    Some(said.state),
                ));
                super::app_server::weigh(said, screen, verdict.prompt_settled())
            }
            None => screen,
        };
        if state.turn() == TurnState::Running && !guessed {
            side.memory.turn_seen = true;
        }
        let waiting = state == AgentState::WaitingForPermission;
        side.last_block = dialog.filter(|_| waiting).map(|(_, block)| block);
        if !waiting {
            side.answered_block = None;
        } else if side.answered_block.is_some() && side.answered_block != side.last_block {
            // The answered prompt is gone and another with the same look shows
            // without the agent having left the waiting state in between: it
            // begins waiting anew, with a prompt id of its own.
            side.answered_block = None;
            side.seen = None;
        }
        // A look that caught the file mid-replace keeps following where it was.
        if status_file.is_some() {
            side.status_file = status_file;
        }
        let since_ms = side.report(state, inputs.watched);
        let signals = side.readings(readings);
        if let Some((id, rollout)) = found_session {
            side.found_session = Some(id);
            side.rollout = Some(rollout);
        }
        let session_id = side
            .hook_session
            .clone()
            .or_else(|| file.as_ref().and_then(|f| f.session_id.clone()))
            .or_else(|| side.found_session.clone());
        let info = AgentInfo {
            agent: Some(kind),
            state,
            needs: side.needs(state),
            source,
            version: file.and_then(|f| f.version).or(version),
            session_id,
            since_ms,
            prompt_id: match &app {
                Some(said) => said.prompt_id.clone().filter(|_| waiting),
                None => dialog
                    .filter(|_| waiting)
                    .map(|(markers, _)| prompt_id(proc.pid, since_ms, markers)),
            },
            evidence,
            signals,
            // A dialog's choices sit where a draft would ("❯ 1. Yes").
            draft: match state {
                AgentState::WaitingForPermission | AgentState::WaitingForAnswer => None,
                _ => detect::draft(kind, &inputs.screen, inputs.cursor),
            },
            resets_at_ms,
            tokens: app.as_ref().and_then(|said| said.tokens).or(tokens),
        };
        // Whoever saw a change first (the watcher, a wait, a status request),
        // the watcher reports it: a waiting state that lasts 200 ms between two of
        // its own looks is still pushed, in order.
        if side.note_change(&info) {
            drop(side);
            self.wake.notify_one();
        }
        info
    }

    /// A hibernated pane's agent: at rest until woken.
    fn at_rest(&self, proc: &Proc, inputs: &AgentInputs) -> AgentInfo {
        let state = AgentState::Hibernated;
        let mut side = lock(&self.side);
        let info = AgentInfo {
            agent: detect::detect_kind(&proc.command, &inputs.screen),
            state,
            needs: state.needs(),
            source: StateSource::Screen,
            version: None,
            session_id: side.hook_session.clone().or_else(|| side.found_session.clone()),
            prompt_id: None,
            since_ms: side.report(state, inputs.watched),
            evidence: vec!["hibernated by fugue; a prompt, an attach or `fugue wake` resumes it".into()],
            signals: Vec::new(),
            draft: None,
            resets_at_ms: None,
            tokens: None,
        };
        if side.note_change(&info) {
            drop(side);
            self.wake.notify_one();
        }
        info
    }

    /// Its pane is put to rest (or was, before a restart of the daemon).
    pub fn set_hibernating(&self, hibernating: bool) {
        self.hibernating.store(hibernating, Ordering::Release);
        self.news.send_modify(|n| *n += 1);
    }

    /// No agent recognised (yet): busy while output flows, idle once quiet.
    fn plain(&self, inputs: &AgentInputs, exited: bool) -> AgentInfo {
        let state = match (exited, inputs.quiet >= detect::IDLE_SETTLE) {
            (true, _) => AgentState::Exited,
            (false, true) => AgentState::Idle,
            (false, false) => AgentState::Busy,
        };
        AgentInfo {
            agent: None,
            state,
            needs: state.needs(),
            source: StateSource::Screen,
            version: None,
            session_id: None,
            prompt_id: None,
            since_ms: lock(&self.side).report(state, inputs.watched),
            evidence: Vec::new(),
            signals: Vec::new(),
            draft: None,
            resets_at_ms: None,
            tokens: None,
        }
    }

    /// Claims the permission prompt `prompt_id` for `answer`, given what the
    /// agent shows now (`shown`, from [`Tracker::status`]): `Ok(None)` when it is
    /// the prompt on screen and nobody answered it (the caller sends the
    /// answer's keys), `Ok(Some(earlier))` when it was answered before. One lock
    /// for the check and the record, so of two answers to one prompt exactly
    /// one is sent.
    pub fn claim_prompt(
        &self,
        shown: &AgentInfo,
        prompt_id: &str,
        answer: PermissionAnswer,
    ) -> Result<Option<PermissionAnswer>, ErrorReply> {
        let mut side = lock(&self.side);
        let answered = &mut side.answered;
        if let Some((_, earlier)) = answered.iter().find(|(id, _)| id == prompt_id) {
            return Ok(Some(*earlier));
        }
        match &shown.prompt_id {
            Some(id) if id == prompt_id => {}
            Some(other) => {
                return Err(ErrorReply::new(
                    ErrorCode::PromptNotShown,
                    format!(
                        "the agent now shows another permission prompt (prompt_id {other}, not {prompt_id}); nothing was sent: look at it first"
                    ),
                ))
            }
            None => {
                return Err(ErrorReply::new(
                    ErrorCode::PromptNotShown,
                    format!(
                        "the agent is not waiting for permission (it is {}); nothing was sent",
                        shown.state.as_str()
                    ),
                ))
            }
        }
        if answered.len() >= MAX_ANSWERED_PROMPTS {
            answered.pop_front();
        }
        answered.push_back((prompt_id.to_string(), answer));
        side.answered_block = side.last_block;
        Ok(None)
    }

    /// Set while a prompt is being sent to this pane's agent.
    pub fn prompt_sending(&self) -> &AtomicBool {
        &self.prompt_sending
    }

    /// Claims idempotency key `key` for a prompt (see `SendPrompt`).
    pub fn claim_prompt_key(&self, key: &str) -> KeyClaim {
        let mut keys = lock(&self.prompt_keys);
        if let Some(known) = keys.iter_mut().find(|k| k.key == key) {
            return match &known.receipt {
                Some(receipt) => KeyClaim::Done(receipt.clone()),
                None if known.claimed_at.elapsed() < PROMPT_KEY_CLAIM_LIMIT => KeyClaim::InFlight,
                None => {
                    known.claimed_at = Instant::now();
                    KeyClaim::Claimed
                }
            };
        }
        if keys.len() >= MAX_PROMPT_KEYS {
            keys.pop_front();
        }
        keys.push_back(PromptKey {
            key: key.to_string(),
            receipt: None,
            claimed_at: Instant::now(),
        });
        KeyClaim::Claimed
    }

    /// Records the receipt of the prompt the daemon sent under `key`; `None`
    /// gives the key up (the prompt was refused before anything was sent).
    pub fn settle_prompt_key(&self, key: &str, receipt: Option<PromptReceipt>) {
        let mut keys = lock(&self.prompt_keys);
        let Some(at) = keys.iter().position(|k| k.key == key) else {
            // Pushed out by newer keys meanwhile: nothing to record it under.
            return;
        };
        match receipt {
            None => {
                keys.remove(at);
            }
            Some(receipt) => keys[at].receipt = Some(receipt),
        }
    }

    /// Claude Code's status file: where a look found it before (no walk of the
    /// process tree, which a Node CLI's many threads make the dearest part of
    /// a look), else searched for under the pane's process.
    fn claude_status_file(&self, pid: u32) -> (Option<PathBuf>, Option<detect::SessionFile>) {
        let known = lock(&self.side).status_file.clone();
        if let Some(path) = known {
            if let Some(file) = process_files::claude_session_file_at(&path) {
                return (Some(path), Some(file));
            }
        }
        process_files::claude_session_file(pid).unzip()
    }

    /// Where the agent's status file is, once a look found it.
    pub fn status_file(&self) -> Option<PathBuf> {
        lock(&self.side).status_file.clone()
    }

    /// The agent's changes of state (or of `needs`) since the last call, in order.
    pub fn take_changes(&self) -> Vec<AgentInfo> {
        std::mem::take(&mut lock(&self.side).changes)
    }

    /// Codex's session, looked for at most once a second until found (it opens
    /// its transcript a moment after it starts).
    fn look_for_codex_session(&self, pid: u32) -> Option<(String, PathBuf)> {
        {
            let mut side = lock(&self.side);
            let recently = side
                .session_looked_at
                .is_some_and(|at| at.elapsed() < Duration::from_secs(1));
            if side.found_session.is_some() || side.hook_session.is_some() || recently {
                return None;
            }
            side.session_looked_at = Some(Instant::now());
        }
        process_files::codex_session(pid)
    }

    /// The tokens the agent's session used so far, from its transcript
    /// (Claude Code's beside its status file, Codex's rollout).
    fn tokens(&self, kind: AgentKind, file: Option<&detect::SessionFile>) -> Option<fugue_protocol::TokenTotals> {
        let path = match kind {
            AgentKind::Claude => {
                let status_file = lock(&self.side).status_file.clone()?;
                let file = file?;
                super::transcript::claude_transcript(&status_file, file.cwd.as_deref()?, file.session_id.as_deref()?)?
            }
            AgentKind::Codex => lock(&self.side).rollout.clone()?,
            _ => return None,
        };
        lock(&self.token_count).read(kind, &path)
    }

    /// The secret the process was given in its environment
    /// ([`super::hooks::HOOK_TOKEN_VAR`]).
    pub fn set_hook_token(&self, token: String) {
        *lock(&self.hook_token) = Some(token);
    }

    /// Whether a hook report's `token` is the one process `pid` (the pane's
    /// current process) was given.
    pub fn check_hook_token(&self, pid: u32, token: &str) -> bool {
        let known = lock(&self.hook_token).clone();
        let expected = match known {
            Some(expected) => expected,
            // Not told yet (handed over by an upgrade, or a report in the moment
            // between the spawn and being told): the process's environment says.
            None => match crate::terminal::process::env_var(pid, super::hooks::HOOK_TOKEN_VAR) {
                Some(found) => {
                    *lock(&self.hook_token) = Some(found.clone());
                    found
                }
                None => return false,
            },
        };
        // The same time whatever the report guessed.
        fugue_protocol::secret::matches(&expected, token)
    }

    /// A hook of the pane's agent (process `pid`, of kind `kind` if known) reported.
    pub fn record_hook(&self, pid: u32, kind: Option<AgentKind>, hook: &fugue_protocol::AgentHook) {
        let mut side = lock(&self.side);
        side.for_process(pid);
        if let Some(id) = hook
            .session_id
            .as_ref()
            .filter(|id| fugue_protocol::limits::is_agent_session_id(id))
        {
            side.hook_session = Some(id.clone());
        }
        if let Some(state) = kind.and_then(|k| detect::hook_state(k, hook)) {
            side.hook = Some(HookSeen {
                state,
                at: Instant::now(),
            });
        }
        drop(side);
        self.wake.notify_one();
        self.news.send_modify(|n| *n += 1);
    }

    /// Reads the agent from a Codex app-server first.
    pub fn set_app_server(&self, server: Arc<super::app_server::AppServer>) {
        let _ = self.app_server.set(server);
    }

    /// The app-server connection, if the agent has one.
    pub fn app_server(&self) -> Option<&Arc<super::app_server::AppServer>> {
        self.app_server.get()
    }

    /// The app-server said something new: the watcher looks again.
    pub fn app_server_changed(&self) {
        self.wake.notify_one();
        self.news.send_modify(|n| *n += 1);
    }

    /// A client typed into the pane (keys or a paste, not a prompt the
    /// daemon delivers).
    pub fn typed(&self) {
        *lock(&self.typed_at) = Some(Instant::now());
        self.looked_at();
    }

    /// How much longer until the last typing is `within` ago; `None` when
    /// nobody typed that recently.
    pub fn typed_within(&self, within: Duration) -> Option<Duration> {
        let at = (*lock(&self.typed_at))?;
        within.checked_sub(at.elapsed()).filter(|left| !left.is_zero())
    }

    /// A person looked at the pane (attached to it or typed into it): a finished
    /// turn is no longer unseen.
    pub fn looked_at(&self) {
        lock(&self.side).looked_at = Instant::now();
        self.wake.notify_one();
        self.news.send_modify(|n| *n += 1);
    }
}

/// What a look that could not run says: nothing is known.
fn unknown(proc: &Proc) -> AgentInfo {
    let state = match proc.exited {
        true => AgentState::Exited,
        false => AgentState::Unknown,
    };
    AgentInfo {
        agent: None,
        state,
        needs: Attention::Nothing,
        source: StateSource::Screen,
        version: None,
        session_id: None,
        since_ms: fugue_protocol::now_ms(),
        prompt_id: None,
        evidence: Vec::new(),
        signals: Vec::new(),
        draft: None,
        resets_at_ms: None,
        tokens: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::pane_output::OutputLimits;
    use fugue_protocol::PaneSize;

    fn shell() -> Proc {
        Proc {
            command: vec!["sh".into()],
            pid: 1,
            started_at_ms: fugue_protocol::now_ms(),
            exited: false,
        }
    }

    #[test]
    fn a_new_process_is_starting_until_it_draws_whatever_the_clocks_say() {
        let out = PaneOutput::new(OutputLimits::default(), PaneSize::default());
        let tracker = Tracker::default();
        let proc = |started_at_ms| Proc {
            command: vec!["claude".to_string()],
            pid: 2,
            started_at_ms,
            exited: false,
        };
        let title_at_rest = "\x1b]0;\u{2733} Claude Code\x07? for shortcuts".as_bytes();
        // A previous Claude Code's screen and title: not the new process's, however long
        // ago (by the wall clock) the new one started.
        out.push(title_at_rest);
        out.process_starting();
        let info = tracker.look(&out, &proc(0));
        assert_eq!((info.state, info.source), (AgentState::Starting, StateSource::Screen));
        // Its own first output counts, even when it came before the daemon noted
        // the start time (a fast program on a loaded machine).
        out.push(title_at_rest);
        let noted_later = fugue_protocol::now_ms() + 1000;
        let info = tracker.look(&out, &proc(noted_later));
        assert_eq!((info.state, info.source), (AgentState::Idle, StateSource::Terminal));
    }

    #[test]
    fn a_prompt_key_is_claimed_once_and_then_gives_its_receipt() {
        let tracker = Tracker::default();
        let receipt = PromptReceipt {
            outcome: fugue_protocol::PromptOutcome::Started,
            state: AgentState::Busy,
            source: StateSource::Screen,
            evidence: vec!["esc to interrupt".into()],
            at_ms: 1,
            key: Some("k".into()),
            repeated: false,
        };
        assert_eq!(tracker.claim_prompt_key("k"), KeyClaim::Claimed);
        assert_eq!(tracker.claim_prompt_key("k"), KeyClaim::InFlight);
        tracker.settle_prompt_key("k", Some(receipt.clone()));
        assert_eq!(tracker.claim_prompt_key("k"), KeyClaim::Done(receipt));
        // Given up (nothing was sent): the next claim sends.
        assert_eq!(tracker.claim_prompt_key("refused"), KeyClaim::Claimed);
        tracker.settle_prompt_key("refused", None);
        assert_eq!(tracker.claim_prompt_key("refused"), KeyClaim::Claimed);
        // Bounded: the oldest keys go.
        for n in 0..MAX_PROMPT_KEYS {
            tracker.claim_prompt_key(&format!("new-{n}"));
        }
        assert_eq!(tracker.claim_prompt_key("k"), KeyClaim::Claimed);
        tracker.settle_prompt_key("never", None);
    }

    #[tokio::test]
    async fn requests_share_the_watchers_look_and_read_it_once_published() {
        let output = Arc::new(PaneOutput::new(OutputLimits::default(), PaneSize::default()));
        let tracker = Arc::new(Tracker::default());
        tracker.set_watching(true);
        assert_eq!(tracker.published().map(|i| i.state), None);
        // Two requests ask; one look (the watcher's) answers both.
        let (a, b) = (tracker.clone(), tracker.clone());
        let (oa, ob) = (output.clone(), output.clone());
        let first = tokio::spawn(async move { a.status(&oa, shell()).await });
        let second = tokio::spawn(async move { b.status(&ob, shell()).await });
        tracker.woken().await;
        while tracker.asked.load(Ordering::Acquire) < 2 {
            tokio::task::yield_now().await;
        }
        let looked = tracker.look_and_publish(&output, &shell());
        assert_eq!(first.await.unwrap(), looked);
        assert_eq!(second.await.unwrap(), looked);
        assert_eq!(tracker.published(), Some(looked));
        // Once the watcher ends, requests look for themselves.
        tracker.set_watching(false);
        assert_eq!(tracker.published(), None);
        let state = tracker.status(&output, shell()).await.state;
        assert!(matches!(state, AgentState::Busy | AgentState::Idle), "{state:?}");
    }
}
