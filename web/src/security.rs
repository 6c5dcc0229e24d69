//! Who may talk to the server, checked on every request before any handler runs.
//!
//! A browser does not apply the same-origin policy to WebSocket connects, a
//! body-less or `text/plain` POST is a "simple" request CORS never stops, and
//! `SameSite=Lax` cookies do not tell ports apart: any page the user visits could
//! otherwise drive their terminals. So every request is checked for
//! - `Host`: a loopback name (or one given with `--allow-host`) with our port;
//!   anything else is DNS rebinding (403);
//! - `Origin`, when sent (browsers always send it on WebSocket connects and
//!   cross-site writes): exactly this server's own origin (403);
//! - `Sec-Fetch-Site: cross-site` on the API, the sockets and the token exchange (403);
//! - the token, on the API and the sockets: the `HttpOnly; SameSite=Strict` cookie
//!   the page got by exchanging the printed URL's `?token=`, or `Authorization:
//!   Bearer` from scripts; never from a URL (401). A paired device's credential
//!   (`fugue_dev_...`, see [`crate::devices`]) is taken in the same places and
//!   checked with fugued (401 once revoked);
//! - on the routes a device uses before it has a credential, or a service
//!   worker without one (`POST /pair/claim`, `/pair/status`, `/push/answer`):
//!   no token, but an `Origin` that is ours and `Sec-Fetch-Site` (when sent)
//!   `same-origin`; what they carry (a code, a claim, an action token) is the proof.
//!
//! Every response carries a strict Content-Security-Policy, `X-Frame-Options: DENY`
//! and `nosniff`.

use crate::devices::Caller;
use crate::error::ApiError;
use crate::AppState;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Scripts may only run from our own files; xterm.js writes its theme into
/// `<style>` elements, hence `'unsafe-inline'` for styles (and styles only).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

pub struct Security {
    token: String,
    port: u16,
    tls: bool,
    /// Host names (no port) this server answers to.
    hosts: Vec<String>,
    cookie: String,
}

impl Security {
    /// `extra_hosts`: names besides the loopback ones that may appear in `Host`.
    pub fn new(token: String, port: u16, tls: bool, extra_hosts: &[String]) -> Self {
        let mut hosts: Vec<String> = ["127.0.0.1", "localhost", "[::1]"].map(String::from).to_vec();
        hosts.extend(extra_hosts.iter().map(|h| h.to_ascii_lowercase()));
        Self {
            token,
            port,
            tls,
            hosts,
            // Cookies do not tell ports apart: one server's cookie must not
            // overwrite (or be sent as) another's.
            cookie: format!("fugue_token_{port}"),
        }
    }

    pub fn tls(&self) -> bool {
        self.tls
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// The address to print: opening it logs the browser in.
    pub fn login_url(&self, host: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{host}:{}/?token={}", self.port, self.token)
    }

    fn token_matches(&self, candidate: &str) -> bool {
        fugue_client::token::matches(&self.token, candidate)
    }

    /// The `Host` header, if it names this server.
    fn check_host(&self, headers: &HeaderMap) -> Result<String, ApiError> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .ok_or_else(|| ApiError::forbidden("a Host header is required"))?
            .to_ascii_lowercase();
        let default_port = if self.tls { 443 } else { 80 };
        let (name, port) = match host.rsplit_once(':') {
            Some((name, port)) if !port.contains(']') => (name, port.parse::<u16>().ok()),
            _ => (host.as_str(), Some(default_port)),
        };
        if port == Some(self.port) && self.hosts.iter().any(|h| h == name) {
            return Ok(host);
        }
        Err(ApiError::forbidden(format!(
            "host {host:?} is not this server (allowed: {} with port {}; add a name with --allow-host)",
            self.hosts.join(", "),
            self.port
        )))
    }

    /// `Origin`, when present, must be this server's own origin.
    fn check_origin(&self, headers: &HeaderMap, host: &str) -> Result<(), ApiError> {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let scheme = if self.tls { "https" } else { "http" };
        let expected = format!("{scheme}://{host}");
        match origin.to_str() {
            Ok(origin) if origin.eq_ignore_ascii_case(&expected) => Ok(()),
            _ => Err(ApiError::forbidden(format!(
                "cross-origin request refused: Origin {origin:?} is not {expected}"
            ))),
        }
    }

    /// The token from the cookie or an `Authorization: Bearer` header: the
    /// master token (`Ok(None)`), or a device's credential to check with fugued.
    fn check_token(&self, headers: &HeaderMap, query: Option<&str>) -> Result<Option<String>, ApiError> {
        if query.is_some_and(|q| q.split('&').any(|kv| kv.starts_with("token="))) {
            return Err(ApiError::unauthorized(
                "the token is not taken from a URL here: send it as Authorization: Bearer TOKEN (the page uses its cookie)",
            ));
        }
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "));
        let cookie = cookie_value(headers, &self.cookie);
        match bearer.or(cookie.as_deref()).map(str::trim) {
            Some(token) if self.token_matches(token) => Ok(None),
            Some(token) if token.starts_with(fugue_client::protocol::devices::DEVICE_CREDENTIAL_PREFIX) => {
                Ok(Some(token.to_string()))
            }
            Some(_) => Err(ApiError::unauthorized("wrong token")),
            None => Err(ApiError::unauthorized(
                "a token is required: open the URL fugue-web printed, or send Authorization: Bearer TOKEN",
            )),
        }
    }

    /// The cookie holding `secret` (the master token for the browser's
    /// session, or a device's credential for `max_age` seconds).
    pub fn cookie_for(&self, secret: &str, max_age: Option<u64>) -> HeaderValue {
        let secure = if self.tls { "; Secure" } else { "" };
        let age = max_age.map_or(String::new(), |secs| format!("; Max-Age={secs}"));
        let value = format!(
            "{}={secret}; HttpOnly; SameSite=Strict; Path=/{secure}{age}",
            self.cookie
        );
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
    }
}

/// The value of cookie `name` in the request's `Cookie` headers.
fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// Where a request goes, for the checks it needs.
#[derive(PartialEq)]
enum Area {
    /// `/api/...` and `/ws/...`: the token, always.
    Protected,
    /// Pairing and a notification's action: no token, our own Origin.
    Open,
    /// `/?token=...`: the exchange of the printed URL for the cookie.
    Login,
    /// The page and its assets: not secret.
    Page,
}

fn area(request: &Request) -> Area {
    let path = request.uri().path();
    if path.starts_with("/api/") || path == "/api" || path.starts_with("/ws/") {
        return Area::Protected;
    }
    if matches!(path, "/pair/claim" | "/pair/status" | "/push/answer") {
        return Area::Open;
    }
    let has_token = request
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv.starts_with("token=")));
    if path == "/" && has_token {
        return Area::Login;
    }
    Area::Page
}

/// What the checks decided.
enum Checked {
    /// Answered here (the login redirect).
    Answered(Response),
    Go(Caller),
    /// A device's credential, to check with fugued.
    Device(String),
}

/// Runs before every handler: see the module's documentation.
pub async fn guard(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let security = state.security.clone();
    let checked = match check(&security, &request) {
        Ok(Checked::Device(credential)) => device(&state, credential).await.map(Checked::Go),
        other => other,
    };
    let mut response = match checked {
        Ok(Checked::Answered(early)) => early,
        Ok(Checked::Go(caller)) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Ok(Checked::Device(_)) => ApiError::unauthorized("unchecked device").into_response(),
        Err(err) => {
            tracing::warn!(
                method = %request.method(),
                path = %request.uri().path(),
                "refused: {}",
                err.message
            );
            err.into_response()
        }
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// The device a credential belongs to, asked of fugued (401 when none).
async fn device(state: &AppState, credential: String) -> Result<Caller, ApiError> {
    let client = state.daemon.get().await?;
    let checked = client
        .call(fugue_client::protocol::requests::CheckDevice {
            credential: credential.clone(),
        })
        .await;
    match checked {
        Ok(device) => Ok(Caller::Device { device, credential }),
        Err(fugue_client::ClientError::Daemon(reply))
            if reply.code == fugue_client::protocol::ErrorCode::PermissionDenied =>
        {
            Err(ApiError::unauthorized(reply.message))
        }
        Err(err) => Err(err.into()),
    }
}

fn check(security: &Security, request: &Request) -> Result<Checked, ApiError> {
    let headers = request.headers();
    let host = security.check_host(headers)?;
    security.check_origin(headers, &host)?;
    let area = area(request);
    let fetch_site = headers.get("sec-fetch-site").map(|v| v.as_bytes().to_ascii_lowercase());
    if fetch_site.as_deref() == Some(b"cross-site") && area != Area::Page {
        return Err(ApiError::forbidden("cross-site request refused"));
    }
    match area {
        Area::Page => Ok(Checked::Go(Caller::Unproven)),
        Area::Protected => match security.check_token(headers, request.uri().query())? {
            None => Ok(Checked::Go(Caller::Master)),
            Some(credential) => Ok(Checked::Device(credential)),
        },
        Area::Open => {
            if request.method() != Method::POST {
                return Err(ApiError::new(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "method_not_allowed",
                    "use POST",
                ));
            }
            // check_origin took a present Origin; here one is required.
            if !headers.contains_key(header::ORIGIN) {
                return Err(ApiError::forbidden("an Origin header is required here"));
            }
            if fetch_site.is_some_and(|site| site != b"same-origin") {
                return Err(ApiError::forbidden("only this server's own pages may send this"));
            }
            Ok(Checked::Go(Caller::Unproven))
        }
        Area::Login => {
            if request.method() != Method::GET {
                return Err(ApiError::new(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "method_not_allowed",
                    "use GET",
                ));
            }
            let token = request
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("token=")))
                .unwrap_or_default();
            if !security.token_matches(token) {
                return Err(ApiError::unauthorized(
                    "wrong token: open the URL fugue-web printed when it started",
                ));
            }
            // The cookie, and the token out of the address bar and history (the
            // rest of the query, which tab bar to show, stays).
            let rest: Vec<&str> = request
                .uri()
                .query()
                .unwrap_or_default()
                .split('&')
                .filter(|kv| !kv.is_empty() && !kv.starts_with("token="))
                .collect();
            let location = match rest.is_empty() {
                true => "/".to_string(),
                false => format!("/?{}", rest.join("&")),
            };
            let location = HeaderValue::from_str(&location).unwrap_or(HeaderValue::from_static("/"));
            let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response();
            response
                .headers_mut()
                .insert(header::SET_COOKIE, security.cookie_for(&security.token, None));
            Ok(Checked::Answered(response))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn hosts_are_loopback_names_with_our_port() {
        let s = Security::new("t".repeat(64), 7681, false, &["box.local".into()]);
        for ok in [
            "127.0.0.1:7681",
            "localhost:7681",
            "[::1]:7681",
            "box.local:7681",
            "LOCALHOST:7681",
        ] {
            assert!(s.check_host(&headers(&[("host", ok)])).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example:7681",
            "127.0.0.1:80",
            "127.0.0.1",
            "localhost.evil.example:7681",
            "",
        ] {
            assert!(s.check_host(&headers(&[("host", bad)])).is_err(), "{bad}");
        }
    }

    #[test]
    fn origin_must_be_our_own() {
        let s = Security::new("t".repeat(64), 7681, false, &[]);
        let host = "127.0.0.1:7681";
        assert!(s.check_origin(&headers(&[]), host).is_ok());
        assert!(s
            .check_origin(&headers(&[("origin", "http://127.0.0.1:7681")]), host)
            .is_ok());
        for bad in [
            "http://evil.example",
            "http://127.0.0.1:7682",
            "null",
            "https://127.0.0.1:7681",
            "http://localhost:7681",
        ] {
            assert!(s.check_origin(&headers(&[("origin", bad)]), host).is_err(), "{bad}");
        }
    }

    #[test]
    fn tokens_come_from_the_cookie_or_bearer_never_the_url() {
        let token = "a".repeat(64);
        let s = Security::new(token.clone(), 7681, false, &[]);
        let cookie = format!("other=1; fugue_token_7681={token}");
        assert!(s.check_token(&headers(&[("cookie", &cookie)]), None).is_ok());
        let bearer = format!("Bearer {token}");
        assert!(s.check_token(&headers(&[("authorization", &bearer)]), None).is_ok());
        assert!(s
            .check_token(&headers(&[("authorization", &bearer)]), Some(&format!("token={token}")))
            .is_err());
        assert!(s
            .check_token(&headers(&[("cookie", &format!("fugue_token_7682={token}"))]), None)
            .is_err());
        assert!(s
            .check_token(&headers(&[("authorization", "Bearer aaaa")]), None)
            .is_err());
        assert!(s.check_token(&headers(&[]), None).is_err());
    }
}
