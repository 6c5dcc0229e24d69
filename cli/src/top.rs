//! `fugue top`: every pane of every session in one full-screen view, live,
//! the panes whose agent needs a person first. From it a person attaches,
//! answers a permission prompt (guarded by its `prompt_id`, its text shown
//! first), sends a prompt, interrupts, kills, releases, renames, starts a pane,
//! and jumps to the next pane that needs them.
//!
//! Live from the daemon's events: agent states, panes and sessions change in
//! place; what an event cannot say (a reorder, missed events) re-reads the
//! overview, at most every 150 ms. Last lines and durations refresh every 3 s
//! and every second.

use crate::top_model::{Reply, Top};
use fugue_client::worktree;
use fugue_client::{Client, ClientError};
use fugue_protocol::{Event, PaneId, PaneInfo, PaneOverview, PermissionAnswer, SessionId, SpawnSpec};
use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Overview re-reads after a pane or session event are at most this frequent.
const REFETCH_GAP: Duration = Duration::from_millis(150);
/// Last lines (no event says they changed) are re-read this often.
const REFRESH_EVERY: Duration = Duration::from_secs(3);
/// How long one daemon's overview may take before a read goes on without it.
const READ_WITHIN: Duration = Duration::from_secs(5);

pub async fn run(client: &Client, session: Option<String>) -> Result<ExitCode, ClientError> {
    let links = vec![Link {
        host: None,
        client: client.clone(),
    }];
    show(links, session, None, Vec::new(), None)
        .await
        .map(|_| ExitCode::SUCCESS)
}

/// `fugue top --all-hosts`: this machine's daemon at once, and each daemon
/// elsewhere as it connects (at most 32 dialled together, each within 10 s):
/// one that is slow or black-holed delays no other and is said once its
/// deadline passes. Their panes read HOST/SESSION:INDEX.
pub async fn run_all_hosts(
    local: fugue_client::ConnectOptions,
    elsewhere: Vec<(String, fugue_client::ConnectOptions)>,
    unreachable: Vec<String>,
) -> Result<ExitCode, ClientError> {
    let nobody_else = elsewhere.is_empty();
    let arriving = fugue_client::remote::ask_each_as_answered(elsewhere, |(_, options)| async move {
        Client::connect(options).await.map_err(|e| e.to_string())
    });
    show_everywhere(local, unreachable, arriving, nobody_else).await
}

/// This machine's daemon, then the others as they arrive; `nobody_else`: no
/// other will, so this one must answer.
async fn show_everywhere(
    local: fugue_client::ConnectOptions,
    mut unreachable: Vec<String>,
    arriving: Arriving,
    nobody_else: bool,
) -> Result<ExitCode, ClientError> {
    let mut links = Vec::new();
    match Client::connect(local.autostart(false)).await {
        Ok(client) => links.push(Link { host: None, client }),
        Err(err) => unreachable.push(format!("local: {err}")),
    }
    if links.is_empty() && nobody_else {
        return Err(ClientError::Protocol(format!(
            "no daemon answered: {}",
            unreachable.join("; ")
        )));
    }
    show(links, None, None, unreachable, Some(arriving))
        .await
        .map(|_| ExitCode::SUCCESS)
}

/// `fugue top --fleet`: as `--all-hosts` over the fleet's endpoints, and then
/// each endpoint its sources report starting (`docker events`) joins the view
/// once its daemon answers (it may still be starting: asked again every
/// 500 ms for 10 s). One that stops is said when its connection ends.
pub async fn run_fleet(
    local: fugue_client::ConnectOptions,
    elsewhere: Vec<(String, fugue_client::ConnectOptions)>,
    unreachable: Vec<String>,
    sources: Vec<fugue_client::fleet::Source>,
) -> Result<ExitCode, ClientError> {
    // Each endpoint is shown once: a watch reports the pods there when it
    // starts, an engine a container that starts again.
    let shown: Arc<std::sync::Mutex<std::collections::HashSet<String>>> = Arc::new(std::sync::Mutex::new(
        elsewhere.iter().map(|(name, _)| name.clone()).collect(),
    ));
    let mut listed = fugue_client::remote::ask_each_as_answered(elsewhere, |(_, options)| async move {
        Client::connect(options).await.map_err(|e| e.to_string())
    });
    let (arriving, merged) = mpsc::channel(fugue_client::remote::ASK_AT_ONCE);
    let forward = arriving.clone();
    tokio::spawn(async move {
        while let Some(arrived) = listed.recv().await {
            if forward.send(arrived).await.is_err() {
                return;
            }
        }
    });
    for mut changes in sources.iter().filter_map(fugue_client::fleet::follow) {
        let (arriving, shown) = (arriving.clone(), shown.clone());
        tokio::spawn(async move {
            while let Some(change) = changes.recv().await {
                let Ok(fugue_client::fleet::Change::Added(endpoint)) = change else {
                    continue;
                };
                let name = endpoint.remote.name.clone();
                if !shown.lock().is_ok_and(|mut shown| shown.insert(name.clone())) {
                    continue;
                }
                let options = fugue_client::ConnectOptions::default()
                    .client_name("fugue-cli")
                    .host(endpoint.remote)
                    .autostart(false);
                let arriving = arriving.clone();
                tokio::spawn(async move {
                    let connected = connect_when_up(options.clone()).await;
                    let _ = arriving.send(((name, options), connected)).await;
                });
            }
        });
    }
    drop(arriving);
    show_everywhere(local, unreachable, merged, false).await
}

/// Connects to a daemon that may still be starting (a container's fugued just
/// launched): every 500 ms for 10 s.
async fn connect_when_up(options: fugue_client::ConnectOptions) -> Result<Client, String> {
    let within = fugue_client::remote::ASK_WITHIN;
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, Client::connect(options.clone())).await {
            Ok(Ok(client)) => return Ok(client),
            Err(_) => return Err(format!("did not answer within {} s", within.as_secs())),
            Ok(Err(err)) if Instant::now() + Duration::from_millis(500) >= deadline => return Err(err.to_string()),
            Ok(Err(_)) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// The overview opened from `fugue attach` (prefix `w`) on pane `from`: Enter
/// returns the pane chosen (attach goes there), quitting returns `None`. On a
/// connection of its own: attach's has its event stream.
pub async fn choose(connect: &fugue_client::ConnectOptions, from: PaneId) -> Result<Option<PaneId>, ClientError> {
    let client = Client::connect(connect.clone().autostart(false)).await?;
    show(vec![Link { host: None, client }], None, Some(from), Vec::new(), None).await
}

/// One daemon top shows: this machine's (`host` `None`) or a host's.
struct Link {
    host: Option<String>,
    client: Client,
}

/// Which daemon each pane and session is on, by index into the links.
#[derive(Default)]
struct Where {
    panes: HashMap<PaneId, usize>,
    sessions: HashMap<SessionId, usize>,
}

impl Where {
    fn note(&mut self, link: usize, pane: &PaneInfo) {
        self.panes.insert(pane.id, link);
        self.sessions.insert(pane.session_id, link);
    }
}

/// A host's panes carry its name before their session's (`box/work`), so a
/// label tells the machines apart; this machine's stay as they are.
fn qualify_pane(host: Option<&str>, pane: &mut PaneInfo) {
    if let Some(host) = host {
        pane.session_name = format!("{host}/{}", pane.session_name);
    }
}

fn qualify_event(host: Option<&str>, event: &mut Event) {
    match event {
        Event::PaneCreated(pane)
        | Event::PaneExited(pane)
        | Event::PaneRestarted(pane)
        | Event::PaneRenamed(pane)
        | Event::AgentSessionRecorded(pane) => qualify_pane(host, pane),
        Event::SessionRenamed { name, .. } => {
            if let Some(host) = host {
                *name = format!("{host}/{name}");
            }
        }
        _ => {}
    }
}

/// Every link's overview, qualified, with where each pane is; a link that
/// fails or takes longer than [`READ_WITHIN`] is said and left out of this
/// read. Runs on a task of its own: the view goes on meanwhile.
async fn read_all(links: Vec<(usize, Option<String>, Client)>, session: Option<String>) -> Read {
    use futures::StreamExt;
    let reads: Vec<_> = futures::stream::iter(links)
        .map(|(n, host, client)| {
            let session = session.clone();
            async move {
                let read = tokio::time::timeout(READ_WITHIN, client.overview(session.as_deref())).await;
                // Sessions outside any pane: this machine's, for all sessions.
                let background = match (&host, &session) {
                    (None, None) => tokio::time::timeout(READ_WITHIN, client.background_agents())
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                (n, host, (read, background))
            }
        })
        .buffered(fugue_client::remote::ASK_AT_ONCE)
        .collect()
        .await;
    let mut done = Read::default();
    for (n, host, (read, background)) in reads {
        let name = host.as_deref().unwrap_or("local");
        done.background.extend(background);
        match read {
            Ok(Ok(read)) => {
                for mut row in read {
                    qualify_pane(host.as_deref(), &mut row.pane);
                    done.place.note(n, &row.pane);
                    done.rows.push(row);
                }
            }
            Ok(Err(err)) => done.failed.push(format!("host {name}: {err}")),
            Err(_) => done.failed.push(format!(
                "host {name}: did not answer within {} s",
                READ_WITHIN.as_secs()
            )),
        }
    }
    done
}

/// One read of every link's overview.
#[derive(Default)]
struct Read {
    rows: Vec<PaneOverview>,
    background: Vec<fugue_protocol::BackgroundAgent>,
    place: Where,
    failed: Vec<String>,
}

/// `said`: what to say first (hosts that could not be reached).
/// `arriving`: daemons elsewhere, each as it connects (or fails to).
async fn show(
    links: Vec<Link>,
    session: Option<String>,
    chooser: Option<PaneId>,
    said: Vec<String>,
    mut arriving: Option<Arriving>,
) -> Result<Option<PaneId>, ClientError> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(ClientError::Protocol(
            "fugue top needs a terminal on stdin and stdout (fugue overview prints the same as a table)".into(),
        ));
    }
    let (mut view, mut events) = Shown::start(links, session, chooser, said).await?;
    if let Some(from) = chooser {
        view.top.select_pane(from);
    }
    let mut screen = Screen::enter()?;
    let mut keyboard = Keyboard::start();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut drawn_second = 0;
    let mut dirty = true;
    let chosen = loop {
        if dirty {
            screen.draw(&mut view.top)?;
        }
        let flow = tokio::select! {
            key = keyboard.rx.recv() => match key {
                Some(key) => view.on_key(key, &mut screen, &mut keyboard).await?,
                None => Flow::Quit,
            },
            event = events.recv() => match event {
                Some((link, event)) => view.on_event(link, event)?,
                None => Flow::Quit,
            },
            arrived = next_arrival(&mut arriving) => match arrived {
                Some(((host, _), connected)) => view.arrived(host, connected).await,
                None => {
                    arriving = None;
                    Flow::Unchanged
                }
            },
            read = wait_read(&mut view.reading) => {
                view.reading = None;
                view.read_done(read);
                Flow::Changed
            },
            // A re-read held back by REFETCH_GAP is due.
            _ = tokio::time::sleep_until((view.last_fetch + REFETCH_GAP).into()), if view.refetch => Flow::Unchanged,
            _ = tick.tick() => {
                view.top.expire_message();
                let second = fugue_client::views::now_ms() / 1000;
                match std::mem::replace(&mut drawn_second, second) == second {
                    true => Flow::Unchanged,
                    false => Flow::Changed,
                }
            }
        };
        dirty = match flow {
            Flow::Quit => break None,
            Flow::Chosen(pane) => break Some(pane),
            Flow::Changed => true,
            Flow::Unchanged => false,
        };
        if view.due() {
            view.start_read();
        }
    };
    drop(keyboard);
    drop(screen);
    Ok(chosen)
}

/// Daemons elsewhere as they connect: `(name, options)` and the connection.
type Arriving = mpsc::Receiver<((String, fugue_client::ConnectOptions), Result<Client, String>)>;

/// The next daemon to connect; pending forever once there are no more.
async fn next_arrival(
    arriving: &mut Option<Arriving>,
) -> Option<((String, fugue_client::ConnectOptions), Result<Client, String>)> {
    match arriving {
        Some(arriving) => arriving.recv().await,
        None => std::future::pending().await,
    }
}

/// The read in progress; pending forever while none is.
async fn wait_read(reading: &mut Option<tokio::task::JoinHandle<Read>>) -> Result<Read, tokio::task::JoinError> {
    match reading {
        Some(reading) => reading.await,
        None => std::future::pending().await,
    }
}

/// What the overview does after a key, an event or a tick.
enum Flow {
    Quit,
    /// The chooser (attach's prefix `w`) picked this pane.
    Chosen(PaneId),
    /// Something shown changed: draw again.
    Changed,
    Unchanged,
}

/// The overview while it runs: the daemons it shows and what it knows of them.
struct Shown {
    top: Top,
    links: Vec<Link>,
    session: Option<String>,
    chooser: Option<PaneId>,
    place: Where,
    last_fetch: Instant,
    /// An event said the rows changed in a way only a re-read shows.
    refetch: bool,
    /// Links whose connection ended.
    gone: usize,
    /// Where every link's events go, each with its link's index.
    event_tx: mpsc::Sender<(usize, Option<Event>)>,
    /// The read of every link's overview in progress, if any.
    reading: Option<tokio::task::JoinHandle<Read>>,
    /// Daemons that could not be reached or read, said in the status line.
    trouble: Vec<String>,
}

impl Shown {
    /// The view of `links`, read once; their events on the receiver.
    async fn start(
        links: Vec<Link>,
        session: Option<String>,
        chooser: Option<PaneId>,
        said: Vec<String>,
    ) -> Result<(Shown, mpsc::Receiver<(usize, Option<Event>)>), ClientError> {
        let (event_tx, events) = mpsc::channel::<(usize, Option<Event>)>(256);
        let mut view = Shown {
            top: Top::new(session.clone()),
            links: Vec::new(),
            session,
            chooser,
            place: Where::default(),
            last_fetch: Instant::now(),
            refetch: false,
            gone: 0,
            event_tx,
            reading: None,
            trouble: said,
        };
        for link in links {
            view.add_link(link).await?;
        }
        view.start_read();
        if let Some(reading) = view.reading.take() {
            view.read_done(reading.await);
        }
        view.say_trouble();
        Ok((view, events))
    }

    /// A daemon elsewhere connected (its panes come with the next read), or
    /// could not be reached (said; the rest go on).
    async fn arrived(&mut self, host: String, connected: Result<Client, String>) -> Flow {
        let added = match connected {
            Ok(client) => self
                .add_link(Link {
                    host: Some(host.clone()),
                    client,
                })
                .await
                .map_err(|e| e.to_string()),
            Err(err) => Err(err),
        };
        match added {
            Ok(()) => self.refetch = true,
            Err(err) => {
                self.trouble.push(format!("host {host}: {err}"));
                self.say_trouble();
            }
        }
        Flow::Changed
    }

    /// Follows a daemon: its events join the others', its panes the next read.
    async fn add_link(&mut self, link: Link) -> Result<(), ClientError> {
        let n = self.links.len();
        let mut stream = link.client.subscribe().await?;
        let tx = self.event_tx.clone();
        tokio::spawn(async move {
            while let Some(event) = stream.recv().await {
                if tx.send((n, Some(event))).await.is_err() {
                    return;
                }
            }
            let _ = tx.send((n, None)).await;
        });
        self.links.push(link);
        Ok(())
    }

    /// Starts reading every link's overview again, unless a read runs.
    fn start_read(&mut self) {
        if self.reading.is_some() {
            return;
        }
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(n, link)| (n, link.host.clone(), link.client.clone()))
            .collect();
        self.reading = Some(tokio::spawn(read_all(links, self.session.clone())));
        self.last_fetch = Instant::now();
        self.refetch = false;
    }

    fn read_done(&mut self, read: Result<Read, tokio::task::JoinError>) {
        let Ok(read) = read else { return };
        self.top.replace(read.rows);
        self.top.background = read.background;
        self.place = read.place;
        if !read.failed.is_empty() {
            self.top.say(Err(read.failed.join("; ")));
        }
    }

    /// The daemons that could not be reached, in the status line.
    fn say_trouble(&mut self) {
        if !self.trouble.is_empty() {
            let count = self.trouble.len();
            let text = match count {
                1 => self.trouble[0].clone(),
                _ => format!("{count} daemons not answering: {}", self.trouble.join("; ")),
            };
            self.top.say(Err(text));
        }
    }

    fn due(&self) -> bool {
        let since = self.last_fetch.elapsed();
        self.reading.is_none() && ((self.refetch && since >= REFETCH_GAP) || since >= REFRESH_EVERY)
    }

    /// A key: the model's answer, carried out on the link that holds its pane.
    async fn on_key(
        &mut self,
        key: crossterm::event::KeyEvent,
        screen: &mut Screen,
        keyboard: &mut Keyboard,
    ) -> Result<Flow, ClientError> {
        let Some(reply) = self.top.on_key(key) else {
            return Ok(Flow::Changed);
        };
        let link = match &reply {
            Reply::NewPane { session, .. } => self.place.sessions.get(session).copied(),
            reply => reply.pane().and_then(|pane| self.place.panes.get(&pane).copied()),
        };
        let link = &self.links[link.unwrap_or(0)];
        match reply {
            Reply::Quit => return Ok(Flow::Quit),
            Reply::Attach(pane) if self.chooser.is_some() => return Ok(Flow::Chosen(pane)),
            Reply::Attach(pane) => {
                screen.suspend();
                keyboard.pause();
                let attached = attach(link, pane).await;
                keyboard.resume();
                screen.resume()?;
                self.top.say(attached);
            }
            Reply::Diff(pane) => {
                match fugue_client::worktree::pane_diff(&link.client, &pane.to_string(), false).await {
                    Ok(view) => {
                        let title = format!("{} · {}", self.top.label_of(pane), view.branch);
                        let summary = format!(
                            "{} changed file(s) (+{} -{}) against its base",
                            view.files.len(),
                            view.added,
                            view.removed
                        );
                        let text = crate::render::diff_text(&view, false, false);
                        self.top.show_diff(pane, title, summary, &text);
                    }
                    Err(err) => self.top.say(Err(err.to_string())),
                }
            }
            Reply::Compare(pane) => match compare_text(&link.client, pane).await {
                Ok((title, text)) => self.top.show_comparison(pane, title, &text),
                Err(err) => self.top.say(Err(err)),
            },
            reply => {
                let said = act(&link.client, reply).await;
                self.top.say(said);
            }
        }
        self.refetch = true;
        Ok(Flow::Changed)
    }

    /// An event from link `n`; `None` when that link's connection ended.
    fn on_event(&mut self, n: usize, event: Option<Event>) -> Result<Flow, ClientError> {
        let Some(mut event) = event else {
            // That daemon (or the ssh to its host) went away.
            self.gone += 1;
            let host = self.links[n].host.as_deref().unwrap_or("local");
            self.top.say(Err(format!("host {host}: the connection ended")));
            if self.gone == self.links.len() {
                return Err(ClientError::Protocol("the daemon went away".into()));
            }
            return Ok(Flow::Changed);
        };
        qualify_event(self.links[n].host.as_deref(), &mut event);
        match &event {
            Event::PaneCreated(pane) => self.place.note(n, pane),
            Event::AgentStateChanged { pane, .. } => {
                self.place.panes.insert(*pane, n);
            }
            _ => {}
        }
        match event {
            Event::AgentStateChanged { pane, agent, .. } => self.top.agent_changed(pane, agent),
            Event::Notification { pane, title, body, .. } => self.top.notified(pane, &title, &body),
            Event::SessionCreated(_)
            | Event::SessionDestroyed { .. }
            | Event::SessionRenamed { .. }
            | Event::PaneCreated(_)
            | Event::PaneExited(_)
            | Event::PaneRestarted(_)
            | Event::PaneRemoved { .. }
            | Event::PaneRenamed(_)
            | Event::AgentSessionRecorded(_) => self.refetch |= !self.top.apply(&event),
            Event::PanesReordered { .. } | Event::Lagged { .. } => self.refetch = true,
            _ => return Ok(Flow::Unchanged),
        }
        Ok(Flow::Changed)
    }
}

/// Carries out what a key asked for; what to tell the person.
async fn act(client: &Client, reply: Reply) -> Result<String, String> {
    let done = match reply {
        Reply::Answer { .. } | Reply::Prompt { .. } | Reply::Hibernate(_) | Reply::Wake(_) => {
            return act_on_agent(client, reply).await
        }
        Reply::Interrupt(pane) => {
            client.interrupt(&pane.to_string()).await.map_err(|e| e.to_string())?;
            "interrupted".into()
        }
        Reply::Kill(pane) => {
            client
                .kill_pane(&pane.to_string(), None)
                .await
                .map_err(|e| e.to_string())?;
            "killed".into()
        }
        Reply::Release(pane) => {
            client
                .release_pane(&pane.to_string())
                .await
                .map_err(|e| e.to_string())?;
            "released".into()
        }
        Reply::Rename { pane, title } => {
            client
                .rename_pane(&pane.to_string(), &title)
                .await
                .map_err(|e| e.to_string())?;
            format!("renamed to {title}")
        }
        Reply::NewPane { session, command } => {
            let mut spec = SpawnSpec::new(session.to_string());
            spec.command = Some(command);
            spec.shell = true;
            let pane = client.create_pane(spec).await.map_err(|e| e.to_string())?;
            format!("started {}:{}", pane.session_name, pane.index)
        }
        Reply::Merge(pane) => {
            let record = worktree::find_target(client, &pane.to_string())
                .await
                .map_err(|e| e.to_string())?;
            let merged = worktree::merge(&record, None, false).await.map_err(|e| e.to_string())?;
            merged.summary()
        }
        Reply::Discard(pane) => {
            let record = worktree::find_target(client, &pane.to_string())
                .await
                .map_err(|e| e.to_string())?;
            worktree::discard(client, &record).await.map_err(|e| e.to_string())?;
            format!("discarded worktree {} and branch {}", record.path, record.branch)
        }
        Reply::Quit | Reply::Attach(_) | Reply::Diff(_) | Reply::Compare(_) => return Ok(String::new()),
    };
    Ok(done)
}

/// Carries out what a key asked of the pane's agent: an answer, a prompt, a
/// rest or a wake; what to tell the person.
async fn act_on_agent(client: &Client, reply: Reply) -> Result<String, String> {
    let done = match reply {
        Reply::Answer {
            pane,
            prompt_id,
            answer,
        } => {
            let answered = client
                .answer_permission(&pane.to_string(), &prompt_id, answer)
                .await
                .map_err(|e| e.to_string())?;
            match (answered.already, answer) {
                (true, _) => format!("already {}: nothing sent", answered.answer.past()),
                (false, PermissionAnswer::Approve) => "approved".into(),
                (false, PermissionAnswer::Deny) => "denied".into(),
            }
        }
        Reply::Prompt { pane, text } => {
            let sent = fugue_client::ops::send_prompt(client, &pane.to_string(), &text, None)
                .await
                .map_err(|e| e.to_string())?;
            sent.message
        }
        Reply::Hibernate(pane) => {
            client.hibernate(&pane.to_string()).await.map_err(|e| e.to_string())?;
            "hibernated: its memory is freed; w, a prompt or an attach wakes it".into()
        }
        Reply::Wake(pane) => {
            let woken = client.wake(&pane.to_string()).await.map_err(|e| e.to_string())?;
            match woken.started_fresh {
                Some(why) => format!("awake: {why}"),
                None => format!("awake: {} runs again on its session", woken.pane.session_name),
            }
        }
        _ => String::new(),
    };
    Ok(done)
}

/// The fan-out group `pane` belongs to, side by side (its test run in each
/// done worktree), as `fugue compare` prints it.
async fn compare_text(client: &Client, pane: PaneId) -> Result<(String, String), String> {
    let group = fugue_client::fanout::group_of(&pane.to_string())
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "this pane belongs to no fan-out group (`fugue fanout` starts one)".to_string())?;
    let comparison = fugue_client::fanout::compare(client, &group.name, true)
        .await
        .map_err(|e| e.to_string())?;
    let title = format!("fugue compare {}", group.name);
    Ok((title, crate::render::compare_text(&comparison)))
}

/// Attaches this terminal to `pane` with a `fugue attach` of its own (its keys,
/// its raw mode; over ssh for a host's pane), and comes back when it detaches
/// or the pane ends.
async fn attach(link: &Link, pane: PaneId) -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the fugue program: {e}"))?;
    let mut command = std::process::Command::new(exe);
    match &link.host {
        Some(host) => command.arg("--host").arg(host),
        None => command.arg("--socket").arg(link.client.socket()),
    };
    command.arg("attach").arg(pane.to_string());
    let status = tokio::task::spawn_blocking(move || command.status())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot run fugue attach: {e}"))?;
    match status.success() {
        true => Ok("detached".into()),
        false => Err(format!("fugue attach ended: {status}")),
    }
}

/// The full-screen terminal, restored however top ends.
struct Screen {
    terminal: ratatui::Terminal<ratatui::backend::CrosstermBackend<std::io::Stdout>>,
    active: bool,
}

impl Screen {
    fn enter() -> Result<Screen, ClientError> {
        let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
        let terminal = ratatui::Terminal::new(backend).map_err(terminal_error)?;
        let mut screen = Screen {
            terminal,
            active: false,
        };
        screen.resume()?;
        Ok(screen)
    }

    fn resume(&mut self) -> Result<(), ClientError> {
        crossterm::terminal::enable_raw_mode().map_err(terminal_error)?;
        crossterm::execute!(
            std::io::stdout(),
            crossterm::terminal::EnterAlternateScreen,
            crossterm::cursor::Hide
        )
        .map_err(terminal_error)?;
        self.active = true;
        self.terminal.clear().map_err(terminal_error)
    }

    fn suspend(&mut self) {
        if !self.active {
            return;
        }
        self.active = false;
        let _ = crossterm::execute!(
            std::io::stdout(),
            crossterm::terminal::LeaveAlternateScreen,
            crossterm::cursor::Show
        );
        let _ = crossterm::terminal::disable_raw_mode();
        let _ = std::io::stdout().flush();
    }

    fn draw(&mut self, top: &mut Top) -> Result<(), ClientError> {
        self.terminal
            .draw(|frame| crate::top_view::draw(frame, top))
            .map(|_| ())
            .map_err(terminal_error)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        self.suspend();
    }
}

fn terminal_error(err: std::io::Error) -> ClientError {
    ClientError::Protocol(format!("terminal: {err}"))
}

/// Keys from the terminal, read on a thread of their own; paused (it stops
/// reading) while a `fugue attach` started from top owns the terminal.
struct Keyboard {
    rx: mpsc::Receiver<crossterm::event::KeyEvent>,
    paused: Arc<AtomicBool>,
    /// The reader says it stopped reading (after a pause).
    stopped: std::sync::mpsc::Receiver<()>,
    thread: std::thread::Thread,
}

impl Keyboard {
    fn start() -> Keyboard {
        let (tx, rx) = mpsc::channel(64);
        let (stopped_tx, stopped) = std::sync::mpsc::channel();
        let paused = Arc::new(AtomicBool::new(false));
        let flag = paused.clone();
        let handle = std::thread::spawn(move || loop {
            if flag.load(Ordering::Acquire) {
                if stopped_tx.send(()).is_err() {
                    return;
                }
                while flag.load(Ordering::Acquire) {
                    std::thread::park();
                }
                continue;
            }
            // Polled, so a pause takes hold within 50 ms without a key.
            match crossterm::event::poll(Duration::from_millis(50)) {
                Ok(false) => continue,
                Ok(true) => {}
                Err(_) => return,
            }
            match crossterm::event::read() {
                Ok(crossterm::event::Event::Key(key)) if key.kind != crossterm::event::KeyEventKind::Release => {
                    if tx.blocking_send(key).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(_) => return,
            }
        });
        Keyboard {
            rx,
            paused,
            stopped,
            thread: handle.thread().clone(),
        }
    }

    /// Stops reading, and returns once the reader has.
    fn pause(&mut self) {
        self.paused.store(true, Ordering::Release);
        let _ = self.stopped.recv_timeout(Duration::from_secs(1));
    }

    fn resume(&mut self) {
        self.paused.store(false, Ordering::Release);
        self.thread.unpark();
    }
}

impl Drop for Keyboard {
    /// Stops the reader (what reads the terminal next, an attach, gets every key).
    fn drop(&mut self) {
        self.pause();
    }
}
