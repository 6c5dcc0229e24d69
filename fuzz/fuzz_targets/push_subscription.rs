//! See `fugue_fuzzing::push_subscription`: the target's body lives there, where
//! the corpus replay (fuzzing/tests/corpus.rs) runs it in every test run.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fugue_fuzzing::push_subscription::run(data));
