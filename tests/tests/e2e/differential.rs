//! Differential screen tests: each case runs the same program, at the same size,
//! with the same environment and the same keys, in a fugue pane and in a tmux pane
//! (tmux 3.3a, its own server, `-f /dev/null`), waits for both screens to settle,
//! and compares them: the text of every row, the cursor, and every cell's
//! attributes and colours (fugue's `capture --ansi` against `tmux capture-pane -e`,
//! both read back through one SGR interpreter).
//!
//! tmux is the oracle because it behaves like xterm where it matters. Where it does
//! not, the case says so and normalises the difference instead of copying it.
//! The programs come from Debian's packages (`scripts/test` installs them).

use fugue_client::protocol::{CaptureWhat, MatchOn, PaneSize, SpawnSpec, WaitUntil};
use fugue_client::Client;
use fugue_tests::{wait_for, Daemon, Tmux, DEADLINE};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const COLS: u16 = 80;
const ROWS: u16 = 24;
/// A screen counts as settled once it has not changed for this long.
const SETTLE: Duration = Duration::from_millis(400);

/// One thing the test does to both panes, in order.
enum Step {
    /// Key names, as both `fugue send-keys` and `tmux send-keys` take them.
    Keys(&'static [&'static str]),
    /// Literal text typed.
    Text(&'static str),
    /// Wait until both screens show this text and have settled, then compare.
    Check(&'static str),
}
use Step::{Check, Keys, Text};

/// What a screen looks like, read back from a capture.
#[derive(Debug, PartialEq, Eq)]
struct Screen {
    rows: Vec<String>,
    cursor: (u16, u16),
}

/// A cell's look, from SGR sequences. Colours are normalised: `31` and `38;5;1`
/// are the same red.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Look {
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    blink: bool,
    inverse: bool,
    strike: bool,
    fg: Option<Colour>,
    bg: Option<Colour>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Colour {
    Indexed(u8),
    Rgb(u8, u8, u8),
}

/// Applies one SGR sequence's parameters to `look`.
fn apply_sgr(look: &mut Look, params: &str) {
    let mut parts = params
        .split(';')
        .map(|p| p.split(':').next().unwrap_or("").parse::<u32>().unwrap_or(0));
    while let Some(code) = parts.next() {
        match code {
            0 => *look = Look::default(),
            1 => look.bold = true,
            2 => look.dim = true,
            3 => look.italic = true,
            4 => look.underline = true,
            5 | 6 => look.blink = true,
            7 => look.inverse = true,
            9 => look.strike = true,
            21 | 22 => (look.bold, look.dim) = (false, false),
            23 => look.italic = false,
            24 => look.underline = false,
            25 => look.blink = false,
            27 => look.inverse = false,
            29 => look.strike = false,
            30..=37 => look.fg = Some(Colour::Indexed((code - 30) as u8)),
            40..=47 => look.bg = Some(Colour::Indexed((code - 40) as u8)),
            90..=97 => look.fg = Some(Colour::Indexed((code - 90 + 8) as u8)),
            100..=107 => look.bg = Some(Colour::Indexed((code - 100 + 8) as u8)),
            39 => look.fg = None,
            49 => look.bg = None,
            38 | 48 => {
                let colour = match parts.next() {
                    Some(5) => Some(Colour::Indexed(parts.next().unwrap_or(0) as u8)),
                    Some(2) => {
                        let (r, g, b) = (parts.next(), parts.next(), parts.next());
                        Some(Colour::Rgb(
                            r.unwrap_or(0) as u8,
                            g.unwrap_or(0) as u8,
                            b.unwrap_or(0) as u8,
                        ))
                    }
                    _ => None,
                };
                match code {
                    38 => look.fg = colour,
                    _ => look.bg = colour,
                }
            }
            _ => {}
        }
    }
}

/// Every row's cells as (character, look). The attribute state carries from row
/// to row: tmux writes each row's codes relative to the end of the one before.
fn cells(rows: &[String]) -> Vec<Vec<(char, Look)>> {
    let mut look = Look::default();
    rows.iter()
        .map(|row| {
            let mut out = Vec::new();
            let mut chars = row.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '\x1b' {
                    out.push((c, look));
                    continue;
                }
                if chars.next_if_eq(&'[').is_none() {
                    continue;
                }
                let mut params = String::new();
                let mut last = ' ';
                for p in chars.by_ref() {
                    if p.is_ascii_alphabetic() || p == '~' {
                        last = p;
                        break;
                    }
                    params.push(p);
                }
                if last == 'm' {
                    apply_sgr(&mut look, &params);
                }
            }
            out
        })
        .collect()
}

/// What of a cell can be seen: on a blank, the foreground, bold, italic and blink
/// show nothing (unless inverse makes the foreground the background), and
/// programs leave them either way.
fn visible(cell: &(char, Look)) -> (char, Look) {
    let (c, look) = *cell;
    if c != ' ' {
        return (c, look);
    }
    let shown = Look {
        bg: look.bg,
        inverse: look.inverse,
        fg: look.fg.filter(|_| look.inverse),
        underline: look.underline,
        strike: look.strike,
        ..Look::default()
    };
    (c, shown)
}

/// Whether a cell shows nothing at all (so it may as well be missing).
fn is_plain_blank(cell: &(char, Look)) -> bool {
    let (c, look) = cell;
    *c == ' ' && look.bg.is_none() && !look.inverse && !look.underline && !look.strike
}

/// The first cell that differs in look or character, described for a failure.
///
/// tmux departure: `capture-pane -e` leaves out the cells a program erased with a
/// background colour set (`\e[44m\e[K`), though its screen shows them coloured as
/// xterm does. Past the end of tmux's row, fugue's cells only have to be blank.
fn first_look_difference(fugue: &[String], tmux: &[String]) -> Option<String> {
    let (f, t) = (cells(fugue), cells(tmux));
    let blank = (' ', Look::default());
    for row in 0..f.len().max(t.len()) {
        let (fr, tr) = (
            f.get(row).map_or(&[][..], |r| &r[..]),
            t.get(row).map_or(&[][..], |r| &r[..]),
        );
        for col in 0..fr.len().max(tr.len()) {
            if col >= tr.len() && fr.get(col).is_some_and(|(c, _)| *c == ' ') {
                continue;
            }
            let (a, b) = (fr.get(col).unwrap_or(&blank), tr.get(col).unwrap_or(&blank));
            if visible(a) != visible(b) && !(is_plain_blank(a) && is_plain_blank(b)) {
                return Some(format!("row {row} col {col}: fugue {a:?}, tmux {b:?}"));
            }
        }
    }
    None
}

/// The two panes of one case.
struct Pair {
    _daemon: Daemon,
    client: Client,
    pane: String,
    tmux: Tmux,
    dir: PathBuf,
}

/// The environment both panes run the program in.
///
/// tmux departure: `capture-pane` prints a DEC line-drawing character as the ASCII
/// letter that selected it (`q` for `─`). ncurses draws boxes that way unless
/// `NCURSES_NO_UTF8_ACS` asks for the Unicode characters, which both show alike;
/// [`dec_line_drawing`] tests the DEC set itself.
#[tokio::test]
async fn vertical_moves_stop_at_the_margins() {
    fugue_tests::require!("tmux");
    // CUU, CUD, CPL and CNL from inside a scroll region stop at its margins;
    // from outside, at the screen's edges; in origin mode, relative moves.
    let script = r#"printf '\033[2J\033[5;10r\033[7;4HA\033[20AB\033[20BC\033[20FD\033[20EE'
printf '\033[2;2HF\033[20AG\033[15;3HH\033[20BI'
printf '\033[?6h\033[2;1HJ\033[AK\033[?6l\033[r\033[22;1Hdone'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

#[tokio::test]
async fn erase_above_restore_origin_alignment_and_soft_hyphens() {
    fugue_tests::require!("tmux");
    // ESC[1J on the second row clears the first; DECRC restores origin mode;
    // DECRST 6 and DECALN home the cursor (DECALN also clears the margins); a
    // soft hyphen takes a cell.
    let script = r#"printf 'first row\nsecond row\n'; printf '\033[2;4H\033[1J'
printf '\033[4;8r\033[?6h\0337\033[?6l\0338\033[1;1HinRegion'
printf '\033[?6h\033[3;3H\033[?6lhome'
printf '\033[r\033[12;1Hsoft\302\255hyphen|end\033[20;1Hdone'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

#[tokio::test]
async fn screen_alignment_fills_and_homes() {
    fugue_tests::require!("tmux");
    let script = r#"printf '\033[3;9r\033[?6h\033[4;4H\033#8X\033[5;1Hafter\033[24;1Hdone'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

fn script_for(dir: &Path, program: &str) -> String {
    format!(
        "cd '{dir}' && export TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 HOME='{dir}' \
         LESSHISTFILE=- PS1='$ ' NCURSES_NO_UTF8_ACS=1 && unset TMUX TMUX_PANE FUGUE_PANE FUGUE_SESSION && {program}",
        dir = dir.display()
    )
}

impl Pair {
    /// A daemon of its own and a case directory `setup` fills, then both panes.
    async fn for_case(program: &str, setup: impl FnOnce(&Path)) -> Pair {
        let daemon = Daemon::start();
        let dir = daemon.dir.path().join("case");
        std::fs::create_dir_all(&dir).unwrap();
        setup(&dir);
        Pair::start(daemon, dir, program).await
    }

    async fn start(daemon: Daemon, dir: PathBuf, program: &str) -> Pair {
        let script = script_for(&dir, program);
        let client = daemon.client().await;
        client.create_session("diff", Some(&dir), vec![]).await.unwrap();
        let mut spec: SpawnSpec = fugue_tests::sh_spec("diff", script.clone());
        spec.size = Some(PaneSize { cols: COLS, rows: ROWS });
        let pane = client.create_pane(spec).await.unwrap().id.to_string();
        let tmux = Tmux::start(&dir, COLS, ROWS);
        let (cols, rows) = (COLS.to_string(), ROWS.to_string());
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "case",
            "-x",
            &cols,
            "-y",
            &rows,
            "sh",
            "-c",
            &script,
        ]);
        Pair {
            _daemon: daemon,
            client,
            pane,
            tmux,
            dir,
        }
    }

    async fn step(&self, step: &Step) {
        match step {
            Keys(keys) => {
                let names: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
                self.client.send_keys(&self.pane, &names).await.unwrap();
                let mut args = vec!["send-keys", "-t", "case"];
                args.extend_from_slice(keys);
                self.tmux.run(&args);
            }
            Text(text) => {
                self.client.write_input(&self.pane, text.as_bytes()).await.unwrap();
                self.tmux.run(&["send-keys", "-t", "case", "-l", text]);
            }
            Check(marker) => self.check(marker).await,
        }
    }

    async fn fugue_screen(&self, ansi: bool) -> (Screen, Vec<String>) {
        let c = self
            .client
            .capture(&self.pane, CaptureWhat::Screen, (None, None), false, false)
            .await
            .unwrap();
        let styled = match ansi {
            true => {
                self.client
                    .capture(&self.pane, CaptureWhat::Screen, (None, None), true, false)
                    .await
                    .unwrap()
                    .lines
            }
            false => Vec::new(),
        };
        // Both captures trim trailing blanks themselves; compared as they come.
        (
            Screen {
                rows: c.lines,
                cursor: (c.cursor_row, c.cursor_col),
            },
            styled,
        )
    }

    fn tmux_screen(&self) -> Screen {
        let text = self.tmux.run(&["capture-pane", "-p", "-t", "case"]);
        let cursor = self
            .tmux
            .run(&["display-message", "-p", "-t", "case", "#{cursor_y} #{cursor_x}"]);
        let mut xy = cursor.split_whitespace().map(|n| n.parse::<u16>().unwrap_or(u16::MAX));
        let mut rows: Vec<String> = text.lines().map(str::to_string).collect();
        rows.resize(ROWS as usize, String::new());
        Screen {
            rows,
            cursor: (xy.next().unwrap_or(0), xy.next().unwrap_or(0)),
        }
    }

    /// Waits for `marker` on both screens and for both to settle, then
    /// compares. Settled means quiet for SETTLE, and a program can be quiet
    /// that long between two bursts of one redraw when the machine is loaded
    /// (vim's `-- INSERT --` came after its text had settled in tmux): a
    /// difference is looked at again, both screens settled anew, until the
    /// deadline; only one that lasts fails.
    async fn check(&self, marker: &str) {
        let end = Instant::now() + DEADLINE;
        loop {
            let tmux = self.tmux_settled(marker).await;
            let (fugue, fugue_styled) = self.fugue_settled(marker).await;
            let tmux_styled: Vec<String> = self
                .tmux
                .run(&["capture-pane", "-p", "-e", "-N", "-t", "case"])
                .lines()
                .map(str::to_string)
                .collect();
            let look = first_look_difference(&fugue_styled, &tmux_styled);
            if fugue.rows == tmux.rows && fugue.cursor == tmux.cursor && look.is_none() {
                return;
            }
            if Instant::now() < end {
                continue;
            }
            assert_eq!(
                fugue.rows,
                tmux.rows,
                "rows differ at '{marker}'\n--- fugue\n{}\n--- tmux\n{}",
                fugue.rows.join("\n"),
                tmux.rows.join("\n")
            );
            assert_eq!(fugue.cursor, tmux.cursor, "cursor (row, col) differs at '{marker}'");
            if let Some(difference) = look {
                panic!("attributes differ at '{marker}': {difference}");
            }
        }
    }

    /// tmux's screen once it shows `marker` and the same capture held for SETTLE.
    async fn tmux_settled(&self, marker: &str) -> Screen {
        // (tmux reports no event for a redraw to this test: its captures are
        // compared until they hold still.)
        // Polled: tmux reports no event for a reflow after a resize; captures are compared until they hold still.
        wait_for(&format!("'{marker}' on tmux's screen, settled"), DEADLINE, || async {
            let mut last = self.tmux_screen();
            if !last.rows.iter().any(|r| r.contains(marker)) {
                // Paced: the step of the settle poll above.
                tokio::time::sleep(Duration::from_millis(20)).await;
                return None;
            }
            let since = Instant::now();
            while since.elapsed() < SETTLE {
                // Paced: the step of the settle poll above.
                tokio::time::sleep(Duration::from_millis(50)).await;
                let now = self.tmux_screen();
                if now != last {
                    return None;
                }
                last = now;
            }
            Some(last)
        })
        .await
    }

    /// fugue's screen once it shows `marker` and the daemon says the pane has
    /// been quiet for SETTLE (its own measure: no poll).
    async fn fugue_settled(&self, marker: &str) -> (Screen, Vec<String>) {
        fugue_tests::wait_for_screen(&self.client, &self.pane, marker).await;
        let quiet = WaitUntil {
            idle_ms: Some(SETTLE.as_millis() as u64),
            ..Default::default()
        };
        self.client.wait_for(&self.pane, quiet, DEADLINE).await.unwrap();
        self.fugue_screen(true).await
    }
}

/// Runs one case: `setup` prepares files in the case's directory.
async fn case(program: &str, setup: impl FnOnce(&Path), steps: &[Step]) {
    let pair = Pair::for_case(program, setup).await;
    for step in steps {
        pair.step(step).await;
    }
    let _ = std::fs::remove_dir_all(&pair.dir);
}

fn no_files(_: &Path) {}

/// A text file of `lines` numbered lines, some long enough to wrap and some with tabs.
fn text_file(dir: &Path, lines: usize) {
    let mut text = String::new();
    for i in 1..=lines {
        match i % 9 {
            0 => text.push_str(&format!("{i}\tcolumn\tafter\ttabs\n")),
            4 => text.push_str(&format!("{i} {}\n", "a long line that wraps ".repeat(5))),
            _ => text.push_str(&format!("line {i} of the file\n")),
        }
    }
    std::fs::write(dir.join("text.txt"), text).unwrap();
}

/// A small tree of files of fixed sizes.
fn file_tree(dir: &Path) {
    for (path, size) in [
        ("tree/src/main.rs", 4000),
        ("tree/src/lib.rs", 12000),
        ("tree/docs/guide.md", 30000),
        ("tree/docs/img/logo.bin", 100000),
        ("tree/README", 800),
    ] {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, vec![b'x'; size]).unwrap();
    }
}

/// A git repository with a few commits at fixed times.
fn git_repo(dir: &Path) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("HOME", dir)
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.org")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.org")
            .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
            .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    for (n, message) in ["first commit", "add the parser", "fix the parser", "release 1.0"]
        .iter()
        .enumerate()
    {
        std::fs::write(repo.join("file.txt"), format!("version {n}\n")).unwrap();
        git(&["add", "file.txt"]);
        git(&["commit", "-q", "-m", message]);
        if n == 1 {
            git(&["branch", "feature"]);
        }
    }
}

// --- escape-sequence scripts -------------------------------------------------

#[tokio::test]
async fn tabs_move_the_cursor_and_leave_blanks() {
    fugue_tests::require!("tmux");
    let script = r#"printf 'a\tb\n\tc\nxx\t\nabc\tdefghij\tk\n\ttab at the start\nend\t'; exec sleep 60"#;
    case(script, no_files, &[Check("end")]).await;
}

#[tokio::test]
async fn alternate_screen_47_keeps_the_primary_screen() {
    fugue_tests::require!("tmux");
    let script = r#"printf 'before one\nbefore two\n'; printf '\033[?47h\033[2J\033[Halt text\033[5;3H'; printf '\033[?47lafter'; exec sleep 60"#;
    case(script, no_files, &[Check("after")]).await;
}

#[tokio::test]
async fn alternate_screen_1047_keeps_the_primary_screen() {
    fugue_tests::require!("tmux");
    let script =
        r#"printf 'before\n'; printf '\033[?1047h\033[Halt\033[3;7H'; printf '\033[?1047lafter'; exec sleep 60"#;
    case(script, no_files, &[Check("after")]).await;
}

#[tokio::test]
async fn leaving_1049_twice_restores_the_saved_cursor() {
    fugue_tests::require!("tmux");
    // dialog's way out: the second 1049l happens on the primary screen.
    let script = r#"printf 'one\ntwo\n'; printf '\033[?1049h\033[2J\033[10;10Hdialog'; printf '\033[?1049l'; printf 'three\nfour\n'; printf '\033[?1049lX'; exec sleep 60"#;
    case(script, no_files, &[Check("X")]).await;
}

#[tokio::test]
async fn attributes_and_colours() {
    fugue_tests::require!("tmux");
    let script = r#"printf '\033[1mbold\033[0m \033[2mdim\033[0m \033[3mitalic\033[0m \033[4munder\033[0m \033[5mblink\033[0m \033[7minverse\033[0m \033[9mstrike\033[0m\n'
printf '\033[31mred \033[42mon green\033[0m \033[38;5;123m256\033[0m \033[48;5;200mbg256\033[0m \033[38;2;10;20;30mrgb\033[0m \033[91mbright\033[0m \033[1;4;5;33mall\033[22;24;25m some\033[0m\n'
printf '\033[44m    blue blanks    \033[0m\n\033[5;7mblink inverse\033[25m still inverse\033[0m\ndone'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

/// DEC special graphics (as designated for G0, and for G1 then shifted to).
#[tokio::test]
async fn dec_line_drawing() {
    fugue_tests::require!("tmux");
    let script = r#"printf '\033(0lqqk\nx  x\nmqqj\033(B plain q\n\033)0\016lqk\017 shifted\ndone'; exec sleep 60"#;
    let pair = Pair::for_case(script, no_files).await;
    pair.tmux.until("case", "the drawing on tmux's screen", |screen| {
        screen.lines().any(|r| r == "done").then_some(())
    });
    let tmux = pair.tmux_screen();
    // tmux departure: its capture shows the letters that selected the characters;
    // xterm shows the lines. Everything up to the first space was drawn in the set.
    let lines = |text: &str| -> String {
        text.chars()
            .map(|c| match c {
                'l' => '┌',
                'k' => '┐',
                'm' => '└',
                'j' => '┘',
                'q' => '─',
                'x' => '│',
                other => other,
            })
            .collect()
    };
    let mut expected = tmux.rows.clone();
    for row in &mut expected[..2] {
        *row = lines(row);
    }
    for row in &mut expected[2..4] {
        let (drawn, plain) = row.split_once(' ').expect("a drawn prefix");
        *row = format!("{} {plain}", lines(drawn));
    }
    // The daemon waits for a row that is exactly "done".
    let until = WaitUntil {
        pattern: Some(r"^done\s*$".into()),
        on: MatchOn::Screen,
        ..Default::default()
    };
    pair.client.wait_for(&pair.pane, until, DEADLINE).await.unwrap();
    let (fugue, _) = pair.fugue_screen(false).await;
    assert_eq!(fugue.rows, expected);
}

#[tokio::test]
async fn scroll_regions() {
    fugue_tests::require!("tmux");
    // Insert and delete line inside the region. (tmux departure, not tested: outside
    // the margins xterm ignores IL and DL; tmux applies them to the whole screen.)
    let script = r#"printf '\033[2J\033[H'; seq 1 30; printf '\033[5;10r\033[10;1H'; seq 100 112; printf '\033[6;1H\033[M\033[8;1H\033[2L'; printf '\033[r\033[20;1Hdone'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

#[tokio::test]
async fn insert_delete_and_erase() {
    fugue_tests::require!("tmux");
    let script = r#"printf 'abcdefghij\n0123456789\nABCDEFGHIJ\nklmnopqrst\nuvwxyz\n'
printf '\033[1;3H\033[2@XY\033[2;3H\033[3P\033[3;5H\033[4X\033[4;4H\033[1K\033[5;3H\033[K'
printf '\033[7;1Hlast line\033[7;5H\033[0J\033[8;1Hdone'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

#[tokio::test]
async fn wide_characters_and_wrapping() {
    fugue_tests::require!("tmux");
    let script = r#"printf '日本語のテキスト\n한국어 and 中文 mixed\n'; printf '%079d中\n' 0; printf '%0100d\n' 7; printf 'over\rOV\n'; printf 'done'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

#[tokio::test]
async fn saved_cursor_and_origin_mode() {
    fugue_tests::require!("tmux");
    let script = r#"printf '\033[2J\033[5;5Hsaved\0337\033[10;10Hmoved\0338here'; printf '\033[3;8r\033[?6h\033[1;1Htop of region\033[?6l\033[r\033[12;1Hdone'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

#[tokio::test]
async fn output_that_scrolls_the_screen() {
    fugue_tests::require!("tmux");
    let script = r#"seq 1 200 | sed 's/^/output line /'; printf 'done'; exec sleep 60"#;
    case(script, no_files, &[Check("done")]).await;
}

// --- programs ------------------------------------------------------------------

/// vim asks the terminal for its background colour (OSC 11) and picks its colours
/// by the answer. tmux departure: with no client attached, tmux leaves the question
/// unanswered (xterm and fugue answer), so the question is switched off (`t_RB=`).
const VIM: &str = "exec vim -u NONE -i NONE -N -n --cmd 'set t_RB='";

#[tokio::test]
async fn vim_edits_a_file() {
    fugue_tests::require!("tmux", "vim");
    let program = format!("{VIM} text.txt");
    let program = program.as_str();
    let steps = [
        Check("line 1 of the file"),
        Keys(&["G"]),
        Check("line 300 of the file"),
        Text(":set number\r"),
        Keys(&["g", "g", "O"]),
        Text("inserted by the test"),
        Keys(&["Escape"]),
        Check("inserted by the test"),
    ];
    case(program, |d| text_file(d, 300), &steps).await;
}

#[tokio::test]
async fn vi_with_syntax_colours() {
    fugue_tests::require!("tmux", "vim");
    let program = format!("{VIM} -c 'syntax on' -c 'set hlsearch' -c '/parser' main.rs");
    let program = program.as_str();
    let setup = |d: &Path| {
        std::fs::write(
            d.join("main.rs"),
            "// the parser\nfn main() {\n    let parser = \"text\";\n    println!(\"{}\", parser);\n}\n",
        )
        .unwrap()
    };
    case(program, setup, &[Check("fn main")]).await;
}

#[tokio::test]
async fn less_pages_through_a_file() {
    fugue_tests::require!("tmux", "less");
    let program = "exec less text.txt";
    let steps = [
        Check("line 1 of the file"),
        Keys(&["Space"]),
        Check("line 30 of the file"),
        Text("/tabs\r"),
        Check("tabs"),
    ];
    case(program, |d| text_file(d, 300), &steps).await;
}

#[tokio::test]
async fn nano_opens_a_file() {
    fugue_tests::require!("tmux", "nano");
    let program = "exec nano -I text.txt";
    case(
        program,
        |d| text_file(d, 100),
        &[
            Check("line 1 of the file"),
            Keys(&["C-g"]),
            Check("Main nano help text"),
        ],
    )
    .await;
}

#[tokio::test]
async fn man_renders_a_page() {
    fugue_tests::require!("tmux", "man");
    let program = "MANWIDTH=80 MANPAGER='less' exec man -l page.1";
    let setup = |d: &Path| {
        std::fs::write(
            d.join("page.1"),
            ".TH PAGE 1 2026-01-01 fugue\n.SH NAME\npage \\- a test page\n.SH SYNOPSIS\n.B page\n[\\fIoptions\\fR]\n.SH DESCRIPTION\n\\fBBold\\fR words, \\fIitalic\\fR words and a long paragraph that fills more than one line of the terminal so that it has to be filled and adjusted by the formatter.\n.TP\n.B \\-v\nBe verbose.\n",
        )
        .unwrap()
    };
    case(program, setup, &[Check("DESCRIPTION")]).await;
}

#[tokio::test]
async fn w3m_renders_a_page() {
    fugue_tests::require!("tmux", "w3m");
    let program = "exec w3m -no-mouse -o confirm_qq=0 page.html";
    let setup = |d: &Path| {
        std::fs::write(
            d.join("page.html"),
            "<html><body><h1>Heading</h1><p>A paragraph with <b>bold</b> and <a href='x.html'>a link</a>.</p><table border=1><tr><td>one</td><td>two</td></tr><tr><td>three</td><td>four</td></tr></table><ul><li>first</li><li>second</li></ul></body></html>",
        )
        .unwrap()
    };
    case(program, setup, &[Check("Heading")]).await;
}

#[tokio::test]
async fn tig_shows_history() {
    fugue_tests::require!("tmux", "tig");
    let program = "cd repo && exec tig --all";
    case(
        program,
        git_repo,
        &[Check("release 1.0"), Keys(&["Enter"]), Check("file.txt")],
    )
    .await;
}

#[tokio::test]
async fn git_log_graph_in_colour() {
    fugue_tests::require!("tmux", "git");
    let program =
        "cd repo && git -c color.ui=always log --graph --oneline --decorate --all | cat; printf done; exec sleep 60";
    case(program, git_repo, &[Check("done")]).await;
}

#[tokio::test]
async fn ncdu_scans_a_tree() {
    fugue_tests::require!("tmux", "ncdu");
    let program = "exec ncdu -x --color dark tree";
    case(
        program,
        file_tree,
        &[Check("docs"), Keys(&["Down", "Enter"]), Check("main.rs")],
    )
    .await;
}

#[tokio::test]
async fn tree_in_colour() {
    fugue_tests::require!("tmux", "tree");
    let program = "tree -C tree; printf done; exec sleep 60";
    case(program, file_tree, &[Check("done")]).await;
}

#[tokio::test]
async fn dialog_menu_and_exit() {
    fugue_tests::require!("tmux", "dialog");
    let program = "dialog --menu 'Pick one' 12 40 3 a first b second c third; printf 'after dialog'; exec sleep 60";
    let steps = [
        Check("Pick one"),
        Keys(&["Down"]),
        Check("second"),
        Keys(&["Enter"]),
        Check("after dialog"),
    ];
    case(program, no_files, &steps).await;
}

#[tokio::test]
async fn whiptail_yes_no() {
    fugue_tests::require!("tmux", "whiptail");
    let program = "whiptail --yesno 'Continue?' 10 40; printf 'answered %s' $?; exec sleep 60";
    case(
        program,
        no_files,
        &[
            Check("Continue?"),
            Keys(&["Tab"]),
            Check("Continue?"),
            Keys(&["Enter"]),
            Check("answered"),
        ],
    )
    .await;
}

#[tokio::test]
async fn midnight_commander_panels() {
    fugue_tests::require!("tmux", "mc");
    let program = "exec mc -u -d --nocolor tree tree/docs";
    case(program, file_tree, &[Check("guide.md")]).await;
}

#[tokio::test]
async fn bash_readline_editing() {
    fugue_tests::require!("tmux", "bash");
    let program = "exec bash --norc --noprofile -i";
    let steps = [
        Check("$"),
        Text("echo hello wonderful world"),
        Keys(&["C-a", "M-f", "M-f", "C-k"]),
        Text(" there"),
        Keys(&["Enter"]),
        Check("hello there"),
    ];
    case(program, no_files, &steps).await;
}

#[tokio::test]
async fn python_curses_program() {
    fugue_tests::require!("tmux", "python3");
    let program = "exec python3 draw.py";
    let setup = |d: &Path| {
        std::fs::write(
            d.join("draw.py"),
            r#"import curses
def main(s):
    curses.start_color(); curses.use_default_colors()
    curses.init_pair(1, curses.COLOR_RED, -1); curses.init_pair(2, curses.COLOR_BLACK, curses.COLOR_CYAN)
    s.box(); s.addstr(2, 4, "curses window", curses.A_BOLD)
    s.addstr(4, 4, "red text", curses.color_pair(1)); s.addstr(5, 4, " on cyan ", curses.color_pair(2))
    s.addstr(6, 4, "reverse", curses.A_REVERSE); s.addstr(7, 4, "underline", curses.A_UNDERLINE)
    s.move(20, 10); s.refresh()
    w = curses.newwin(6, 30, 10, 20); w.box(); w.addstr(2, 2, "inner window ready"); w.refresh()
    w.getch()
curses.wrapper(main)
"#,
        )
        .unwrap()
    };
    case(program, setup, &[Check("inner window ready")]).await;
}

/// Resizing rewraps what scrolled away and pulls it back into view, as tmux does:
/// lines of growing length (some wider than the screen, some with wide
/// characters) printed at 30x8, then a series of widths and heights; after each,
/// the whole scrollback, the screen and the cursor are tmux's.
#[tokio::test]
async fn resizing_rewraps_the_scrollback_and_pulls_it_back() {
    let script = "for i in $(seq 1 14); do printf 'line%02d-' $i; head -c $((i * 5)) /dev/zero | tr '\\0' x; \
                  echo; done; echo 'wide-中文字符中文字符中文字符-end'; printf READY; exec sleep 600";
    let steps = [(70u16, 8u16), (20, 5), (90, 12), (25, 9), (33, 3), (100, 30)];
    resizes_match_tmux(script, (30, 8), &steps).await;
}

/// Narrower and taller in one step (issue 40, item 5): long wrapped lines at
/// 100x30, then 70x30, 133x24, 41x40 and back to 100x30; after each, the
/// scrollback, the screen and the cursor equal tmux's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn narrower_and_taller_at_once_matches_tmux() {
    let script =
        "for i in $(seq 1 60); do printf 'row%02d-' $i; head -c $(( (i * 37) % 230 + 20 )) /dev/zero | tr '\\0' y; \
                  echo; done; printf READY; exec sleep 600";
    let steps = [(70u16, 30u16), (133, 24), (41, 40), (100, 30)];
    resizes_match_tmux(script, (100, 30), &steps).await;
}

/// Issue 54, item 1: five long lines, a line of wide characters, and a last
/// line exactly as wide as the screen with no newline after it (the cursor
/// waits in the pending-wrap column), resized 100x30 -> 70x30 -> 133x24 ->
/// 41x40 -> 100x30; with and without the wide line and the full last line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wide_characters_and_a_full_last_line_resize_as_tmux() {
    let steps = [(70u16, 30u16), (133, 24), (41, 40), (100, 30)];
    for (wide, exact) in [(true, true), (false, true), (true, false), (false, false)] {
        println!("wide line: {wide}, exactly full last line: {exact}");
        resizes_match_tmux(&long_lines_script(wide, exact), (100, 30), &steps).await;
    }
}

/// The script of [`wide_characters_and_a_full_last_line_resize_as_tmux`]:
/// `L{i} `, 40+37*i letters (letter k is `a` + (i+k) mod 26), ` end{i}` for
/// i = 1..5; `wide: ` and 中文字符 x 22 ` end-wide`; then `exact:` and 94
/// `e`s (100 columns) with no newline. It ends printing READY on a line of its
/// own, except where the full line must stay last (its `exact:` marks it).
fn long_lines_script(wide: bool, exact: bool) -> String {
    let mut lines = String::new();
    for i in 1..=5usize {
        let letters: String = (0..40 + 37 * i)
            .map(|k| (b'a' + ((i + k) % 26) as u8) as char)
            .collect();
        lines.push_str(&format!("L{i} {letters} end{i}\n"));
    }
    if wide {
        lines.push_str(&format!("wide: {} end-wide\n", "中文字符".repeat(22)));
    }
    let last = match exact {
        true => r#"printf "exact:%s" "$(printf "e%.0s" $(seq 1 94))""#.to_string(),
        false => "printf 'READY\n'".to_string(),
    };
    format!("printf '{lines}'; {last}; exec sleep 100000")
}

/// Runs `script` in fugue and in tmux at `start` (cols, rows), then resizes
/// both through `steps`, comparing the whole scrollback, the screen and the
/// cursor after each.
async fn resizes_match_tmux(script: &str, start: (u16, u16), steps: &[(u16, u16)]) {
    let daemon = Daemon::start();
    let dir = daemon.dir.path().join("case");
    std::fs::create_dir_all(&dir).unwrap();
    let client = daemon.client().await;
    client.create_session("diff", Some(&dir), vec![]).await.unwrap();
    let mut spec: SpawnSpec = fugue_tests::sh_spec("diff", script);
    spec.size = Some(PaneSize {
        cols: start.0,
        rows: start.1,
    });
    let pane = client.create_pane(spec).await.unwrap().id.to_string();
    let tmux = Tmux::start(&dir, COLS, ROWS);
    let (x, y) = (start.0.to_string(), start.1.to_string());
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "case",
        "-x",
        &x,
        "-y",
        &y,
        "sh",
        "-c",
        script,
    ]);
    tmux.run(&["set-option", "-g", "window-size", "manual"]);
    // The last thing the script prints: READY, or a full line of `exact:`.
    let ready = if script.contains("exact:") { "exact:" } else { "READY" };
    tmux.wait_for("case", ready);
    fugue_tests::wait_for_screen(&client, &pane, ready).await;
    let mut compared = String::new();
    for &(cols, rows) in steps {
        client.resize_pane(&pane, PaneSize { cols, rows }).await.unwrap();
        tmux.run(&[
            "resize-window",
            "-t",
            "case",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
        let fugue_all = daemon.cli(&["capture", "-S", "-", &pane]).ok();
        let tmux_all = tmux.run(&["capture-pane", "-p", "-S", "-", "-t", "case"]);
        assert_eq!(
            fugue_all,
            tmux_all.trim_end(),
            "scrollback and screen differ at {cols}x{rows}{compared}\n--- fugue\n{fugue_all}\n--- tmux\n{tmux_all}"
        );
        let screen = client
            .capture(&pane, CaptureWhat::Screen, (None, None), false, false)
            .await
            .unwrap();
        // The same text can split differently between history and screen.
        let tmux_screen = tmux.run(&["capture-pane", "-p", "-t", "case"]);
        let fugue_screen = screen.lines.join("\n");
        assert_eq!(
            fugue_screen.trim_end(),
            tmux_screen.trim_end(),
            "the screens differ at {cols}x{rows}{compared}"
        );
        let cursor = tmux.run(&["display-message", "-p", "-t", "case", "#{cursor_y} #{cursor_x}"]);
        // tmux departure: a cursor waiting to wrap after a full line is one
        // past the last column in tmux's count; in fugue's, as xterm reports
        // it, on the last column.
        let (y, x) = cursor.trim().split_once(' ').unwrap_or_default();
        let x = x.parse::<u16>().unwrap_or(u16::MAX).min(cols - 1);
        let fugue_cursor = format!("{} {}", screen.cursor_row, screen.cursor_col);
        assert_eq!(
            fugue_cursor,
            format!("{y} {x}"),
            "cursor (row col) differs at {cols}x{rows}{compared}\n--- fugue's screen\n{}",
            screen.lines.join("\n")
        );
        compared.push_str(&format!(", after {cols}x{rows}"));
    }
}
