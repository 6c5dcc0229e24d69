//! Pairing a phone or browser by QR code, its credential, and its push
//! subscriptions (docs/browser.md, "From a phone").
//!
//! 1. A paired page (`POST /api/pairings`) or `fugue web --qr` at the terminal
//!    makes a pairing: a one-use code of 256 random bits that lives
//!    [`CODE_LIFE`], shown as a QR code of `https://HOST:PORT/pair#CODE` (the
//!    code in the fragment: no server log or Referer sees it).
//! 2. The phone opens it; the page posts the code (`POST /pair/claim`,
//!    compared in constant time; [`MAX_FAILURES`] wrong codes in
//!    [`FAILURE_WINDOW`] close pairing until the window passes) and the
//!    device's name. The code is used up: a second claim fails.
//! 3. A person confirms: the terminal that printed the code asks (y/N), or the
//!    page that made it shows Confirm and Deny. A QR code printed in a pane
//!    stays in that pane's output, which MCP clients read: an agent that copies
//!    the code gets a claim nobody confirms.
//! 4. The phone, polling `POST /pair/status` with the claim's own secret, gets
//!    its credential as an `HttpOnly` cookie (fugued keeps only its hash), and
//!    never sees the master token.

use crate::error::{ApiError, ApiResult, JsonBody};
use crate::AppState;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use fugue_client::protocol::devices::{DeviceInfo, PushSubscribed, PushSubscription, VapidKey};
use fugue_client::protocol::requests as rq;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a pairing code may be claimed.
pub const CODE_LIFE: Duration = Duration::from_secs(120);
/// How long a claim waits for a person's confirmation.
pub const CONFIRM_LIFE: Duration = Duration::from_secs(120);
/// Wrong codes (or claim secrets) taken in [`FAILURE_WINDOW`] before pairing closes.
pub const MAX_FAILURES: usize = 10;
pub const FAILURE_WINDOW: Duration = Duration::from_secs(120);
/// Pairings open at once.
const MAX_OPEN: usize = 8;
/// A paired device's cookie lasts this long (browsers cap cookies at 400 days).
const DEVICE_COOKIE_SECS: u64 = 400 * 24 * 60 * 60;

/// Who a request came from (the guard puts it in the request's extensions).
#[derive(Clone, Debug)]
pub enum Caller {
    /// The master token: the CLI, scripts, the page opened from the printed URL.
    Master,
    /// A paired device, with the credential it came with (to check again).
    Device { device: DeviceInfo, credential: String },
    /// No credential: the page's own files, pairing, a notification's action
    /// (what these carry is their proof).
    Unproven,
}

/// Where a claim stands.
#[derive(Clone, Debug, PartialEq)]
enum Decision {
    Waiting,
    Confirmed,
    Denied,
}

#[derive(Debug)]
struct Claim {
    name: String,
    from: String,
    secret: String,
    at: Instant,
    decision: Decision,
}

#[derive(Debug)]
struct Pairing {
    id: String,
    code: String,
    made: Instant,
    /// Made by `--qr`: the terminal asks.
    by_terminal: bool,
    claim: Option<Claim>,
}

#[derive(Default)]
struct State_ {
    open: Vec<Pairing>,
    failures: VecDeque<Instant>,
}

/// The pairings of this server (in memory: a code outlives no restart).
#[derive(Default)]
pub struct Pairings {
    state: Mutex<State_>,
    /// Claims for the terminal to ask about (`--qr`).
    terminal: Mutex<Option<tokio::sync::mpsc::UnboundedSender<(String, String, String)>>>,
}

/// A claim the person is asked to confirm.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PendingClaim {
    /// The pairing's id: what confirm and deny take.
    pub id: String,
    /// The name the device gave.
    pub name: String,
    /// The address it came from.
    pub from: String,
    /// Seconds it has waited.
    pub waited_s: u64,
}

/// A new pairing, to show as a QR code.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct NewPairing {
    pub id: String,
    /// What the phone opens: this server's `/pair` page, the code in the fragment.
    pub url: String,
    /// The URL as a QR code (SVG), for an `<img>`.
    pub qr_svg: String,
    /// Seconds the code may be claimed.
    pub expires_in_s: u64,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Pairings {
    fn sweep(state: &mut State_) {
        let now = Instant::now();
        state.open.retain(|p| match &p.claim {
            None => now.duration_since(p.made) < CODE_LIFE,
            Some(claim) => now.duration_since(claim.at) < CONFIRM_LIFE,
        });
        state.failures.retain(|at| now.duration_since(*at) < FAILURE_WINDOW);
    }

    /// A new pairing code.
    pub fn open(&self, by_terminal: bool) -> Result<(String, String), ApiError> {
        let mut state = lock(&self.state);
        Self::sweep(&mut state);
        if state.open.len() >= MAX_OPEN {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "limit_reached",
                format!("{MAX_OPEN} pairings are open; wait for one to end (2 minutes)"),
            ));
        }
        let random = |bytes| {
            fugue_client::protocol::secret::random_hex(bytes)
                .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))
        };
        let (id, code) = (random(4)?, random(32)?);
        state.open.push(Pairing {
            id: id.clone(),
            code: code.clone(),
            made: Instant::now(),
            by_terminal,
            claim: None,
        });
        Ok((id, code))
    }

    /// Claims a pairing with its code: the claim's own secret, to poll with.
    fn claim(&self, code: &str, name: &str, from: &str) -> Result<String, ApiError> {
        let mut state = lock(&self.state);
        Self::sweep(&mut state);
        if state.failures.len() >= MAX_FAILURES {
            return Err(too_many());
        }
        // Every open code is compared, in constant time, whatever matches.
        let mut found = None;
        for (at, pairing) in state.open.iter().enumerate() {
            if fugue_client::protocol::secret::matches(&pairing.code, code) {
                found = Some(at);
            }
        }
        let Some(at) = found.filter(|at| state.open[*at].claim.is_none()) else {
            state.failures.push_back(Instant::now());
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this pairing code is wrong, used or expired: make a new one",
            ));
        };
        let secret = fugue_client::protocol::secret::random_hex(32)
            .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
        let pairing = &mut state.open[at];
        pairing.claim = Some(Claim {
            name: name.to_string(),
            from: from.to_string(),
            secret: secret.clone(),
            at: Instant::now(),
            decision: Decision::Waiting,
        });
        if pairing.by_terminal {
            if let Some(terminal) = lock(&self.terminal).as_ref() {
                let _ = terminal.send((pairing.id.clone(), name.to_string(), from.to_string()));
            }
        }
        Ok(secret)
    }

    /// Where the claim with `secret` stands; a confirmed one is taken out
    /// (its credential is made once).
    fn status(&self, secret: &str) -> Result<(Decision, String), ApiError> {
        let mut state = lock(&self.state);
        Self::sweep(&mut state);
        // Only claimed pairings, each compared in constant time.
        let mut found = None;
        for (at, pairing) in state.open.iter().enumerate() {
            let Some(claim) = &pairing.claim else { continue };
            if !secret.is_empty() && fugue_client::protocol::secret::matches(&claim.secret, secret) {
                found = Some(at);
            }
        }
        let Some(at) = found else {
            state.failures.push_back(Instant::now());
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "no such pairing (it ended): make a new one",
            ));
        };
        let claim = state.open[at]
            .claim
            .as_ref()
            .map(|c| (c.decision.clone(), c.name.clone()));
        let (decision, name) = claim.unwrap_or((Decision::Denied, String::new()));
        if decision != Decision::Waiting {
            state.open.remove(at);
        }
        Ok((decision, name))
    }

    /// A person's answer to the claim on pairing `id`.
    pub fn decide(&self, id: &str, confirm: bool) -> Result<(), ApiError> {
        let mut state = lock(&self.state);
        Self::sweep(&mut state);
        let claim = state
            .open
            .iter_mut()
            .find(|p| p.id == id)
            .and_then(|p| p.claim.as_mut())
            .filter(|c| c.decision == Decision::Waiting);
        let Some(claim) = claim else {
            return Err(ApiError::not_found(
                fugue_client::protocol::ErrorCode::InvalidArgument,
                format!("no claim waits on pairing '{id}' (it ended, or was answered)"),
            ));
        };
        claim.decision = if confirm { Decision::Confirmed } else { Decision::Denied };
        Ok(())
    }

    fn pending(&self) -> Vec<PendingClaim> {
        let mut state = lock(&self.state);
        Self::sweep(&mut state);
        state
            .open
            .iter()
            .filter_map(|p| {
                let claim = p.claim.as_ref().filter(|c| c.decision == Decision::Waiting)?;
                Some(PendingClaim {
                    id: p.id.clone(),
                    name: claim.name.clone(),
                    from: claim.from.clone(),
                    waited_s: claim.at.elapsed().as_secs(),
                })
            })
            .collect()
    }

    /// Claims on pairings the terminal made are sent here, to ask about.
    pub fn ask_terminal(&self) -> tokio::sync::mpsc::UnboundedReceiver<(String, String, String)> {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        *lock(&self.terminal) = Some(sender);
        receiver
    }
}

fn too_many() -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "limit_reached",
        format!("{MAX_FAILURES} wrong pairing codes in 2 minutes: pairing is closed until they are older"),
    )
}

/// The QR code of `text`, as an SVG document.
pub fn qr_svg(text: &str) -> Result<String, ApiError> {
    let code = qrcode::QrCode::new(text.as_bytes()).map_err(|e| ApiError::invalid(format!("QR code: {e}")))?;
    Ok(code
        .render::<qrcode::render::svg::Color<'_>>()
        .min_dimensions(256, 256)
        .quiet_zone(true)
        .build())
}

/// The QR code of `text` for a terminal: two rows a line, in half blocks.
pub fn qr_text(text: &str) -> Result<String, String> {
    let code = qrcode::QrCode::new(text.as_bytes()).map_err(|e| format!("QR code: {e}"))?;
    Ok(code
        .render::<qrcode::render::unicode::Dense1x2>()
        .dark_color(qrcode::render::unicode::Dense1x2::Light)
        .light_color(qrcode::render::unicode::Dense1x2::Dark)
        .quiet_zone(true)
        .build())
}

/// What a new pairing shows: the URL of this server's `/pair` page (as the
/// request reached it), and its QR code.
pub async fn create(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Json<NewPairing>> {
    let (id, code) = state.pairings.open(false)?;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let scheme = if state.security.tls() { "https" } else { "http" };
    let url = format!("{scheme}://{host}/pair#{code}");
    Ok(Json(NewPairing {
        id,
        qr_svg: qr_svg(&url)?,
        url,
        expires_in_s: CODE_LIFE.as_secs(),
    }))
}

pub async fn pending(State(state): State<AppState>) -> Json<Vec<PendingClaim>> {
    Json(state.pairings.pending())
}

pub async fn confirm(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Decided>> {
    state.pairings.decide(&id, true)?;
    Ok(Json(Decided { confirmed: true }))
}

pub async fn deny(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Decided>> {
    state.pairings.decide(&id, false)?;
    Ok(Json(Decided { confirmed: false }))
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Decided {
    pub confirmed: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ClaimBody {
    /// The code from the QR code's URL.
    pub code: String,
    /// What to call this device (its browser, by default); 1-64 characters.
    pub name: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Claimed {
    /// Poll `POST /pair/status` with it until a person confirmed.
    pub claim: String,
}

pub async fn claim(
    State(state): State<AppState>,
    extensions: axum::http::Extensions,
    JsonBody(body): JsonBody<ClaimBody>,
) -> ApiResult<Json<Claimed>> {
    let name = fugue_client::protocol::limits::clean_label(body.name.trim(), 64);
    if name.is_empty() {
        return Err(ApiError::invalid("give the device a name (1-64 characters)"));
    }
    if body.code.len() > 128 {
        return Err(ApiError::invalid("a pairing code is 64 characters"));
    }
    let from = crate::Peer::of(&extensions).map_or("an unknown address".into(), |peer| peer.ip().to_string());
    let claim = state.pairings.claim(&body.code, &name, &from)?;
    tracing::info!(name, from, "a device claims a pairing; waiting for a person");
    Ok(Json(Claimed { claim }))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct StatusBody {
    pub claim: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PairStatus {
    /// `waiting`, `paired` (the cookie is set) or `denied`.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceInfo>,
}

pub async fn status(State(state): State<AppState>, JsonBody(body): JsonBody<StatusBody>) -> ApiResult<Response> {
    let (decision, name) = state.pairings.status(&body.claim)?;
    let status = |status: &str| PairStatus {
        status: status.into(),
        device: None,
    };
    match decision {
        Decision::Waiting => Ok(Json(status("waiting")).into_response()),
        Decision::Denied => Ok(Json(status("denied")).into_response()),
        Decision::Confirmed => {
            let client = state.daemon.get().await?;
            let new = client.call(rq::AddDevice { name }).await?;
            let mut response = Json(PairStatus {
                status: "paired".into(),
                device: Some(new.device),
            })
            .into_response();
            let cookie = state.security.cookie_for(&new.credential, Some(DEVICE_COOKIE_SECS));
            response.headers_mut().insert(header::SET_COOKIE, cookie);
            Ok(response)
        }
    }
}

pub async fn list(State(state): State<AppState>) -> ApiResult<Json<Vec<DeviceInfo>>> {
    let client = state.daemon.get().await?;
    Ok(Json(client.call(rq::ListDevices {}).await?))
}

pub async fn revoke(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<DeviceInfo>> {
    let client = state.daemon.get().await?;
    let revoked = client.call(rq::RevokeDevice { device: id }).await?;
    // Its open sockets on this server end now (elsewhere, within RECHECK).
    let _ = state.revocations.send(revoked.id.clone());
    Ok(Json(revoked))
}

pub async fn vapid(State(state): State<AppState>) -> ApiResult<Json<VapidKey>> {
    let client = state.daemon.get().await?;
    Ok(Json(client.call(rq::PushKey {}).await?))
}

/// A browser's `PushSubscription.toJSON()`, and how to push to it.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SubscriptionBody {
    pub endpoint: String,
    pub keys: SubscriptionKeys,
    /// Pushes say only that something needs you (for lock screens).
    #[serde(default)]
    pub content_free: bool,
    /// Sent by browsers; not used.
    #[serde(default, rename = "expirationTime")]
    pub expiration_time: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SubscriptionKeys {
    pub p256dh: String,
    pub auth: String,
}

pub async fn subscribe(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<SubscriptionBody>,
) -> ApiResult<Json<PushSubscribed>> {
    let client = state.daemon.get().await?;
    let device = match caller {
        Caller::Device { device, .. } => Some(device.id),
        Caller::Master | Caller::Unproven => None,
    };
    let request = rq::AddPushSubscription {
        subscription: PushSubscription {
            endpoint: body.endpoint,
            p256dh: body.keys.p256dh,
            auth: body.keys.auth,
        },
        device,
        content_free: body.content_free,
    };
    Ok(Json(client.call(request).await?))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct Unsubscribe {
    pub endpoint: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Unsubscribed {
    /// There was such a subscription.
    pub removed: bool,
}

pub async fn unsubscribe(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<Unsubscribe>,
) -> ApiResult<Json<Unsubscribed>> {
    let client = state.daemon.get().await?;
    let removed = client
        .call(rq::RemovePushSubscription {
            endpoint: body.endpoint,
        })
        .await?;
    Ok(Json(Unsubscribed { removed }))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ActionBody {
    /// The action's token from the push.
    pub token: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ActionAnswered {
    pub pane: String,
    pub prompt_id: String,
    /// `approved` or `denied`: the answer the prompt has.
    pub answer: String,
    /// It had been answered before: nothing was sent now.
    pub already: bool,
}

/// A notification's Approve or Deny, sent by the service worker: outside the
/// cookie (a service worker's fetch may carry none), the token is the proof.
pub async fn answer(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<ActionBody>,
) -> ApiResult<Json<ActionAnswered>> {
    let client = state.daemon.get().await?;
    let answered = client.call(rq::AnswerFromPush { token: body.token }).await?;
    Ok(Json(ActionAnswered {
        pane: answered.pane.to_string(),
        prompt_id: answered.prompt_id,
        answer: answered.answered.answer.past().into(),
        already: answered.answered.already,
    }))
}

/// How often a paired device's open socket checks that it still is.
const RECHECK: Duration = Duration::from_secs(30);

/// Returns once `caller`'s device is revoked: at once when through this
/// server, else within [`RECHECK`] (a revocation by `fugue web devices revoke`
/// or another fugue-web); never for the master token. A socket ends with it,
/// so a revoked phone stops hearing a pane though it connected before.
pub async fn until_revoked(state: AppState, caller: Caller) {
    let Caller::Device { device, credential } = caller else {
        return std::future::pending().await;
    };
    let mut revocations = state.revocations.subscribe();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(RECHECK) => {}
            revoked = revocations.recv() => match revoked {
                Ok(id) if id == device.id => return,
                Ok(_) => continue,
                // Missed some: ask fugued now.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return std::future::pending().await,
            },
        }
        let Ok(client) = state.daemon.get().await else { continue };
        let checked = client
            .call(rq::CheckDevice {
                credential: credential.clone(),
            })
            .await;
        if let Err(fugue_client::ClientError::Daemon(reply)) = checked {
            if reply.code == fugue_client::protocol::ErrorCode::PermissionDenied {
                return;
            }
        }
    }
}

/// Asks at the terminal about each claim on a pairing `--qr` made, reading
/// the answer from stdin (typed-ahead input is flushed first).
pub async fn confirm_at_terminal(state: AppState) {
    let mut claims = state.pairings.ask_terminal();
    while let Some((id, name, from)) = claims.recv().await {
        let question = format!("fugue-web: a device named {name:?} (from {from}) asks to pair. Pair it? [y/N] ");
        let answer = tokio::task::spawn_blocking(move || {
            use std::io::Write;
            let _ = rustix::termios::tcflush(std::io::stdin(), rustix::termios::QueueSelector::IFlush);
            print!("{question}");
            let _ = std::io::stdout().flush();
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|_| line)
        })
        .await;
        let yes = matches!(answer, Ok(Ok(ref line)) if matches!(line.trim(), "y" | "Y" | "yes"));
        match state.pairings.decide(&id, yes) {
            Ok(()) if yes => println!("fugue-web: paired {name:?}."),
            Ok(()) => println!("fugue-web: refused {name:?}."),
            Err(err) => println!("fugue-web: {}", err.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_claimed_once_and_pairs_only_when_confirmed() {
        let pairings = Pairings::default();
        let (id, code) = pairings.open(false).unwrap();
        assert_eq!(code.len(), 64);
        let secret = pairings.claim(&code, "Pixel", "10.0.0.2").unwrap();
        assert!(
            pairings.claim(&code, "Again", "10.0.0.3").is_err(),
            "a code claims once"
        );
        assert_eq!(pairings.status(&secret).unwrap().0, Decision::Waiting);
        assert_eq!(pairings.pending().len(), 1);
        pairings.decide(&id, true).unwrap();
        assert!(pairings.decide(&id, false).is_err(), "answered once");
        assert_eq!(pairings.status(&secret).unwrap(), (Decision::Confirmed, "Pixel".into()));
        assert!(pairings.status(&secret).is_err(), "the credential is made once");
    }

    #[test]
    fn an_empty_claim_finds_no_pairing() {
        let pairings = Pairings::default();
        let (id, _) = pairings.open(false).unwrap();
        assert!(pairings.status("").is_err());
        // The unclaimed pairing is still open.
        assert_eq!(pairings.state.lock().unwrap().open[0].id, id);
    }

    #[test]
    fn wrong_codes_close_pairing() {
        let pairings = Pairings::default();
        let (_, code) = pairings.open(false).unwrap();
        for _ in 0..MAX_FAILURES {
            assert_eq!(
                pairings.claim("0".repeat(64).as_str(), "x", "y").unwrap_err().status,
                401
            );
        }
        let err = pairings.claim(&code, "x", "y").unwrap_err();
        assert_eq!(err.status, StatusCode::TOO_MANY_REQUESTS, "{}", err.message);
    }

    #[test]
    fn qr_codes_render() {
        let svg = qr_svg("https://phone.example:7681/pair#abc").unwrap();
        assert!(svg.starts_with("<?xml") && svg.contains("<svg"), "{svg}");
        let text = qr_text("https://phone.example:7681/pair#abc").unwrap();
        assert!(text.lines().count() > 10);
    }
}
