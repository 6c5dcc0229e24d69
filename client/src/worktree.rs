//! A git worktree per agent: a checkout of the session's repository on a branch
//! of its own, so two agents never edit one checkout, and a diff of what one
//! changed against where it started.
//!
//! Git runs here, in the client, with the user's own `git`, environment and
//! credentials: never in fugued, which a service manager may have started
//! without the user's PATH or ssh-agent. Worktrees live outside the working tree,
//! under the worktree root (`$FUGUE_WORKTREE_ROOT`, else
//! `$XDG_STATE_HOME/fugue/worktrees`, else `~/.local/state/fugue/worktrees`), at
//! `ROOT/REPO-KEY/NAME`, each with its record beside it (`NAME.json`): the
//! repository, the branch, the base, and the pane it belongs to. Nothing with
//! work in it is removed unless the request says to discard it.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// Longest a worktree's name may be.
pub const MAX_NAME: usize = 64;
/// Bytes of patch a diff reads at most; past it the diff says it was cut.
pub const MAX_DIFF_BYTES: usize = 8 * 1024 * 1024;
/// Files a diff or a status lists at most.
pub const MAX_FILES: usize = 10_000;
/// Records read from the root at most.
const MAX_RECORDS: usize = 10_000;
/// Longest one git command may run (a checkout of a large repository).
const GIT_TIMEOUT: Duration = Duration::from_secs(300);
/// Bytes of a git command's output kept for anything but a diff.
const MAX_GIT_OUTPUT: usize = 4 * 1024 * 1024;

/// What went wrong with a worktree, in one line naming what and why.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Git(String),
    #[error("{0}")]
    Io(String),
}

/// A worktree fugue made, as its record says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct WorktreeRecord {
    pub name: String,
    /// The repository's main checkout (its top-level directory).
    pub repo: String,
    /// The worktree's directory.
    pub path: String,
    /// Its branch (`fugue/NAME`).
    pub branch: String,
    /// The commit it started from.
    pub base: String,
    /// The ref that commit was read from (`main`, a tag, `HEAD`): merging goes
    /// back there, and ahead/behind count against it.
    pub base_ref: String,
    /// The pane working in it, once started.
    pub pane: Option<String>,
    pub session: Option<String>,
    pub created_at_ms: u64,
}

/// A new worktree: made from `dir`'s repository, on branch `fugue/NAME`.
#[derive(Clone, Debug, Default)]
pub struct NewWorktree {
    /// A directory in the repository (the session's or the pane's).
    pub dir: PathBuf,
    /// Its name (default `agent-` and 8 hex digits).
    pub name: Option<String>,
    /// What to start from (default the repository's HEAD commit).
    pub base: Option<String>,
}

/// A worktree made, and what the person should know (uncommitted changes that
/// were not carried).
#[derive(Debug)]
pub struct Created {
    pub record: WorktreeRecord,
    pub notes: Vec<String>,
}

/// Where a worktree stands now.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct WorktreeStatus {
    /// The directory still exists (it may have been removed behind fugue's back).
    pub exists: bool,
    /// Commits on the branch that `base_ref` does not have.
    pub ahead: u32,
    /// Commits on `base_ref` the branch does not have.
    pub behind: u32,
    /// Files changed and not committed (`git status --porcelain` paths).
    pub dirty: Vec<String>,
    /// Why git could not read it (its repository moved or removed, say).
    pub problem: Option<String>,
}

/// Checks a worktree's name: it becomes a branch (`fugue/NAME`) and a directory.
pub fn check_name(name: &str) -> Result<(), WorktreeError> {
    let fits = !name.is_empty() && name.len() <= MAX_NAME;
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let shaped = !name.starts_with(['.', '-']) && !name.ends_with('.') && !name.ends_with(".lock");
    if fits && plain && shaped && !name.contains("..") {
        return Ok(());
    }
    Err(WorktreeError::Invalid(format!(
        "worktree name '{}' is not one: 1 to {MAX_NAME} of A-Z a-z 0-9 . _ -, not starting with . or -, \
no '..', not ending in . or .lock",
        fugue_protocol::limits::clean_label(name, 80)
    )))
}

/// The root a program chose for this process (`fugue-mcp --worktree-root`).
static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Makes `root` this process's worktree root, before any worktree is made.
pub fn set_root(root: PathBuf) {
    let _ = ROOT.set(root);
}

/// The worktree root (see the module's comment).
pub fn root() -> Result<PathBuf, WorktreeError> {
    if let Some(root) = ROOT.get() {
        return Ok(root.clone());
    }
    let from_env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(root) = from_env("FUGUE_WORKTREE_ROOT") {
        return Ok(root);
    }
    let state = from_env("XDG_STATE_HOME")
        .or_else(|| from_env("HOME").map(|home| home.join(".local/state")))
        .ok_or_else(|| WorktreeError::Invalid("no HOME: set FUGUE_WORKTREE_ROOT".into()))?;
    Ok(state.join("fugue/worktrees"))
}

/// The top-level directory of the checkout `dir` is in.
pub async fn toplevel(dir: &Path) -> Result<PathBuf, WorktreeError> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])
        .await
        .map_err(|_| WorktreeError::Invalid(format!("{} is not in a git repository", dir.display())))?;
    Ok(PathBuf::from(top.trim_end()))
}

/// Makes a worktree of `new.dir`'s repository on a new branch.
pub async fn create_worktree(new: &NewWorktree) -> Result<Created, WorktreeError> {
    let name = match &new.name {
        Some(name) => name.clone(),
        None => format!("agent-{}", &fugue_protocol::SessionId::new().simple()[..8]),
    };
    check_name(&name)?;
    let dir = &new.dir;
    let repo = toplevel(dir).await?;
    let base_ref = new.base.clone().unwrap_or_else(|| "HEAD".to_string());
    if base_ref.starts_with('-') || base_ref.chars().any(char::is_control) {
        return Err(WorktreeError::Invalid(format!("base '{base_ref}' is not a ref")));
    }
    let base = git(
        &repo,
        &["rev-parse", "--verify", "--quiet", &format!("{base_ref}^{{commit}}")],
    )
    .await
    .map_err(|_| WorktreeError::Invalid(format!("base '{base_ref}' is no commit in {}", repo.display())))?;
    let base = base.trim_end().to_string();
    let branch = format!("fugue/{name}");
    if git(
        &repo,
        &["show-ref", "--verify", "--quiet", &format!("refs/heads/{branch}")],
    )
    .await
    .is_ok()
    {
        return Err(WorktreeError::Invalid(format!(
            "branch {branch} exists in {}; pick another name",
            repo.display()
        )));
    }
    // The ref merges go back to: the branch HEAD names, when HEAD was the base.
    let base_ref = match base_ref.as_str() {
        "HEAD" => git(&repo, &["symbolic-ref", "--quiet", "--short", "HEAD"])
            .await
            .map(|b| b.trim_end().to_string())
            .unwrap_or_else(|_| base.clone()),
        _ => base_ref,
    };
    let folder = root()?.join(repo_key(&repo));
    let path = folder.join(&name);
    if path.exists() || record_path(&folder, &name).exists() {
        return Err(WorktreeError::Invalid(format!(
            "worktree {} exists already",
            path.display()
        )));
    }
    std::fs::create_dir_all(&folder).map_err(|e| io(&folder, e))?;
    let mut notes = Vec::new();
    let dirty = git(&repo, &["status", "--porcelain"]).await?;
    let dirty_files = dirty.lines().count();
    if dirty_files > 0 {
        notes.push(format!(
            "{dirty_files} uncommitted change(s) in {} are not carried: the worktree starts from {}",
            repo.display(),
            short(&base)
        ));
    }
    let path_text = path.to_string_lossy().into_owned();
    git(&repo, &["worktree", "add", "--quiet", "-b", &branch, &path_text, &base]).await?;
    let record = WorktreeRecord {
        name,
        repo: repo.to_string_lossy().into_owned(),
        path: path_text,
        branch,
        base,
        base_ref,
        pane: None,
        session: None,
        created_at_ms: crate::views::now_ms(),
    };
    save(&record)?;
    Ok(Created { record, notes })
}

/// Records that `record`'s worktree belongs to `pane` of `session`.
pub fn assign(record: &mut WorktreeRecord, pane: &str, session: &str) -> Result<(), WorktreeError> {
    record.pane = Some(pane.to_string());
    record.session = Some(session.to_string());
    save(record)
}

/// Every worktree fugue made (records under the root), by repository and name.
pub fn list() -> Result<Vec<WorktreeRecord>, WorktreeError> {
    let root = root()?;
    let mut records = Vec::new();
    let Ok(folders) = std::fs::read_dir(&root) else {
        return Ok(records);
    };
    for folder in folders.flatten() {
        let Ok(files) = std::fs::read_dir(folder.path()) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            if records.len() >= MAX_RECORDS || path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let record = std::fs::read(&path)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<WorktreeRecord>(&bytes).ok());
            records.extend(record);
        }
    }
    records.sort_by(|a, b| (&a.repo, &a.name).cmp(&(&b.repo, &b.name)));
    Ok(records)
}

/// The worktree pane `pane` (its full id) works in, if fugue made it one.
pub fn of_pane(pane: &str) -> Result<Option<WorktreeRecord>, WorktreeError> {
    Ok(list()?.into_iter().find(|r| r.pane.as_deref() == Some(pane)))
}

/// The worktree named `name`, or else the one pane `pane` (a full id) works in.
pub fn find(name: &str, pane: Option<&str>) -> Result<Option<WorktreeRecord>, WorktreeError> {
    let records = list()?;
    let by_name: Vec<&WorktreeRecord> = records.iter().filter(|r| r.name == name).collect();
    if by_name.len() > 1 {
        let repos: Vec<&str> = by_name.iter().map(|r| r.repo.as_str()).collect();
        return Err(WorktreeError::Invalid(format!(
            "{} worktrees are named '{name}' (in {}); name the pane instead",
            by_name.len(),
            repos.join(", ")
        )));
    }
    if let Some(record) = by_name.first() {
        return Ok(Some((*record).clone()));
    }
    Ok(pane.and_then(|pane| records.into_iter().find(|r| r.pane.as_deref() == Some(pane))))
}

/// Where the worktree stands against its base ref.
pub async fn status(record: &WorktreeRecord) -> Result<WorktreeStatus, WorktreeError> {
    let path = Path::new(&record.path);
    if !path.is_dir() {
        return Ok(WorktreeStatus {
            exists: false,
            ahead: 0,
            behind: 0,
            dirty: Vec::new(),
            problem: None,
        });
    }
    let (ahead, behind) = counts(record).await?;
    let porcelain = git(path, &["status", "--porcelain=v1", "-z", "--untracked-files=all"]).await?;
    let dirty = porcelain_paths(&porcelain);
    Ok(WorktreeStatus {
        exists: true,
        ahead,
        behind,
        dirty,
        problem: None,
    })
}

/// Commits on the branch its base ref lacks, and the other way round. A base
/// ref that is gone (renamed, deleted) counts from the base commit instead;
/// when nothing can be counted, that is an error, never "no work".
async fn counts(record: &WorktreeRecord) -> Result<(u32, u32), WorktreeError> {
    let repo = Path::new(&record.repo);
    let number = |text: Option<&str>| text.and_then(|n| n.parse::<u32>().ok());
    let range = format!("{}...{}", record.base_ref, record.branch);
    if let Ok(both) = git(repo, &["rev-list", "--left-right", "--count", &range]).await {
        let mut both = both.split_whitespace();
        if let (Some(behind), Some(ahead)) = (number(both.next()), number(both.next())) {
            return Ok((ahead, behind));
        }
    }
    let since_base = format!("{}..{}", record.base, record.branch);
    let ahead = git(repo, &["rev-list", "--count", &since_base]).await?;
    let ahead = number(Some(ahead.trim()))
        .ok_or_else(|| WorktreeError::Git(format!("cannot count the commits of {}", record.branch)))?;
    Ok((ahead, 0))
}

/// What releasing a pane did with its worktree.
#[derive(Debug, PartialEq, Eq)]
pub enum Released {
    /// Removed, with its branch (it held no work, or `discard` said so); the
    /// teardown commands that failed first, if any.
    Removed(Vec<String>),
    /// Kept, for these reasons (uncommitted files, unmerged commits).
    Kept(Vec<String>),
    /// Its directory was gone already; the record is dropped, the branch kept.
    Gone,
}

impl Released {
    /// `removed`, `kept` or `gone`, as every front end names it.
    pub fn outcome(&self) -> &'static str {
        match self {
            Released::Removed(_) => "removed",
            Released::Kept(_) => "kept",
            Released::Gone => "gone",
        }
    }

    /// What a kept worktree holds.
    pub fn holds(&self) -> &[String] {
        match self {
            Released::Kept(holds) => holds,
            _ => &[],
        }
    }

    /// The teardown commands that failed before a removal.
    pub fn notes(&self) -> &[String] {
        match self {
            Released::Removed(notes) => notes,
            _ => &[],
        }
    }
}

/// Removes `record`'s worktree and branch if they hold no work, or whatever
/// they hold when `discard`; else keeps them and says why.
pub async fn release(record: &WorktreeRecord, discard: bool) -> Result<Released, WorktreeError> {
    let status = status(record).await?;
    let repo = Path::new(&record.repo);
    if !status.exists {
        // Git's own bookkeeping of the vanished checkout goes too.
        let _ = git(repo, &["worktree", "prune"]).await;
        forget(record)?;
        return Ok(Released::Gone);
    }
    let mut work = Vec::new();
    if !status.dirty.is_empty() {
        work.push(format!("{} uncommitted file(s)", status.dirty.len()));
    }
    if status.ahead > 0 {
        work.push(format!("{} commit(s) not in {}", status.ahead, record.base_ref));
    }
    if !work.is_empty() && !discard {
        return Ok(Released::Kept(work));
    }
    let teardown = crate::worktree_setup::commands_for(repo)
        .map(|c| c.teardown)
        .unwrap_or_default();
    let notes = crate::worktree_setup::run_teardown(record, &teardown).await;
    git(repo, &["worktree", "remove", "--force", &record.path]).await?;
    git(repo, &["branch", "-D", &record.branch]).await?;
    forget(record)?;
    Ok(Released::Removed(notes))
}

/// A repository's folder under the root: its directory's name and a digest of
/// its path (two checkouts named `app` stay apart). A worktree NAME of it is
/// `ROOT/<this>/NAME`.
pub fn repo_key(repo: &Path) -> String {
    let name: String = repo
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    // FNV-1a: stable across builds, unlike the standard library's hasher.
    let digest = repo
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("{name}-{:08x}", digest as u32)
}

fn record_path(folder: &Path, name: &str) -> PathBuf {
    folder.join(format!("{name}.json"))
}

/// Writes the record beside its worktree, whole or not at all.
fn save(record: &WorktreeRecord) -> Result<(), WorktreeError> {
    let path = Path::new(&record.path);
    let folder = path.parent().unwrap_or(path);
    let target = record_path(folder, &record.name);
    let temporary = folder.join(format!(".{}.json.tmp", record.name));
    let text = serde_json::to_vec_pretty(record).map_err(|e| WorktreeError::Io(e.to_string()))?;
    std::fs::write(&temporary, text).map_err(|e| io(&temporary, e))?;
    std::fs::rename(&temporary, &target).map_err(|e| io(&target, e))
}

fn forget(record: &WorktreeRecord) -> Result<(), WorktreeError> {
    let path = Path::new(&record.path);
    let target = record_path(path.parent().unwrap_or(path), &record.name);
    match std::fs::remove_file(&target) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&target, e)),
        _ => Ok(()),
    }
}

fn io(path: &Path, err: std::io::Error) -> WorktreeError {
    WorktreeError::Io(format!("{}: {err}", path.display()))
}

/// The paths in `git status --porcelain=v1 -z` output (a rename's new path).
fn porcelain_paths(porcelain: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut entries = porcelain.split('\0').filter(|e| !e.is_empty());
    while let Some(entry) = entries.next() {
        let (code, path) = entry.split_at(entry.len().min(3));
        if code.starts_with('R') || code.starts_with('C') {
            entries.next();
        }
        if paths.len() < MAX_FILES {
            paths.push(path.to_string());
        }
    }
    paths
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// Runs `git -C dir ARGS` and returns its standard output (at most
/// [`MAX_GIT_OUTPUT`] bytes), or its first line of complaint.
async fn git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    let (status, out, err) = git_capped(dir, args, &[], MAX_GIT_OUTPUT).await?;
    if status {
        return Ok(String::from_utf8_lossy(&out.0).into_owned());
    }
    Err(git_failed(args, &err))
}

/// Output of a command: bytes, and whether there was more than the cap.
pub(crate) struct Captured(pub Vec<u8>, pub bool);

/// Runs git with extra environment, keeping at most `cap` bytes of its
/// output; a command that outlives [`GIT_TIMEOUT`] is killed.
pub(crate) async fn git_capped(
    dir: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
    cap: usize,
) -> Result<(bool, Captured, String), WorktreeError> {
    let mut command = tokio::process::Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .args(args)
        .envs(env.iter().copied())
        // Never a pager or a prompt for credentials: nobody is there to answer.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| WorktreeError::Git(format!("cannot run git: {e}")))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(WorktreeError::Git("git's output is not readable".into()));
    };
    let run = async {
        // Stderr is read on its own (its first 64 KiB kept, the rest drained),
        // so git never blocks on it while stdout is read.
        let complaint = tokio::spawn(async move {
            let mut kept = Vec::new();
            let mut stderr = stderr;
            let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut kept).await;
            let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
            kept
        });
        let mut out = Vec::new();
        stdout
            .take(cap as u64 + 1)
            .read_to_end(&mut out)
            .await
            .map_err(|e| WorktreeError::Git(format!("reading git: {e}")))?;
        let cut = out.len() > cap;
        out.truncate(cap);
        // Past the cap the rest is not read: git, blocked writing it, is
        // stopped rather than waited on.
        if cut {
            let _ = child.start_kill();
        }
        let status = child
            .wait()
            .await
            .map_err(|e| WorktreeError::Git(format!("git: {e}")))?;
        let err = complaint.await.unwrap_or_default();
        Ok::<_, WorktreeError>((
            status.success() || cut,
            Captured(out, cut),
            String::from_utf8_lossy(&err).into_owned(),
        ))
    };
    match tokio::time::timeout(GIT_TIMEOUT, run).await {
        Ok(result) => result,
        Err(_) => Err(WorktreeError::Git(format!(
            "git {} took longer than {} s",
            args.first().unwrap_or(&""),
            GIT_TIMEOUT.as_secs()
        ))),
    }
}

fn git_failed(args: &[&str], stderr: &str) -> WorktreeError {
    let said = stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("failed");
    let said = said.strip_prefix("fatal: ").unwrap_or(said);
    WorktreeError::Git(format!("git {}: {said}", args.first().unwrap_or(&"")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_branches_and_directories_safely() {
        for good in ["fix-login", "agent-1a2b3c4d", "v1.2_x"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        let long = "a".repeat(MAX_NAME + 1);
        for bad in [
            "",
            "..",
            "a..b",
            "-x",
            ".hidden",
            "x.lock",
            "x.",
            "a/b",
            "a b",
            "tab\tx",
            "\u{1b}[2J",
            &long,
        ] {
            let err = check_name(bad).expect_err(bad).to_string();
            assert!(err.starts_with("worktree name '"), "{err}");
            assert!(!err.contains('\u{1b}'), "{err}");
        }
    }

    #[test]
    fn porcelain_paths_take_renames_new_names() {
        let out = " M src/a.rs\0R  new.rs\0old.rs\0?? notes.txt\0";
        assert_eq!(porcelain_paths(out), ["src/a.rs", "new.rs", "notes.txt"]);
    }

    #[test]
    fn repository_keys_differ_by_path_and_stay_plain() {
        let a = repo_key(Path::new("/home/a/app"));
        let b = repo_key(Path::new("/home/b/app"));
        assert_ne!(a, b);
        assert!(a.starts_with("app-"));
        assert_eq!(repo_key(Path::new("/x/we ird")).split('-').next(), Some("we_ird"));
    }
}

/// A pane started in a worktree of its own.
#[derive(Debug)]
pub struct StartedInWorktree {
    pub pane: fugue_protocol::PaneInfo,
    pub worktree: WorktreeRecord,
    /// What the person should know (see [`Created::notes`]).
    pub notes: Vec<String>,
}

/// Makes a worktree, then the pane `spec` describes in it (through `create`,
/// the front end's way of creating a pane), and records whose it is. If the
/// pane cannot start, the new worktree (which holds nothing yet) goes again.
pub async fn start_in_worktree<Create, Creating>(
    new: &NewWorktree,
    mut spec: fugue_protocol::SpawnSpec,
    create: Create,
) -> Result<StartedInWorktree, crate::ClientError>
where
    Create: FnOnce(fugue_protocol::SpawnSpec) -> Creating,
    Creating: std::future::Future<Output = Result<fugue_protocol::PaneInfo, crate::ClientError>>,
{
    let Created { mut record, mut notes } = create_worktree(new).await?;
    let commands = match crate::worktree_setup::commands_for(Path::new(&record.repo)) {
        Ok(commands) => commands,
        Err(err) => {
            let _ = release(&record, false).await;
            return Err(err.into());
        }
    };
    notes.extend(commands.notes.iter().cloned());
    if !commands.setup.is_empty() {
        notes.push(format!(
            "{} setup command(s) run in the pane first; a failure ends it with the reason",
            commands.setup.len()
        ));
    }
    spec.cwd = Some(record.path.clone());
    let spec = crate::worktree_setup::with_setup(spec, &record, &commands);
    let pane = match create(spec).await {
        Ok(pane) => pane,
        Err(err) => {
            let _ = release(&record, false).await;
            return Err(err);
        }
    };
    assign(&mut record, &pane.id.to_string(), &pane.session_name)?;
    Ok(StartedInWorktree {
        pane,
        worktree: record,
        notes,
    })
}

/// Releases a pane, then its worktree if it has one: removed when it holds no
/// work or `discard` says so, else kept (and the reply says what it holds).
pub async fn release_pane(
    client: &crate::Client,
    pane: &str,
    discard: bool,
) -> Result<Option<(WorktreeRecord, Released)>, crate::ClientError> {
    let info = client.pane_status(pane).await?;
    let record = of_pane(&info.id.to_string())?;
    if discard && record.is_none() {
        return Err(WorktreeError::Invalid(format!("pane {} has no worktree to discard", info.id)).into());
    }
    client.release_pane(&info.id.to_string()).await?;
    let Some(record) = record else { return Ok(None) };
    let released = release(&record, discard).await?;
    Ok(Some((record, released)))
}

/// The worktree named `target`, or the one pane `target` (any id form the
/// daemon takes) works in.
pub async fn find_target(client: &crate::Client, target: &str) -> Result<WorktreeRecord, crate::ClientError> {
    let pane = client.pane_status(target).await.ok().map(|p| p.id.to_string());
    find(target, pane.as_deref())?.ok_or_else(|| {
        WorktreeError::Invalid(format!(
            "no worktree of fugue's is named '{target}' or belongs to such a pane (see `fugue worktrees`)"
        ))
        .into()
    })
}

/// Discards `record`'s worktree and branch with whatever work they hold: its
/// pane is released first (nothing may write into a worktree being removed).
/// Only for a request that named it, after a person's yes.
pub async fn discard(client: &crate::Client, record: &WorktreeRecord) -> Result<Released, crate::ClientError> {
    if let Some(pane) = &record.pane {
        match client.release_pane(pane).await {
            Err(err) if err.code() != Some(fugue_protocol::ErrorCode::PaneNotFound) => return Err(err),
            _ => {}
        }
    }
    Ok(release(record, true).await?)
}

/// What a discard would throw away, in a phrase for the person asked.
pub async fn holdings(record: &WorktreeRecord) -> Result<String, WorktreeError> {
    let status = status(record).await?;
    Ok(format!(
        "{} uncommitted file(s), {} commit(s) not in {}",
        status.dirty.len(),
        status.ahead,
        record.base_ref
    ))
}

/// The changes pane `pane` made in its worktree.
pub async fn pane_diff(
    client: &crate::Client,
    pane: &str,
    stat_only: bool,
) -> Result<crate::diff::DiffView, crate::ClientError> {
    let record = worktree_of_pane(client, pane).await?;
    Ok(crate::diff::diff(&record, stat_only).await?)
}

/// The changes pane `pane` made in its worktree as a git patch (see
/// [`crate::diff::patch`]).
pub async fn pane_patch(client: &crate::Client, pane: &str) -> Result<Vec<u8>, crate::ClientError> {
    let record = worktree_of_pane(client, pane).await?;
    Ok(crate::diff::patch(&record).await?)
}

/// The diff in `format` as the front ends give it: with `patch`, the files'
/// counts and the patch as text (refused if the patch is not UTF-8: a text
/// that changes its bytes would apply to nothing).
pub async fn pane_diff_as(
    client: &crate::Client,
    pane: &str,
    stat_only: bool,
    format: crate::diff::DiffFormat,
) -> Result<crate::diff::DiffView, crate::ClientError> {
    if format == crate::diff::DiffFormat::Files {
        return pane_diff(client, pane, stat_only).await;
    }
    let record = worktree_of_pane(client, pane).await?;
    let mut view = crate::diff::diff(&record, true).await?;
    let patch = crate::diff::patch(&record).await?;
    let patch = String::from_utf8(patch).map_err(|_| {
        WorktreeError::Invalid(format!(
            "the patch of worktree {} holds bytes that are not UTF-8; `fugue diff {pane} --patch` prints it whole",
            record.name
        ))
    })?;
    view.patch = Some(patch);
    Ok(view)
}

/// The worktree record of pane `pane`, or why it has none.
async fn worktree_of_pane(client: &crate::Client, pane: &str) -> Result<WorktreeRecord, crate::ClientError> {
    let info = client.pane_status(pane).await?;
    match of_pane(&info.id.to_string())? {
        Some(record) => Ok(record),
        None => Err(WorktreeError::Invalid(format!(
            "pane {} works in no worktree of fugue's (start one with `fugue run --worktree`)",
            info.id
        ))
        .into()),
    }
}

/// A worktree as `fugue worktrees`, MCP and HTTP show it: its record, where it
/// stands, and its pane's and agent's state.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct WorktreeView {
    #[serde(flatten)]
    pub record: WorktreeRecord,
    #[serde(flatten)]
    pub status: WorktreeStatus,
    /// The pane's state (`running`, `exited`, ...); `None` once it is gone.
    pub pane_state: Option<String>,
    /// Its agent's state, where an agent CLI runs in it.
    pub agent_state: Option<fugue_protocol::AgentState>,
}

/// Every worktree fugue made, with where each stands and its pane's state.
pub async fn views(client: &crate::Client) -> Result<Vec<WorktreeView>, crate::ClientError> {
    use futures::StreamExt;
    let records = list()?;
    let panes = match records.is_empty() {
        true => Vec::new(),
        false => client.overview(None).await?,
    };
    // A few worktrees read at once (each is two or three git runs), in order.
    let statuses: Vec<WorktreeStatus> = futures::stream::iter(&records)
        .map(readable_status)
        .buffered(STATUS_READS)
        .collect()
        .await;
    let views = records
        .into_iter()
        .zip(statuses)
        .map(|(record, status)| {
            let pane = panes
                .iter()
                .find(|p| record.pane.as_deref() == Some(p.pane.id.to_string().as_str()));
            WorktreeView {
                status,
                pane_state: pane.map(|p| p.pane.state.as_str().to_string()),
                agent_state: pane.and_then(|p| p.agent.as_ref()).map(|a| a.state),
                record,
            }
        })
        .collect();
    Ok(views)
}

/// Worktrees whose status is read at once by [`views`].
const STATUS_READS: usize = 8;

/// [`status`], with one unreadable worktree (its repository gone, or being
/// removed by another client right now) shown as such, not an error for all.
async fn readable_status(record: &WorktreeRecord) -> WorktreeStatus {
    status(record).await.unwrap_or_else(|err| WorktreeStatus {
        exists: Path::new(&record.path).is_dir(),
        ahead: 0,
        behind: 0,
        dirty: Vec::new(),
        problem: Some(err.to_string()),
    })
}

/// Commits everything uncommitted in `record`'s worktree (untracked files
/// included) on its branch; nothing when it is clean.
pub async fn commit_all(record: &WorktreeRecord, message: &str) -> Result<(), WorktreeError> {
    let path = Path::new(&record.path);
    if status(record).await?.dirty.is_empty() {
        return Ok(());
    }
    git(path, &["add", "--all", "--", "."]).await?;
    git(path, &["commit", "--quiet", "--no-verify", "-m", message]).await?;
    Ok(())
}

/// A merge done: into which branch, the new commit, and how.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Merged {
    pub branch: String,
    pub into: String,
    pub commit: String,
    pub squash: bool,
    /// Commits of the branch the merge brought in.
    pub commits: u32,
}

impl Merged {
    /// `merged fugue/x (2 commit(s)) into main: 1a2b3c4d5e6f`
    pub fn summary(&self) -> String {
        format!(
            "merged {} ({} commit(s)) into {}: {}",
            self.branch,
            self.commits,
            self.into,
            &self.commit[..self.commit.len().min(12)]
        )
    }
}

/// Merges `record`'s branch into `into` (default its base ref). Nothing changes
/// unless the merge is clean: uncommitted work in the worktree, a branch with
/// nothing new, or a conflict (found first with `git merge-tree`, file by
/// file) is refused. Into a branch checked out somewhere, the merge runs in
/// that checkout (its other changes stay); else the branch moves to a merge
/// commit of the tree merge-tree wrote, touching no working tree.
pub async fn merge(record: &WorktreeRecord, into: Option<&str>, squash: bool) -> Result<Merged, WorktreeError> {
    let repo = Path::new(&record.repo);
    let into = into.unwrap_or(&record.base_ref).to_string();
    let refuse = |why: String| Err(WorktreeError::Invalid(format!("{why}; nothing was merged")));
    let status = status(record).await?;
    if !status.exists {
        return refuse(format!("worktree {} is gone", record.path));
    }
    if !status.dirty.is_empty() {
        return refuse(format!(
            "{} has {} uncommitted file(s) ({}); commit them first",
            record.branch,
            status.dirty.len(),
            status.dirty.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if into.starts_with('-')
        || git(
            repo,
            &["show-ref", "--verify", "--quiet", &format!("refs/heads/{into}")],
        )
        .await
        .is_err()
    {
        return refuse(format!(
            "'{into}' is no branch of {} (give one with --into)",
            record.repo
        ));
    }
    let range = format!("{into}..{}", record.branch);
    let commits: u32 = git(repo, &["rev-list", "--count", &range])
        .await?
        .trim()
        .parse()
        .unwrap_or(0);
    if commits == 0 {
        return refuse(format!("{} has no commits that {into} lacks", record.branch));
    }
    let args = [
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        into.as_str(),
        record.branch.as_str(),
    ];
    let (clean, out, err) = git_capped(repo, &args, &[], MAX_GIT_OUTPUT).await?;
    let out = String::from_utf8_lossy(&out.0).into_owned();
    let mut lines = out.lines();
    let tree = lines.next().unwrap_or_default().trim().to_string();
    if !clean {
        let files: Vec<&str> = lines.filter(|l| !l.is_empty()).take(50).collect();
        if files.is_empty() {
            return Err(WorktreeError::Git(format!("git merge-tree: {}", err.trim())));
        }
        return refuse(format!(
            "merging {} into {into} conflicts in {}",
            record.branch,
            files.join(", ")
        ));
    }
    let message = format!(
        "Merge {} ({} commit(s), fugue worktree {})",
        record.branch, commits, record.name
    );
    let commit = match checkout_of(repo, &into).await? {
        Some(checkout) => merge_in_checkout(&checkout, record, &message, squash).await?,
        None => {
            let old = git(repo, &["rev-parse", "--verify", &format!("refs/heads/{into}")]).await?;
            let old = old.trim();
            let mut args = vec!["commit-tree", tree.as_str(), "-p", old, "-m", message.as_str()];
            if !squash {
                args.extend(["-p", record.branch.as_str()]);
            }
            let commit = git(repo, &args).await?.trim().to_string();
            git(repo, &["update-ref", &format!("refs/heads/{into}"), &commit, old]).await?;
            commit
        }
    };
    Ok(Merged {
        branch: record.branch.clone(),
        into,
        commit,
        squash,
        commits,
    })
}

/// The checkout (main or a worktree) that has `branch` checked out, if any.
async fn checkout_of(repo: &Path, branch: &str) -> Result<Option<PathBuf>, WorktreeError> {
    let list = git(repo, &["worktree", "list", "--porcelain", "-z"]).await?;
    let mut path = None;
    for field in list.split('\0') {
        if let Some(p) = field.strip_prefix("worktree ") {
            path = Some(PathBuf::from(p));
        } else if field == format!("branch refs/heads/{branch}") {
            return Ok(path);
        }
    }
    Ok(None)
}

/// Merges in the checkout that has the target branch: git keeps that
/// checkout's own uncommitted changes (and refuses if the merge would touch
/// them); staged changes there are refused first, so a commit holds the merge
/// only.
async fn merge_in_checkout(
    checkout: &Path,
    record: &WorktreeRecord,
    message: &str,
    squash: bool,
) -> Result<String, WorktreeError> {
    if git(checkout, &["diff", "--cached", "--quiet"]).await.is_err() {
        return Err(WorktreeError::Invalid(format!(
            "{} has staged changes; commit or unstage them first; nothing was merged",
            checkout.display()
        )));
    }
    let merged = match squash {
        true => git(checkout, &["merge", "--squash", "--quiet", &record.branch]).await,
        false => {
            git(
                checkout,
                &["merge", "--no-ff", "--quiet", "-m", message, &record.branch],
            )
            .await
        }
    };
    if let Err(err) = merged {
        let _ = git(checkout, &["merge", "--abort"]).await;
        return Err(WorktreeError::Git(format!("{err}; nothing was merged")));
    }
    if squash {
        git(checkout, &["commit", "--quiet", "-m", message]).await?;
    }
    Ok(git(checkout, &["rev-parse", "HEAD"]).await?.trim().to_string())
}
