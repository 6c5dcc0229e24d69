//! Scenario 12: the same daemon through `--host` (a real sshd on loopback, ssh

use super::{attached_cat, direct, row, Sizes};
use crate::env::{bin, median, percentile, Daemon, Error};
use crate::Row;
use fugue_client::Client;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Scenario 12: the same daemon through `--host` (a real sshd on loopback, ssh
/// with a warm ControlMaster) against the local socket: one request on a
/// connection, a one-shot CLI command, and a `cat` followed by an attached client.
pub(super) async fn run(dir: &Path, (file, last): &(PathBuf, String), sizes: &Sizes) -> Result<Vec<Row>, Error> {
    if !Path::new(fugue_tests::sshd::SSHD).is_file() {
        let skipped = "skipped: no sshd (apt-get install openssh-server)".to_string();
        return Ok(vec![row("12 remote", "all", skipped, String::new(), "-", None)]);
    }
    let sshd = fugue_tests::sshd::Sshd::start();
    let daemon = Daemon::start(dir, "remote").await?;
    let local = daemon.client().await?;
    local
        .create_session("rm", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    for _ in 0..10 {
        local
            .create_pane(direct("rm", "sleep", &["3600"]))
            .await
            .map_err(|e| e.to_string())?;
    }
    let ssh = sshd.fugue_ssh_multiplexed();
    let remote = fugue_client::remote::Remote {
        name: "bench".into(),
        transport: fugue_client::remote::Transport::Ssh {
            destination: "fugue-test".into(),
            port: None,
            ssh_command: Some(ssh.clone()),
        },
        fugue_path: bin("fugue")?.display().to_string(),
        socket: Some(daemon.socket.display().to_string()),
    };
    let far_options = fugue_client::ConnectOptions::default().host(remote);
    let far = Client::connect(far_options.clone()).await.map_err(|e| e.to_string())?;

    // One request on an open connection.
    let calls = sizes.latency_calls / 5;
    let (mut near_us, mut far_us) = (Vec::new(), Vec::new());
    for _ in 0..calls {
        for (client, times) in [(&local, &mut near_us), (&far, &mut far_us)] {
            let started = Instant::now();
            client.list_panes(Some("rm")).await.map_err(|e| e.to_string())?;
            times.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    let (near_p50, far_p50) = (percentile(&mut near_us, 50.0), percentile(&mut far_us, 50.0));

    // One-shot commands: ssh (multiplexed), the remote `fugue proxy`, handshake, one request.
    let fugue_bin = bin("fugue")?;
    let hosts = dir.join("remote-config");
    std::fs::create_dir_all(hosts.join("fugue")).map_err(|e| e.to_string())?;
    std::fs::write(
        hosts.join("fugue/hosts.toml"),
        format!(
            "[hosts.bench]\nssh = \"fugue-test\"\nfugue_path = \"{}\"\nsocket = \"{}\"\n",
            fugue_bin.display(),
            daemon.socket.display()
        ),
    )
    .map_err(|e| e.to_string())?;
    let (mut near_ms, mut far_ms) = (Vec::new(), Vec::new());
    for _ in 0..sizes.cli_runs {
        for (host, times) in [(None, &mut near_ms), (Some("bench"), &mut far_ms)] {
            let mut command = std::process::Command::new(&fugue_bin);
            command
                .arg("--socket")
                .arg(&daemon.socket)
                .env("XDG_CONFIG_HOME", &hosts)
                .env("FUGUE_SSH", &ssh);
            if let Some(host) = host {
                command.args(["--host", host]);
            }
            let started = Instant::now();
            let out = command.arg("ls").output().map_err(|e| e.to_string())?;
            times.push(started.elapsed().as_secs_f64() * 1e3);
            if !out.status.success() {
                return Err(format!("fugue ls failed: {}", String::from_utf8_lossy(&out.stderr)));
            }
        }
    }
    let (near_ls, far_ls) = (median(&mut near_ms), median(&mut far_ms));
    // What ssh itself costs per command on this machine (sshd starts a session).
    let mut ssh_ms = Vec::new();
    for _ in 0..sizes.cli_runs {
        let started = Instant::now();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{ssh} fugue-test true"))
            .output()
            .map_err(|e| e.to_string())?;
        ssh_ms.push(started.elapsed().as_secs_f64() * 1e3);
        if !out.status.success() {
            return Err(format!("ssh true failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    let ssh_true = median(&mut ssh_ms);

    // `cat` with an attached client reading everything, over each connection.
    local
        .create_session("tp", Some(dir), vec![])
        .await
        .map_err(|e| e.to_string())?;
    let (mut near_cat, mut far_cat) = (Vec::new(), Vec::new());
    for _ in 0..sizes.rounds {
        // A fresh watcher each time: a connection's event stream is taken once.
        let near_watcher = daemon.client().await?;
        near_cat.push(attached_cat(&local, &near_watcher, file, last).await?);
        let far_watcher = Client::connect(far_options.clone()).await.map_err(|e| e.to_string())?;
        far_cat.push(attached_cat(&local, &far_watcher, file, last).await?);
    }
    let (near_c, far_c) = (median(&mut near_cat), median(&mut far_cat));
    Ok(vec![
        row(
            "12 remote",
            "ListPanes (10 panes) on one connection, p50",
            format!("{far_p50:.0} us over ssh"),
            format!("local socket {near_p50:.0} us"),
            "reported",
            None,
        ),
        row(
            "12 remote",
            "one-shot `fugue --host ls` (ControlMaster warm), median",
            format!("{far_ls:.1} ms"),
            format!("local `fugue ls` {near_ls:.1} ms; `ssh HOST true` {ssh_true:.1} ms"),
            "reported",
            None,
        ),
        row(
            "12 remote",
            &format!("cat {} MB with an attached reading client, s", sizes.file_mb),
            format!("{far_c:.2} over ssh ({:.2}x)", far_c / near_c),
            format!("local {near_c:.2}"),
            "reported",
            None,
        ),
    ])
}
