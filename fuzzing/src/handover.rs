//! A live upgrade's hand-over record, as the new daemon reads it: arbitrary bytes
//! must decode or be refused with an error, never panic, and never make it
//! allocate far beyond what the bytes could hold.

use fugue_daemon::handover::{Handover, HANDOVER_VERSION};

/// One input, as the fuzz target `handover` and the corpus replay give it.
pub fn run(data: &[u8]) {
    // Half the inputs carry a layout version it reads (today's, or layout 1 an
    // upgrade from an older fugued brings), so the fuzzer reaches the body.
    let mut bytes = Vec::with_capacity(data.len() + 1);
    if let Some(first) = data.first().filter(|b| *b & 1 == 1) {
        bytes.push(if first & 2 == 2 { 1 } else { HANDOVER_VERSION as u8 });
        bytes.extend_from_slice(&data[1..]);
    } else {
        bytes.extend_from_slice(data);
    }
    if let Ok(handover) = Handover::decode(&bytes) {
        let _ = handover.inherited_fds();
        let _ = handover.encode();
    }
}
