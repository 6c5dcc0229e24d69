//! Pattern searches for waits. A regular expression can cost far more than the
//! text it runs over (`\B.{1000}x` on non-ASCII text runs the slowest engine),
//! so a search:
//! - is compiled within the pattern limits and charged to the connection that
//!   asked, for as long as the wait holds it;
//! - runs on a blocking thread, never a runtime worker, and at most
//!   [`concurrent_searches`] at once, so the daemon's other requests keep the
//!   remaining core(s);
//! - holds no lock: lines are copied out of the text view in batches of
//!   [`BATCH_BYTES`] (a copy is microseconds; the pane's output path and other
//!   readers never wait on a search);
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

/// Searches that may run at once: all cores but one, so a search never takes
/// the core the daemon answers everyone else on.
fn concurrent_searches() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

fn searches() -> &'static Arc<Semaphore> {
    static SEARCHES: OnceLock<Arc<Semaphore>> = OnceLock::new();
    SEARCHES.get_or_init(|| Arc::new(Semaphore::new(concurrent_searches())))
}

/// Runs `work` on a blocking thread once a search slot is free, unless
/// `deadline` passes first. The slot is held until the work ends, even if the
/// caller stopped waiting for it, so abandoned searches still count.
async fn off_the_runtime<T: Send + 'static>(deadline: Instant, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let run = async {
        let permit = searches().clone().acquire_owned().await.ok()?;
        tokio::task::spawn_blocking(move || {
            let result = work();
            drop(permit);
            result
        })
        .await
        .ok()
    };
    tokio::time::timeout_at(deadline.into(), run).await.ok().flatten()
}

/// Searches the pane's text view after log offset `since` for `pattern`.
pub async fn search_output(pattern: &Arc<Pattern>, output: &PaneOutput, since: u64, deadline: Instant) -> Searched {
    let mut searched = since;
    loop {
        let (batch, text_offset) = output.search_batch(searched, since, BATCH_BYTES);
        let more = batch.more;
        let job = {
            let pattern = pattern.clone();
            move || {
                let mut cache = pattern.regex.create_cache();
                batch.search(
                    searched,
                    |line| pattern.find(&mut cache, line),
                    || Instant::now() >= deadline,
                )
            }
        };
        match off_the_runtime(deadline, job).await {
            None | Some(BatchSearch { interrupted: true, .. }) => return Searched::OutOfTime,
            Some(BatchSearch {
                matched: Some(text), ..
            }) => {
                return Searched::Found {
                    text,
                    shown_at: text_offset,
                }
            }
            Some(BatchSearch { searched: next, .. }) => searched = next,
        }
        if !more {
            return Searched::NotYet { searched };
        }
    }
}

/// Searches the visible screen for `pattern`, row by row.
pub async fn search_screen(pattern: &Arc<Pattern>, output: &PaneOutput, deadline: Instant) -> Searched {
    let rows = output.screen_text();
    let pattern = pattern.clone();
    let job = move || {
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
