//! Tool calls that outlive their request: the MCP tasks extension (SEP-2663,
//! `io.modelcontextprotocol/tasks`).
//!
//! A client that declares the extension and calls a long tool (`fugue_wait`,
//! `fugue_exec`, `fugue_spawn_agent`) gets the result at once when the call is
//! done within [`GRACE`], and otherwise a task: `tasks/get` says how it goes
//! and, once it ended, holds the result; `tasks/cancel` stops it (the daemon's
//! wait with it). Clients without the extension keep the blocking call.
//!
//! The table is the bridge's, not one MCP session's: a client of the 2026-07-28
//! era sends `tasks/get` as a request of its own, which may reach another
//! server object. It is bounded: at most [`KEEP`] tasks, running or ended, each
//! kept until its time to live passes; when it is full a call simply blocks.

use rmcp::model::{CallToolResponse, DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use rmcp::task_manager::current_timestamp;
use rmcp::ErrorData;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long a call may take and still answer with its result instead of a task.
pub const GRACE: Duration = Duration::from_millis(500);
/// Tasks kept at most, running or ended.
pub const KEEP: usize = 256;
/// How long an ended task's result stays readable past the call's own limit.
pub const RETAIN: Duration = Duration::from_secs(300);
/// The interval suggested to clients between two `tasks/get`.
const POLL_INTERVAL_MS: u64 = 500;

/// Tools that may become tasks: the ones that can wait for minutes.
pub fn eligible(tool: &str) -> bool {
    matches!(
        tool,
        "fugue_wait" | "fugue_exec" | "fugue_spawn_agent" | "fugue_delegate"
    )
}

/// What a running call says about how it goes: its task's status message
/// (`tasks/get`). The call finds it among its request's extensions.
#[derive(Clone, Default)]
pub struct StatusNote(Arc<Mutex<Option<String>>>);

impl StatusNote {
    pub fn set(&self, text: String) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(text);
    }

    fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// A call's own limit on its duration, from its arguments: a wait's or an
/// exec's `timeout_ms`; a spawn waits for a person, given an hour.
pub fn limit(tool: &str, arguments: Option<&JsonObject>) -> Duration {
    let timeout = |default_ms: u64| {
        let ms = arguments
            .and_then(|a| a.get("timeout_ms"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(default_ms);
        Duration::from_millis(ms)
    };
    match tool {
        "fugue_wait" => timeout(fugue_client::ops::DEFAULT_WAIT_MS),
        "fugue_exec" => timeout(10_000),
        // The turn's own limit, and time for a person to confirm and the child to start.
        "fugue_delegate" => timeout(crate::tools::DEFAULT_DELEGATE_MS).saturating_add(Duration::from_secs(600)),
        _ => Duration::from_secs(3600),
    }
}

/// What a running call yields: the tool's answer, or a protocol error.
pub type Work = JoinHandle<Result<CallToolResponse, ErrorData>>;

/// The tasks of every MCP session of this bridge. Cheap to clone.
#[derive(Clone, Default)]
pub struct Tasks {
    table: Arc<Mutex<Table>>,
}

#[derive(Default)]
struct Table {
    entries: HashMap<String, Entry>,
}

struct Entry {
    task: Task,
    payload: TaskPayload,
    /// When the task may be forgotten (and, if it still runs, is stopped).
    expires: Instant,
    /// Stops the call: `tasks/cancel`, or its time running out.
    stop: CancellationToken,
    /// What the call last said about how it goes.
    note: StatusNote,
}

impl Entry {
    fn ended(&self) -> bool {
        self.payload.status().is_terminal()
    }
}

impl Table {
    /// Forgets what expired; a task still running at its expiry is stopped,
    /// and kept one more [`RETAIN`] so its poller reads why it failed.
    fn sweep(&mut self, now: Instant) {
        for entry in self.entries.values_mut() {
            if entry.expires <= now && !entry.ended() {
                entry.stop.cancel();
                entry.payload = TaskPayload::Failed {
                    error: object(&ErrorData::internal_error(
                        "the task ran past its time to live and was stopped",
                        None,
                    )),
                };
                entry.task.status = TaskStatus::Failed;
                entry.task.last_updated_at = current_timestamp();
                entry.expires = now + RETAIN;
            }
        }
        self.entries.retain(|_, entry| !(entry.ended() && entry.expires <= now));
    }
}

impl Tasks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic while holding the lock leaves a table that is still whole.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether another task fits.
    pub fn has_room(&self) -> bool {
        let mut table = self.lock();
        table.sweep(Instant::now());
        table.entries.len() < KEEP
    }

    /// Makes `work` (already running, stopped by `stop`) a task that may run
    /// for `limit`; `None` when the table is full (the caller then waits for
    /// the work itself). The task can be read before this returns.
    pub fn adopt(
        &self,
        tool: &str,
        limit: Duration,
        work: Work,
        stop: CancellationToken,
        note: StatusNote,
    ) -> Result<Task, Work> {
        let ttl = limit.saturating_add(RETAIN);
        let now = current_timestamp();
        let mut task = Task::new(uuid::Uuid::new_v4().to_string(), TaskStatus::Working, now.clone(), now)
            .with_status_message(format!("{tool} is running"))
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        task.ttl_ms = Some(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        {
            let mut table = self.lock();
            let started = Instant::now();
            table.sweep(started);
            if table.entries.len() >= KEEP {
                return Err(work);
            }
            let entry = Entry {
                task: task.clone(),
                payload: TaskPayload::Working,
                expires: started.checked_add(ttl).unwrap_or(started + RETAIN),
                stop: stop.clone(),
                note,
            };
            table.entries.insert(task.task_id.clone(), entry);
        }
        tokio::spawn(self.clone().follow(task.task_id.clone(), work, stop));
        Ok(task)
    }

    /// Waits for the work or its stop, and records how it ended.
    async fn follow(self, id: String, mut work: Work, stop: CancellationToken) {
        let payload = tokio::select! {
            biased;
            _ = stop.cancelled() => {
                // Dropping the call's future drops its daemon request: a
                // wait ends in the daemon too.
                work.abort();
                TaskPayload::Cancelled
            }
            done = &mut work => match stop.is_cancelled() {
                // The call saw the stop first and ended because of it.
                true => TaskPayload::Cancelled,
                false => ended(done),
            },
        };
        let mut table = self.lock();
        let Some(entry) = table.entries.get_mut(&id) else {
            return;
        };
        if entry.ended() {
            return;
        }
        entry.task.status = payload.status();
        entry.task.status_message = None;
        entry.task.last_updated_at = current_timestamp();
        entry.payload = payload;
    }

    /// `tasks/get`.
    pub fn get(&self, id: &str) -> Result<DetailedTask, ErrorData> {
        let mut table = self.lock();
        table.sweep(Instant::now());
        let entry = table.entries.get(id).ok_or_else(|| unknown(id))?;
        let mut task = entry.task.clone();
        if let (false, Some(note)) = (entry.ended(), entry.note.get()) {
            task.status_message = Some(note);
        }
        Ok(DetailedTask::new(task, entry.payload.clone()))
    }

    /// `tasks/cancel`: stops a running task; an ended one stays as it ended.
    pub fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        let mut table = self.lock();
        table.sweep(Instant::now());
        let entry = table.entries.get(id).ok_or_else(|| unknown(id))?;
        entry.stop.cancel();
        Ok(())
    }

    /// `tasks/update`: fugue's tasks never ask for input, so there is nothing
    /// to answer; a known task acknowledges, as the extension says.
    pub fn update(&self, id: &str) -> Result<(), ErrorData> {
        self.get(id).map(|_| ())
    }
}

fn unknown(id: &str) -> ErrorData {
    let shown = fugue_client::protocol::limits::truncate_for_display(id, 80);
    ErrorData::invalid_params(
        format!("no task {shown:?}: it never existed here or its time to live passed"),
        None,
    )
}

/// How a call's end reads in `tasks/get`: a tool's answer (even one with
/// `isError`) completes the task; a protocol error or a crash fails it.
fn ended(done: Result<Result<CallToolResponse, ErrorData>, tokio::task::JoinError>) -> TaskPayload {
    match done {
        Ok(Ok(CallToolResponse::Complete(result))) => TaskPayload::Completed {
            result: object(&result),
        },
        Ok(Ok(_)) => TaskPayload::Failed {
            error: object(&ErrorData::internal_error(
                "the call asked for input after it became a task",
                None,
            )),
        },
        Ok(Err(error)) => TaskPayload::Failed { error: object(&error) },
        Err(join) => TaskPayload::Failed {
            error: object(&ErrorData::internal_error(
                format!("the call ended abnormally: {join}"),
                None,
            )),
        },
    }
}

/// A result or an error as the JSON object `tasks/get` inlines.
fn object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::CallToolResult;

    fn pending() -> (Work, CancellationToken) {
        let stop = CancellationToken::new();
        let wait = stop.clone();
        let work = tokio::spawn(async move {
            wait.cancelled().await;
            Ok(CallToolResponse::Complete(CallToolResult::success(vec![])))
        });
        (work, stop)
    }

    async fn settled(tasks: &Tasks, id: &str) -> DetailedTask {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let task = tasks.get(id).unwrap();
            if task.status().is_terminal() {
                return task;
            }
            assert!(Instant::now() < deadline, "task {id} did not end: {task:?}");
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_finished_call_completes_its_task_with_the_result() {
        let tasks = Tasks::default();
        let (go_tx, go_rx) = tokio::sync::oneshot::channel::<()>();
        let work = tokio::spawn(async move {
            let _ = go_rx.await;
            Ok(CallToolResponse::Complete(CallToolResult::structured(
                serde_json::json!({"reason": "pattern"}),
            )))
        });
        let task = tasks
            .adopt(
                "fugue_wait",
                Duration::from_secs(30),
                work,
                CancellationToken::new(),
                StatusNote::default(),
            )
            .unwrap();
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!(task.ttl_ms, Some(30_000 + RETAIN.as_millis() as u64));
        assert_eq!(tasks.get(&task.task_id).unwrap().status(), TaskStatus::Working);
        go_tx.send(()).unwrap();
        let done = settled(&tasks, &task.task_id).await;
        let TaskPayload::Completed { result } = done.payload else {
            panic!("{done:?}")
        };
        assert_eq!(result["structuredContent"]["reason"], "pattern");
    }

    #[tokio::test]
    async fn cancelling_stops_the_work_and_is_idempotent() {
        let tasks = Tasks::default();
        let (dropped_tx, dropped_rx) = tokio::sync::oneshot::channel::<()>();
        let work = tokio::spawn(async move {
            // Told when the work is dropped (aborted), not when it finishes.
            let _guard = scopeguard(dropped_tx);
            std::future::pending::<()>().await;
            unreachable!()
        });
        let stop = CancellationToken::new();
        let task = tasks
            .adopt("fugue_wait", Duration::from_secs(30), work, stop, StatusNote::default())
            .unwrap();
        tasks.cancel(&task.task_id).unwrap();
        dropped_rx.await.expect("the work was dropped");
        assert_eq!(settled(&tasks, &task.task_id).await.status(), TaskStatus::Cancelled);
        tasks.cancel(&task.task_id).unwrap();
        assert_eq!(tasks.get(&task.task_id).unwrap().status(), TaskStatus::Cancelled);
    }

    #[tokio::test]
    async fn errors_fail_the_task_and_unknown_ids_are_invalid_params() {
        let tasks = Tasks::default();
        let work = tokio::spawn(async { Err(ErrorData::internal_error("daemon gone", None)) });
        let task = tasks
            .adopt(
                "fugue_exec",
                Duration::from_secs(1),
                work,
                CancellationToken::new(),
                StatusNote::default(),
            )
            .unwrap();
        let done = settled(&tasks, &task.task_id).await;
        let TaskPayload::Failed { error } = done.payload else {
            panic!("{done:?}")
        };
        assert_eq!(error["message"], "daemon gone");
        for err in [tasks.get("nope").unwrap_err(), tasks.cancel("nope").unwrap_err()] {
            assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(err.message.contains("no task \"nope\""), "{}", err.message);
        }
    }

    #[tokio::test]
    async fn the_table_is_bounded_and_a_full_one_hands_the_work_back() {
        let tasks = Tasks::default();
        let mut stops = Vec::new();
        for _ in 0..KEEP {
            let (work, stop) = pending();
            tasks
                .adopt(
                    "fugue_wait",
                    Duration::from_secs(60),
                    work,
                    stop.clone(),
                    StatusNote::default(),
                )
                .unwrap();
            stops.push(stop);
        }
        assert!(!tasks.has_room());
        let (work, _stop) = pending();
        let handed_back = tasks.adopt(
            "fugue_wait",
            Duration::from_secs(60),
            work,
            CancellationToken::new(),
            StatusNote::default(),
        );
        assert!(handed_back.is_err(), "a full table takes no more");
        assert_eq!(tasks.lock().entries.len(), KEEP);
        for stop in stops {
            stop.cancel();
        }
    }

    #[tokio::test]
    async fn a_task_past_its_time_is_stopped_and_later_forgotten() {
        let tasks = Tasks::default();
        let (work, stop) = pending();
        let task = tasks
            .adopt("fugue_wait", Duration::ZERO, work, stop.clone(), StatusNote::default())
            .unwrap();
        // Pretend its time to live has passed.
        let later = Instant::now() + RETAIN + Duration::from_secs(1);
        tasks.lock().sweep(later);
        assert!(stop.is_cancelled(), "the running call was stopped");
        assert_eq!(tasks.get(&task.task_id).unwrap().status(), TaskStatus::Failed);
        tasks.lock().sweep(later + RETAIN + Duration::from_secs(1));
        assert!(tasks.get(&task.task_id).is_err(), "forgotten after being kept");
    }

    #[test]
    fn limits_come_from_the_call() {
        let args = serde_json::json!({"timeout_ms": 1234});
        let args = args.as_object();
        assert_eq!(limit("fugue_wait", args), Duration::from_millis(1234));
        assert_eq!(limit("fugue_exec", None), Duration::from_secs(10));
        assert_eq!(
            limit("fugue_wait", None),
            Duration::from_millis(fugue_client::ops::DEFAULT_WAIT_MS)
        );
        assert_eq!(limit("fugue_spawn_agent", args), Duration::from_secs(3600));
        assert!(eligible("fugue_wait") && !eligible("fugue_read"));
    }

    /// Sends on `tx` when dropped.
    fn scopeguard(tx: tokio::sync::oneshot::Sender<()>) -> impl Drop {
        struct Guard(Option<tokio::sync::oneshot::Sender<()>>);
        impl Drop for Guard {
            fn drop(&mut self) {
                if let Some(tx) = self.0.take() {
                    let _ = tx.send(());
                }
            }
        }
        Guard(Some(tx))
    }
}
