//! Durable records: sessions and panes in SQLite, so a daemon that stops,
//! crashes or is upgraded can bring them back.
//!
//! One writer thread owns the connection. Everything else sends it records
//! through a channel and never waits for the disk: the writer takes what has
//! queued up and writes it in one transaction. A pane's output is not written as
//! it arrives; the session checkpoints each busy pane's screen and last lines now
//! and then, and once more when it ends.
//!
//! Bad state never blocks start-up: a database that cannot be read, or that a
//! newer fugued wrote, is moved aside and a fresh one started; a write that fails
//! (a full disk) is counted and logged, and the daemon goes on.

use fugue_protocol::{PaneId, PaneInfo, SessionId, SpawnSpec};
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Version of the schema this daemon writes; older ones are migrated on open.
const SCHEMA_VERSION: i64 = 2;
/// Records written per transaction at most.
const BATCH: usize = 512;
/// How long the writer gathers records before a transaction.
const GATHER: Duration = Duration::from_millis(20);
/// Lines of text kept with a pane's record.
pub const SAVED_TEXT_LINES: u32 = 1000;

const SCHEMA_V1: &str = "
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    cwd TEXT NOT NULL,
    env TEXT NOT NULL,          -- JSON [[name, value], ...]
    created_at_ms INTEGER NOT NULL,
    ord INTEGER NOT NULL
);
CREATE TABLE panes (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    info TEXT NOT NULL,         -- JSON PaneInfo: title, order, status, exit, restarts ...
    spec TEXT NOT NULL,         -- JSON SpawnSpec, to start it again
    pid_start INTEGER,          -- the process's start time (clock ticks after boot)
    updated_at_ms INTEGER NOT NULL,
    ord INTEGER GENERATED ALWAYS AS (json_extract(info, '$.index')) VIRTUAL,
    status TEXT GENERATED ALWAYS AS (json_extract(info, '$.state')) VIRTUAL
);
CREATE INDEX panes_by_session ON panes(session_id);
CREATE TABLE pane_output (
    pane_id TEXT PRIMARY KEY REFERENCES panes(id) ON DELETE CASCADE,
    size TEXT NOT NULL,         -- JSON PaneSize
    screen TEXT NOT NULL,       -- JSON [row with SGR attributes, ...]
    text TEXT NOT NULL,         -- JSON [last lines of the text view, ...]
    saved_at_ms INTEGER NOT NULL
);
";

/// The log offset up to which a checkpoint's text lines go: the raw log kept
/// in the state directory has what came after (see `PaneOutput::recover`).
const SCHEMA_V2: &str = "ALTER TABLE pane_output ADD COLUMN fed INTEGER NOT NULL DEFAULT 0;";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("written by a newer fugued (schema {0}, this one reads up to {SCHEMA_VERSION})")]
    Newer(i64),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("bad record: {0}")]
    Record(#[from] serde_json::Error),
}

/// A session as recorded.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionRecord {
    pub id: SessionId,
    pub name: String,
    pub cwd: String,
    pub env: Vec<(String, String)>,
    pub created_at_ms: u64,
    pub order: u32,
}

impl SessionRecord {
    /// The session as it is listed before any of its panes is back.
    pub fn info(&self) -> fugue_protocol::SessionInfo {
        fugue_protocol::SessionInfo {
            id: self.id,
            name: self.name.clone(),
            cwd: self.cwd.clone(),
            panes: 0,
            running_panes: 0,
            created_at_ms: self.created_at_ms,
        }
    }
}

/// A pane as recorded: its info (names, order, status, exit, restarts) and the
/// spec it was started from.
#[derive(Clone, Debug)]
pub struct PaneRecord {
    pub info: PaneInfo,
    pub spec: SpawnSpec,
    /// When the process started (`None`: the writer reads it from /proc).
    pub pid_start: Option<u64>,
}

/// The last screen (rows with SGR attributes) and complete text lines of a
/// pane, and the log offset the text view had seen.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SavedOutput {
    pub size: fugue_protocol::PaneSize,
    pub screen: Vec<String>,
    pub text: Vec<String>,
    pub fed: u64,
}

/// A recorded pane and its last output, if any was saved.
pub type RecordedPane = (PaneRecord, Option<SavedOutput>);

/// Everything recorded, as start-up reads it.
#[derive(Debug, Default)]
pub struct Loaded {
    pub sessions: Vec<(SessionRecord, Vec<RecordedPane>)>,
    /// What was wrong with the database, if it was moved aside.
    pub moved_aside: Option<String>,
}

enum Op {
    Session(SessionRecord),
    DeleteSession(SessionId),
    Pane(Box<PaneRecord>),
    Output(PaneId, Box<SavedOutput>),
    DeletePane(PaneId),
    Flush(mpsc::Sender<()>),
}

/// A handle on the writer; cheap to clone. A disabled store drops everything.
#[derive(Clone)]
pub struct Store {
    writer: Option<mpsc::Sender<Op>>,
    path: Option<PathBuf>,
    failed: Arc<AtomicU64>,
}

impl Store {
    /// Records nothing (`--state none`, or the database could not be opened).
    pub fn disabled() -> Self {
        Self {
            writer: None,
            path: None,
            failed: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Opens (or creates) the database at `path`, reads what it holds, and starts
    /// the writer. Never fails: an unreadable database is moved aside, and if even
    /// a fresh one cannot be made the daemon runs without records.
    pub fn open(path: &Path) -> (Self, Loaded) {
        let mut moved_aside = None;
        let opened = match open_and_load(path) {
            Ok(opened) => Ok(opened),
            Err(StoreError::Io(err)) => Err(StoreError::Io(err)),
            Err(err) => {
                let aside = move_aside(path);
                tracing::warn!(path = %path.display(), %err, moved_to = %aside.display(), "state database unreadable; moved aside, starting fresh");
                moved_aside = Some(format!("{err}; moved to {}", aside.display()));
                open_and_load(path)
            }
        };
        let (conn, lock, mut loaded) = match opened {
            Ok(opened) => opened,
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "cannot keep records; sessions will not survive a restart");
                return (Self::disabled(), Loaded::default());
            }
        };
        loaded.moved_aside = moved_aside;
        let logs = output_logs(path);
        if let Err(err) = prepare_output_logs(&logs, &loaded) {
            tracing::warn!(path = %logs.display(), %err, "cannot keep output logs; output since the last checkpoint will not survive a crash");
        }
        let (writer, ops) = mpsc::channel();
        let failed = Arc::new(AtomicU64::new(0));
        let spawned = std::thread::Builder::new().name("fugue-store".into()).spawn({
            let failed = failed.clone();
            move || write_loop(conn, lock, ops, failed, logs)
        });
        if let Err(err) = spawned {
            tracing::warn!(%err, "cannot start the state writer; records are off");
            return (Self::disabled(), loaded);
        }
        let store = Self {
            writer: Some(writer),
            path: Some(path.to_path_buf()),
            failed,
        };
        (store, loaded)
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Where pane `id`'s raw output log is kept (`None` without records). The
    /// file goes when the pane's record does.
    pub fn output_log(&self, id: PaneId) -> Option<PathBuf> {
        self.path.as_deref().map(|db| output_logs(db).join(format!("{id}.log")))
    }

    /// Writes that failed since start.
    pub fn failed_writes(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    fn send(&self, op: Op) {
        if let Some(writer) = &self.writer {
            let _ = writer.send(op);
        }
    }

    pub fn session(&self, record: SessionRecord) {
        self.send(Op::Session(record));
    }

    pub fn delete_session(&self, id: SessionId) {
        self.send(Op::DeleteSession(id));
    }

    pub fn pane(&self, record: PaneRecord) {
        self.send(Op::Pane(Box::new(record)));
    }

    pub fn output(&self, id: PaneId, output: SavedOutput) {
        self.send(Op::Output(id, Box::new(output)));
    }

    pub fn delete_pane(&self, id: PaneId) {
        self.send(Op::DeletePane(id));
    }

    /// Waits (on a blocking thread) until everything sent so far is written.
    pub async fn flush(&self) {
        let Some(writer) = &self.writer else { return };
        let (done, wait) = mpsc::channel();
        if writer.send(Op::Flush(done)).is_err() {
            return;
        }
        let _ = tokio::task::spawn_blocking(move || wait.recv_timeout(Duration::from_secs(5))).await;
    }
}

/// Where a database that could not be read goes: `state.db.corrupt-<unix time>`.
fn move_aside(path: &Path) -> PathBuf {
    let stamp = fugue_protocol::now_ms() / 1000;
    let aside = PathBuf::from(format!("{}.corrupt-{stamp}", path.display()));
    let _ = std::fs::rename(path, &aside);
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", path.display()));
        let _ = std::fs::rename(&side, format!("{}{suffix}", aside.display()));
    }
    aside
}

/// The lock that keeps two daemons (on two sockets) from sharing one database.
fn lock_database(path: &Path) -> Result<File, StoreError> {
    let lock_path = PathBuf::from(format!("{}.lock", path.display()));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)?;
    file.try_lock().map_err(|_| {
        StoreError::Io(std::io::Error::other(format!(
            "{} is in use by another fugued",
            path.display()
        )))
    })?;
    Ok(file)
}

fn open_and_load(path: &Path) -> Result<(Connection, File, Loaded), StoreError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let lock = lock_database(path)?;
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(2))?;
    // A file of random bytes opens fine; the first read is what fails.
    let integrity: String = conn.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
    if integrity != "ok" {
        return Err(StoreError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some(integrity),
        )));
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    migrate(&conn)?;
    let loaded = load(&conn)?;
    Ok((conn, lock, loaded))
}

/// Brings the schema to [`SCHEMA_VERSION`], one step at a time.
fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::Newer(version));
    }
    if version < 1 {
        conn.execute_batch(&format!("BEGIN; {SCHEMA_V1} PRAGMA user_version = 1; COMMIT;"))?;
    }
    if version < 2 {
        conn.execute_batch(&format!("BEGIN; {SCHEMA_V2} PRAGMA user_version = 2; COMMIT;"))?;
    }
    Ok(())
}

fn load(conn: &Connection) -> Result<Loaded, StoreError> {
    let mut sessions = Vec::new();
    let mut statement = conn.prepare("SELECT id, name, cwd, env, created_at_ms, ord FROM sessions ORDER BY ord")?;
    let rows = statement.query_map([], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, i64>(4)?,
            row.get::<_, i64>(5)?,
        ))
    })?;
    for row in rows {
        let (id, name, cwd, env, created, order) = row?;
        let Ok(id) = id.parse::<uuid::Uuid>() else { continue };
        sessions.push(SessionRecord {
            id: SessionId(id),
            name,
            cwd,
            env: serde_json::from_str(&env)?,
            created_at_ms: created.max(0) as u64,
            order: order.clamp(0, u32::MAX as i64) as u32,
        });
    }
    let mut loaded = Loaded::default();
    let mut panes = conn.prepare(
        "SELECT p.info, p.spec, p.pid_start, o.size, o.screen, o.text, o.fed
         FROM panes p LEFT JOIN pane_output o ON o.pane_id = p.id
         WHERE p.session_id = ?1 ORDER BY p.ord",
    )?;
    for session in sessions {
        let rows = panes.query_map(params![session.id.to_string()], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<i64>>(2)?,
                row.get::<_, Option<String>>(3)?,
                row.get::<_, Option<String>>(4)?,
                row.get::<_, Option<String>>(5)?,
                row.get::<_, Option<i64>>(6)?,
            ))
        })?;
        let mut records = Vec::new();
        for row in rows {
            let (info, spec, pid_start, size, screen, text, fed) = row?;
            let record = PaneRecord {
                info: serde_json::from_str(&info)?,
                spec: serde_json::from_str(&spec)?,
                pid_start: pid_start.map(|s| s.max(0) as u64),
            };
            let output = match (size, screen, text) {
                (Some(size), Some(screen), Some(text)) => Some(SavedOutput {
                    size: serde_json::from_str(&size)?,
                    screen: serde_json::from_str(&screen)?,
                    text: serde_json::from_str(&text)?,
                    fed: fed.unwrap_or(0).max(0) as u64,
                }),
                _ => None,
            };
            records.push((record, output));
        }
        loaded.sessions.push((session, records));
    }
    Ok(loaded)
}

/// The directory of the panes' raw output logs, beside the database.
fn output_logs(db: &Path) -> PathBuf {
    db.with_extension("output")
}

/// Makes the log directory (private, like the database's) and removes logs of
/// panes that have no record (left by a database moved aside, say).
fn prepare_output_logs(dir: &Path, loaded: &Loaded) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let known: std::collections::HashSet<String> = loaded
        .sessions
        .iter()
        .flat_map(|(_, panes)| panes.iter().map(|(p, _)| format!("{}.log", p.info.id)))
        .collect();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !known.contains(entry.file_name().to_string_lossy().as_ref()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}

fn write_loop(mut conn: Connection, _lock: File, ops: mpsc::Receiver<Op>, failed: Arc<AtomicU64>, logs: PathBuf) {
    let mut batch = Vec::new();
    while let Ok(first) = ops.recv() {
        batch.push(first);
        // What arrives within the window goes into the same transaction: a burst
        // of requests costs one commit, not one each.
        let window = std::time::Instant::now() + GATHER;
        while batch.len() < BATCH && !matches!(batch.last(), Some(Op::Flush(_))) {
            let left = window.saturating_duration_since(std::time::Instant::now());
            match ops.recv_timeout(left) {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        let mut flushed = Vec::new();
        let writes: Vec<Op> = batch
            .drain(..)
            .filter_map(|op| match op {
                Op::Flush(done) => {
                    flushed.push(done);
                    None
                }
                op => Some(op),
            })
            .collect();
        if !writes.is_empty() {
            if let Err(err) = write_batch(&mut conn, &writes) {
                let before = failed.fetch_add(writes.len() as u64, Ordering::Relaxed);
                // Logged for the first failure and then every thousandth, so a full
                // disk does not fill the log too.
                if before == 0 || before / 1000 != (before + writes.len() as u64) / 1000 {
                    tracing::warn!(%err, records = writes.len(), "records not persisted");
                }
            }
            // A pane's output log goes with its record.
            for op in &writes {
                if let Op::DeletePane(id) = op {
                    let _ = std::fs::remove_file(logs.join(format!("{id}.log")));
                }
            }
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

fn write_batch(conn: &mut Connection, ops: &[Op]) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    let now = fugue_protocol::now_ms() as i64;
    for op in ops {
        match op {
            Op::Session(s) => {
                tx.execute(
                    "INSERT INTO sessions (id, name, cwd, env, created_at_ms, ord) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(id) DO UPDATE SET name = ?2, cwd = ?3, env = ?4, ord = ?6",
                    params![
                        s.id.to_string(),
                        s.name,
                        s.cwd,
                        serde_json::to_string(&s.env)?,
                        s.created_at_ms as i64,
                        s.order
                    ],
                )?;
            }
            Op::DeleteSession(id) => {
                tx.execute("DELETE FROM sessions WHERE id = ?1", params![id.to_string()])?;
            }
            Op::Pane(p) => {
                // When the process started, read here rather than on the request
                // path; with the pid it recognises the process after a crash.
                let running = p.info.state == fugue_protocol::PaneState::Running && p.info.pid != 0;
                let pid_start = p.pid_start.or_else(|| {
                    running
                        .then(|| crate::terminal::process::start_time(p.info.pid))
                        .flatten()
                });
                // A pane of a session deleted in the same batch has nowhere to go.
                let session_exists: Option<i64> = tx
                    .query_row(
                        "SELECT 1 FROM sessions WHERE id = ?1",
                        params![p.info.session_id.to_string()],
                        |row| row.get(0),
                    )
                    .optional()?;
                if session_exists.is_none() {
                    continue;
                }
                tx.execute(
                    "INSERT INTO panes (id, session_id, info, spec, pid_start, updated_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT(id) DO UPDATE SET session_id = ?2, info = ?3, spec = ?4, pid_start = ?5, updated_at_ms = ?6",
                    params![
                        p.info.id.to_string(),
                        p.info.session_id.to_string(),
                        serde_json::to_string(&p.info)?,
                        serde_json::to_string(&p.spec)?,
                        pid_start.map(|s| s as i64),
                        now
                    ],
                )?;
            }
            Op::Output(id, output) => {
                tx.execute(
                    "INSERT INTO pane_output (pane_id, size, screen, text, saved_at_ms, fed)
                     SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM panes WHERE id = ?1)
                     ON CONFLICT(pane_id) DO UPDATE SET size = ?2, screen = ?3, text = ?4, saved_at_ms = ?5, fed = ?6",
                    params![
                        id.to_string(),
                        serde_json::to_string(&output.size)?,
                        serde_json::to_string(&output.screen)?,
                        serde_json::to_string(&output.text)?,
                        now,
                        output.fed as i64
                    ],
                )?;
            }
            Op::DeletePane(id) => {
                tx.execute("DELETE FROM panes WHERE id = ?1", params![id.to_string()])?;
            }
            Op::Flush(_) => {}
        }
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fugue_protocol::{PaneSize, PaneState, RestartPolicy};

    fn pane(session: SessionId, index: u32) -> PaneRecord {
        PaneRecord {
            info: PaneInfo {
                id: PaneId::new(),
                session_id: session,
                session_name: "s".into(),
                index,
                title: format!("pane {index}"),
                purpose: String::new(),
                command: vec!["sh".into()],
                shell: false,
                cwd: "/".into(),
                state: PaneState::Running,
                pid: 42,
                exit: None,
                size: PaneSize::default(),
                started_at_ms: 1,
                exited_at_ms: None,
                restart: RestartPolicy::Always,
                restarts: 2,
                last_exit: None,
                agent_session: None,
                tmux: None,
            },
            spec: SpawnSpec::new("s"),
            pid_start: Some(7),
        }
    }

    #[tokio::test]
    async fn records_come_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let session = SessionRecord {
            id: SessionId::new(),
            name: "work".into(),
            cwd: "/tmp".into(),
            env: vec![("A".into(), "1".into())],
            created_at_ms: 5,
            order: 0,
        };
        let (second, first) = (pane(session.id, 1), pane(session.id, 0));
        {
            let (store, loaded) = Store::open(&path);
            assert!(loaded.sessions.is_empty());
            store.session(session.clone());
            store.pane(second.clone());
            store.pane(first.clone());
            store.output(
                first.info.id,
                SavedOutput {
                    size: PaneSize { cols: 10, rows: 2 },
                    screen: vec!["\x1b[1mhi".into(), String::new()],
                    text: vec!["hi".into()],
                    fed: 3,
                },
            );
            store.flush().await;
        }
        // The writer thread lets go of the lock once its channel closes.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let loaded = loop {
            let (store, loaded) = Store::open(&path);
            if store.path().is_some() || std::time::Instant::now() > deadline {
                break loaded;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(loaded.sessions.len(), 1);
        let (s, panes) = &loaded.sessions[0];
        assert_eq!(
            (s.name.as_str(), s.env.clone()),
            ("work", vec![("A".into(), "1".into())])
        );
        let ids: Vec<PaneId> = panes.iter().map(|(p, _)| p.info.id).collect();
        assert_eq!(ids, vec![first.info.id, second.info.id]);
        assert_eq!(panes[0].1.as_ref().unwrap().screen[0], "\x1b[1mhi");
        assert!(panes[1].1.is_none());
        assert_eq!(panes[0].0.info.restarts, 2);
    }

    #[test]
    fn unreadable_databases_are_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        type MakeBad = Box<dyn Fn(&Path)>;
        let cases: [(&str, MakeBad); 3] = [
            (
                "random bytes",
                Box::new(|p: &Path| {
                    std::fs::write(p, (0..8192u32).map(|i| (i * 7919 % 251) as u8).collect::<Vec<_>>()).unwrap()
                }),
            ),
            (
                "truncated",
                Box::new(|p: &Path| {
                    let conn = Connection::open(p).unwrap();
                    conn.execute_batch(SCHEMA_V1).unwrap();
                    conn.pragma_update(None, "user_version", 1).unwrap();
                    for i in 0..2000 {
                        conn.execute(
                            "INSERT INTO sessions VALUES (?1, ?2, '/', '[]', 0, ?3)",
                            params![format!("id{i}"), format!("name {i} {}", "x".repeat(100)), i],
                        )
                        .unwrap();
                    }
                    drop(conn);
                    let bytes = std::fs::read(p).unwrap();
                    std::fs::write(p, &bytes[..bytes.len() * 3 / 4]).unwrap();
                }),
            ),
            (
                "newer schema",
                Box::new(|p: &Path| {
                    let conn = Connection::open(p).unwrap();
                    conn.pragma_update(None, "user_version", 99).unwrap();
                }),
            ),
        ];
        for (name, make) in cases {
            let path = dir.path().join(format!("{}.db", name.replace(' ', "-")));
            make(&path);
            // Wait for any writer of the set-up to let go of the lock.
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            let (store, loaded) = loop {
                let opened = Store::open(&path);
                if opened.1.moved_aside.is_some() || std::time::Instant::now() > deadline {
                    break opened;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            assert!(loaded.moved_aside.is_some(), "{name}: moved aside");
            assert!(store.path().is_some(), "{name}: a fresh database is in use");
            let aside = std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .any(|e| e.file_name().to_string_lossy().contains(".corrupt-"));
            assert!(aside, "{name}: the old file is kept");
        }
    }
}
