//! The browsers and phones paired with fugue-web: each holds a credential of its
//! own, which fugued keeps only as a SHA-256 hash (in `<state>.devices.json`,
//! mode 600), lists and revokes one by one. The master token stays for the CLI
//! and scripts; a device never learns it.

use fugue_protocol::devices::{DeviceInfo, NewDevice, DEVICE_CREDENTIAL_PREFIX, MAX_DEVICES};
use fugue_protocol::{now_ms, ErrorCode, ErrorReply};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::Mutex;

/// Bytes of randomness in a credential.
const CREDENTIAL_BYTES: usize = 32;
/// A device's last request is written down at most this often.
const SEEN_EVERY_MS: u64 = 60 * 60 * 1000;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Device {
    id: String,
    name: String,
    /// SHA-256 of the credential, hex.
    hash: String,
    paired_at_ms: u64,
    last_seen_ms: u64,
}

pub struct Devices {
    /// `None`: kept in memory only (`--state none`).
    file: Option<PathBuf>,
    devices: Mutex<Vec<Device>>,
}

/// SHA-256 of `secret`, hex: what fugued keeps of credentials and action tokens.
pub fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Devices {
    pub fn open(file: Option<PathBuf>) -> Self {
        let devices = file
            .as_deref()
            .and_then(crate::private_file::read_json::<Vec<Device>>)
            .unwrap_or_default();
        Self {
            file,
            devices: Mutex::new(devices),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Device>> {
        crate::sync::lock(&self.devices)
    }

    fn save(&self, devices: &[Device]) {
        if let Some(file) = &self.file {
            crate::private_file::write_json(file, &devices);
        }
    }

    pub fn add(&self, name: &str) -> Result<NewDevice, ErrorReply> {
        let random = |bytes| {
            fugue_protocol::secret::random_hex(bytes)
                .map_err(|e| ErrorReply::internal(format!("cannot make a credential: {e}")))
        };
        let credential = format!("{DEVICE_CREDENTIAL_PREFIX}{}", random(CREDENTIAL_BYTES)?);
        let mut devices = self.lock();
        if devices.len() >= MAX_DEVICES {
            return Err(ErrorReply::new(
                ErrorCode::LimitReached,
                format!("{MAX_DEVICES} devices are paired already; revoke one first (fugue web devices)"),
            ));
        }
        let device = Device {
            id: random(4)?,
            name: name.trim().to_string(),
            hash: hash(&credential),
            paired_at_ms: now_ms(),
            last_seen_ms: 0,
        };
        devices.push(device.clone());
        self.save(&devices);
        tracing::info!(device = device.id, name = device.name, "device paired");
        Ok(NewDevice {
            device: info(&device, 0),
            credential,
        })
    }

    /// The devices, each with how many push subscriptions it has (`pushes`).
    pub fn list(&self, pushes: impl Fn(&str) -> u32) -> Vec<DeviceInfo> {
        self.lock().iter().map(|d| info(d, pushes(&d.id))).collect()
    }

    pub fn revoke(&self, id: &str) -> Result<DeviceInfo, ErrorReply> {
        let mut devices = self.lock();
        let Some(at) = devices.iter().position(|d| d.id == id) else {
            return Err(ErrorReply::invalid(format!(
                "no paired device '{id}' (fugue web devices lists them)"
            )));
        };
        let device = devices.remove(at);
        self.save(&devices);
        tracing::info!(device = device.id, name = device.name, "device revoked");
        Ok(info(&device, 0))
    }

    /// The device `credential` belongs to, noting that it was seen.
    pub fn check(&self, credential: &str) -> Result<DeviceInfo, ErrorReply> {
        let wanted = hash(credential);
        let mut devices = self.lock();
        // Hashes of random credentials: comparing them leaks nothing useful, but
        // the comparison is constant-time all the same.
        let found = devices
            .iter_mut()
            .find(|d| fugue_protocol::secret::matches(&d.hash, &wanted));
        let Some(device) = found else {
            return Err(ErrorReply::new(
                ErrorCode::PermissionDenied,
                "this device is not paired (or was revoked): pair it again",
            ));
        };
        let now = now_ms();
        let write = now.saturating_sub(device.last_seen_ms) > SEEN_EVERY_MS;
        device.last_seen_ms = now;
        let seen = info(device, 0);
        if write {
            self.save(&devices);
        }
        Ok(seen)
    }
}

fn info(device: &Device, push_subscriptions: u32) -> DeviceInfo {
    DeviceInfo {
        id: device.id.clone(),
        name: device.name.clone(),
        paired_at_ms: device.paired_at_ms,
        last_seen_ms: device.last_seen_ms,
        push_subscriptions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_kept_hashed_and_revoked_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.devices.json");
        let devices = Devices::open(Some(file.clone()));
        let phone = devices.add("Pixel 8").unwrap();
        let laptop = devices.add("Firefox").unwrap();
        assert!(phone.credential.starts_with(DEVICE_CREDENTIAL_PREFIX));
        let kept = std::fs::read_to_string(&file).unwrap();
        assert!(!kept.contains(&phone.credential), "{kept}");
        assert!(kept.contains(&hash(&phone.credential)));
        assert_eq!(devices.check(&phone.credential).unwrap().id, phone.device.id);
        // Read back as a restarted daemon would.
        let again = Devices::open(Some(file));
        assert_eq!(again.list(|_| 0).len(), 2);
        again.revoke(&phone.device.id).unwrap();
        let err = again.check(&phone.credential).unwrap_err();
        assert_eq!(err.code, ErrorCode::PermissionDenied);
        assert_eq!(again.check(&laptop.credential).unwrap().name, "Firefox");
        assert!(again.revoke(&phone.device.id).is_err());
        assert!(again.check("fugue_dev_guess").is_err());
    }
}
