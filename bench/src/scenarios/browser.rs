//! A page in headless chromium attached to a pane: what it costs the daemon's

use super::{direct, row, Sizes};
use crate::env::{bin, median, percentile, Daemon, Error};
use crate::Row;
use fugue_client::Client;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The browser driver (tests/browser/bench.mjs) and the fugue-web it talks to.
struct Browser {
    web: std::process::Child,
    driver: std::process::Child,
    replies: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Browser {
    /// What the scenario needs that a machine may lack.
    fn missing() -> Option<String> {
        let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/browser/node_modules/playwright-core");
        if !Path::new("/usr/bin/chromium").is_file() {
            return Some("/usr/bin/chromium is not installed".into());
        }
        if !driver.is_dir() {
            return Some("playwright-core is not installed (npm ci in tests/browser)".into());
        }
        None
    }

    fn start(daemon: &Daemon, project: &Path) -> Result<Browser, Error> {
        use std::io::BufRead;
        let mut web = std::process::Command::new(bin("fugue-web")?)
            .args(["--listen", "127.0.0.1:0", "--session", "bench", "--project"])
            .arg(project)
            .arg("--socket")
            .arg(&daemon.socket)
            .env("FUGUE_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("start fugue-web: {e}"))?;
        let mut url = String::new();
        let stdout = web.stdout.take().ok_or("fugue-web's stdout")?;
        std::io::BufReader::new(stdout)
            .read_line(&mut url)
            .map_err(|e| e.to_string())?;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/browser/bench.mjs");
        let mut driver = std::process::Command::new("node")
            .arg(&script)
            .current_dir(script.parent().ok_or("script dir")?)
            .env("FUGUE_WEB_URL", url.trim())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("start node: {e}"))?;
        let replies = std::io::BufReader::new(driver.stdout.take().ok_or("node's stdout")?).lines();
        Ok(Browser { web, driver, replies })
    }

    /// Sends one command to the driver and returns its JSON answer.
    fn ask(&mut self, command: &str) -> Result<serde_json::Value, Error> {
        let stdin = self.driver.stdin.as_mut().ok_or("node's stdin")?;
        writeln!(stdin, "{command}").map_err(|e| e.to_string())?;
        let line = self
            .replies
            .next()
            .ok_or("the browser driver ended")?
            .map_err(|e| e.to_string())?;
        let value: serde_json::Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
        match value.get("error") {
            Some(error) => Err(format!("browser driver: {error}")),
            None => Ok(value),
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The end of its stdin ends the driver (and its browser).
        drop(self.driver.stdin.take());
        let _ = self.driver.wait();
        let _ = self.web.kill();
        let _ = self.web.wait();
    }
}

/// Starts `cat FILE` in `pane` (held at a `read`) and times it to the exit.
async fn timed_cat(client: &Client, pane: &str) -> Result<f64, Error> {
    let started = Instant::now();
    client.write_input(pane, b"\n").await.map_err(|e| e.to_string())?;
    client.wait_for_exit(pane, None).await.map_err(|e| e.to_string())?;
    Ok(started.elapsed().as_secs_f64())
}

/// A page in headless chromium attached to a pane: what it costs the daemon's
/// throughput, and how long a keystroke takes to come back.
pub(super) async fn run(dir: &Path, (file, _last): &(PathBuf, String), sizes: &Sizes) -> Result<Vec<Row>, Error> {
    if let Some(missing) = Browser::missing() {
        let skipped = format!("skipped: {missing}");
        return Ok(vec![row("11 browser", "all", skipped, String::new(), "-", None)]);
    }
    let err = |e: fugue_client::ClientError| e.to_string();
    let daemon = Daemon::start(dir, "web").await?;
    let client = daemon.client().await?;
    let project = dir.join("web-project");
    std::fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    let project = project.canonicalize().map_err(|e| e.to_string())?;
    let session = fugue_web::tabs::fugue_session_name(&project, "bench");
    client
        .create_session(&session, Some(&project), vec![])
        .await
        .map_err(err)?;
    client
        .create_session("web-baseline", Some(&project), vec![])
        .await
        .map_err(err)?;
    let mut browser = Browser::start(&daemon, &project)?;
    let gated_cat = format!("read x; exec cat {}", file.display());

    let (mut attached, mut alone) = (Vec::new(), Vec::new());
    for _ in 0..sizes.rounds {
        // The page's only tab: it attaches (at the page's size), then cat starts.
        let tab = client
            .create_pane(direct(&session, "sh", &["-c", &gated_cat]))
            .await
            .map_err(err)?;
        let id = tab.id.to_string();
        browser.ask(&format!("ready {id}"))?;
        let size = client.pane_status(&id).await.map_err(err)?.size;
        attached.push(timed_cat(&client, &id).await?);
        client.release_pane(&id).await.map_err(err)?;
        // The same at the same size with no client at all.
        let mut spec = direct("web-baseline", "sh", &["-c", &gated_cat]);
        spec.size = Some(size);
        let pane = client.create_pane(spec).await.map_err(err)?.id.to_string();
        alone.push(timed_cat(&client, &pane).await?);
        client.release_pane(&pane).await.map_err(err)?;
    }
    let (with, without) = (median(&mut attached), median(&mut alone));

    let shell = client
        .create_pane(direct(&session, "bash", &["--norc", "--noprofile"]))
        .await
        .map_err(err)?;
    let id = shell.id.to_string();
    browser.ask(&format!("ready {id}"))?;
    let keys = sizes.reactions.min(100);
    let reply = browser.ask(&format!("latency {id} {keys}"))?;
    let numbers = |key: &str| -> Vec<f64> {
        reply[key]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_f64()).collect())
            .unwrap_or_default()
    };
    let (mut echo, mut painted, mut sent) = (numbers("samples_ms"), numbers("painted_ms"), numbers("send_ms"));
    if echo.len() != keys {
        return Err(format!("the browser timed {} keystrokes of {keys}", echo.len()));
    }
    let (p50, p99) = (percentile(&mut echo, 50.0), percentile(&mut echo, 99.0));
    let (paint50, send50) = (percentile(&mut painted, 50.0), percentile(&mut sent, 50.0));
    drop(browser);
    Ok(vec![
        row(
            "11 browser",
            &format!("cat {} MB with a browser tab attached vs none, s", sizes.file_mb),
            format!("{with:.2} ({:.2}x)", with / without),
            format!("none {without:.2}"),
            "<= 1.15x",
            Some(with <= 1.15 * without),
        ),
        row(
            "11 browser",
            &format!("keystroke to echo on the page's socket, p50 (p99), {keys} keys"),
            format!("{p50:.1} ms ({p99:.1} ms)"),
            format!("of which keydown to the page's send: p50 {send50:.1} ms; to the first frame after the echo: p50 {paint50:.1} ms"),
            "p50 < 10 ms",
            Some(p50 < 10.0),
        ),
    ])
}
