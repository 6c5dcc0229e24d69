//! What input to a pane becomes on the wire. Pastes are wrapped in bracketed-paste
//! markers when the program asked for them, key names are encoded for the
//! terminal's cursor-key mode (DECCKM), and everything is cut into the chunks the
//! pane's writer sends one at a time.

use super::pane_output::PaneOutput;
use fugue_protocol::keys::encode_key;

/// Bytes per input chunk written to the PTY at once.
pub const CHUNK: usize = 4096;

/// `data` as the program should receive a paste of it.
pub fn paste(data: Vec<u8>, output: &PaneOutput) -> Vec<u8> {
    match output.bracketed_paste() {
        true => [&b"\x1b[200~"[..], &data, b"\x1b[201~"].concat(),
        false => data,
    }
}

/// The bytes for a sequence of key names (`Enter`, `C-c`, `Up`, ...), by the
/// cursor-key mode the program has set.
pub fn keys(names: &[String], output: &PaneOutput) -> Result<Vec<u8>, String> {
    let application_cursor = output.application_cursor();
    let mut data = Vec::new();
    for name in names {
        data.extend(encode_key(name, application_cursor)?);
    }
    Ok(data)
}
