//! The repository's own rules, checked on its files: no source file grows
//! past 900 lines before its tests, docs/architecture.md names every module
//! (CONTRIBUTING.md, "Where things are"), and the tests' polls do not grow in
//! number.

use std::path::{Path, PathBuf};

/// The longest a source file may be before its `#[cfg(test)]` module.
const MOST_LINES: usize = 900;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Every `.rs` file of fugue's own crates under `dirs` (relative to the
/// root), walked without recursion; never the vendored crates or build output.
fn rust_files(dirs: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut todo: Vec<PathBuf> = dirs.iter().map(|dir| root().join(dir)).collect();
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | "corpus" | "artifacts") {
                    todo.push(path);
                }
            } else if name.ends_with(".rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The crates' code: everything but the end-to-end suites (tests/tests and
/// the harness under tests/src are tests through and through).
const SOURCE: &[&str] = &[
    "protocol",
    "terminal",
    "daemon",
    "client",
    "cli",
    "mcp-bridge",
    "web",
    "bench",
    "fuzzing",
    "fuzz",
];

fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

/// Whether a file is a module of tests (a crate's `tests/`, `tests.rs`, `*_tests.rs`).
fn is_tests(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs") || relative(path).split('/').nth(1) == Some("tests")
}

#[test]
fn no_source_file_is_over_900_lines_before_its_tests() {
    let mut long = Vec::new();
    for path in rust_files(SOURCE).iter().filter(|path| !is_tests(path)) {
        let text = std::fs::read_to_string(path).expect("read a source file");
        let before_tests = text
            .lines()
            .position(|line| line.starts_with("#[cfg(test)]"))
            .unwrap_or_else(|| text.lines().count());
        if before_tests > MOST_LINES {
            long.push(format!("{} ({before_tests} lines)", relative(path)));
        }
    }
    assert!(
        long.is_empty(),
        "over {MOST_LINES} lines before their tests (split them: CONTRIBUTING.md): {}",
        long.join(", ")
    );
}

#[test]
fn the_architecture_page_names_every_module() {
    let page = std::fs::read_to_string(root().join("docs/architecture.md")).expect("docs/architecture.md");
    let mut dirs = SOURCE.to_vec();
    dirs.push("tests/src");
    let mut unnamed = Vec::new();
    for path in rust_files(&dirs).iter().filter(|path| !is_tests(path)) {
        let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        // A crate's root is named by its crate; a folder module by its folder.
        let name = match file.as_str() {
            "lib.rs" | "main.rs" if path.parent().is_some_and(|dir| dir.ends_with("src")) => continue,
            "mod.rs" => format!(
                "{}/",
                path.parent()
                    .and_then(Path::file_name)
                    .unwrap_or_default()
                    .to_string_lossy()
            ),
            _ => file,
        };
        if !page.contains(&format!("`{name}`")) && !page.contains(&format!("/{name}`")) {
            unnamed.push(relative(path));
        }
    }
    assert!(
        unnamed.is_empty(),
        "docs/architecture.md does not name these modules (as `file.rs`, or `folder/` for a mod.rs): {}",
        unnamed.join(", ")
    );
}

/// Polls left in tests/: calls of the polling helpers `wait_until` and a
/// free-standing `wait_for`, and the `sleep`s of hand-written loops. A test
/// waits on an event instead: the daemon's (`fugue wait`, `WaitFor`,
/// `Daemon::until_event`, its readiness), tmux's control-mode notices, the
/// engine's events, a pidfd, inotify (`files::until_changed`). Each poll left
/// says why none serves in a `// Polled:` comment just above it; a `sleep`
/// that is the scenario, not a wait, says so in a `// Paced:` one. The number
/// of polls only goes down (issue 53: at most 40).
const MOST_POLLS: usize = 35;

#[test]
fn polls_do_not_grow_in_number_and_say_why() {
    let mut polls = Vec::new();
    let mut unexplained = Vec::new();
    // (This file names the helpers to find them: it is not counted.)
    for path in rust_files(&["tests/src", "tests/tests"])
        .iter()
        .filter(|p| !p.ends_with("repository.rs") && !relative(p).starts_with("tests/src/bin/"))
    {
        let text = std::fs::read_to_string(path).expect("read a test file");
        let lines: Vec<&str> = text.lines().collect();
        for (number, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let is_definition = code.contains("fn wait_until") || code.contains("fn wait_for");
            let free_wait_for = code.match_indices("wait_for(").any(|(at, _)| {
                let before = code[..at].chars().next_back();
                !matches!(before, Some(c) if c == '.' || c == '_' || c.is_alphanumeric())
            });
            let waits = !is_definition && (code.contains("wait_until(") || free_wait_for);
            if !waits && !code.contains("sleep(") {
                continue;
            }
            let place = format!("{}:{}", relative(path), number + 1);
            let above = &lines[number.saturating_sub(3)..number];
            let said = |tag: &str| above.iter().any(|l| l.trim_start().starts_with(tag));
            match (said("// Polled:"), said("// Paced:")) {
                (true, _) => polls.push(place),
                (false, true) if !waits => {}
                _ => unexplained.push(place),
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "polls in tests/ that do not say why no event serves (a `// Polled:` comment above; \
`// Paced:` for a sleep that is the scenario): {}",
        unexplained.join(", ")
    );
    assert!(
        polls.len() <= MOST_POLLS,
        "{} polls in tests/, more than the {MOST_POLLS} allowed: wait on an event instead (CONTRIBUTING.md, \
\"Tests wait on events\"): {}",
        polls.len(),
        polls.join(", ")
    );
}
