//! Every command's `--help`, as a person reads it: snapshotted, so that a
//! change to a help text shows in review (the CLI's split into modules once
//! lost the first lines of two), and each summary a sentence.

use crate::args::Cli;
use clap::CommandFactory;

/// Every command under `fugue` (itself first), with its path (`fugue agent`),
/// built as clap shows it; clap's own `help` commands left out.
fn commands() -> Vec<(String, clap::Command)> {
    // One width wherever the test runs (no terminal: clap's default is 100).
    let mut root = Cli::command().term_width(100);
    root.build();
    let mut found = Vec::new();
    let mut to_visit = vec![("fugue".to_string(), root)];
    while let Some((path, command)) = to_visit.pop() {
        let subcommands = command.get_subcommands().filter(|sub| sub.get_name() != "help");
        let mut below: Vec<_> = subcommands
            .map(|sub| (format!("{path} {}", sub.get_name()), sub.clone()))
            .collect();
        below.reverse();
        to_visit.extend(below);
        found.push((path, command));
    }
    found
}

/// Where a help text fails the rule: it starts with a capital letter or a
/// backtick (a name in code), as a summary in a list of them reads.
fn badly_started(text: &str) -> bool {
    !text.starts_with(|c: char| c.is_uppercase() || c == '`')
}

#[test]
fn every_help_text_is_snapshotted() {
    let mut all = String::new();
    for (path, mut command) in commands() {
        all.push_str(&format!("===== {path} --help\n{}\n", command.render_long_help()));
    }
    insta::assert_snapshot!(all);
}

#[test]
fn every_summary_starts_as_a_sentence() {
    let mut bad = Vec::new();
    for (path, command) in commands() {
        if let Some(about) = command.get_about().map(|a| a.to_string()) {
            if badly_started(&about) {
                bad.push(format!("{path}: {about}"));
            }
        }
        for arg in command.get_arguments() {
            let Some(help) = arg.get_help().map(|h| h.to_string()) else {
                continue;
            };
            if badly_started(&help) {
                bad.push(format!("{path} {}: {help}", arg.get_id()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "help texts that do not start with a capital letter or a backtick:\n{}",
        bad.join("\n")
    );
}
