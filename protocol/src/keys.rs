//! Key names (as `fugue send-keys` and the MCP bridge take them) and the bytes an
//! xterm-compatible terminal sends for each.
//!
//! A small table on purpose: the crates that encode keys (termwiz) bring a whole
//! terminal library with them, and this is the only part we need.

/// Names accepted besides single characters, `C-x` and `M-x`; shown in errors.
pub const KEY_NAMES: &str = "Enter, Escape, Tab, BTab, Backspace, Space, Up, Down, Left, Right, \
Home, End, PageUp, PageDown, Insert, Delete, F1-F12, C-a..C-z, M-<key>";

/// Checks a key name's length before anything parses it (the bound lives in
/// [`crate::limits::MAX_KEY_NAME_BYTES`]).
pub fn check_key_name(name: &str) -> Result<(), crate::ErrorReply> {
    use crate::limits::{truncate_for_display, MAX_KEY_NAME_BYTES};
    if name.len() > MAX_KEY_NAME_BYTES {
        return Err(crate::ErrorReply::invalid(format!(
            "key name of {} bytes; the maximum is {MAX_KEY_NAME_BYTES} ({})",
            name.len(),
            truncate_for_display(name, 16)
        )));
    }
    Ok(())
}

/// Encodes one key name into the bytes to write to the PTY.
///
/// `app_cursor` selects the application cursor-key mode (DECCKM) encodings of the
/// arrows, Home and End, which full-screen programs switch on.
/// A single character stands for itself; `C-` and `M-` prefixes combine in any
/// order (`C-M-a`, `M-C-a`). Prefixes are peeled in a loop, never by recursion,
/// and names longer than the limit are refused before parsing.
pub fn encode_key(name: &str, app_cursor: bool) -> Result<Vec<u8>, String> {
    if name.is_empty() {
        return Err("empty key name".into());
    }
    check_key_name(name).map_err(|e| e.message)?;
    let (mut meta, mut ctrl) = (false, false);
    let mut rest = name;
    loop {
        if let Some(after) = strip_prefix_ci(rest, "M-") {
            meta = true;
            rest = after;
        } else if let Some(after) = strip_prefix_ci(rest, "C-") {
            ctrl = true;
            rest = after;
        } else {
            break;
        }
    }
    let mut out = Vec::with_capacity(8);
    if meta {
        out.push(0x1b);
    }
    if ctrl {
        let byte = control(rest)
            .ok_or_else(|| format!("unknown key '{name}': C- takes a letter or one of @[\\]^_ and Space"))?;
        out.push(byte);
        return Ok(out);
    }
    if rest.chars().count() == 1 {
        out.extend_from_slice(rest.as_bytes());
        return Ok(out);
    }
    let bytes = named(rest, app_cursor).ok_or_else(|| format!("unknown key '{name}'; keys: {KEY_NAMES}"))?;
    out.extend_from_slice(bytes.as_bytes());
    Ok(out)
}

fn strip_prefix_ci<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    // `get` rather than slicing: the prefix length may fall inside a character.
    let head = name.get(..prefix.len())?;
    match name.len() > prefix.len() && head.eq_ignore_ascii_case(prefix) {
        true => name.get(prefix.len()..),
        false => None,
    }
}

fn control(key: &str) -> Option<u8> {
    if key.eq_ignore_ascii_case("space") {
        return Some(0);
    }
    let [b] = key.as_bytes() else { return None };
    match b.to_ascii_lowercase() {
        c @ b'a'..=b'z' => Some(c - b'a' + 1),
        b'@' => Some(0),
        b'[' => Some(0x1b),
        b'\\' => Some(0x1c),
        b']' => Some(0x1d),
        b'^' => Some(0x1e),
        b'_' => Some(0x1f),
        b'?' => Some(0x7f),
        _ => None,
    }
}

fn named(name: &str, app_cursor: bool) -> Option<&'static str> {
    let cursor = |normal: &'static str, app: &'static str| Some(if app_cursor { app } else { normal });
    match name.to_ascii_lowercase().as_str() {
        "enter" | "return" | "cr" => Some("\r"),
        "escape" | "esc" => Some("\x1b"),
        "tab" => Some("\t"),
        "btab" | "backtab" => Some("\x1b[Z"),
        "backspace" | "bspace" | "bs" => Some("\x7f"),
        "space" => Some(" "),
        "up" => cursor("\x1b[A", "\x1bOA"),
        "down" => cursor("\x1b[B", "\x1bOB"),
        "right" => cursor("\x1b[C", "\x1bOC"),
        "left" => cursor("\x1b[D", "\x1bOD"),
        "home" => cursor("\x1b[H", "\x1bOH"),
        "end" => cursor("\x1b[F", "\x1bOF"),
        "pageup" | "pgup" | "ppage" => Some("\x1b[5~"),
        "pagedown" | "pgdn" | "npage" => Some("\x1b[6~"),
        "insert" | "ic" => Some("\x1b[2~"),
        "delete" | "dc" | "del" => Some("\x1b[3~"),
        "f1" => Some("\x1bOP"),
        "f2" => Some("\x1bOQ"),
        "f3" => Some("\x1bOR"),
        "f4" => Some("\x1bOS"),
        "f5" => Some("\x1b[15~"),
        "f6" => Some("\x1b[17~"),
        "f7" => Some("\x1b[18~"),
        "f8" => Some("\x1b[19~"),
        "f9" => Some("\x1b[20~"),
        "f10" => Some("\x1b[21~"),
        "f11" => Some("\x1b[23~"),
        "f12" => Some("\x1b[24~"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_keys() {
        assert_eq!(encode_key("Enter", false).unwrap(), b"\r");
        assert_eq!(encode_key("escape", false).unwrap(), b"\x1b");
        assert_eq!(encode_key("Up", false).unwrap(), b"\x1b[A");
        assert_eq!(encode_key("Up", true).unwrap(), b"\x1bOA");
        assert_eq!(encode_key("F5", false).unwrap(), b"\x1b[15~");
        assert_eq!(encode_key("PageDown", false).unwrap(), b"\x1b[6~");
    }

    #[test]
    fn modifiers() {
        assert_eq!(encode_key("C-c", false).unwrap(), vec![3]);
        assert_eq!(encode_key("C-Z", false).unwrap(), vec![26]);
        assert_eq!(encode_key("M-x", false).unwrap(), b"\x1bx");
        assert_eq!(encode_key("C-M-a", false).unwrap(), vec![0x1b, 1]);
        assert_eq!(encode_key("M-C-a", false).unwrap(), vec![0x1b, 1]);
        assert_eq!(encode_key("M-Enter", false).unwrap(), b"\x1b\r");
    }

    #[test]
    fn literals_and_errors() {
        assert_eq!(encode_key("q", false).unwrap(), b"q");
        assert_eq!(encode_key("é", false).unwrap(), "é".as_bytes());
        assert!(encode_key("Entr", false).unwrap_err().contains("unknown key 'Entr'"));
        assert!(encode_key("C-1", false).is_err());
        assert!(encode_key("", false).is_err());
    }

    #[test]
    fn long_prefix_chains_are_refused_not_recursed() {
        let name = format!("{}a", "M-".repeat(20_000));
        assert!(encode_key(&name, false).unwrap_err().contains("maximum is 32"));
        assert_eq!(encode_key("M-M-a", false).unwrap(), b"\x1ba");
        // Found by fuzzing: a multi-byte character where a prefix would end.
        assert_eq!(
            encode_key("Mé", false).unwrap_err(),
            "unknown key 'Mé'; keys: ".to_string() + KEY_NAMES
        );
        assert!(encode_key("C\u{e9}", false).is_err());
    }
}
