//! Every committed fuzz input (`fuzz/corpus/TARGET/*`) through its target's
//! body, as cargo fuzz would run it: none may panic. One test per target, so
//! a failure names the target, and the file that failed is printed first.

use std::path::{Path, PathBuf};

fn replay(target: &str) {
    let (_, run) = fugue_fuzzing::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .unwrap_or_else(|| panic!("no fuzz target {target}"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{} holds no inputs", dir.display());
    for input in &inputs {
        let data = std::fs::read(input).unwrap_or_else(|e| panic!("read {}: {e}", input.display()));
        // Said before the run, so the input that panics is the last one named.
        eprintln!("{target}: {}", input.display());
        run(&data);
    }
    println!("{target}: {} inputs replayed", inputs.len());
}

#[test]
fn every_target_has_a_corpus_and_a_replay() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    let mut on_disk: Vec<String> = std::fs::read_dir(&corpus)
        .expect("fuzz/corpus")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut targets: Vec<String> = fugue_fuzzing::TARGETS
        .iter()
        .map(|(name, _)| name.to_string())
        .collect();
    targets.sort();
    assert_eq!(
        on_disk, targets,
        "fuzz/corpus's directories and fugue_fuzzing::TARGETS differ"
    );
    let source = include_str!("corpus.rs");
    for target in &targets {
        assert!(
            source.contains(&format!("fn {target}() {{")),
            "target {target} has no replay test in {}",
            file!()
        );
    }
}

#[test]
fn frame_decoder() {
    replay("frame_decoder");
}

#[test]
fn requests() {
    replay("requests");
}

#[test]
fn output_path() {
    replay("output_path");
}

#[test]
fn plain_lines() {
    replay("plain_lines");
}

#[test]
fn wait_pattern() {
    replay("wait_pattern");
}

#[test]
fn git_diff() {
    replay("git_diff");
}

#[test]
fn handover() {
    replay("handover");
}

#[test]
fn tmux_args() {
    replay("tmux_args");
}

#[test]
fn push_subscription() {
    replay("push_subscription");
}

#[test]
fn app_server_message() {
    replay("app_server_message");
}
