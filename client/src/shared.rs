//! One connection shared by many callers (the MCP bridge's tool calls, the web
//! server's requests), connected on first use and again after the daemon went
//! away (restarted, upgraded). A daemon elsewhere that cannot be reached is
//! tried again only after a backoff (1 s, doubling to 60 s): every call in
//! between is told at once, so a dead host costs no caller its deadline.

use crate::{Client, ClientError, ConnectOptions, Result};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The first wait before a daemon elsewhere is dialled again, and the longest.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MOST: Duration = Duration::from_secs(60);

/// How long connecting to a daemon elsewhere may take: less than
/// [`crate::remote::ASK_WITHIN`], so a black-holed host's failure is
/// remembered (and backed off from) rather than dropped with the question.
const REMOTE_CONNECT_WITHIN: Duration = Duration::from_secs(8);

/// The last failed connect and when the next may be tried.
struct Failed {
    /// Where and why, as the connect said.
    path: std::path::PathBuf,
    reason: String,
    retry_at: Instant,
    wait: Duration,
}

#[derive(Clone)]
pub struct SharedClient {
    options: ConnectOptions,
    client: Arc<RwLock<Option<Client>>>,
    /// Serialises reconnects only: calls clone the connection out of `client`
    /// and never hold a lock across a call. Holds the last failure of a
    /// daemon elsewhere.
    reconnect: Arc<Mutex<Option<Failed>>>,
}

impl SharedClient {
    pub fn new(options: ConnectOptions) -> Self {
        Self {
            options,
            client: Arc::default(),
            reconnect: Arc::default(),
        }
    }

    pub fn options(&self) -> &ConnectOptions {
        &self.options
    }

    /// A live connection, (re)connecting (and starting the daemon, if the
    /// options allow) when there is none.
    pub async fn get(&self) -> Result<Client> {
        if let Some(client) = self.current() {
            return Ok(client);
        }
        let mut failed = self.reconnect.lock().await;
        if let Some(client) = self.current() {
            return Ok(client);
        }
        if let Some(failed) = failed.as_ref().filter(|f| Instant::now() < f.retry_at) {
            return Err(self.backing_off(failed));
        }
        let connect = Client::connect(self.options.clone());
        let connected = match self.options.host {
            None => connect.await,
            Some(_) => tokio::time::timeout(REMOTE_CONNECT_WITHIN, connect)
                .await
                .unwrap_or_else(|_| {
                    Err(ClientError::Connect {
                        path: self.where_to(),
                        reason: format!("no answer within {} s", REMOTE_CONNECT_WITHIN.as_secs()),
                        not_running: false,
                    })
                }),
        };
        match connected {
            Ok(client) => {
                *failed = None;
                *self.client.write().unwrap_or_else(|e| e.into_inner()) = Some(client.clone());
                Ok(client)
            }
            // This machine's daemon is started or found again at once.
            Err(err) if self.options.host.is_none() => Err(err),
            Err(err) => {
                let wait = failed
                    .as_ref()
                    .map_or(BACKOFF_FIRST, |f| (f.wait * 2).min(BACKOFF_MOST));
                let (path, reason) = match &err {
                    ClientError::Connect { path, reason, .. } => (path.clone(), reason.clone()),
                    other => (self.where_to(), other.to_string()),
                };
                *failed = Some(Failed {
                    path,
                    reason,
                    retry_at: Instant::now() + wait,
                    wait,
                });
                Err(err)
            }
        }
    }

    /// The error a call gets while a daemon elsewhere is backed off from.
    fn backing_off(&self, failed: &Failed) -> ClientError {
        let left = failed.retry_at.saturating_duration_since(Instant::now());
        ClientError::Connect {
            path: failed.path.clone(),
            reason: format!(
                "{} (not tried again for {:.0} s)",
                failed.reason,
                left.as_secs_f64().ceil()
            ),
            not_running: false,
        }
    }

    fn where_to(&self) -> std::path::PathBuf {
        self.options
            .host
            .as_ref()
            .map(|remote| std::path::PathBuf::from(&remote.name))
            .unwrap_or_default()
    }

    fn current(&self) -> Option<Client> {
        self.client
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|c| !c.is_closed())
    }
}
