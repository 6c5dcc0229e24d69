//! See `fugue_fuzzing::app_server_message`: the target's body lives there, where
//! the corpus replay (fuzzing/tests/corpus.rs) runs it in every test run.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fugue_fuzzing::app_server_message::run(data));
