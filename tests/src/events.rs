//! Waiting on the daemon's own events instead of a clock: a test looks once,
//! and again after each event the daemon pushes (a pane created, exited,
//! restarted, an agent's state or recorded session), until the look answers.
//! The subscription is made before the first look, so a change between the
//! two is not missed.

use crate::{Daemon, DEADLINE};
use fugue_client::protocol::AgentSession;
use std::future::Future;
use std::time::{Duration, Instant};

impl Daemon {
    /// Looks with `look` now and after each of the daemon's events until it
    /// answers; panics naming `what` after `deadline`.
    pub async fn until_event<T, F, Fut>(&self, what: &str, deadline: Duration, mut look: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        let client = self.client().await;
        let mut events = client.subscribe().await.expect("subscribe to the daemon's events");
        let end = Instant::now() + deadline;
        loop {
            if let Some(value) = look().await {
                return value;
            }
            let left = end.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, events.recv()).await {
                Ok(Some(_)) => {}
                Ok(None) => panic!("the daemon closed its events while the test waited for {what}"),
                Err(_) => panic!("timed out after {deadline:?} waiting for {what}"),
            }
        }
    }

    /// [`Daemon::until_event`] for a test that is not async: `look` is plain
    /// (it runs the CLI, say), and the wait runs on a thread of its own.
    pub fn until_event_blocking<T: Send>(
        &self,
        what: &str,
        deadline: Duration,
        mut look: impl FnMut() -> Option<T> + Send,
    ) -> T {
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for the wait")
                    .block_on(self.until_event(what, deadline, || std::future::ready(look())))
            });
            waiter.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// The session `pane`'s agent recorded to resume from, once it has
    /// (woken by the daemon's `AgentSessionRecorded`).
    pub async fn agent_session(&self, pane: &str) -> AgentSession {
        let client = self.client().await;
        self.until_event("the agent session to be recorded", DEADLINE, || async {
            client.pane_status(pane).await.ok()?.agent_session
        })
        .await
    }

    /// Runs a turn of `pane`'s agent (`fugue prompt`; a permission it asks
    /// for approved), and waits until it is idle again with the turn recorded
    /// in its session (a wake resumes it).
    pub fn run_a_turn(&self, pane: &str, prompt: &str) {
        let sent = self.cli(&["--json", "prompt", pane, prompt]).json();
        assert_eq!(sent["went_busy"], true, "{sent}");
        let timeout = DEADLINE.as_secs().to_string();
        let waited = [
            "wait",
            pane,
            "--timeout",
            &timeout,
            "--agent-state",
            "idle,waiting_for_permission",
        ];
        let _ = self.cli(&waited);
        let agent = self.cli(&["--json", "agent", pane]).json();
        if let Some(prompt_id) = agent["prompt_id"].as_str() {
            self.cli(&["approve", pane, prompt_id]).ok();
        }
        self.wait_agent_state(pane, "idle");
        self.until_event_blocking("the turn recorded in the agent session", DEADLINE, || {
            let info = self.cli(&["--json", "status", pane]).json();
            (info["agent_session"]["conversation"] == true).then_some(())
        });
    }

    /// [`Daemon::agent_session`] read through `fugue status --json`: the
    /// recorded session's id.
    pub fn agent_session_id(&self, pane: &str) -> String {
        self.until_event_blocking("the agent session to be recorded", DEADLINE, || {
            let info = self.cli(&["--json", "status", pane]).json();
            info["agent_session"]["id"].as_str().map(String::from)
        })
    }
}
