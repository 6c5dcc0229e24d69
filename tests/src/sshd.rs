//! A real OpenSSH server for the remote-host tests: Debian's `sshd` on a free
//! loopback port, with a host key and a client key made for the test and the
//! current user allowed in with that key alone. `ssh -F CONFIG fugue-test`
//! reaches it, so `FUGUE_SSH` is all fugue needs to use it.

use crate::{private_dir, send_signal, wait_until, DEADLINE};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    /// An ssh client config whose `Host fugue-test` is this server.
    pub client_config: PathBuf,
    child: Child,
}

impl Sshd {
    /// Starts the server; panics with what to install when sshd is missing.
    ///
    /// Its sessions have `FUGUE_PROXY_NO_START` set, so no `fugue proxy` there
    /// starts a daemon: a client still running when its test ends (an MCP
    /// bridge is not waited for) could open a session just before, whose proxy
    /// then runs after the test's daemon is killed and leaves a new one on the
    /// test's socket. [`Sshd::start_autostarting`] is the server as it comes.
    pub fn start() -> Sshd {
        Self::start_with(true)
    }

    /// A server whose `fugue proxy` starts the host's daemon when a client
    /// may start one, as on a real host.
    pub fn start_autostarting() -> Sshd {
        Self::start_with(false)
    }

    fn start_with(no_start: bool) -> Sshd {
        assert!(
            Path::new(SSHD).is_file(),
            "{SSHD} is missing: the README's test command installs it (apt-get install openssh-server)"
        );
        let dir = private_dir();
        let path = |name: &str| dir.path().join(name);
        for key in ["host_key", "id"] {
            let made = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(path(key))
                .status()
                .expect("ssh-keygen");
            assert!(made.success(), "ssh-keygen failed");
        }
        std::fs::copy(path("id.pub"), path("authorized_keys")).expect("authorized_keys");
        // sshd run as root wants its privilege separation directory.
        if rustix::process::getuid().is_root() {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let port = free_port();
        let user = current_user();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nPidFile {}\nAuthorizedKeysFile {}\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nAllowUsers {user}\n\
             PrintMotd no\nLogLevel ERROR\nSetEnv XDG_STATE_HOME={}{}\n",
            path("host_key").display(),
            path("sshd.pid").display(),
            path("authorized_keys").display(),
            // A daemon started on the host keeps its records here, not in the
            // user's home.
            path("state").display(),
            match no_start {
                true => " FUGUE_PROXY_NO_START=1",
                false => "",
            },
        );
        std::fs::write(path("sshd_config"), config).expect("sshd_config");
        let client_config = path("ssh_config");
        std::fs::write(
            &client_config,
            format!(
                "Host fugue-test\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {}\n  \
                 IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  \
                 BatchMode yes\n  LogLevel ERROR\n",
                path("id").display()
            ),
        )
        .expect("ssh_config");
        let child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(path("sshd_config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sshd");
        // Polled: sshd -D says nothing when it listens (no readiness message we can read).
        wait_until("sshd to listen", DEADLINE, || {
            std::net::TcpStream::connect(("127.0.0.1", port)).ok().map(|_| ())
        });
        Sshd {
            dir,
            port,
            client_config,
            child,
        }
    }

    /// `FUGUE_SSH` for fugue: ssh with this server's client config.
    pub fn fugue_ssh(&self) -> String {
        format!("ssh -F {}", self.client_config.display())
    }

    /// [`Sshd::fugue_ssh`] through a shared master connection (ControlMaster),
    /// as people set it up to make connections after the first cheap.
    pub fn fugue_ssh_multiplexed(&self) -> String {
        format!(
            "{} -o ControlMaster=auto -o ControlPath={}/cm-%C -o ControlPersist=60",
            self.fugue_ssh(),
            self.dir.path().display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // The listener first, so that a client still running (an MCP bridge
        // reconnects at once) cannot open a new master connection once the
        // others are ended, and reach the host through it later.
        send_signal(self.child.id(), libc::SIGTERM);
        let _ = self.child.wait();
        // A master connection outlives its clients (ControlPersist): end it.
        // (Its process title names its control path, in this directory.)
        let _ = Command::new("pkill").arg("-f").arg(self.dir.path()).status();
    }
}

/// A loopback port nothing listens on (now).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("local addr").port()
}

fn current_user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
