//! Pattern searches for waits. A regular expression can cost far more than the
//! text it runs over (`\B.{1000}x` on non-ASCII text runs the slowest engine),
//! so a search:
//! - is compiled within the pattern limits and charged to the connection that
//!   asked, for as long as the wait holds it;
//! - runs on the search threads, never a runtime worker: all cores but one of
//!   them, at a lower priority (nice 10), so the daemon's other requests keep a
//!   core and win any contention for the others;
//! - holds no lock: lines are copied out of the text view in batches of
//!   [`BATCH_BYTES`] (a copy is microseconds; the pane's output path and other
//!   readers never wait on a search), on the search thread once the job has
//!   its slot, so the copies that exist at once are one per search thread
//!   however many requests wait for one;
//! - honours its deadline: the wait stops waiting for it when the deadline
//!   passes, and the search itself stops at the next line.

use crate::budget::{Budget, Charge};
use crate::terminal::output::BatchSearch;
use crate::terminal::pane_output::PaneOutput;
use fugue_protocol::ErrorReply;
use regex_automata::meta::{Cache, Regex};
use regex_automata::Input;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tokio::sync::Semaphore;

/// Text copied out of the text view per search job.
pub const BATCH_BYTES: usize = 256 * 1024;

/// A compiled wait pattern and the budget charge for its memory.
pub struct Pattern {
    regex: Regex,
    _charge: Charge,
}

/// What a search of a pane's output came to.
pub enum Searched {
    /// A match, and the text view's offset when it was found (a capture shows
    /// the match once the screen is this far too).
    Found { text: String, shown_at: u64 },
    /// No match in what there is; the next search starts at `searched`.
    NotYet { searched: u64 },
    /// The deadline passed first.
    OutOfTime,
}

impl Pattern {
    /// Compiles `pattern` and charges its memory to `budget`.
    pub fn compile(pattern: &str, budget: &Arc<Budget>) -> Result<Arc<Self>, ErrorReply> {
        let regex = fugue_protocol::limits::compile_pattern(pattern)?;
        let charge = budget.try_charge(regex.memory_usage().max(1))?;
        Ok(Arc::new(Self { regex, _charge: charge }))
    }

    /// The first match in `line`, with a cache the caller keeps for a batch.
    fn find(&self, cache: &mut Cache, line: &str) -> Option<String> {
        let found = self.regex.search_with(cache, &Input::new(line))?;
        Some(line[found.range()].to_string())
    }
}

/// The search threads: all cores but one, started on the first search, each
/// at nice [`SEARCH_NICE`]; a slot per thread, so a job never queues.
struct SearchPool {
    jobs: std::sync::mpsc::Sender<Job>,
    slots: Arc<Semaphore>,
}

type Job = Box<dyn FnOnce() + Send>;

/// How much less a search thread gets of a contended core than the runtime.
const SEARCH_NICE: i32 = 10;

fn pool() -> &'static SearchPool {
    static POOL: OnceLock<SearchPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1));
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let queue = Arc::new(std::sync::Mutex::new(queue));
        for n in 0..threads {
            let queue = queue.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("fugue-search-{n}"))
                .spawn(move || {
                    // On Linux a thread's nice is its own.
                    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), SEARCH_NICE);
                    loop {
                        let job = match crate::sync::lock(&queue).recv() {
                            Ok(job) => job,
                            Err(_) => return,
                        };
                        job();
                    }
                });
            if let Err(err) = spawned {
                tracing::warn!(%err, "cannot start a search thread");
            }
        }
        SearchPool {
            jobs,
            slots: Arc::new(Semaphore::new(threads)),
        }
    })
}

/// Runs `work` on a search thread once one is free, unless `deadline` passes
/// first. The slot is held until the work ends, even if the caller stopped
/// waiting for it, so abandoned searches still count.
async fn off_the_runtime<T: Send + 'static>(deadline: Instant, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let pool = pool();
    let run = async {
        let permit = pool.slots.clone().acquire_owned().await.ok()?;
        let (done, result) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = done.send(work());
            drop(permit);
        });
        pool.jobs.send(job).ok()?;
        result.await.ok()
    };
    tokio::time::timeout_at(deadline.into(), run).await.ok().flatten()
}

/// Searches the pane's text view after log offset `since` for `pattern`.
pub async fn search_output(
    pattern: &Arc<Pattern>,
    output: &Arc<PaneOutput>,
    since: u64,
    deadline: Instant,
) -> Searched {
    let mut searched = since;
    loop {
        let job = {
            let (pattern, output) = (pattern.clone(), output.clone());
            move || {
                let (batch, text_offset) = output.search_batch(searched, since, BATCH_BYTES);
                let more = batch.more;
                let mut cache = pattern.regex.create_cache();
                let result = batch.search(
                    searched,
                    |line| pattern.find(&mut cache, line),
                    || Instant::now() >= deadline,
                );
                (result, text_offset, more)
            }
        };
        match off_the_runtime(deadline, job).await {
            None | Some((BatchSearch { interrupted: true, .. }, ..)) => return Searched::OutOfTime,
            Some((
                BatchSearch {
                    matched: Some(text), ..
                },
                text_offset,
                _,
            )) => {
                return Searched::Found {
                    text,
                    shown_at: text_offset,
                }
            }
            Some((BatchSearch { searched: next, .. }, _, more)) => {
                searched = next;
                if !more {
                    return Searched::NotYet { searched };
                }
            }
        }
    }
}

/// Searches the visible screen for `pattern`, row by row.
pub async fn search_screen(pattern: &Arc<Pattern>, output: &Arc<PaneOutput>, deadline: Instant) -> Searched {
    let (pattern, output) = (pattern.clone(), output.clone());
    let job = move || {
        let rows = output.screen_text();
        let mut cache = pattern.regex.create_cache();
        for row in &rows {
            if Instant::now() >= deadline {
                return None;
            }
            if let Some(found) = pattern.find(&mut cache, row) {
                return Some(Some(found));
            }
        }
        Some(None)
    };
    match off_the_runtime(deadline, job).await.flatten() {
        None => Searched::OutOfTime,
        Some(None) => Searched::NotYet { searched: 0 },
        Some(Some(text)) => Searched::Found { text, shown_at: 0 },
    }
}

/// What a grep of one pane found: its matching lines (number and text, cut
/// to `line_bytes`), and whether time ran out first.
pub struct Grepped {
    pub lines: Vec<(u64, String)>,
    pub out_of_time: bool,
}

/// How much a grep may find, and how each line is cut.
pub struct GrepLimits {
    /// Lines at most.
    pub lines: usize,
    /// Bytes of line text at most: the first line past it is the last kept
    /// (what is found is the reply, and a reply has room for so much).
    pub bytes: usize,
    /// Each line cut to this many bytes.
    pub line_bytes: usize,
}

/// Every line of the pane's kept text (text view and scrollback) matching
/// `pattern`, within `limits`, searched off the runtime in batches.
pub async fn grep_output(
    pattern: &Arc<Pattern>,
    output: &Arc<PaneOutput>,
    limits: GrepLimits,
    deadline: Instant,
) -> Grepped {
    let mut found = Vec::new();
    let mut found_bytes = 0;
    let mut from = 0;
    loop {
        let want = limits.lines - found.len();
        let bytes_left = limits.bytes.saturating_sub(found_bytes);
        let line_bytes = limits.line_bytes;
        let job = {
            let (pattern, output) = (pattern.clone(), output.clone());
            move || {
                let batch = output.numbered_lines(from, BATCH_BYTES);
                let (more, next) = (batch.more, batch.next);
                let mut cache = pattern.regex.create_cache();
                let (mut hits, mut bytes) = (Vec::new(), 0);
                for (seq, line) in batch.lines {
                    if hits.len() >= want || bytes > bytes_left {
                        break;
                    }
                    if Instant::now() >= deadline {
                        return None;
                    }
                    if pattern.regex.search_with(&mut cache, &Input::new(&line)).is_some() {
                        let line = cut(line, line_bytes);
                        bytes += line.len();
                        hits.push((seq, line));
                    }
                }
                Some((hits, bytes, more, next))
            }
        };
        let Some(Some((hits, bytes, more, next))) = off_the_runtime(deadline, job).await else {
            return Grepped {
                lines: found,
                out_of_time: true,
            };
        };
        found.extend(hits);
        found_bytes += bytes;
        if found.len() >= limits.lines || found_bytes > limits.bytes || !more {
            return Grepped {
                lines: found,
                out_of_time: false,
            };
        }
        from = next;
    }
}

/// `line` cut to at most `max` bytes, at a character boundary.
fn cut(mut line: String, max: usize) -> String {
    if line.len() > max {
        let mut end = max;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
    }
    line
}
