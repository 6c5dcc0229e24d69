//! Small files only this user may read (device hashes, push subscriptions, the
//! VAPID key), written whole: a new file beside the old one, then renamed over
//! it, so a crash leaves the old or the new file, never half of one.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Writes `bytes` to `path` (mode 600) by way of a temporary file and a rename.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temporary = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

/// The JSON value in `path`: `None` when there is no file; a file that does not
/// parse is logged and read as none (it is rewritten at the next change).
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => {
            tracing::warn!(path = %path.display(), %err, "cannot read");
            return None;
        }
    };
    match serde_json::from_slice(&text) {
        Ok(value) => Some(value),
        Err(err) => {
            tracing::warn!(path = %path.display(), %err, "does not parse; starting empty");
            None
        }
    }
}

/// Writes `value` as JSON to `path`, logging a failure (the value is still
/// held in memory, so the daemon goes on).
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) {
    let written = serde_json::to_vec_pretty(value)
        .map_err(std::io::Error::other)
        .and_then(|bytes| write(path, &bytes));
    if let Err(err) = written {
        tracing::warn!(path = %path.display(), %err, "cannot write; kept in memory only");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn files_are_private_and_whole() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/x.json");
        super::write_json(&path, &vec![1, 2, 3]);
        assert_eq!(super::read_json::<Vec<u8>>(&path), Some(vec![1, 2, 3]));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::write(&path, "{").unwrap();
        assert_eq!(super::read_json::<Vec<u8>>(&path), None);
        assert_eq!(super::read_json::<Vec<u8>>(&dir.path().join("none")), None);
    }
}
