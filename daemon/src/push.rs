//! Web Push (RFC 8030), sent by fugued itself: one sender whether or not a page
//! is open, so two fugue-web processes never push twice.
//!
//! - **The key**: a VAPID key pair (RFC 8292), made once and kept in
//!   `<state>.vapid.key` (mode 600); pages subscribe with its public half.
//! - **Subscriptions** (`<state>.push.json`): a browser's endpoint and keys.
//!   An endpoint must be https on a public host (every address it resolves to
//!   public), so a subscription cannot make fugued post to a local service;
//!   loopback http only with `FUGUE_TEST_PUSH_LOOPBACK=1` in fugued's
//!   environment (the tests' push service).
//! - **Messages**: aes128gcm (RFC 8291, `web-push-native` on RustCrypto),
//!   signed with the VAPID key, with TTL and urgency. A 404 or 410 forgets the
//!   subscription; other failures are retried once. Each delivery runs on a
//!   thread of its own, [`MAX_IN_FLIGHT`] at most, so a push service that hangs
//!   delays no other subscription, the daemon or a client.
//! - **Action tokens**: a permission push carries one token to approve and
//!   one to deny, bound to that pane, prompt and answer, kept hashed. The first
//!   one used answers (under `AnswerPermission`'s guards) and ends both; they
//!   end too when the prompt does, and after [`GRANT_TTL_MS`].

use crate::notify::NotifyEvent;
use crate::sync::lock;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use fugue_protocol::devices::{PushSubscribed, PushSubscription, VapidKey, MAX_PUSH_SUBSCRIPTIONS};
use fugue_protocol::{now_ms, ErrorCode, ErrorReply, PaneId, PermissionAnswer};
use p256::ecdsa::signature::Signer;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Deliveries under way at once; past it a push is dropped (and logged).
pub const MAX_IN_FLIGHT: usize = 16;
/// One delivery's time, every try together.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
const TRIES: u32 = 2;
/// Action tokens kept at once (the oldest go first).
const MAX_GRANTS: usize = 256;
/// An action token's life at most (it ends sooner with its prompt).
pub const GRANT_TTL_MS: u64 = 60 * 60 * 1000;
/// A program's notifications pushed per pane per minute at most (OSC 9/777/99
/// cost a program one write each).
const NOTIFICATIONS_PER_MINUTE: usize = 3;
/// Characters of a prompt's first line in a push.
const PROMPT_CHARS: usize = 160;
/// The plaintext a push may carry: 4096 bytes less aes128gcm's header and tag.
pub const MAX_PAYLOAD_BYTES: usize = 3800;
/// The VAPID JWT's life (RFC 8292 caps it at 24 hours).
const JWT_TTL_SECS: u64 = 12 * 60 * 60;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Subscription {
    endpoint: String,
    p256dh: String,
    auth: String,
    device: Option<String>,
    content_free: bool,
}

/// What one action token answers.
#[derive(Clone, Debug)]
pub struct Grant {
    hash: String,
    pub pane: PaneId,
    pub prompt_id: String,
    pub answer: PermissionAnswer,
    expires_ms: u64,
}

/// How a webpush sink sends (its `[[notify]]` table).
#[derive(Clone, Debug, PartialEq)]
pub struct PushOptions {
    /// Every push of this sink says only that something needs the person.
    pub content_free: bool,
    /// The VAPID `sub` claim: how a push service reaches whoever runs fugued.
    pub contact: String,
}

impl Default for PushOptions {
    fn default() -> Self {
        Self {
            content_free: false,
            contact: "mailto:fugue@localhost".into(),
        }
    }
}

pub struct Push {
    /// `None`: the kernel gave no randomness; push is off.
    key: Option<p256::SecretKey>,
    file: Option<PathBuf>,
    subscriptions: Mutex<Vec<Subscription>>,
    grants: Mutex<Vec<Grant>>,
    /// Recent program notifications pushed, per pane (Unix ms).
    notified: Mutex<HashMap<PaneId, VecDeque<u64>>>,
    in_flight: AtomicUsize,
    allow_loopback: bool,
}

impl Push {
    /// Reads (or makes) the key and reads the subscriptions kept beside
    /// `state` (the records' database); with no state, both live in memory.
    pub fn open(state: Option<&std::path::Path>) -> Arc<Self> {
        let key_file = state.map(|s| s.with_extension("vapid.key"));
        let key = key_file.as_deref().and_then(read_key).or_else(|| {
            let key = new_key()?;
            if let Some(file) = &key_file {
                let encoded = URL_SAFE_NO_PAD.encode(key.to_bytes());
                if let Err(err) = crate::private_file::write(file, encoded.as_bytes()) {
                    tracing::warn!(path = %file.display(), %err, "cannot keep the VAPID key; subscriptions end with this daemon");
                }
            }
            Some(key)
        });
        if key.is_none() {
            tracing::warn!("cannot make a VAPID key; push is off");
        }
        let file = state.map(|s| s.with_extension("push.json"));
        let subscriptions = file
            .as_deref()
            .and_then(crate::private_file::read_json)
            .unwrap_or_default();
        Arc::new(Self {
            key,
            file,
            subscriptions: Mutex::new(subscriptions),
            grants: Mutex::new(Vec::new()),
            notified: Mutex::new(HashMap::new()),
            in_flight: AtomicUsize::new(0),
            allow_loopback: std::env::var_os("FUGUE_TEST_PUSH_LOOPBACK").is_some_and(|v| v == "1"),
        })
    }

    pub fn key(&self) -> Result<VapidKey, ErrorReply> {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        let key = self
            .key
            .as_ref()
            .ok_or_else(|| ErrorReply::internal("push is off: fugued could not make a VAPID key"))?;
        Ok(VapidKey {
            public_key: URL_SAFE_NO_PAD.encode(key.public_key().to_encoded_point(false).as_bytes()),
        })
    }

    fn save(&self, subscriptions: &[Subscription]) {
        if let Some(file) = &self.file {
            crate::private_file::write_json(file, &subscriptions);
        }
    }

    pub fn has_subscriptions(&self) -> bool {
        !lock(&self.subscriptions).is_empty()
    }

    /// Push subscriptions of `device`.
    pub fn count_of(&self, device: &str) -> u32 {
        lock(&self.subscriptions)
            .iter()
            .filter(|s| s.device.as_deref() == Some(device))
            .count() as u32
    }

    /// Keeps `subscription` (replacing one with its endpoint), once its
    /// endpoint and keys are checked. Resolves the endpoint's host: call off
    /// the runtime's workers.
    pub fn subscribe(
        &self,
        subscription: PushSubscription,
        device: Option<String>,
        content_free: bool,
    ) -> Result<PushSubscribed, ErrorReply> {
        check_endpoint(&subscription.endpoint, self.allow_loopback).map_err(ErrorReply::invalid)?;
        user_agent_keys(&subscription.p256dh, &subscription.auth).map_err(ErrorReply::invalid)?;
        let mut subscriptions = lock(&self.subscriptions);
        subscriptions.retain(|s| s.endpoint != subscription.endpoint);
        if subscriptions.len() >= MAX_PUSH_SUBSCRIPTIONS {
            return Err(ErrorReply::new(
                ErrorCode::LimitReached,
                format!("{MAX_PUSH_SUBSCRIPTIONS} push subscriptions are kept already; revoke a device first"),
            ));
        }
        let kept = Subscription {
            endpoint: subscription.endpoint,
            p256dh: subscription.p256dh,
            auth: subscription.auth,
            device,
            content_free,
        };
        let reply = PushSubscribed {
            endpoint: kept.endpoint.clone(),
            device: kept.device.clone(),
            content_free,
        };
        subscriptions.push(kept);
        self.save(&subscriptions);
        tracing::info!(device = ?reply.device, content_free, "push subscription kept");
        Ok(reply)
    }

    pub fn unsubscribe(&self, endpoint: &str) -> bool {
        let mut subscriptions = lock(&self.subscriptions);
        let before = subscriptions.len();
        subscriptions.retain(|s| s.endpoint != endpoint);
        let removed = subscriptions.len() != before;
        if removed {
            self.save(&subscriptions);
        }
        removed
    }

    /// Forgets every subscription of a revoked device.
    pub fn forget_device(&self, device: &str) {
        let mut subscriptions = lock(&self.subscriptions);
        subscriptions.retain(|s| s.device.as_deref() != Some(device));
        self.save(&subscriptions);
    }

    /// The grant `token` carries, used up: the first use of either of a
    /// prompt's tokens ends both.
    pub fn take_grant(&self, token: &str) -> Result<Grant, ErrorReply> {
        let wanted = crate::devices::hash(token);
        let now = now_ms();
        let mut grants = lock(&self.grants);
        grants.retain(|g| g.expires_ms > now);
        let found = grants
            .iter()
            .position(|g| fugue_protocol::secret::matches(&g.hash, &wanted));
        let Some(at) = found else {
            return Err(ErrorReply::new(
                ErrorCode::PermissionDenied,
                "this action was used already, or its prompt ended: open fugue to answer",
            ));
        };
        let grant = grants.remove(at);
        grants.retain(|g| !(g.pane == grant.pane && g.prompt_id == grant.prompt_id));
        Ok(grant)
    }

    /// Ends the action tokens of `pane` but those of `prompt_id` (the prompt on
    /// screen now, if any).
    pub fn prompt_ended(&self, pane: PaneId, prompt_id: Option<&str>) {
        lock(&self.grants).retain(|g| g.pane != pane || Some(g.prompt_id.as_str()) == prompt_id);
    }

    /// Two tokens (approve, deny) for the prompt a push shows.
    fn grant(&self, pane: PaneId, prompt_id: &str) -> Option<(String, String)> {
        let approve = fugue_protocol::secret::random_hex(32).ok()?;
        let deny = fugue_protocol::secret::random_hex(32).ok()?;
        let expires_ms = now_ms() + GRANT_TTL_MS;
        let mut grants = lock(&self.grants);
        for (token, answer) in [(&approve, PermissionAnswer::Approve), (&deny, PermissionAnswer::Deny)] {
            if grants.len() >= MAX_GRANTS {
                grants.remove(0);
            }
            grants.push(Grant {
                hash: crate::devices::hash(token),
                pane,
                prompt_id: prompt_id.to_string(),
                answer,
                expires_ms,
            });
        }
        Some((approve, deny))
    }

    /// Whether a program's notification in `pane` may be pushed now.
    fn notification_allowed(&self, pane: PaneId) -> bool {
        let now = now_ms();
        let mut notified = lock(&self.notified);
        notified.retain(|_, sent| sent.back().is_some_and(|last| now - last < 60_000));
        let sent = notified.entry(pane).or_default();
        sent.retain(|at| now - at < 60_000);
        if sent.len() >= NOTIFICATIONS_PER_MINUTE {
            return false;
        }
        sent.push_back(now);
        true
    }

    /// Pushes `notice` to every subscription, each delivery on a thread of its
    /// own. Runs on the sink's thread.
    pub fn send(self: &Arc<Self>, notice: &NotifyEvent, options: &PushOptions) {
        let subscriptions = lock(&self.subscriptions).clone();
        if subscriptions.is_empty() {
            return;
        }
        let pane = notice.pane.parse::<PaneId>().ok();
        if notice.event == "notification" && !pane.is_some_and(|p| self.notification_allowed(p)) {
            tracing::info!(pane = notice.pane, "program notification not pushed: over 3 a minute");
            return;
        }
        let tokens = match (notice.event.as_str(), pane, &notice.prompt_id) {
            ("permission", Some(pane), Some(prompt)) if subscriptions.iter().any(|s| !s.content_free) => {
                self.grant(pane, prompt)
            }
            _ => None,
        };
        let full = payload(notice, tokens.as_ref());
        let bare = content_free_payload(notice);
        let urgency = match notice.needs_you {
            true => "high",
            false => "normal",
        };
        // A waiting prompt's push is worth little once the prompt is old.
        let ttl = if urgency == "high" { 600 } else { 3600 };
        for subscription in subscriptions {
            let body = match subscription.content_free || options.content_free {
                true => bare.clone(),
                false => full.clone(),
            };
            if self.in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                tracing::warn!(
                    event = notice.event,
                    "{MAX_IN_FLIGHT} pushes under way; this one dropped"
                );
                continue;
            }
            let (push, contact) = (self.clone(), options.contact.clone());
            let spawned = std::thread::Builder::new().name("fugue-push".into()).spawn(move || {
                push.deliver(&subscription, &body, ttl, urgency, &contact);
                push.in_flight.fetch_sub(1, Ordering::SeqCst);
            });
            if let Err(err) = spawned {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                tracing::warn!(%err, "cannot start a push delivery");
            }
        }
    }

    fn deliver(&self, subscription: &Subscription, body: &str, ttl: u64, urgency: &str, contact: &str) {
        let endpoint = redact(&subscription.endpoint);
        match self.try_deliver(subscription, body, ttl, urgency, contact) {
            Ok(()) => tracing::debug!(endpoint, "pushed"),
            Err(Failure::Gone(status)) => {
                tracing::info!(endpoint, status, "push subscription expired; forgotten");
                self.unsubscribe(&subscription.endpoint);
            }
            Err(Failure::Other(why)) => tracing::warn!(endpoint, why, "push not delivered"),
        }
    }

    fn try_deliver(
        &self,
        subscription: &Subscription,
        body: &str,
        ttl: u64,
        urgency: &str,
        contact: &str,
    ) -> Result<(), Failure> {
        // Checked again at each push (a name may resolve elsewhere by now), and
        // the delivery connects to what was checked.
        let addresses = check_endpoint(&subscription.endpoint, self.allow_loopback).map_err(Failure::Other)?;
        let uri: http::Uri = subscription
            .endpoint
            .parse()
            .map_err(|e| Failure::Other(format!("{e}")))?;
        let (public, auth) = user_agent_keys(&subscription.p256dh, &subscription.auth).map_err(Failure::Other)?;
        let request = web_push_native::WebPushBuilder::new(uri.clone(), public, auth)
            .with_valid_duration(Duration::from_secs(ttl))
            .build(body.as_bytes().to_vec())
            .map_err(|e| Failure::Other(format!("cannot encrypt: {e}")))?;
        let authorization = self.vapid(&uri, contact).map_err(Failure::Other)?;
        let (mut parts, encrypted) = request.into_parts();
        parts.headers.insert(
            "urgency",
            http::HeaderValue::from_str(urgency).map_err(|e| Failure::Other(e.to_string()))?,
        );
        parts.headers.insert(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_str(&authorization).map_err(|e| Failure::Other(e.to_string()))?,
        );
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(DELIVERY_TIMEOUT / TRIES))
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        let agent = ureq::Agent::with_parts(
            config,
            ureq::unversioned::transport::DefaultConnector::default(),
            Checked(addresses),
        );
        let mut last = String::new();
        for attempt in 0..TRIES {
            if attempt > 0 {
                std::thread::sleep(Duration::from_secs(1));
            }
            let request = http::Request::from_parts(parts.clone(), encrypted.clone());
            match agent.run(request) {
                Ok(response) => match response.status().as_u16() {
                    200..=299 => return Ok(()),
                    status @ (404 | 410) => return Err(Failure::Gone(status)),
                    status @ (429 | 500..=599) => last = format!("the push service answered {status}"),
                    status => return Err(Failure::Other(format!("the push service refused it: {status}"))),
                },
                Err(err) => last = err.to_string(),
            }
        }
        Err(Failure::Other(format!("{TRIES} tries failed, the last with: {last}")))
    }

    /// `Authorization: vapid t=JWT, k=KEY` for `endpoint` (RFC 8292): an ES256
    /// JWT naming the push service's origin, signed with fugued's key.
    fn vapid(&self, endpoint: &http::Uri, contact: &str) -> Result<String, String> {
        let (Some(scheme), Some(authority)) = (endpoint.scheme_str(), endpoint.authority()) else {
            return Err("the endpoint has no origin".into());
        };
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({
            "aud": format!("{scheme}://{authority}"),
            "exp": now_ms() / 1000 + JWT_TTL_SECS,
            "sub": contact,
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signed = format!("{header}.{claims}");
        let key = self.key.as_ref().ok_or("push is off: no VAPID key")?;
        let public = self.key().map_err(|e| e.message)?.public_key;
        let signing = p256::ecdsa::SigningKey::from(key);
        let signature: p256::ecdsa::Signature = signing.sign(signed.as_bytes());
        let signature = URL_SAFE_NO_PAD.encode(signature.to_bytes());
        Ok(format!("vapid t={signed}.{signature}, k={public}"))
    }
}

enum Failure {
    /// The subscription is gone (404, 410).
    Gone(u16),
    Other(String),
}

fn new_key() -> Option<p256::SecretKey> {
    // A random 32-byte string is a valid scalar but for 1 in 2^32 of them.
    (0..4).find_map(|_| {
        let hex = fugue_protocol::secret::random_hex(32).ok()?;
        let bytes: Vec<u8> = (0..32)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0))
            .collect();
        p256::SecretKey::from_slice(&bytes).ok()
    })
}

fn read_key(path: &std::path::Path) -> Option<p256::SecretKey> {
    let text = std::fs::read_to_string(path).ok()?;
    let bytes = URL_SAFE_NO_PAD.decode(text.trim()).ok()?;
    match p256::SecretKey::from_slice(&bytes) {
        Ok(key) => Some(key),
        Err(_) => {
            tracing::warn!(path = %path.display(), "the VAPID key does not parse; a new one is made (pages must subscribe again)");
            None
        }
    }
}

/// A subscription's keys: its P-256 public key and its 16-byte secret.
pub fn user_agent_keys(p256dh: &str, auth: &str) -> Result<(p256::PublicKey, web_push_native::Auth), String> {
    let decode = |what: &str, text: &str| {
        URL_SAFE_NO_PAD
            .decode(text.trim_end_matches('='))
            .map_err(|_| format!("keys.{what} is not base64url"))
    };
    let public = p256::PublicKey::from_sec1_bytes(&decode("p256dh", p256dh)?)
        .map_err(|_| "keys.p256dh is not a P-256 public key".to_string())?;
    let auth = decode("auth", auth)?;
    if auth.len() != 16 {
        return Err(format!("keys.auth is {} bytes; it must be 16", auth.len()));
    }
    Ok((public, web_push_native::Auth::clone_from_slice(&auth)))
}

/// An endpoint's parts, as written (not resolved).
#[derive(Debug, PartialEq)]
pub struct Endpoint {
    pub scheme: String,
    /// A name or an address (without IPv6's brackets).
    pub host: String,
    pub port: u16,
}

/// The parts of `endpoint`, when it is a URL with a host and an https scheme
/// (or http with `allow_loopback`, which resolving then holds to loopback).
pub fn parse_endpoint(endpoint: &str, allow_loopback: bool) -> Result<Endpoint, String> {
    let uri: http::Uri = endpoint
        .parse()
        .map_err(|_| format!("push endpoint {endpoint:?} is not a URL"))?;
    let host = uri
        .host()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']');
    if host.is_empty() {
        return Err("push endpoint has no host".into());
    }
    let scheme = uri.scheme_str().unwrap_or("nothing");
    if scheme != "https" && !(allow_loopback && scheme == "http") {
        return Err(format!("push endpoint must be https, not {scheme}: push services are"));
    }
    Ok(Endpoint {
        scheme: scheme.to_string(),
        host: host.to_string(),
        port: uri.port_u16().unwrap_or(if scheme == "http" { 80 } else { 443 }),
    })
}

/// An endpoint fugued may post to: https on a host whose every address is
/// public; loopback http too when `allow_loopback` (the tests' switch).
/// Returns the addresses it checked: a delivery connects to those only, so a
/// name that resolves elsewhere by then (DNS rebinding) changes nothing.
pub fn check_endpoint(endpoint: &str, allow_loopback: bool) -> Result<Vec<SocketAddr>, String> {
    let Endpoint { scheme, host, port } = parse_endpoint(endpoint, allow_loopback)?;
    let at = |ips: Vec<IpAddr>| ips.into_iter().map(|ip| SocketAddr::new(ip, port)).collect();
    let https = || Err(format!("push endpoint must be https, not {scheme}: push services are"));
    let resolved: Result<Vec<IpAddr>, String> = match host.parse::<IpAddr>() {
        Ok(ip) => Ok(vec![ip]),
        Err(_) => {
            use std::net::ToSocketAddrs;
            (host.as_str(), port)
                .to_socket_addrs()
                .map(|found| found.map(|a| a.ip()).collect())
                .map_err(|e| format!("push endpoint's host {host} does not resolve: {e}"))
        }
    };
    let loopback = |ips: &[IpAddr]| !ips.is_empty() && ips.iter().all(|ip| ip.is_loopback());
    if scheme == "http" {
        // Only the tests' switch gets here, and only for loopback.
        return match resolved {
            Ok(ips) if loopback(&ips) => Ok(at(ips)),
            _ => https(),
        };
    }
    let addresses = resolved?;
    if allow_loopback && loopback(&addresses) {
        return Ok(at(addresses));
    }
    if let Some(private) = addresses.iter().find(|ip| !is_public(ip)) {
        return Err(format!(
            "push endpoint's host {host} is at {private}, not a public address: fugued posts only to push services"
        ));
    }
    if addresses.is_empty() {
        return Err(format!("push endpoint's host {host} has no address"));
    }
    Ok(at(addresses))
}

/// Resolves every name to the addresses [`check_endpoint`] checked.
#[derive(Debug)]
struct Checked(Vec<SocketAddr>);

impl ureq::unversioned::resolver::Resolver for Checked {
    fn resolve(
        &self,
        _uri: &http::Uri,
        _config: &ureq::config::Config,
        _timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let mut addresses = self.empty();
        for address in &self.0 {
            if addresses.try_push(*address).is_err() {
                break;
            }
        }
        match addresses.is_empty() {
            true => Err(ureq::Error::HostNotFound),
            false => Ok(addresses),
        }
    }
}

fn is_public(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public(&IpAddr::V4(v4)),
            None => {
                let first = v6.segments()[0];
                !(v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || (first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
                    || first == 0x2001 && v6.segments()[1] == 0xdb8)
            }
        },
    }
}

/// An endpoint for logs: its origin only (the path is the subscription's secret).
fn redact(endpoint: &str) -> String {
    match endpoint.parse::<http::Uri>() {
        Ok(uri) => format!(
            "{}://{}/…",
            uri.scheme_str().unwrap_or("?"),
            uri.authority().map_or("?", |a| a.as_str())
        ),
        Err(_) => "?".into(),
    }
}

/// What a push says: what needs the person and where (the page's service
/// worker reads it). Never a token of the page's; a permission's carries the
/// two action tokens.
pub fn payload(notice: &NotifyEvent, tokens: Option<&(String, String)>) -> String {
    // The prompt's first line as the agent shows it (not where its state was read).
    let first_line = notice
        .prompt
        .as_deref()
        .and_then(|p| {
            p.lines().map(str::trim).find(|l| {
                l.chars().any(char::is_alphanumeric) && !l.starts_with("hook: ") && !l.starts_with("status: ")
            })
        })
        .map(|l| l.chars().take(PROMPT_CHARS).collect::<String>());
    let cut = |text: &str| text.chars().take(PROMPT_CHARS).collect::<String>();
    let body = match (&first_line, notice.event.as_str()) {
        (Some(line), _) => line.clone(),
        (None, "notification") => cut(notice.notification_body.as_deref().unwrap_or_default()),
        (None, _) => cut(&notice.message),
    };
    let mut value = serde_json::json!({
        "event": notice.event,
        "title": cut(&notice.message),
        "body": body,
        "pane": notice.pane,
        "label": notice.label,
        "agent": notice.agent,
        "prompt_id": notice.prompt_id,
        "tag": format!("fugue-{}", notice.pane),
        "url": format!("/?view=all&pane={}", notice.pane),
    });
    if let Some((approve, deny)) = tokens {
        value["actions"] = serde_json::json!([
            {"action": "approve", "title": "Approve", "token": approve},
            {"action": "deny", "title": "Deny", "token": deny},
        ]);
    }
    let text = fugue_protocol::limits::escape_unsafe_in_json(&value.to_string());
    if text.len() <= MAX_PAYLOAD_BYTES {
        return text;
    }
    // Titles are bounded, but together they might not fit: the body goes first.
    value["body"] = serde_json::Value::String(String::new());
    value["title"] = serde_json::Value::String(format!("{}: {}", notice.label, notice.event));
    fugue_protocol::limits::escape_unsafe_in_json(&value.to_string())
}

/// A push that says only that something needs the person, for lock screens.
fn content_free_payload(notice: &NotifyEvent) -> String {
    let body = match notice.event.as_str() {
        "permission" | "question" => "An agent needs you",
        "finished" => "An agent finished",
        _ => "A program sent a notification",
    };
    serde_json::json!({
        "event": notice.event,
        "title": "fugue",
        "body": body,
        "tag": "fugue",
        "url": "/",
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_must_be_https_on_public_hosts() {
        assert!(check_endpoint("https://8.8.8.8/push/abc", false).is_ok());
        for bad in [
            "http://8.8.8.8/x",
            "https://127.0.0.1/x",
            "https://10.0.0.5/x",
            "https://192.168.1.1/x",
            "https://169.254.169.254/latest",
            "https://100.100.1.1/x",
            "https://[::1]/x",
            "https://[fd00::1]/x",
            "https://[fe80::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://0.0.0.0/x",
            "https://localhost/x",
            "ftp://8.8.8.8/x",
            "not a url",
        ] {
            assert!(check_endpoint(bad, false).is_err(), "{bad}");
        }
        assert!(check_endpoint("http://127.0.0.1:9/x", true).is_ok());
        assert!(check_endpoint("http://localhost:9/x", true).is_ok());
        // The switch is for loopback only.
        assert!(check_endpoint("http://10.0.0.5/x", true).is_err());
        let why = check_endpoint("http://8.8.8.8/x", false).unwrap_err();
        assert!(why.contains("must be https"), "{why}");
    }

    #[test]
    fn a_delivery_connects_only_where_the_check_looked() {
        use ureq::unversioned::resolver::Resolver;
        let checked = check_endpoint("https://8.8.8.8:8443/push", false).unwrap();
        assert_eq!(checked, vec!["8.8.8.8:8443".parse::<SocketAddr>().unwrap()]);
        let resolver = Checked(checked.clone());
        let config = ureq::config::Config::default();
        // Whatever name the request carries, only the checked addresses.
        let uri: http::Uri = "https://rebound.example/push".parse().unwrap();
        let timeout = ureq::unversioned::transport::NextTimeout::default();
        let resolved = resolver.resolve(&uri, &config, timeout).unwrap();
        assert_eq!(resolved.iter().copied().collect::<Vec<_>>(), checked);
        assert!(Checked(Vec::new()).resolve(&uri, &config, timeout).is_err());
    }

    #[test]
    fn a_token_answers_once_and_ends_its_twin() {
        let push = Push::open(None);
        let pane = PaneId::new();
        let (approve, deny) = push.grant(pane, "p1").unwrap();
        assert!(!approve.is_empty() && approve != deny);
        let grant = push.take_grant(&approve).unwrap();
        assert_eq!((grant.pane, grant.answer), (pane, PermissionAnswer::Approve));
        assert!(push.take_grant(&approve).is_err(), "replayed");
        assert!(push.take_grant(&deny).is_err(), "its twin ended with it");
        let (approve, _) = push.grant(pane, "p2").unwrap();
        push.prompt_ended(pane, Some("p3"));
        assert!(push.take_grant(&approve).is_err(), "ended with its prompt");
        let (_, deny) = push.grant(pane, "p4").unwrap();
        push.prompt_ended(pane, Some("p4"));
        assert_eq!(push.take_grant(&deny).unwrap().answer, PermissionAnswer::Deny);
    }

    #[test]
    fn the_key_is_kept_and_the_jwt_verifies() {
        use p256::ecdsa::signature::Verifier;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.db");
        let first = Push::open(Some(&state));
        let again = Push::open(Some(&state));
        assert_eq!(first.key().unwrap(), again.key().unwrap(), "made once, then read");
        let uri: http::Uri = "https://push.example:8443/send/abc".parse().unwrap();
        let header = first.vapid(&uri, "mailto:x@example.com").unwrap();
        let token = header.strip_prefix("vapid t=").unwrap().split(',').next().unwrap();
        let (signed, signature) = token.rsplit_once('.').unwrap();
        let claims = signed.split('.').nth(1).unwrap();
        let claims: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://push.example:8443");
        let signature = p256::ecdsa::Signature::from_slice(&URL_SAFE_NO_PAD.decode(signature).unwrap()).unwrap();
        let public = p256::ecdsa::VerifyingKey::from(first.key.as_ref().unwrap().public_key());
        public.verify(signed.as_bytes(), &signature).unwrap();
    }
}
