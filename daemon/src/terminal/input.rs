//! What input to a pane becomes on the wire. Pastes are wrapped in bracketed-paste
//! markers when the program asked for them, key names are encoded for the
//! terminal's cursor-key mode (DECCKM) and kitty keyboard flags, and everything is cut into the chunks the
//! pane's writer sends one at a time.

use super::pane_output::PaneOutput;
use fugue_protocol::keys::{encode_key, kitty_from_terminal};

/// Bytes per input chunk written to the PTY at once.
pub const CHUNK: usize = 4096;

/// `data` as the program should receive a paste of it.
pub fn paste(data: Vec<u8>, output: &PaneOutput) -> Vec<u8> {
    match output.bracketed_paste() {
        true => [&b"\x1b[200~"[..], &data, b"\x1b[201~"].concat(),
        false => data,
    }
}

/// The bytes for a sequence of key names (`Enter`, `C-c`, `S-Enter`, ...), as the
/// program has asked keys to be sent: cursor-key mode, kitty keyboard flags.
pub fn keys(names: &[String], output: &PaneOutput) -> Result<Vec<u8>, String> {
    let mode = output.key_mode();
    let mut data = Vec::new();
    for name in names {
        data.extend(encode_key(name, mode)?);
    }
    Ok(data)
}

/// Keystrokes from an attached terminal, as the program should get them: focus
/// reports (`CSI I`, `CSI O`) taken out and returned (the last one), since a
/// pane's focus is all its attached terminals' together; keys re-encoded when
/// the program uses the kitty keyboard protocol and the terminal does not.
pub fn from_terminal(data: Vec<u8>, output: &PaneOutput) -> (Vec<u8>, Option<bool>) {
    let (data, focus) = take_focus_reports(data);
    let data = kitty_from_terminal(&data, || output.key_mode()).unwrap_or(data);
    (data, focus)
}

fn take_focus_reports(data: Vec<u8>) -> (Vec<u8>, Option<bool>) {
    let report = |w: &[u8]| matches!(w, b"\x1b[I" | b"\x1b[O");
    if !data.windows(3).any(report) {
        return (data, None);
    }
    let (mut out, mut focus, mut at) = (Vec::with_capacity(data.len()), None, 0);
    while at < data.len() {
        match data.get(at..at + 3) {
            Some(w) if report(w) => {
                focus = Some(w[2] == b'I');
                at += 3;
            }
            _ => {
                out.push(data[at]);
                at += 1;
            }
        }
    }
    (out, focus)
}

#[cfg(test)]
mod tests {
    use super::take_focus_reports;

    #[test]
    fn focus_reports_are_taken_out_of_typed_input() {
        assert_eq!(take_focus_reports(b"ab".to_vec()), (b"ab".to_vec(), None));
        assert_eq!(take_focus_reports(b"\x1b[I".to_vec()), (vec![], Some(true)));
        assert_eq!(
            take_focus_reports(b"a\x1b[Ob\x1b[I\x1b[Oc\x1b[A".to_vec()),
            (b"abc\x1b[A".to_vec(), Some(false))
        );
    }
}
