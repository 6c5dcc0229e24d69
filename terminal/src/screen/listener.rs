//! What the emulator reports while it parses (answers to queries, title, bells),
//! and the colours a program is told it has when it asks for ones it never set.

use alacritty_terminal::event::{Event, EventListener, WindowSize};
use alacritty_terminal::vte::ansi::{NamedColor, Rgb};
use std::sync::{Arc, Mutex};

/// Colours reported to programs that ask (OSC 10/11): light grey on black.
const DEFAULT_FG: Rgb = Rgb {
    r: 0xe5,
    g: 0xe5,
    b: 0xe5,
};
const DEFAULT_BG: Rgb = Rgb { r: 0, g: 0, b: 0 };

/// The colour a program that did not set it is told it has: xterm's default
/// 256-colour palette, and [`DEFAULT_FG`] / [`DEFAULT_BG`] for the named ones.
fn default_color(index: usize) -> Rgb {
    const BASE: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x00, 0x00),
        (0x00, 0xcd, 0x00),
        (0xcd, 0xcd, 0x00),
        (0x00, 0x00, 0xee),
        (0xcd, 0x00, 0xcd),
        (0x00, 0xcd, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x7f, 0x7f, 0x7f),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x5c, 0x5c, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match index {
        0..=15 => {
            let (r, g, b) = BASE[index];
            Rgb { r, g, b }
        }
        16..=231 => {
            let cube = index - 16;
            Rgb {
                r: CUBE[cube / 36],
                g: CUBE[cube / 6 % 6],
                b: CUBE[cube % 6],
            }
        }
        232..=255 => {
            let level = 8 + 10 * (index - 232) as u8;
            Rgb {
                r: level,
                g: level,
                b: level,
            }
        }
        _ if index == NamedColor::Background as usize => DEFAULT_BG,
        _ => DEFAULT_FG,
    }
}

/// Collects what the emulator reports while it parses. The term owns one handle,
/// the [`Screen`] the other (the term offers no way back to its listener).
#[derive(Default, Clone)]
pub(super) struct Listener {
    pub(super) state: Arc<Mutex<Reports>>,
}

#[derive(Default)]
pub(super) struct Reports {
    pub(super) replies: Vec<u8>,
    pub(super) title: Option<Option<String>>,
    pub(super) bells: u32,
    pub(super) size: (u16, u16),
}

impl EventListener for Listener {
    fn send_event(&self, event: Event) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Event::PtyWrite(text) => state.replies.extend_from_slice(text.as_bytes()),
            Event::Title(title) => state.title = Some(Some(title)),
            Event::ResetTitle => state.title = Some(None),
            Event::Bell => state.bells += 1,
            // Only colours the program did not set reach here (the emulator
            // answers the ones it set).
            Event::ColorRequest(index, format) => {
                state.replies.extend_from_slice(format(default_color(index)).as_bytes());
            }
            Event::TextAreaSizeRequest(format) => {
                let (cols, rows) = state.size;
                let size = WindowSize {
                    num_lines: rows,
                    num_cols: cols,
                    cell_width: 0,
                    cell_height: 0,
                };
                state.replies.extend_from_slice(format(size).as_bytes());
            }
            _ => {}
        }
    }
}
