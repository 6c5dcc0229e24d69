//! Key names (as `fugue send-keys` and the MCP bridge take them) and the bytes an
//! xterm-compatible terminal sends for each.
//!
//! A small table on purpose: the crates that encode keys (termwiz) bring a whole
//! terminal library with them, and this is the only part we need.

/// Names accepted besides single characters, `C-x` and `M-x`; shown in errors.
pub const KEY_NAMES: &str = "Enter, Escape, Tab, BTab, Backspace, Space, Up, Down, Left, Right, \
Home, End, PageUp, PageDown, Insert, Delete, F1-F12, C-a..C-z, M-<key>, S-<key>";

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

/// How the program in a pane wants keys: its cursor-key mode and its kitty
/// keyboard protocol flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyMode {
    /// Application cursor keys (DECCKM), which full-screen programs switch on.
    pub app_cursor: bool,
    /// The kitty keyboard protocol flags the program pushed (0: legacy keys).
    pub kitty_flags: u8,
}

/// Kitty flag: disambiguate escape codes (modified keys become `CSI code;mods u`).
pub const KITTY_DISAMBIGUATE: u8 = 1;
/// Kitty flag: report alternate (shifted) keys.
pub const KITTY_ALTERNATE_KEYS: u8 = 4;
/// Kitty flag: report every key, text included, as an escape code.
pub const KITTY_ALL_KEYS: u8 = 8;
/// Kitty flag: report the text a key produces with its escape code.
pub const KITTY_ASSOCIATED_TEXT: u8 = 16;

/// Modifier keys held with a key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mods {
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
}

impl Mods {
    fn any(self) -> bool {
        self.shift || self.alt || self.ctrl
    }

    /// The xterm and kitty modifier parameter: 1 + shift 1 + alt 2 + ctrl 4.
    fn param(self) -> u8 {
        1 + self.shift as u8 + 2 * self.alt as u8 + 4 * self.ctrl as u8
    }
}

/// Keys with names, beside the ones that type a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    Enter,
    Escape,
    Tab,
    Backspace,
    /// Arrows, Home and End: `CSI [1;mods] X`, or `SS3 X` in application mode.
    Cursor(u8),
    /// F1-F4: `SS3 X`, or `CSI 1;mods X` modified.
    Function(u8),
    /// Insert, Delete, PageUp, PageDown, F5-F12: `CSI n[;mods] ~`.
    Tilde(u8),
}

/// Encodes one key name into the bytes to write to the PTY, as a terminal in
/// `mode` would send the key.
///
/// A single character stands for itself; `C-` (Ctrl), `M-` (Meta or Alt) and `S-`
/// (Shift) prefixes combine in any order (`C-M-a`, `S-Enter`). Prefixes are peeled
/// in a loop, never by recursion, and names longer than the limit are refused
/// before parsing. Without the kitty protocol a modifier that legacy keys cannot
/// carry is dropped (`S-Enter` is Enter), as xterm does.
pub fn encode_key(name: &str, mode: KeyMode) -> Result<Vec<u8>, String> {
    if name.is_empty() {
        return Err("empty key name".into());
    }
    check_key_name(name).map_err(|e| e.message)?;
    let mut mods = Mods::default();
    let mut rest = name;
    loop {
        if let Some(after) = strip_prefix_ci(rest, "M-") {
            mods.alt = true;
            rest = after;
        } else if let Some(after) = strip_prefix_ci(rest, "C-") {
            mods.ctrl = true;
            rest = after;
        } else if let Some(after) = strip_prefix_ci(rest, "S-") {
            mods.shift = true;
            rest = after;
        } else {
            break;
        }
    }
    let mut chars = rest.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return encode_char(c, mods, mode)
            .ok_or_else(|| format!("unknown key '{name}': C- takes a letter or one of @[\\]^_? and Space"));
    }
    if rest.eq_ignore_ascii_case("space") {
        return encode_char(' ', mods, mode).ok_or_else(|| format!("unknown key '{name}'"));
    }
    if rest.eq_ignore_ascii_case("btab") || rest.eq_ignore_ascii_case("backtab") {
        mods.shift = true;
        return Ok(encode_named(Named::Tab, mods, mode));
    }
    let key = named(rest).ok_or_else(|| format!("unknown key '{name}'; keys: {KEY_NAMES}"))?;
    Ok(encode_named(key, mods, mode))
}

/// Whether keys go out in the kitty protocol's own encoding.
fn kitty(mode: KeyMode) -> bool {
    mode.kitty_flags & (KITTY_DISAMBIGUATE | KITTY_ALL_KEYS) != 0
}

/// `CSI code[:shifted][;mods[;text]] u`, the kitty protocol's form of a key.
fn csi_u(code: u32, shifted: Option<char>, mods: Mods, text: Option<char>, mode: KeyMode) -> Vec<u8> {
    let mut out = format!("\x1b[{code}");
    if let Some(shifted) = shifted.filter(|_| mode.kitty_flags & KITTY_ALTERNATE_KEYS != 0) {
        out.push_str(&format!(":{}", shifted as u32));
    }
    let text = text.filter(|_| mode.kitty_flags & KITTY_ASSOCIATED_TEXT != 0);
    if mods.any() || text.is_some() {
        out.push_str(&format!(";{}", mods.param()));
    }
    if let Some(text) = text {
        out.push_str(&format!(";{}", text as u32));
    }
    out.push('u');
    out.into_bytes()
}

fn encode_char(c: char, mods: Mods, mode: KeyMode) -> Option<Vec<u8>> {
    // The key is the unshifted character; Shift makes the text upper case.
    let base = c.to_ascii_lowercase();
    let shifted = (mods.shift || c.is_ascii_uppercase()) && base.is_ascii_alphabetic();
    let mods = Mods {
        shift: mods.shift || c.is_ascii_uppercase(),
        ..mods
    };
    let text = if shifted { base.to_ascii_uppercase() } else { c };
    if kitty(mode) {
        let all_keys = mode.kitty_flags & KITTY_ALL_KEYS != 0;
        // Text typed plainly (or shifted) stays text unless every key is reported.
        if !all_keys && !mods.alt && !mods.ctrl {
            return Some(text.to_string().into_bytes());
        }
        let produces_text = !mods.alt && !mods.ctrl;
        let alternate = shifted.then(|| base.to_ascii_uppercase());
        return Some(csi_u(base as u32, alternate, mods, produces_text.then_some(text), mode));
    }
    let mut out = Vec::with_capacity(4);
    if mods.alt {
        out.push(0x1b);
    }
    if mods.ctrl {
        out.push(control(base)?);
    } else {
        let mut buf = [0u8; 4];
        out.extend_from_slice(text.encode_utf8(&mut buf).as_bytes());
    }
    Some(out)
}

fn encode_named(key: Named, mods: Mods, mode: KeyMode) -> Vec<u8> {
    let param = mods.param();
    match key {
        Named::Enter | Named::Escape | Named::Tab | Named::Backspace => {
            let (code, legacy) = match key {
                Named::Enter => (13, b'\r'),
                Named::Escape => (27, 0x1b),
                Named::Tab => (9, b'\t'),
                _ => (127, 0x7f),
            };
            // Under the kitty protocol Escape and every modified one of these is
            // an escape code; plain Enter, Tab and Backspace stay as they were so
            // a shell still works after a program that set the mode crashed.
            let all_keys = mode.kitty_flags & KITTY_ALL_KEYS != 0;
            if kitty(mode) && (mods.any() || all_keys || key == Named::Escape) {
                return csi_u(code, None, mods, None, mode);
            }
            match (key, mods.shift, mods.ctrl, mods.alt) {
                (Named::Tab, true, _, alt) => [if alt { &b"\x1b"[..] } else { b"" }, b"\x1b[Z"].concat(),
                (Named::Backspace, _, true, alt) => [if alt { &b"\x1b"[..] } else { b"" }, b"\x08"].concat(),
                (_, _, _, true) => vec![0x1b, legacy],
                _ => vec![legacy],
            }
        }
        Named::Cursor(letter) if mods.any() => format!("\x1b[1;{param}{}", letter as char).into_bytes(),
        Named::Cursor(letter) if mode.app_cursor => vec![0x1b, b'O', letter],
        Named::Cursor(letter) => vec![0x1b, b'[', letter],
        Named::Function(letter) if mods.any() => format!("\x1b[1;{param}{}", letter as char).into_bytes(),
        Named::Function(letter) => vec![0x1b, b'O', letter],
        Named::Tilde(number) if mods.any() => format!("\x1b[{number};{param}~").into_bytes(),
        Named::Tilde(number) => format!("\x1b[{number}~").into_bytes(),
    }
}

/// Keystrokes a terminal sent, re-encoded for a program using the kitty keyboard
/// protocol; `None` when they go as they are. A terminal without the protocol
/// reports modified keys in xterm's modifyOtherKeys form (`CSI 27;mods;code~`),
/// which becomes the kitty form (`CSI code;mods u`), and an Escape keypress as a
/// lone ESC, which becomes `CSI 27u` (the very ambiguity the protocol removes).
///
/// `mode` is asked for only when `data` holds something to re-encode: most
/// keystrokes never need the program's mode (which takes the screen's lock).
pub fn kitty_from_terminal(data: &[u8], mode: impl FnOnce() -> KeyMode) -> Option<Vec<u8>> {
    const MODIFIED: &[u8] = b"\x1b[27;";
    let lone_escape = data == b"\x1b";
    if !lone_escape && !data.windows(MODIFIED.len()).any(|w| w == MODIFIED) {
        return None;
    }
    let mode = mode();
    if !kitty(mode) {
        return None;
    }
    if lone_escape {
        return Some(encode_named(Named::Escape, Mods::default(), mode));
    }
    let mut out = Vec::with_capacity(data.len() + 8);
    let mut at = 0;
    while at < data.len() {
        match modified_key(&data[at..], mode) {
            Some((len, bytes)) => {
                out.extend_from_slice(&bytes);
                at += len;
            }
            None => {
                out.push(data[at]);
                at += 1;
            }
        }
    }
    Some(out)
}

/// A `CSI 27;mods;code~` at the start of `data`: its length and the key as
/// `mode` wants it. Keys with modifiers beyond Shift, Alt and Ctrl (Super,
/// Hyper) stay as they are.
fn modified_key(data: &[u8], mode: KeyMode) -> Option<(usize, Vec<u8>)> {
    let rest = data.strip_prefix(b"\x1b[27;")?;
    let end = rest.iter().take(16).position(|&b| b == b'~')?;
    let params = std::str::from_utf8(&rest[..end]).ok()?;
    let (mods, code) = params.split_once(';')?;
    // Caps Lock and Num Lock (64, 128) are states, not keys held.
    let bits = mods.parse::<u8>().ok()?.checked_sub(1)? & !0b1100_0000;
    if bits > 0b111 {
        return None;
    }
    let mods = Mods {
        shift: bits & 1 != 0,
        alt: bits & 2 != 0,
        ctrl: bits & 4 != 0,
    };
    let bytes = match code.parse::<u32>().ok()? {
        13 => encode_named(Named::Enter, mods, mode),
        9 => encode_named(Named::Tab, mods, mode),
        8 | 127 => encode_named(Named::Backspace, mods, mode),
        27 => encode_named(Named::Escape, mods, mode),
        code => encode_char(char::from_u32(code).filter(|c| !c.is_control())?, mods, mode)?,
    };
    Some((b"\x1b[27;".len() + end + 1, bytes))
}

fn strip_prefix_ci<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    // `get` rather than slicing: the prefix length may fall inside a character.
    let head = name.get(..prefix.len())?;
    match name.len() > prefix.len() && head.eq_ignore_ascii_case(prefix) {
        true => name.get(prefix.len()..),
        false => None,
    }
}

fn control(key: char) -> Option<u8> {
    match key {
        ' ' | '@' | '2' => Some(0),
        c @ 'a'..='z' => Some(c as u8 - b'a' + 1),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '7' | '/' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

fn named(name: &str) -> Option<Named> {
    Some(match name.to_ascii_lowercase().as_str() {
        "enter" | "return" | "cr" => Named::Enter,
        "escape" | "esc" => Named::Escape,
        "tab" => Named::Tab,
        "backspace" | "bspace" | "bs" => Named::Backspace,
        "up" => Named::Cursor(b'A'),
        "down" => Named::Cursor(b'B'),
        "right" => Named::Cursor(b'C'),
        "left" => Named::Cursor(b'D'),
        "home" => Named::Cursor(b'H'),
        "end" => Named::Cursor(b'F'),
        "pageup" | "pgup" | "ppage" => Named::Tilde(5),
        "pagedown" | "pgdn" | "npage" => Named::Tilde(6),
        "insert" | "ic" => Named::Tilde(2),
        "delete" | "dc" | "del" => Named::Tilde(3),
        "f1" => Named::Function(b'P'),
        "f2" => Named::Function(b'Q'),
        "f3" => Named::Function(b'R'),
        "f4" => Named::Function(b'S'),
        "f5" => Named::Tilde(15),
        "f6" => Named::Tilde(17),
        "f7" => Named::Tilde(18),
        "f8" => Named::Tilde(19),
        "f9" => Named::Tilde(20),
        "f10" => Named::Tilde(21),
        "f11" => Named::Tilde(23),
        "f12" => Named::Tilde(24),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEGACY: KeyMode = KeyMode {
        app_cursor: false,
        kitty_flags: 0,
    };
    const APP: KeyMode = KeyMode {
        app_cursor: true,
        kitty_flags: 0,
    };
    const fn kitty(flags: u8) -> KeyMode {
        KeyMode {
            app_cursor: false,
            kitty_flags: flags,
        }
    }

    fn key(name: &str, mode: KeyMode) -> String {
        String::from_utf8(encode_key(name, mode).unwrap()).unwrap()
    }

    #[test]
    fn named_keys() {
        assert_eq!(key("Enter", LEGACY), "\r");
        assert_eq!(key("escape", LEGACY), "\x1b");
        assert_eq!(key("Up", LEGACY), "\x1b[A");
        assert_eq!(key("Up", APP), "\x1bOA");
        assert_eq!(key("F5", LEGACY), "\x1b[15~");
        assert_eq!(key("F1", LEGACY), "\x1bOP");
        assert_eq!(key("PageDown", LEGACY), "\x1b[6~");
        assert_eq!(key("BTab", LEGACY), "\x1b[Z");
        assert_eq!(key("Space", LEGACY), " ");
    }

    #[test]
    fn modifiers() {
        assert_eq!(key("C-c", LEGACY), "\x03");
        assert_eq!(key("C-Z", LEGACY), "\x1a");
        assert_eq!(key("M-x", LEGACY), "\x1bx");
        assert_eq!(key("C-M-a", LEGACY), "\x1b\x01");
        assert_eq!(key("M-C-a", LEGACY), "\x1b\x01");
        assert_eq!(key("M-Enter", LEGACY), "\x1b\r");
        assert_eq!(key("S-a", LEGACY), "A");
        assert_eq!(key("C-Space", LEGACY), "\0");
        // xterm's modified cursor and function keys.
        assert_eq!(key("S-Up", APP), "\x1b[1;2A");
        assert_eq!(key("C-Left", LEGACY), "\x1b[1;5D");
        assert_eq!(key("M-F1", LEGACY), "\x1b[1;3P");
        assert_eq!(key("C-Delete", LEGACY), "\x1b[3;5~");
        assert_eq!(key("S-Tab", LEGACY), "\x1b[Z");
        assert_eq!(key("C-Backspace", LEGACY), "\x08");
        // Legacy keys cannot carry Shift on Enter: it is Enter, as in xterm.
        assert_eq!(key("S-Enter", LEGACY), "\r");
    }

    #[test]
    fn kitty_keyboard_protocol() {
        let flag1 = kitty(KITTY_DISAMBIGUATE);
        // What Claude Code and other agent TUIs ask for Shift+Enter to be.
        assert_eq!(key("S-Enter", flag1), "\x1b[13;2u");
        assert_eq!(key("C-Enter", flag1), "\x1b[13;5u");
        assert_eq!(key("Escape", flag1), "\x1b[27u");
        assert_eq!(key("C-c", flag1), "\x1b[99;5u");
        assert_eq!(key("M-x", flag1), "\x1b[120;3u");
        assert_eq!(key("C-S-a", flag1), "\x1b[97;6u");
        assert_eq!(key("BTab", flag1), "\x1b[9;2u");
        // Plain Enter, Tab, Backspace and text stay as they were.
        assert_eq!(key("Enter", flag1), "\r");
        assert_eq!(key("Tab", flag1), "\t");
        assert_eq!(key("a", flag1), "a");
        assert_eq!(key("S-a", flag1), "A");
        assert_eq!(key("Up", flag1), "\x1b[A");
        assert_eq!(key("S-Up", flag1), "\x1b[1;2A");
        // Every key as an escape code, with the shifted key and the text.
        let all = kitty(KITTY_DISAMBIGUATE | KITTY_ALL_KEYS);
        assert_eq!(key("Enter", all), "\x1b[13u");
        assert_eq!(key("a", all), "\x1b[97u");
        let all_text = kitty(KITTY_ALL_KEYS | KITTY_ALTERNATE_KEYS | KITTY_ASSOCIATED_TEXT);
        assert_eq!(key("S-a", all_text), "\x1b[97:65;2;65u");
        assert_eq!(key("C-a", all_text), "\x1b[97;5u");
        // Event types and the like alone leave legacy keys alone.
        assert_eq!(key("S-Enter", kitty(2)), "\r");
    }

    #[test]
    fn keys_from_a_terminal_are_reencoded_for_the_kitty_protocol() {
        let flag1 = kitty(KITTY_DISAMBIGUATE);
        let typed =
            |data: &[u8], mode: KeyMode| kitty_from_terminal(data, || mode).map(|b| String::from_utf8(b).unwrap());
        // xterm's modifyOtherKeys form of Shift+Enter, Ctrl+Shift+A and Ctrl+Tab.
        assert_eq!(typed(b"\x1b[27;2;13~", flag1).as_deref(), Some("\x1b[13;2u"));
        assert_eq!(typed(b"x\x1b[27;6;65~y", flag1).as_deref(), Some("x\x1b[97;6uy"));
        assert_eq!(typed(b"\x1b[27;5;9~", flag1).as_deref(), Some("\x1b[9;5u"));
        // A lone Escape keypress; an Escape that starts a sequence is not one.
        assert_eq!(typed(b"\x1b", flag1).as_deref(), Some("\x1b[27u"));
        assert_eq!(typed(b"\x1b[A", flag1), None);
        // Super (8) and malformed forms stay as they were.
        assert_eq!(typed(b"\x1b[27;9;13~", flag1).as_deref(), Some("\x1b[27;9;13~"));
        assert_eq!(
            typed(b"\x1b[27;2;99999999999~", flag1).as_deref(),
            Some("\x1b[27;2;99999999999~")
        );
        assert_eq!(typed(b"\x1b[27;", flag1).as_deref(), Some("\x1b[27;"));
        // A program without the protocol gets what the terminal sent.
        assert_eq!(typed(b"\x1b[27;2;13~", LEGACY), None);
        assert_eq!(typed(b"\x1b", LEGACY), None);
    }

    #[test]
    fn literals_and_errors() {
        assert_eq!(key("q", LEGACY), "q");
        assert_eq!(key("é", LEGACY), "é");
        assert!(encode_key("Entr", LEGACY).unwrap_err().contains("unknown key 'Entr'"));
        assert!(encode_key("C-1", LEGACY).is_err());
        assert!(encode_key("", LEGACY).is_err());
    }

    #[test]
    fn long_prefix_chains_are_refused_not_recursed() {
        let name = format!("{}a", "M-".repeat(20_000));
        assert!(encode_key(&name, LEGACY).unwrap_err().contains("maximum is 32"));
        assert_eq!(key("M-M-a", LEGACY), "\x1ba");
        // Found by fuzzing: a multi-byte character where a prefix would end.
        assert_eq!(
            encode_key("Mé", LEGACY).unwrap_err(),
            "unknown key 'Mé'; keys: ".to_string() + KEY_NAMES
        );
        assert!(encode_key("C\u{e9}", LEGACY).is_err());
    }
}
