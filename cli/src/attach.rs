//! `fugue attach`: a terminal on a pane. The local terminal goes to raw mode, the
//! pane's screen is drawn, then output streams in and keystrokes go out. Detach
//! with the detach key (default `Ctrl-\`) or the prefix key (default `Ctrl-b`)
//! then `d`; prefix then `n`, `p` or a digit switches panes of the session,
//! `j` jumps to the next pane (of any session) whose agent needs the person,
//! `w` opens the overview (`fugue top`) to choose one. While attached, the
//! terminal's title says how many panes need the person, and a new need rings
//! the bell and asks the terminal for a desktop notification (OSC 9 and OSC
//! 777), unless `--no-notify`. The terminal is restored however the attachment
//! ends.

use fugue_client::{Client, ClientError};
use fugue_protocol::output_filter::OutputFilter;
use fugue_protocol::{Attention, CaptureWhat, ErrorCode, Event, PaneId, PaneInfo, PaneSize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

/// What to do with a stretch of keyboard input.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    Send(Vec<u8>),
    Detach,
    Next,
    Previous,
    Select(u32),
    /// To the next pane whose agent needs the person.
    NextNeeding,
    /// Open the overview to choose a pane.
    Overview,
    /// Zoom the focused pane of a tiled window to the whole terminal, or back.
    Zoom,
}

/// Splits keyboard input into bytes for the pane and attach commands.
#[derive(Debug)]
pub struct Keys {
    detach: u8,
    prefix: u8,
    after_prefix: bool,
}

impl Keys {
    pub fn new(detach: u8, prefix: u8) -> Self {
        Self {
            detach,
            prefix,
            after_prefix: false,
        }
    }

    pub fn feed(&mut self, input: &[u8]) -> Vec<Action> {
        let mut actions = Vec::new();
        let mut pending = Vec::new();
        for &byte in input {
            if self.after_prefix {
                self.after_prefix = false;
                let command = match byte {
                    b'd' => Some(Action::Detach),
                    b'n' | b'o' => Some(Action::Next),
                    b'z' => Some(Action::Zoom),
                    b'p' => Some(Action::Previous),
                    b'j' => Some(Action::NextNeeding),
                    b'w' => Some(Action::Overview),
                    b'0'..=b'9' => Some(Action::Select((byte - b'0') as u32)),
                    // Prefix twice sends the prefix key itself.
                    b if b == self.prefix => {
                        pending.push(byte);
                        None
                    }
                    other => {
                        pending.extend([self.prefix, other]);
                        None
                    }
                };
                if let Some(command) = command {
                    flush(&mut pending, &mut actions);
                    actions.push(command);
                }
            } else if byte == self.detach {
                flush(&mut pending, &mut actions);
                actions.push(Action::Detach);
            } else if byte == self.prefix {
                self.after_prefix = true;
            } else {
                pending.push(byte);
            }
        }
        flush(&mut pending, &mut actions);
        actions
    }
}

fn flush(pending: &mut Vec<u8>, actions: &mut Vec<Action>) {
    if !pending.is_empty() {
        actions.push(Action::Send(std::mem::take(pending)));
    }
}

/// A key name (`C-\`, `C-a`, ...) that must be one byte.
pub fn parse_key(name: &str) -> Result<u8, String> {
    match fugue_protocol::keys::encode_key(name, Default::default())?.as_slice() {
        [byte] => Ok(*byte),
        _ => Err(format!("'{name}' is not a single-byte key; use e.g. C-\\\\ or C-a")),
    }
}

/// The key that detaches, and the prefix for pane commands, unless told otherwise.
pub const DETACH_KEY: &str = "C-\\";
pub const PREFIX_KEY: &str = "C-b";

#[derive(Clone)]
pub struct AttachOptions {
    pub read_only: bool,
    pub detach_key: u8,
    pub prefix_key: u8,
    /// Let the pane's programs set this terminal's clipboard (OSC 52). Off by
    /// default: any program in the pane could otherwise write to it.
    pub clipboard: bool,
    /// Where to reconnect when the connection drops (the daemon is being
    /// upgraded, say): the attachment resumes with a redraw. `None`: end instead.
    pub reconnect: Option<fugue_client::ConnectOptions>,
    /// Say in the terminal's title how many panes need the person, and ring
    /// the bell and notify (OSC 9, OSC 777) when one newly does.
    pub notify: bool,
}

/// How long a dropped attachment keeps trying to reconnect.
const RECONNECT_FOR: std::time::Duration = std::time::Duration::from_secs(15);

/// How the attachment ended.
pub enum Ended {
    Detached(PaneId),
    Exited(PaneId, fugue_protocol::ExitStatus),
    DaemonGone,
    /// The person asked for the overview (prefix `w`), from this pane.
    Overview(PaneId),
}

/// Raw mode for as long as it lives; the terminal comes back however we leave.
pub(crate) struct RawMode;

impl RawMode {
    pub(crate) fn enter() -> Result<Self, ClientError> {
        crossterm::terminal::enable_raw_mode()
            .map_err(|e| ClientError::Protocol(format!("cannot set raw mode: {e}")))?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// The local terminal's size, brought within the daemon's limits (a huge or
/// one-column window still attaches, at the nearest size the daemon accepts).
fn terminal_size() -> Option<PaneSize> {
    crossterm::terminal::size()
        .ok()
        .map(|(cols, rows)| PaneSize { cols, rows })
        .filter(|s| s.cols > 0 && s.rows > 0)
        .map(fugue_protocol::limits::clamp_size)
}

/// Finds the pane for TARGET: a session's first pane, or a pane.
async fn resolve(client: &Client, target: &str) -> Result<PaneInfo, ClientError> {
    if !target.contains(':') {
        match client.list_panes(Some(target)).await {
            Ok(panes) => {
                return panes.into_iter().next().ok_or_else(|| {
                    ClientError::Daemon(fugue_protocol::ErrorReply::new(
                        ErrorCode::PaneNotFound,
                        format!("session '{target}' has no panes; start one with fugue run -s {target}"),
                    ))
                })
            }
            Err(err) if err.code() == Some(ErrorCode::SessionNotFound) => {}
            Err(err) => return Err(err),
        }
    }
    client.pane_status(target).await
}

pub async fn run(client: &Client, target: &str, options: AttachOptions) -> Result<Ended, ClientError> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(ClientError::Protocol(
            "fugue attach needs a terminal on stdin and stdout".into(),
        ));
    }
    let client = client.clone();
    let events = client.events()?;
    let pane = resolve(&client, target).await?;
    if pane.state == fugue_protocol::PaneState::Hibernated {
        eprintln!(
            "fugue: waking the agent in {}:{}; what you type meanwhile goes to it once it is ready",
            pane.session_name, pane.index
        );
    }
    // Raw mode before the attach: while a hibernated agent wakes (seconds),
    // what the person types waits in this terminal's input queue (the
    // kernel's, bounded), unechoed, and goes to the pane once attached; Ctrl-C
    // reaches the agent instead of ending the attach.
    let raw = RawMode::enter()?;
    client
        .attach(&pane.id.to_string(), options.read_only, size_for(options.read_only))
        .await?;
    let (mut stdin, _reader) = keyboard();
    let mut winch = signal(SignalKind::window_change()).map_err(|e| ClientError::Protocol(e.to_string()))?;
    let mut at = Attached {
        keys: Keys::new(options.detach_key, options.prefix_key),
        // One answer per terminal query (fugue's), and the clipboard only if allowed.
        filter: OutputFilter::new(options.clipboard),
        extended: false,
        needs: Needs::default(),
        stdout: std::io::stdout(),
        client,
        events,
        pane,
        options,
    };
    if at.options.notify {
        at.needs.start(&at.client).await?;
        at.needs.show_count(&mut at.stdout);
    }
    let ended = loop {
        let flow = tokio::select! {
            read = stdin.recv() => match read {
                Some(input) => at.on_input(&input).await?,
                None => Flow::End(Ended::Detached(at.pane.id)),
            },
            event = at.events.recv() => at.on_event(event).await,
            _ = winch.recv() => at.on_resize().await?,
            _ = at.client.closed() => Flow::Lost,
        };
        match flow {
            Flow::Go => {}
            Flow::End(ended) => break ended,
            Flow::Lost => {
                if let Some(ended) = at.reconnect().await? {
                    break ended;
                }
            }
        }
    };
    at.restore_terminal(&ended).await;
    drop(raw);
    Ok(ended)
}

/// The terminal's size to give the pane: none for a watcher, who resizes nothing.
fn size_for(read_only: bool) -> Option<PaneSize> {
    match read_only {
        true => None,
        false => terminal_size(),
    }
}

/// What the attachment does after a key, an event or a resize.
enum Flow {
    Go,
    End(Ended),
    /// The connection dropped: connect again and re-attach.
    Lost,
}

/// One attachment while it lasts: the pane it shows, the connection, and what
/// this terminal was told.
struct Attached {
    client: Client,
    events: fugue_client::EventStream,
    pane: PaneInfo,
    options: AttachOptions,
    needs: Needs,
    keys: Keys,
    filter: OutputFilter,
    /// Whether this terminal was asked for modified keys in xterm's form.
    extended: bool,
    stdout: std::io::Stdout,
}

impl Attached {
    /// Keys typed: sent to the pane, or what the prefix key asked for.
    async fn on_input(&mut self, input: &[u8]) -> Result<Flow, ClientError> {
        let id = self.pane.id.to_string();
        let (mut switch_to, mut jump) = (None, false);
        for action in self.keys.feed(input) {
            match action {
                Action::Send(bytes) if !self.options.read_only => match self.client.write_input(&id, &bytes).await {
                    Ok(()) => {}
                    // The connection dropped under the keystroke: reconnect
                    // (what was typed meanwhile is lost, as with ssh).
                    Err(ClientError::Closed(_)) => return Ok(Flow::Lost),
                    Err(err) => return Err(err),
                },
                Action::Send(_) => {}
                Action::Detach => return Ok(Flow::End(Ended::Detached(self.pane.id))),
                Action::Overview => return Ok(Flow::End(Ended::Overview(self.pane.id))),
                Action::Next => switch_to = Some(Step::Next),
                Action::Previous => switch_to = Some(Step::Previous),
                Action::Select(index) => switch_to = Some(Step::Index(index)),
                Action::NextNeeding => jump = true,
                // One pane: nothing to zoom.
                Action::Zoom => {}
            }
        }
        if jump {
            match self.needs.next_after(self.pane.id) {
                Some(next) => {
                    let next = self.client.pane_status(&next.to_string()).await?;
                    self.switch_to(next).await?;
                }
                None => {
                    let _ = self.stdout.write_all(b"\x07");
                    let _ = self.stdout.flush();
                }
            }
        }
        if let Some(step) = switch_to {
            if let Some(next) = neighbour(&self.client, &self.pane, step).await? {
                self.switch_to(next).await?;
            }
        }
        Ok(Flow::Go)
    }

    /// Follows `next` instead of the pane shown now.
    async fn switch_to(&mut self, next: PaneInfo) -> Result<(), ClientError> {
        self.client.detach(&self.pane.id.to_string()).await?;
        let read_only = self.options.read_only;
        self.client
            .attach(&next.id.to_string(), read_only, size_for(read_only))
            .await?;
        self.pane = next;
        Ok(())
    }

    /// The pane's output and end, and other panes' agents newly needing the person.
    async fn on_event(&mut self, event: Option<Event>) -> Flow {
        let Some(event) = event else { return Flow::Lost };
        let shown = self.pane.id;
        match event {
            Event::Redraw { pane, data } if pane == shown => {
                self.filter.reset();
                self.write_output(&data);
            }
            Event::Output { pane, data } if pane == shown => self.write_output(&data),
            Event::Exited { pane, status } if pane == shown => return Flow::End(Ended::Exited(pane, status)),
            Event::AgentStateChanged { pane, agent, .. } if self.options.notify => {
                let newly = self.needs.changed(pane, agent.needs, &mut self.stdout);
                if newly && pane != shown {
                    let label = self
                        .client
                        .pane_status(&pane.to_string())
                        .await
                        .map(|info| format!("{}:{}", info.session_name, info.index))
                        .unwrap_or_else(|_| pane.to_string());
                    notify(&mut self.stdout, &label, agent.needs);
                }
            }
            _ => {}
        }
        Flow::Go
    }

    fn write_output(&mut self, data: &[u8]) {
        let _ = self.stdout.write_all(&self.filter.filter(data));
        extended_keys(&mut self.stdout, &self.filter, &mut self.extended);
        let _ = self.stdout.flush();
    }

    async fn on_resize(&mut self) -> Result<Flow, ClientError> {
        if let (false, Some(size)) = (self.options.read_only, terminal_size()) {
            self.client.client_resize(&self.pane.id.to_string(), size).await?;
        }
        Ok(Flow::Go)
    }

    /// Connects again after the connection dropped; the end, if that failed.
    async fn reconnect(&mut self) -> Result<Option<Ended>, ClientError> {
        let read_only = self.options.read_only;
        let resumed = match &self.options.reconnect {
            Some(connect) => reattach(connect, &self.pane, read_only, size_for(read_only)).await,
            None => None,
        };
        let Some((client, events)) = resumed else {
            return Ok(Some(Ended::DaemonGone));
        };
        self.client = client;
        self.events = events;
        if self.options.notify {
            self.needs.start(&self.client).await?;
        }
        Ok(None)
    }

    /// Puts the terminal back: attributes, modes the program set, its alternate screen.
    async fn restore_terminal(&mut self, ended: &Ended) {
        let alternate = match ended {
            Ended::Detached(id) => self
                .client
                .capture(&id.to_string(), CaptureWhat::Screen, (Some(0), Some(0)), false, false)
                .await
                .map(|c| c.alternate_screen)
                .unwrap_or(false),
            _ => true,
        };
        // Attributes, cursor and its shape, cursor keys, bracketed paste, reverse
        // wraparound, mouse, focus events, the kitty keyboard flags,
        // modifyOtherKeys, keypad.
        let mut reset = String::from(
            "\x1b[0m\x1b[?25h\x1b[0 q\x1b[?1l\x1b[?2004l\x1b[?45l\x1b[?1045l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[=0;1u\x1b[>4m\x1b>",
        );
        if alternate {
            reset.push_str("\x1b[?1049l");
        }
        let _ = self.stdout.write_all(reset.as_bytes());
        if self.options.notify && self.needs.count() > 0 {
            // The count is about this attachment: it ends with it.
            let _ = self.stdout.write_all(b"\x1b]2;fugue\x07");
        }
        let _ = self.stdout.flush();
    }
}

/// Which panes' agents need the person, from the overview and then the
/// daemon's agent events.
#[derive(Default)]
struct Needs {
    needing: BTreeMap<PaneId, Attention>,
    shown: Option<usize>,
}

impl Needs {
    /// Subscribes this connection to events and reads who needs the person now.
    async fn start(&mut self, client: &Client) -> Result<(), ClientError> {
        client.call(fugue_protocol::requests::Subscribe {}).await?;
        let panes = client.overview(None).await?;
        self.needing = panes
            .iter()
            .filter_map(|p| Some((p.pane.id, p.agent.as_ref()?.needs)))
            .filter(|(_, needs)| *needs != Attention::Nothing)
            .collect();
        Ok(())
    }

    fn count(&self) -> usize {
        self.needing.len()
    }

    /// Records a change; `true` when the pane newly needs the person.
    fn changed(&mut self, pane: PaneId, needs: Attention, out: &mut impl Write) -> bool {
        let newly = match needs {
            Attention::Nothing => {
                self.needing.remove(&pane);
                false
            }
            needs => self.needing.insert(pane, needs) != Some(needs),
        };
        self.show_count(out);
        newly
    }

    /// The terminal's title says how many need the person (set only when
    /// the count changes, so a program's own title stays otherwise).
    fn show_count(&mut self, out: &mut impl Write) {
        let count = self.count();
        if self.shown == Some(count) {
            return;
        }
        let first = self.shown.is_none();
        self.shown = Some(count);
        if first && count == 0 {
            return;
        }
        let title = match count {
            0 => "fugue".to_string(),
            n => format!("fugue: {n} need you"),
        };
        let _ = write!(out, "\x1b]2;{title}\x07");
        let _ = out.flush();
    }

    /// The next pane after `current` (in id order, round) that needs the person.
    fn next_after(&self, current: PaneId) -> Option<PaneId> {
        let after = self
            .needing
            .range(current..)
            .map(|(id, _)| *id)
            .find(|id| *id != current);
        after.or_else(|| self.needing.keys().copied().find(|id| *id != current))
    }
}

/// Rings the bell and asks the terminal for a desktop notification: OSC 9
/// (iTerm2, Windows Terminal, WezTerm, ghostty, kitty) and OSC 777 (foot,
/// urxvt, VTE terminals), the two forms common terminals show.
fn notify(out: &mut impl Write, label: &str, needs: Attention) {
    let why = match needs {
        Attention::Permission => "asks for permission",
        Attention::Question => "asks a question",
        Attention::FinishedUnseen => "finished its turn",
        Attention::Nothing => return,
    };
    let label: String = label.chars().filter(|c| !c.is_control()).take(80).collect();
    let _ = write!(
        out,
        "\x07\x1b]9;fugue: {label} {why}\x07\x1b]777;notify;fugue;{label} {why}\x07"
    );
    let _ = out.flush();
}

/// While the program in the pane uses the kitty keyboard protocol, asks the
/// terminal for modified keys in xterm's modifyOtherKeys form as well, and back
/// to its default after. A terminal with the kitty protocol got the program's
/// own request and answers in kitty's form; one without it (xterm, tmux with
/// `extended-keys`) now tells Shift+Enter from Enter, and fugued turns its form
/// into kitty's for the program.
fn extended_keys(stdout: &mut impl Write, filter: &OutputFilter, extended: &mut bool) {
    let wanted = filter.kitty_keyboard();
    if wanted != *extended {
        *extended = wanted;
        let _ = stdout.write_all(if wanted { b"\x1b[>4;1m" } else { b"\x1b[>4m" });
    }
}

/// Connects again and re-attaches to `pane` (whose redraw then comes first),
/// retrying until [`RECONNECT_FOR`] has passed or the pane is gone.
async fn reattach(
    connect: &fugue_client::ConnectOptions,
    pane: &PaneInfo,
    read_only: bool,
    size: Option<PaneSize>,
) -> Option<(Client, fugue_client::EventStream)> {
    let deadline = tokio::time::Instant::now() + RECONNECT_FOR;
    let connect = connect.clone().autostart(false);
    loop {
        match Client::connect(connect.clone()).await {
            Ok(client) => {
                let events = client.events().ok()?;
                match client.attach(&pane.id.to_string(), read_only, size).await {
                    Ok(_) => return Some((client, events)),
                    Err(err) if err.code() == Some(ErrorCode::PaneNotFound) => return None,
                    Err(_) => {}
                }
            }
            // An upgrading daemon keeps its listening socket open across the
            // exec, so connects wait in its backlog; nobody listening means it
            // stopped or died, and waiting would only delay saying so.
            Err(ClientError::Connect { not_running: true, .. }) => return None,
            Err(_) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Keyboard input, read on a thread of its own. It waits for input at most
/// 50 ms at a time, so when the attachment ends (the reader is dropped) it
/// stops before taking any key meant for what comes next (the overview).
pub(crate) fn keyboard() -> (mpsc::Receiver<Vec<u8>>, KeyReader) {
    let (tx, rx) = mpsc::channel(16);
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let thread = std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut buf = vec![0u8; 16 * 1024];
        let wait = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        while !stopping.load(Ordering::Acquire) {
            let mut fds = [rustix::event::PollFd::new(&stdin, rustix::event::PollFlags::IN)];
            match rustix::event::poll(&mut fds, Some(&wait)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(_) => return,
            }
            match stdin.lock().read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.blocking_send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    (
        rx,
        KeyReader {
            stop,
            thread: Some(thread),
        },
    )
}

/// Stops the keyboard thread when dropped, and waits for it.
pub(crate) struct KeyReader {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for KeyReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            // It ends within one 50 ms wait (or one send, whose receiver is
            // dropped first, so that fails at once).
            let _ = thread.join();
        }
    }
}

enum Step {
    Next,
    Previous,
    Index(u32),
}

/// The pane a switch goes to, in the current pane's session.
async fn neighbour(client: &Client, pane: &PaneInfo, step: Step) -> Result<Option<PaneInfo>, ClientError> {
    let panes = client.list_panes(Some(&pane.session_id.to_string())).await?;
    let running: Vec<PaneInfo> = panes.into_iter().filter(|p| p.exit.is_none()).collect();
    let here = running.iter().position(|p| p.id == pane.id).unwrap_or(0);
    let count = running.len();
    if count == 0 {
        return Ok(None);
    }
    let target = match step {
        Step::Next => running.get((here + 1) % count),
        Step::Previous => running.get((here + count - 1) % count),
        Step::Index(index) => running.iter().find(|p| p.index == index),
    };
    Ok(target.filter(|p| p.id != pane.id).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_into_input_and_commands() {
        let mut keys = Keys::new(0x1c, 0x02);
        assert_eq!(keys.feed(b"ls\r"), vec![Action::Send(b"ls\r".to_vec())]);
        assert_eq!(
            keys.feed(b"ab\x1ccd"),
            vec![
                Action::Send(b"ab".to_vec()),
                Action::Detach,
                Action::Send(b"cd".to_vec())
            ]
        );
        assert_eq!(keys.feed(b"x\x02n"), vec![Action::Send(b"x".to_vec()), Action::Next]);
        assert_eq!(
            keys.feed(b"\x02p\x023\x02d"),
            vec![Action::Previous, Action::Select(3), Action::Detach]
        );
        assert_eq!(keys.feed(b"\x02j\x02w"), vec![Action::NextNeeding, Action::Overview]);
        // Prefix twice is the prefix key; prefix then anything else passes both.
        assert_eq!(keys.feed(b"\x02\x02"), vec![Action::Send(vec![0x02])]);
        assert_eq!(keys.feed(b"\x02x"), vec![Action::Send(vec![0x02, b'x'])]);
        // A tiled window's: `o` moves on, `z` zooms.
        assert_eq!(keys.feed(b"\x02o\x02z"), vec![Action::Next, Action::Zoom]);
        // A prefix at the end of one read applies to the next.
        assert_eq!(keys.feed(b"\x02"), vec![]);
        assert_eq!(keys.feed(b"d"), vec![Action::Detach]);
    }

    #[test]
    fn key_names() {
        assert_eq!(parse_key("C-\\\\").unwrap_or(0), 0);
        assert_eq!(parse_key("C-\\"), Ok(0x1c));
        assert_eq!(parse_key("C-a"), Ok(1));
        assert!(parse_key("F5").is_err());
    }
}
