//! A private tmux server: the oracle of the screen tests, and the terminal a
//! person would drive `fugue attach` and `fugue top` from. Its screen is
//! followed through a control-mode client (`Tmux::until`), not polled.

use crate::{process_gone, send_signal, DEADLINE};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A private tmux server for driving `fugue attach` as a person would.
pub struct Tmux {
    name: String,
    dir: PathBuf,
    /// The server's pid: ended by pid too when dropped, since `kill-server`
    /// cannot find a server whose socket directory is already gone.
    server: Option<u32>,
}

impl Tmux {
    /// Starts a server with one session `main` of `cols`x`rows` running `bash --norc`.
    pub fn start(dir: &Path, cols: u16, rows: u16) -> Tmux {
        assert!(
            Command::new("tmux").arg("-V").output().is_ok(),
            "tmux is not installed (.ci/run installs it)"
        );
        let name = format!(
            "fugue-test-{}-{}",
            std::process::id(),
            NEXT_TMUX.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let mut tmux = Tmux {
            name,
            dir: dir.to_path_buf(),
            server: None,
        };
        let size = (cols.to_string(), rows.to_string());
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            &size.0,
            "-y",
            &size.1,
            "bash --norc --noprofile",
        ]);
        tmux.server = tmux.run(&["display-message", "-p", "#{pid}"]).trim().parse().ok();
        tmux
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.name, "-f", "/dev/null"])
            .env("TMUX_TMPDIR", &self.dir)
            .env("TERM", "xterm-256color")
            .env("HOME", &self.dir)
            .env("PS1", "$ ")
            .env_remove("TMUX");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Opens another window running bash; returns its target (`main:N`).
    pub fn new_window(&self) -> String {
        self.run(&[
            "new-window",
            "-t",
            "main",
            "-P",
            "-F",
            "#{session_name}:#{window_index}",
            "bash --norc --noprofile",
        ])
        .trim()
        .to_string()
    }

    /// Types literal text into a window, then presses Enter.
    pub fn type_line(&self, target: &str, text: &str) {
        self.run(&["send-keys", "-t", target, "-l", text]);
        self.run(&["send-keys", "-t", target, "Enter"]);
    }

    pub fn send_keys(&self, target: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", target];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub fn capture(&self, target: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", target])
    }

    /// Waits until the window shows `needle`; returns the screen.
    pub fn wait_for(&self, target: &str, needle: &str) -> String {
        self.until(target, &format!("'{needle}' in tmux window {target}"), |screen| {
            screen.contains(needle).then(|| screen.to_string())
        })
    }

    /// Waits until `check` finds what it wants on `target`'s screen (or
    /// panics with `what` after [`DEADLINE`]). It follows the server through a
    /// control-mode client (`tmux -C`): the screen is captured through that
    /// client, and again only after tmux reports output (`%output`), so no
    /// process is started per look and nothing is looked at on a clock.
    pub fn until<T>(&self, target: &str, what: &str, mut check: impl FnMut(&str) -> Option<T>) -> T {
        // The client hears the output of its own session's panes: attach to
        // the target's (`case` or `main:1` -> `case`, `main`).
        let session = target.split([':', '.']).next().unwrap_or("main");
        let mut control = Control::attach(self, session);
        let end = Instant::now() + DEADLINE;
        loop {
            let screen = control.capture(target, end);
            if let Some(found) = screen.as_deref().and_then(&mut check) {
                return found;
            }
            let left = end.saturating_duration_since(Instant::now());
            if screen.is_none() || left.is_zero() || !control.output_within(left) {
                let last = screen.unwrap_or_else(|| self.capture(target));
                panic!("timed out after {DEADLINE:?} waiting for {what}; the screen:\n{last}");
            }
        }
    }
}

/// What a control-mode client reads: the output of a command it sent (a
/// `%begin`/`%end` block) or a notice that a pane printed something.
enum Said {
    Block(Vec<String>),
    Output,
}

/// A control-mode client of a test's tmux server (`tmux -C attach -f
/// ignore-size`: it never changes the windows' size), detached when dropped.
struct Control {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    said: std::sync::mpsc::Receiver<Said>,
}

impl Control {
    fn attach(tmux: &Tmux, session: &str) -> Control {
        let mut child = tmux
            .command()
            .args(["-C", "attach-session", "-t", session, "-f", "ignore-size"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a tmux control client");
        let stdin = child.stdin.take().expect("its stdin");
        let stdout = child.stdout.take().expect("its stdout");
        let (tx, said) = std::sync::mpsc::channel();
        std::thread::spawn(move || read_control(stdout, tx));
        Control { child, stdin, said }
    }

    /// `target`'s screen, captured through this client; `None` if tmux did not
    /// answer by `end`.
    fn capture(&mut self, target: &str, end: Instant) -> Option<String> {
        use std::io::Write;
        writeln!(self.stdin, "capture-pane -p -t {target}").ok()?;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.said.recv_timeout(left).ok()? {
                Said::Block(lines) => return Some(lines.join("\n") + "\n"),
                Said::Output => continue,
            }
        }
    }

    /// Whether to look again within `left`: a pane printed something (what
    /// printed before this call counts too: tmux's notices wait in the
    /// channel), or a second passed without a notice. (That second is a
    /// safety net, not the clock the wait runs on: a change tmux reports no
    /// output for, such as a window's size, is still seen; a look costs a
    /// line on this client, no process.)
    fn output_within(&mut self, left: Duration) -> bool {
        let end = Instant::now() + left.min(Duration::from_secs(1));
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.said.recv_timeout(left) {
                Ok(Said::Output) => return self.settled(),
                Ok(Said::Block(_)) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return true,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    /// After a notice, the notices that follow within 20 ms of each other
    /// (at most a second of them): a program draws a line in several writes,
    /// and a look between them would see half of it.
    fn settled(&mut self) -> bool {
        let end = Instant::now() + Duration::from_secs(1);
        while Instant::now() < end {
            match self.said.recv_timeout(Duration::from_millis(20)) {
                Ok(_) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return true,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
        true
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads a control client's lines into what it said: blocks of commands this
/// client sent (`%begin TIME NUMBER 1`; flag 0 is tmux's own, the attach) and
/// `%output` notices; other notices are of no use here.
fn read_control(stdout: std::process::ChildStdout, tx: std::sync::mpsc::Sender<Said>) {
    use std::io::BufRead;
    let mut block: Option<Vec<String>> = None;
    let mut ours = false;
    for line in std::io::BufReader::new(stdout).split(b'\n') {
        let Ok(line) = line else { return };
        let line = String::from_utf8_lossy(&line).into_owned();
        if let Some(lines) = block.as_mut() {
            if line.starts_with("%end ") || line.starts_with("%error ") {
                let lines = block.take().unwrap_or_default();
                if ours && tx.send(Said::Block(lines)).is_err() {
                    return;
                }
            } else {
                lines.push(line);
            }
            continue;
        }
        if let Some(begin) = line.strip_prefix("%begin ") {
            ours = begin.split_whitespace().nth(2) == Some("1");
            block = Some(Vec::new());
        } else if line.starts_with("%output ") && tx.send(Said::Output).is_err() {
            return;
        }
    }
}

static NEXT_TMUX: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
        if let Some(pid) = self.server.filter(|pid| !process_gone(*pid)) {
            send_signal(pid, libc::SIGTERM);
        }
    }
}
