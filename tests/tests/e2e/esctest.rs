//! esctest2, xterm's conformance suite (`tests/esctest2`, GPLv2, run as a separate
//! program), in a fugue pane and in a tmux pane at 80x25. The suite reads each
//! cell it checks through the terminal's capture (`fugue capture`,
//! `tmux capture-pane`) after a cursor position report, since neither answers
//! DECRQCRA (see `tests/esctest2/FUGUE.md`).
//!
//! The test fails when a test that passes in tmux fails in fugue, or when a test
//! on fugue's list (`tests/esctest2/fugue-passes.txt`) fails. A test that newly
//! passes is printed, to be added to the list.

use fugue_tests::{Daemon, Tmux};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

const COLS: u16 = 80;
const ROWS: u16 = 25;
/// The whole suite takes about 30 s in fugue and 60 s in tmux here; the
/// deadline leaves room for a loaded CI machine.
const SUITE_DEADLINE: Duration = Duration::from_secs(600);
/// How long the suite waits for an answer the terminal may never give: short,
/// because about a hundred of its tests ask for one fugue and tmux do not give.
const FIRST_TIMEOUT: &str = "0.3";
/// The tests that failed but should pass run once more with this, so a slow
/// answer on a loaded machine is not taken for a missing one.
const RETRY_TIMEOUT: &str = "3";

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("esctest2")
}

/// The script that runs the suite: `sh esctest.sh LOG TIMEOUT INCLUDE CAPTURE`.
fn write_runner(dir: &Path) -> PathBuf {
    let path = dir.join("esctest.sh");
    let script = format!(
        "cd '{}/esctest' && PYTHONDONTWRITEBYTECODE=1 exec python3 esctest.py \
         --expected-terminal=xterm --xterm-checksum=334 --xterm-reverse-wrap=383 \
         --no-print-logs --logfile \"$1\" --timeout \"$2\" --include \"$3\" --capture \"$4\"\n",
        suite_dir().display()
    );
    std::fs::write(&path, script).unwrap();
    path
}

/// Which tests passed, from the suite's log ("Run test: NAME" ... "Passed.").
fn passed(log: &Path) -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(log).unwrap_or_else(|e| panic!("esctest wrote no log at {}: {e}", log.display()));
    let mut current = None;
    let mut passed = BTreeSet::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("Run test: ") {
            current = Some(name.trim().to_string());
        } else if line == "Passed." {
            passed.extend(current.take());
        }
    }
    passed
}

/// What the suite's log says of how `name` failed (its traceback and screens),
/// at most 40 lines.
fn failure(log: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let start = format!("Run test: {name}");
    text.lines()
        .skip_while(|line| *line != start)
        .take_while(|line| *line == start || !line.starts_with("Run test: "))
        .take(40)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A regex matching exactly these test names, for `--include`.
fn only(names: &BTreeSet<String>) -> String {
    let names: Vec<String> = names.iter().map(|n| n.replace('.', r"\.")).collect();
    format!("^({})$", names.join("|"))
}

/// Runs the suite (the tests `include` matches) in a new fugue pane; returns
/// the tests that passed.
fn run_in_fugue(daemon: &Daemon, runner: &Path, log: &Path, timeout: &str, include: &str) -> BTreeSet<String> {
    let capture = format!("'{}' capture \"$FUGUE_PANE\"", fugue_tests::bin("fugue").display());
    let (size, runner, log) = (
        format!("{COLS}x{ROWS}"),
        runner.display().to_string(),
        log.display().to_string(),
    );
    let pane = daemon
        .cli(&[
            "run",
            "-s",
            "esctest",
            "--size",
            &size,
            "--no-shell",
            "--",
            "sh",
            &runner,
            &log,
            timeout,
            include,
            &capture,
        ])
        .ok();
    let deadline = SUITE_DEADLINE.as_secs().to_string();
    let waited = daemon.cli(&["wait", &pane, "--timeout", &deadline]);
    assert!(
        waited.status.success(),
        "esctest in fugue did not end: {}{}\nscreen:\n{}",
        waited.stdout,
        waited.stderr,
        daemon.cli(&["capture", &pane]).stdout
    );
    passed(Path::new(&log))
}

/// Runs the whole suite in a tmux pane; returns the tests that passed.
fn run_in_tmux(dir: &Path, runner: &Path) -> BTreeSet<String> {
    let tmux = Tmux::start(dir, COLS, ROWS);
    let (log, done) = (dir.join("tmux.log"), dir.join("tmux.done"));
    let command = format!(
        "sh '{}' '{}' {FIRST_TIMEOUT} '.*' 'tmux capture-pane -p -t \"$TMUX_PANE\"'; touch '{}'",
        runner.display(),
        log.display(),
        done.display()
    );
    let (cols, rows) = (COLS.to_string(), ROWS.to_string());
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "esctest",
        "-x",
        &cols,
        "-y",
        &rows,
        "sh",
        "-c",
        &command,
    ]);
    fugue_tests::files::until_changed(dir, "esctest to end in tmux", SUITE_DEADLINE, || {
        done.exists().then_some(())
    });
    passed(&log)
}

#[test]
fn esctest2_passes_what_tmux_passes_and_what_fugue_passed() {
    let daemon = Daemon::start();
    let dir = daemon.dir.path().join("esctest");
    std::fs::create_dir_all(&dir).unwrap();
    let runner = write_runner(&dir);
    daemon.cli(&["new-session", "esctest"]).ok();
    let listed: BTreeSet<String> = std::fs::read_to_string(suite_dir().join("fugue-passes.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();

    // Both at once: each has its own terminal, and together they take as long
    // as tmux alone.
    let tmux = std::thread::scope(|scope| {
        let tmux = scope.spawn(|| run_in_tmux(&dir, &runner));
        let fugue = run_in_fugue(&daemon, &runner, &dir.join("fugue.log"), FIRST_TIMEOUT, ".*");
        (tmux.join().unwrap(), fugue)
    });
    let (tmux, mut fugue) = tmux;

    let expected: BTreeSet<String> = listed.union(&tmux).cloned().collect();
    let missing: BTreeSet<String> = expected.difference(&fugue).cloned().collect();
    let retry_log = dir.join("retry.log");
    if !missing.is_empty() {
        let again = run_in_fugue(&daemon, &runner, &retry_log, RETRY_TIMEOUT, &only(&missing));
        fugue.extend(again);
    }

    let fails_listed: Vec<&String> = listed.difference(&fugue).collect();
    let fails_tmux_passes: Vec<&String> = tmux.difference(&fugue).collect();
    let new: Vec<&String> = fugue.difference(&listed).collect();
    eprintln!(
        "esctest2: fugue {} passed, tmux {}; {} listed",
        fugue.len(),
        tmux.len(),
        listed.len()
    );
    if !new.is_empty() {
        eprintln!("passing now and not in tests/esctest2/fugue-passes.txt (add them):");
        new.iter().for_each(|n| eprintln!("{n}"));
    }
    let how: Vec<String> = fails_listed
        .iter()
        .chain(&fails_tmux_passes)
        .map(|name| failure(&retry_log, name))
        .collect();
    assert!(
        fails_listed.is_empty() && fails_tmux_passes.is_empty(),
        "esctest2 regressions:\nlisted as passing, failed: {fails_listed:#?}\n\
         pass in tmux, fail in fugue: {fails_tmux_passes:#?}\n\n{}",
        how.join("\n\n")
    );
}
