//! `fugue-bench`: fugue against tmux and a raw PTY on the same machine, in one run.
//!
//! Every comparison interleaves its contenders (A B C A B C ...) and reports
//! medians, because the machine is shared and noisy. Prints a markdown table.
//! `--quick` runs small sizes (CI uses it to keep the benchmark working).

mod cpu;
mod env;
mod scenarios;

use std::process::ExitCode;

/// One row of the result table.
pub struct Row {
    pub scenario: String,
    pub measure: String,
    pub fugue: String,
    pub other: String,
    pub goal: String,
    pub met: Option<bool>,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    // `--emit-frames SECONDS FPS`: the paced agent TUI scenario 15 runs in panes.
    if args.get(1).map(String::as_str) == Some("--emit-frames") {
        let number = |i: usize| args.get(i).and_then(|a| a.parse::<f64>().ok());
        let (Some(seconds), Some(fps)) = (number(2), number(3)) else {
            eprintln!("usage: fugue-bench --emit-frames SECONDS FPS");
            return ExitCode::FAILURE;
        };
        return cpu::emit_frames(seconds, fps);
    }
    let quick = args.iter().any(|a| a == "--quick");
    // `--only 1,7`: run just those scenarios (numbers as in the table).
    let only: Option<Vec<u32>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|list| list.split(',').filter_map(|n| n.trim().parse().ok()).collect());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let rows = match runtime.block_on(scenarios::run_all(quick, only)) {
        Ok(rows) => rows,
        Err(err) => {
            eprintln!("fugue-bench: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("| scenario | measure | fugue | compared with | goal | met |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for row in &rows {
        let met = match row.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "-",
        };
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            row.scenario, row.measure, row.fugue, row.other, row.goal, met
        );
    }
    ExitCode::SUCCESS
}
