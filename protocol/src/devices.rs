//! Reaching a person away from the desk: the browsers and phones paired with
//! fugue-web (each with a credential of its own, kept hashed by fugued), and
//! their Web Push subscriptions (RFC 8030), which fugued sends to.

use crate::error::ErrorReply;
use crate::limits::{check_label, Validate};
use crate::requests as rq;
use arbitrary::Arbitrary;
use serde::{Deserialize, Serialize};

/// Longest device name, in characters.
pub const MAX_DEVICE_NAME_CHARS: usize = 64;
/// Devices paired at once; past it a device must be revoked first.
pub const MAX_DEVICES: usize = 64;
/// Push subscriptions kept at once.
pub const MAX_PUSH_SUBSCRIPTIONS: usize = 64;
/// Longest push endpoint URL, in bytes (the services' are under 600).
pub const MAX_PUSH_ENDPOINT_BYTES: usize = 2048;
/// Longest `keys.p256dh` and `keys.auth` (base64url; 87 and 22 characters).
pub const MAX_PUSH_KEY_BYTES: usize = 128;
/// Longest credential, pairing code or push action token, in bytes.
pub const MAX_SECRET_BYTES: usize = 128;
/// What starts every device credential, so a server tells one from the
/// master token without asking the daemon.
pub const DEVICE_CREDENTIAL_PREFIX: &str = "fugue_dev_";

/// A browser or phone paired with fugue-web.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeviceInfo {
    /// Short and stable: what `fugue web devices revoke` takes.
    pub id: String,
    /// What the person called it when it paired (its browser, by default).
    pub name: String,
    /// Unix ms.
    pub paired_at_ms: u64,
    /// Unix ms it last made a request (0: never since pairing).
    pub last_seen_ms: u64,
    /// Push subscriptions it registered.
    pub push_subscriptions: u32,
}

/// A device just paired, with its credential: shown once, kept only hashed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct NewDevice {
    pub device: DeviceInfo,
    pub credential: String,
}

/// A browser's `PushSubscription.toJSON()`: where to send, and its keys
/// (base64url, RFC 8291).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PushSubscription {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
}

/// A subscription as fugued keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PushSubscribed {
    pub endpoint: String,
    /// The device that registered it (`None`: a master-token client).
    pub device: Option<String>,
    /// Pushes to it say only that something needs the person, for lock screens.
    pub content_free: bool,
}

/// What a push's action token answered: the pane and prompt it was bound to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
pub struct PushAnswered {
    pub pane: crate::PaneId,
    pub prompt_id: String,
    pub answered: crate::PermissionAnswered,
}

/// fugued's VAPID public key (RFC 8292): the page's `applicationServerKey`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Arbitrary)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct VapidKey {
    /// The uncompressed P-256 point, base64url without padding.
    pub public_key: String,
}

fn check_secret(what: &str, text: &str) -> Result<(), ErrorReply> {
    if text.is_empty() || text.len() > MAX_SECRET_BYTES || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ErrorReply::invalid(format!(
            "{what} must be 1-{MAX_SECRET_BYTES} printable ASCII characters"
        )));
    }
    Ok(())
}

fn check_base64url(what: &str, text: &str) -> Result<(), ErrorReply> {
    let ok = !text.is_empty()
        && text.len() <= MAX_PUSH_KEY_BYTES
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'='));
    match ok {
        true => Ok(()),
        false => Err(ErrorReply::invalid(format!(
            "{what} must be base64url, 1-{MAX_PUSH_KEY_BYTES} characters"
        ))),
    }
}

fn check_endpoint(endpoint: &str) -> Result<(), ErrorReply> {
    if endpoint.len() > MAX_PUSH_ENDPOINT_BYTES {
        return Err(ErrorReply::invalid(format!(
            "push endpoint is {} bytes; the maximum is {MAX_PUSH_ENDPOINT_BYTES}",
            endpoint.len()
        )));
    }
    if !endpoint.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ErrorReply::invalid("push endpoint must be a URL of printable ASCII"));
    }
    Ok(())
}

impl Validate for rq::AddPushSubscription {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_endpoint(&self.subscription.endpoint)?;
        check_base64url("keys.p256dh", &self.subscription.p256dh)?;
        check_base64url("keys.auth", &self.subscription.auth)?;
        self.device.as_deref().map_or(Ok(()), |d| check_secret("device", d))
    }
}

impl Validate for rq::RemovePushSubscription {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_endpoint(&self.endpoint)
    }
}

impl Validate for rq::AnswerFromPush {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_secret("action token", &self.token)
    }
}

impl Validate for rq::AddDevice {
    fn validate(&self) -> Result<(), ErrorReply> {
        if self.name.trim().is_empty() {
            return Err(ErrorReply::invalid("a device needs a name"));
        }
        check_label("device name", &self.name, MAX_DEVICE_NAME_CHARS)
    }
}

impl Validate for rq::RevokeDevice {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_secret("device", &self.device)
    }
}

impl Validate for rq::CheckDevice {
    fn validate(&self) -> Result<(), ErrorReply> {
        check_secret("device credential", &self.credential)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscriptions_and_names_are_bounded() {
        let sub = |endpoint: &str, p256dh: &str| rq::AddPushSubscription {
            subscription: PushSubscription {
                endpoint: endpoint.into(),
                p256dh: p256dh.into(),
                auth: "x8Zzcz0lU5Q2VVGMtwvE4Q".into(),
            },
            device: None,
            content_free: false,
        };
        assert!(sub("https://push.example/abc", "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA")
            .validate()
            .is_ok());
        let long = format!("https://push.example/{}", "a".repeat(MAX_PUSH_ENDPOINT_BYTES));
        let err = sub(&long, "BNc").validate().unwrap_err();
        assert!(err.message.contains("maximum is 2048"), "{}", err.message);
        assert!(sub("https://x/\u{7}", "BNc").validate().is_err());
        assert!(sub("https://x/", "not base64!").validate().is_err());
        let name = |name: &str| rq::AddDevice { name: name.into() }.validate();
        assert!(name("Pixel 8").is_ok());
        assert!(name(" ").is_err());
        assert!(name(&"n".repeat(65)).is_err());
        assert!(name("a\u{1b}]0;x").is_err());
        assert!(rq::AnswerFromPush { token: "t".repeat(129) }.validate().is_err());
        assert!(rq::CheckDevice {
            credential: String::new()
        }
        .validate()
        .is_err());
    }
}
