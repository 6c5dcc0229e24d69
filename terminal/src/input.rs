//! What input to a pane becomes on the wire. Pastes are wrapped in bracketed-paste
//! markers when the program asked for them, key names are encoded for the
//! terminal's cursor-key mode (DECCKM) and kitty keyboard flags, and everything is cut into the chunks the
//! pane's writer sends one at a time.

use super::pane_output::PaneOutput;
use fugue_protocol::keys::{encode_key, kitty_from_terminal};

/// Bytes per input chunk written to the PTY at once.
pub const CHUNK: usize = 4096;

/// `data` as the program should receive a paste of it. In a bracketed paste
/// every ESC is dropped: pasted text holding `ESC [201~` would otherwise end the
/// paste early and have the rest read as typed keys (a file quoted in a review
/// prompt could press Enter, or answer a permission dialog).
pub fn paste(data: Vec<u8>, output: &PaneOutput) -> Vec<u8> {
    match output.bracketed_paste() {
        true => bracketed(&data),
        false => data,
    }
}

fn bracketed(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 12);
    out.extend_from_slice(b"\x1b[200~");
    out.extend(data.iter().filter(|&&b| b != 0x1b));
    out.extend_from_slice(b"\x1b[201~");
    out
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
    use super::{bracketed, take_focus_reports};

    #[test]
    fn a_paste_cannot_end_its_own_brackets() {
        assert_eq!(bracketed(b"hi\n"), b"\x1b[200~hi\n\x1b[201~");
        // The end marker, and one split so removing it once would rebuild it.
        let hostile = bracketed(b"a\x1b[201~\ry\x1b[20\x1b[201~1~b");
        assert_eq!(hostile, b"\x1b[200~a[201~\ry[20[201~1~b\x1b[201~");
        assert_eq!(hostile.windows(6).filter(|w| w == b"\x1b[201~").count(), 1);
    }

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
