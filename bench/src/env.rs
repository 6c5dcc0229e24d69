//! What the scenarios run against: a release `fugued`, a private tmux server, a
//! raw PTY, and readings from /proc.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub type Error = String;

/// The directory of this executable, where the release `fugued` is too.
pub fn bin(name: &str) -> Result<PathBuf, Error> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let path = exe.with_file_name(name);
    match path.is_file() {
        true => Ok(path),
        false => Err(format!(
            "{} is missing; build with `cargo build --release --workspace --bins`",
            path.display()
        )),
    }
}

/// Polls `check` until it gives a value or `deadline` passes.
pub async fn poll<T, F, Fut>(what: &str, deadline: Duration, mut check: F) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = check().await {
            return Ok(v);
        }
        if Instant::now() > end {
            return Err(format!("timed out waiting for {what}"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A `fugued --foreground` on a private socket.
pub struct Daemon {
    pub socket: PathBuf,
    child: Child,
}

impl Daemon {
    pub async fn start(dir: &Path, name: &str) -> Result<Daemon, Error> {
        Self::start_with(dir, name, &[]).await
    }

    /// Starts with extra `fugued` flags.
    pub async fn start_with(dir: &Path, name: &str, args: &[&str]) -> Result<Daemon, Error> {
        Self::start_under(dir, name, args, Command::new(bin("fugued")?)).await
    }

    /// Starts fugued in a network namespace of its own with only loopback up
    /// (`unshare --net`, as root): its panes reach nothing past 127.0.0.1.
    pub async fn start_offline(dir: &Path, name: &str) -> Result<Daemon, Error> {
        let mut command = Command::new("unshare");
        command
            .args(["--net", "--", "sh", "-c", "ip link set lo up && exec \"$0\" \"$@\""])
            .arg(bin("fugued")?);
        Self::start_under(dir, name, &[], command).await
    }

    async fn start_under(dir: &Path, name: &str, args: &[&str], mut command: Command) -> Result<Daemon, Error> {
        let socket = dir.join(format!("{name}.sock"));
        let log_path = dir.join(format!("{name}.log"));
        let log = std::fs::File::create(&log_path).map_err(|e| e.to_string())?;
        let child = command
            .args(["--foreground", "--socket"])
            .arg(&socket)
            .args(args)
            .env("HOME", dir)
            .env("SHELL", "/bin/sh")
            .env("FUGUE_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start fugued: {e}"))?;
        let daemon = Daemon { socket, child };
        let socket = daemon.socket.clone();
        let ready = poll("fugued to listen", Duration::from_secs(10), || {
            let socket = socket.clone();
            async move { std::os::unix::net::UnixStream::connect(&socket).ok() }
        })
        .await;
        if let Err(err) = ready {
            return Err(format!(
                "{err}: {}",
                std::fs::read_to_string(&log_path).unwrap_or_default().trim()
            ));
        }
        Ok(daemon)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub async fn client(&self) -> Result<fugue_client::Client, Error> {
        let options = fugue_client::ConnectOptions::default()
            .socket(&self.socket)
            .autostart(false)
            .client_name("fugue-bench");
        fugue_client::Client::connect(options).await.map_err(|e| e.to_string())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tmux server of our own (`-L`, private TMUX_TMPDIR, no config).
pub struct Tmux {
    name: String,
    dir: PathBuf,
}

impl Tmux {
    pub fn start(dir: &Path, cols: u16, rows: u16, history: u32) -> Result<Tmux, Error> {
        Self::start_in(dir, cols, rows, history, None)
    }

    /// Starts the server in the network namespace of process `netns_of`, when
    /// given (its windows' programs live there; clients connect by socket).
    pub fn start_in(dir: &Path, cols: u16, rows: u16, history: u32, netns_of: Option<u32>) -> Result<Tmux, Error> {
        let tmux = Tmux {
            // A fresh name per server: the previous one may still be exiting.
            name: format!("fugue-bench-{}-{}", std::process::id(), {
                static SERVERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
                SERVERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            }),
            dir: dir.to_path_buf(),
        };
        let mut first = match netns_of {
            Some(pid) => {
                let mut nsenter = Command::new("nsenter");
                nsenter.arg(format!("--net=/proc/{pid}/ns/net")).arg("--").arg("tmux");
                nsenter.args(tmux.command().get_args());
                for (key, value) in tmux.command().get_envs() {
                    match value {
                        Some(value) => nsenter.env(key, value),
                        None => nsenter.env_remove(key),
                    };
                }
                nsenter
            }
            None => tmux.command(),
        };
        let started = first
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "b",
                "-x",
                &cols.to_string(),
                "-y",
                &rows.to_string(),
            ])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("tmux: {e}"))?;
        if !started.status.success() {
            return Err(format!(
                "tmux new-session: {}",
                String::from_utf8_lossy(&started.stderr).trim()
            ));
        }
        tmux.run(&["set-option", "-g", "history-limit", &history.to_string()])?;
        tmux.run(&["set-option", "-g", "remain-on-exit", "off"])?;
        Ok(tmux)
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.name])
            .env("TMUX_TMPDIR", &self.dir)
            .env("TERM", "xterm-256color")
            .env("HOME", &self.dir)
            .env_remove("TMUX")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Result<String, Error> {
        let out = self.command().args(args).output().map_err(|e| format!("tmux: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "tmux {args:?}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub fn server_pid(&self) -> Result<u32, Error> {
        self.run(&["display-message", "-p", "#{pid}"])?
            .trim()
            .parse()
            .map_err(|e| format!("tmux pid: {e}"))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

/// Runs `program args` on a fresh PTY of `cols`x`rows` and drains it; returns when
/// the process exited and its output is read. The baseline: what the kernel allows.
pub fn raw_pty(program: &str, args: &[&str], cols: u16, rows: u16) -> Result<u64, Error> {
    use portable_pty::{CommandBuilder, PtySize};
    let pair = portable_pty::native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| e.to_string())?;
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    let mut child = pair.slave.spawn_command(cmd).map_err(|e| e.to_string())?;
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        match std::io::Read::read(&mut reader, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n as u64,
        }
    }
    child.wait().map_err(|e| e.to_string())?;
    Ok(total)
}

pub use fugue_tests::procfs::{cpu_ms, cpu_us, process_gone, rss_kib, threads};

/// Children of `parent`, and how many of them are zombies.
pub fn children(parent: u32) -> (usize, usize) {
    let children = fugue_tests::procfs::children(parent);
    let zombies = children.iter().filter(|p| fugue_tests::procfs::is_zombie(**p)).count();
    (children.len(), zombies)
}

pub fn median(values: &mut [f64]) -> f64 {
    percentile(values, 50.0)
}

pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * (values.len() - 1) as f64).round() as usize;
    values[rank.min(values.len() - 1)]
}

/// The CPU each of `pids` used per second over `window`, in ms/s, all
/// measured over the same stretch.
pub async fn cpu_rates(pids: &[u32], window: Duration) -> Vec<f64> {
    let before: Vec<u64> = pids.iter().map(|p| cpu_us(*p)).collect();
    let started = Instant::now();
    tokio::time::sleep(window).await;
    let secs = started.elapsed().as_secs_f64();
    pids.iter()
        .zip(before)
        .map(|(pid, before)| cpu_us(*pid).saturating_sub(before) as f64 / 1e3 / secs)
        .collect()
}

/// Samples a process's peak RSS on a thread until stopped.
pub struct PeakRss {
    peak: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PeakRss {
    pub fn start(pid: u32) -> PeakRss {
        use std::sync::atomic::Ordering;
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(rss_kib(pid)));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = {
            let (peak, stop) = (peak.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    peak.fetch_max(rss_kib(pid), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        PeakRss {
            peak,
            stop,
            thread: Some(thread),
        }
    }

    pub fn finish(mut self) -> u64 {
        use std::sync::atomic::Ordering;
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}
