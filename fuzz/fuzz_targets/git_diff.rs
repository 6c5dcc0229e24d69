//! Reading git's diff output into files and hunks (`fugue diff`): the numstat,
//! the name-status list and the patch are any bytes an agent's files can make
//! git print. No input panics, every file keeps its numstat path, and a hunk
//! holds only diff lines.
#![no_main]

use fugue_client::diff::{apply_patch, apply_statuses, parse_numstat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |b| *b == 0xff);
    let text = |part: Option<&[u8]>| String::from_utf8_lossy(part.unwrap_or_default()).into_owned();
    let (numstat, statuses, patch) = (text(parts.next()), text(parts.next()), text(parts.next()));
    let mut files = parse_numstat(&numstat);
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    apply_statuses(&mut files, &statuses);
    apply_patch(&mut files, &patch, data.len() % 2 == 0);
    for (file, path) in files.iter().zip(&paths) {
        assert_eq!(&file.path, path);
        for hunk in &file.hunks {
            assert!(hunk.header.starts_with("@@ -"));
            assert!(hunk.lines.iter().all(|l| l.starts_with([' ', '+', '-', '\\'])));
        }
    }
});
