//! The fleet: the daemons fugue is to show, found where they run instead of
//! kept by hand. Sources are `[[fleet]]` tables of the hosts file:
//!
//! ```toml
//! [[fleet]]
//! kind = "docker"                 # or "podman": running containers with a label
//! label = "fugue.enable=true"
//!
//! [[fleet]]
//! kind = "ssh"                    # the hosts file's [hosts], as --all-hosts
//! ```
//!
//! With no `[[fleet]]` table the fleet is the hosts file's hosts. The engine is
//! asked through its own CLI in the user's environment (as for `docker://`), and
//! followed through its event stream (`docker events`). No source is dialled
//! all at once: at most [`FLEET_MAX`] endpoints are listed, and asking them is
//! bounded as any asking of many daemons is (`remote::ask_each`).

use crate::remote::{self, Engine, Remote, Transport};
use serde::Deserialize;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// The most endpoints a fleet lists; more that match are counted, not listed.
pub const FLEET_MAX: usize = 500;
/// How long an engine gets to list what matches.
const LIST_WITHIN: Duration = Duration::from_secs(20);

/// One `[[fleet]]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Source {
    /// Running containers of the local Docker engine with `label`
    /// (`KEY=VALUE`, or `KEY` for any value).
    Docker { label: String },
    /// The same on Podman.
    Podman { label: String },
    /// Running pods matching a label `selector` in `namespaces`, through the
    /// user's kubectl (its kubeconfig, `context` or the current one); reached
    /// as `k8s://[CONTEXT/]NAMESPACE/POD[:CONTAINER]`.
    Kubernetes {
        selector: String,
        namespaces: Vec<String>,
        #[serde(default)]
        context: Option<String>,
        #[serde(default)]
        container: Option<String>,
    },
    /// The hosts file's hosts.
    Ssh,
}

impl Source {
    /// How it reads in a listing: `docker label fugue.enable=true`.
    pub fn describe(&self) -> String {
        match self {
            Source::Docker { label } => format!("docker label {label}"),
            Source::Podman { label } => format!("podman label {label}"),
            Source::Kubernetes { selector, .. } => format!("pods {selector}"),
            Source::Ssh => "hosts file".to_string(),
        }
    }

    fn check(&self) -> Result<(), String> {
        match self {
            Source::Docker { label } | Source::Podman { label } => check_label(label),
            Source::Kubernetes {
                selector,
                namespaces,
                context,
                container,
            } => {
                check_label(selector)?;
                if namespaces.is_empty() {
                    return Err("a kubernetes fleet source needs namespaces = [\"NAMESPACE\", ...]".into());
                }
                // A context may hold `/` and `:` (EKS names contexts after ARNs).
                let context_ok = context.as_deref().is_none_or(crate::remote::is_plain_word);
                let names = namespaces.iter().chain(container);
                let bad = names
                    .into_iter()
                    .find(|n| !crate::remote::is_kube_name(n))
                    .or(context.as_ref().filter(|_| !context_ok));
                match bad {
                    Some(bad) => Err(format!(
                        "bad name '{}' in a kubernetes fleet source",
                        crate::protocol::limits::clean_label(bad, 80)
                    )),
                    None => Ok(()),
                }
            }
            Source::Ssh => Ok(()),
        }
    }
}

/// A label filter: printable, no spaces, not an option, as the engine takes it.
fn check_label(label: &str) -> Result<(), String> {
    let ok = !label.is_empty()
        && label.len() <= 256
        && !label.starts_with('-')
        && !label.starts_with('=')
        && label.chars().all(|c| c.is_ascii_graphic());
    match ok {
        true => Ok(()),
        false => Err(format!(
            "bad fleet label '{}'; use KEY or KEY=VALUE, e.g. fugue.enable=true",
            crate::protocol::limits::clean_label(label, 80)
        )),
    }
}

/// A daemon of the fleet and the source that found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub remote: Remote,
    pub source: String,
}

/// What the sources found.
#[derive(Debug, Default)]
pub struct Found {
    pub endpoints: Vec<Endpoint>,
    /// Endpoints that matched beyond [`FLEET_MAX`]: counted, not listed.
    pub over: usize,
    /// Sources that could not be asked, each said on one line.
    pub problems: Vec<String>,
}

/// The fleet's sources: the hosts file's `[[fleet]]` tables, else its hosts.
pub fn sources() -> Result<Vec<Source>, String> {
    let sources = remote::fleet_sources()?;
    for source in &sources {
        source.check()?;
    }
    Ok(match sources.is_empty() {
        true => vec![Source::Ssh],
        false => sources,
    })
}

/// Asks every source what it has now (engines together); bounded by
/// [`FLEET_MAX`]. A source that fails is a problem, not an error: the others
/// are still listed.
pub async fn discover(sources: &[Source]) -> Found {
    let asked = futures::future::join_all(sources.iter().map(list_source)).await;
    let mut found = Found::default();
    for (source, listed) in sources.iter().zip(asked) {
        match listed {
            Ok(endpoints) => {
                for endpoint in endpoints {
                    let known = found
                        .endpoints
                        .iter()
                        .any(|e| e.remote.describe() == endpoint.remote.describe());
                    if known {
                        continue;
                    }
                    match found.endpoints.len() < FLEET_MAX {
                        true => found.endpoints.push(endpoint),
                        false => found.over += 1,
                    }
                }
            }
            Err(why) => found.problems.push(format!("{}: {why}", source.describe())),
        }
    }
    found
}

async fn list_source(source: &Source) -> Result<Vec<Endpoint>, String> {
    match source {
        Source::Ssh => Ok(remote::all_hosts()?
            .into_iter()
            .map(|remote| Endpoint {
                remote,
                source: source.describe(),
            })
            .collect()),
        Source::Docker { label } => list_containers(Engine::Docker, label, source).await,
        Source::Podman { label } => list_containers(Engine::Podman, label, source).await,
        Source::Kubernetes {
            selector,
            namespaces,
            context,
            container,
        } => {
            let mut endpoints = Vec::new();
            for namespace in namespaces {
                for pod in list_pods(context.as_deref(), namespace, selector).await? {
                    endpoints.push(Endpoint {
                        remote: pod_remote(context.as_deref(), namespace, &pod, container.as_deref()),
                        source: source.describe(),
                    });
                }
            }
            Ok(endpoints)
        }
    }
}

/// The running pods of `namespace` that match `selector`. kubectl lists them
/// all (the API server pages for it); only names and phases come back.
async fn list_pods(context: Option<&str>, namespace: &str, selector: &str) -> Result<Vec<String>, String> {
    let mut args = Vec::new();
    if let Some(context) = context {
        args.extend(["--context", context]);
    }
    args.extend([
        "get",
        "pods",
        "--namespace",
        namespace,
        "--selector",
        selector,
        "--output",
        "jsonpath={range .items[*]}{.metadata.name} {.status.phase}{\"\\n\"}{end}",
    ]);
    let listed = crate::remote::ask_tool("kubectl", &args, LIST_WITHIN).await?;
    Ok(listed
        .lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(name, phase)| *phase == "Running" && crate::remote::is_kube_name(name))
        .map(|(name, _)| name.to_string())
        .collect())
}

fn pod_remote(context: Option<&str>, namespace: &str, pod: &str, container: Option<&str>) -> Remote {
    let address = format!(
        "k8s://{}{namespace}/{pod}{}",
        context.map(|c| format!("{c}/")).unwrap_or_default(),
        container.map(|c| format!(":{c}")).unwrap_or_default()
    );
    Remote {
        name: address,
        transport: Transport::Kubernetes {
            context: context.map(str::to_string),
            namespace: namespace.to_string(),
            pod: pod.to_string(),
            container: container.map(str::to_string),
        },
        fugue_path: "fugue".to_string(),
        socket: None,
    }
}

/// The running containers with `label`, as `docker://NAME` endpoints.
async fn list_containers(engine: Engine, label: &str, source: &Source) -> Result<Vec<Endpoint>, String> {
    let filter = format!("label={label}");
    let names = engine
        .ask(&["ps", "--filter", &filter, "--format", "{{.Names}}"], LIST_WITHIN)
        .await?;
    Ok(names
        .lines()
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| Endpoint {
            remote: container_remote(engine, name),
            source: source.describe(),
        })
        .collect())
}

fn container_remote(engine: Engine, name: &str) -> Remote {
    let scheme = match engine {
        Engine::Docker => "docker",
        Engine::Podman => "podman",
    };
    Remote {
        name: format!("{scheme}://{name}"),
        transport: Transport::Container {
            engine,
            container: name.to_string(),
        },
        fugue_path: "fugue".to_string(),
        socket: None,
    }
}

/// A change the engine reported: a container with the label started or stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Added(Endpoint),
    Removed(Endpoint),
}

/// Every endpoint of the fleet with its panes (the overview of each daemon),
/// asked as any asking of many daemons is: at most 32 together, each within
/// 10 s. An endpoint with no daemon says so; none is started.
pub async fn overview() -> Result<crate::views::FleetView, String> {
    let sources = sources()?;
    let found = discover(&sources).await;
    let asked = remote::ask_each(found.endpoints.clone(), |endpoint| async move {
        let options = crate::ConnectOptions::default()
            .client_name("fugue-web")
            .host(endpoint.remote)
            .autostart(false);
        let client = crate::Client::connect(options).await.map_err(|e| e.to_string())?;
        client.overview(None).await.map_err(|e| e.to_string())
    })
    .await;
    let endpoints = asked
        .into_iter()
        .map(|(endpoint, answer)| {
            let (panes, error) = match answer {
                Ok(panes) => (panes.iter().map(crate::views::OverviewView::from).collect(), None),
                Err(why) => (Vec::new(), Some(why)),
            };
            crate::views::FleetEndpointView {
                endpoint: endpoint.remote.name,
                source: endpoint.source,
                error,
                panes,
            }
        })
        .collect();
    Ok(crate::views::FleetView {
        endpoints,
        over: found.over,
        problems: found.problems,
    })
}

/// Follows a source: a container source through the engine's event stream
/// (every start and end of a container with its label), a Kubernetes source
/// through a watch of its pods per namespace (a pod that turns Running, one
/// that stops running or is deleted), as they happen, until the streams end or
/// the receiver is dropped. `None` for a source with no events (ssh).
pub fn follow(source: &Source) -> Option<tokio::sync::mpsc::Receiver<Result<Change, String>>> {
    let (send, receive) = tokio::sync::mpsc::channel(64);
    match source {
        Source::Docker { label } => follow_engine(Engine::Docker, label.clone(), source.describe(), send),
        Source::Podman { label } => follow_engine(Engine::Podman, label.clone(), source.describe(), send),
        Source::Kubernetes {
            selector,
            namespaces,
            context,
            container,
        } => {
            for namespace in namespaces {
                let pods = WatchedPods {
                    context: context.clone(),
                    namespace: namespace.clone(),
                    selector: selector.clone(),
                    container: container.clone(),
                    described: source.describe(),
                };
                tokio::spawn(pods.follow(send.clone()));
            }
        }
        Source::Ssh => return None,
    }
    Some(receive)
}

/// A program whose output lines are followed as they come (`docker events`,
/// `kubectl get --watch`); killed when dropped.
struct Followed {
    child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    what: String,
}

impl Followed {
    /// Runs `program ARGS`; `verb` names it in the message when it ends (`get`, `events`).
    fn start(program: &str, verb: &str, args: &[String]) -> Result<Followed, String> {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        let stdout = child.stdout.take().ok_or_else(|| format!("{program} gave no output"))?;
        Ok(Followed {
            child,
            lines: tokio::io::BufReader::new(stdout).lines(),
            what: format!("{program} {verb}"),
        })
    }

    /// The next line; `None` once the program's output ends. A line longer
    /// than any the engine writes is skipped.
    async fn next(&mut self) -> Option<String> {
        loop {
            let line = self.lines.next_line().await.ok()??;
            if line.len() <= 1024 {
                return Some(line);
            }
        }
    }

    /// Why it ended: the first line it said on stderr, if any.
    async fn ended(mut self) -> String {
        let mut said = String::new();
        if let Some(stderr) = self.child.stderr.take() {
            use tokio::io::AsyncReadExt;
            let _ = stderr.take(4096).read_to_string(&mut said).await;
        }
        match said.lines().next() {
            Some(first) => format!("{} ended: {first}", self.what),
            None => format!("{} ended", self.what),
        }
    }
}

fn follow_engine(
    engine: Engine,
    label: String,
    described: String,
    send: tokio::sync::mpsc::Sender<Result<Change, String>>,
) {
    tokio::spawn(async move {
        let args: Vec<String> = [
            "events",
            "--filter",
            "type=container",
            "--filter",
            &format!("label={label}"),
            "--filter",
            "event=start",
            "--filter",
            "event=die",
            "--format",
            "{{.Action}} {{.Actor.Attributes.name}}",
        ]
        .map(String::from)
        .to_vec();
        let mut followed = match Followed::start(engine.program(), "events", &args) {
            Ok(followed) => followed,
            Err(why) => {
                let _ = send.send(Err(why)).await;
                return;
            }
        };
        while let Some(line) = followed.next().await {
            let Some((action, name)) = line.split_once(' ') else {
                continue;
            };
            if name.is_empty() || name.len() > 255 {
                continue;
            }
            let endpoint = Endpoint {
                remote: container_remote(engine, name),
                source: described.clone(),
            };
            let change = match action {
                "start" => Change::Added(endpoint),
                "die" => Change::Removed(endpoint),
                _ => continue,
            };
            if send.send(Ok(change)).await.is_err() {
                return;
            }
        }
        let _ = send.send(Err(followed.ended().await)).await;
    });
}

/// One namespace's pods of a Kubernetes source, watched.
struct WatchedPods {
    context: Option<String>,
    namespace: String,
    selector: String,
    container: Option<String>,
    described: String,
}

impl WatchedPods {
    /// `kubectl get pods --watch` with its events: the pods there now come as
    /// ADDED, then every change. A pod is in the fleet while its phase is
    /// Running; each entry and exit is sent once.
    async fn follow(self, send: tokio::sync::mpsc::Sender<Result<Change, String>>) {
        let mut args: Vec<String> = Vec::new();
        if let Some(context) = &self.context {
            args.extend(["--context".into(), context.clone()]);
        }
        args.extend(
            [
                "get",
                "pods",
                "--namespace",
                &self.namespace,
                "--selector",
                &self.selector,
                "--watch",
                "--output-watch-events",
                "--output",
                "jsonpath={.type} {.object.metadata.name} {.object.status.phase}{\"\\n\"}",
            ]
            .map(String::from),
        );
        let mut followed = match Followed::start("kubectl", "get pods --watch", &args) {
            Ok(followed) => followed,
            Err(why) => {
                let _ = send.send(Err(why)).await;
                return;
            }
        };
        let mut running = std::collections::HashSet::new();
        while let Some(line) = followed.next().await {
            let mut words = line.split(' ');
            let (Some(kind), Some(name)) = (words.next(), words.next()) else {
                continue;
            };
            if !remote::is_kube_name(name) {
                continue;
            }
            let now_running = kind != "DELETED" && words.next() == Some("Running");
            let change = match (now_running, running.contains(name)) {
                // Past the bound a pod is not followed (the listing counts them).
                (true, false) if running.len() < FLEET_MAX => {
                    running.insert(name.to_string());
                    Change::Added(self.endpoint(name))
                }
                (false, true) => {
                    running.remove(name);
                    Change::Removed(self.endpoint(name))
                }
                _ => continue,
            };
            if send.send(Ok(change)).await.is_err() {
                return;
            }
        }
        let _ = send.send(Err(followed.ended().await)).await;
    }

    fn endpoint(&self, pod: &str) -> Endpoint {
        Endpoint {
            remote: pod_remote(self.context.as_deref(), &self.namespace, pod, self.container.as_deref()),
            source: self.described.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_tables_read_as_sources_and_bad_ones_are_refused() {
        #[derive(Deserialize)]
        struct File {
            fleet: Vec<Source>,
        }
        let file: File = toml::from_str(
            "[[fleet]]\nkind = \"docker\"\nlabel = \"fugue.enable=true\"\n[[fleet]]\nkind = \"ssh\"\n[[fleet]]\nkind = \"podman\"\nlabel = \"team\"\n",
        )
        .unwrap();
        assert_eq!(
            file.fleet,
            [
                Source::Docker {
                    label: "fugue.enable=true".into()
                },
                Source::Ssh,
                Source::Podman { label: "team".into() }
            ]
        );
        for bad in ["", "--all", "a b", "=x"] {
            let err = Source::Docker { label: bad.into() }.check().unwrap_err();
            assert!(err.contains("bad fleet label"), "{bad}: {err}");
        }
        let unknown = toml::from_str::<File>("[[fleet]]\nkind = \"nomad\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(unknown.contains("nomad"), "{unknown}");
    }
}
