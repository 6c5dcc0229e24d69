//! One connection shared by many callers (the MCP bridge's tool calls, the web
//! server's requests), connected on first use and again after the daemon went
//! away (restarted, upgraded).

use crate::{Client, ConnectOptions, Result};
use std::sync::{Arc, RwLock};
use tokio::sync::Mutex;

#[derive(Clone)]
pub struct SharedClient {
    options: ConnectOptions,
    client: Arc<RwLock<Option<Client>>>,
    /// Serialises reconnects only: calls clone the connection out of `client`
    /// and never hold a lock across a call.
    reconnect: Arc<Mutex<()>>,
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
        let _one_at_a_time = self.reconnect.lock().await;
        if let Some(client) = self.current() {
            return Ok(client);
        }
        let client = Client::connect(self.options.clone()).await?;
        *self.client.write().unwrap_or_else(|e| e.into_inner()) = Some(client.clone());
        Ok(client)
    }

    fn current(&self) -> Option<Client> {
        self.client
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|c| !c.is_closed())
    }
}
