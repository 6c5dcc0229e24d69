//! Bearer tokens of fugue's HTTP front ends (fugue-web, fugue-mcp --http):
//! made fresh at start, or read from a file only its owner can read.

use std::path::Path;

/// Bytes of randomness in a generated token (printed as hex).
const TOKEN_BYTES: usize = 32;
/// Shortest token accepted from `--token-file`.
const MIN_TOKEN_CHARS: usize = 16;
/// Longest token accepted from `--token-file`.
const MAX_TOKEN_CHARS: usize = 512;

/// Whether `candidate` is `token`, compared in time independent of where they
/// differ (the length is no secret).
pub fn matches(token: &str, candidate: &str) -> bool {
    fugue_protocol::secret::matches(token, candidate)
}

/// A new random token, as hex.
pub fn generate() -> std::io::Result<String> {
    fugue_protocol::secret::random_hex(TOKEN_BYTES)
}

/// Reads a fixed token from `path`: one line, 16-512 characters, in a file only
/// its owner can read.
pub fn read_file(path: &Path) -> Result<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read token file {}: {e}", path.display()))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "token file {} is readable by others (mode {mode:o}); chmod 600 it",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read token file {}: {e}", path.display()))?;
    let token = text.trim().to_string();
    let chars = token.chars().count();
    if !(MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&chars) {
        return Err(format!(
            "token in {} must be {MIN_TOKEN_CHARS}-{MAX_TOKEN_CHARS} characters, got {chars}",
            path.display()
        ));
    }
    if let Some(bad) = token
        .chars()
        .find(|c| !c.is_ascii_graphic() || matches!(c, ';' | ',' | '&' | '='))
    {
        return Err(format!(
            "token in {} contains {bad:?}; use printable ASCII without ; , & =",
            path.display()
        ));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_long_and_differ() {
        let (a, b) = (generate().unwrap(), generate().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(matches(&a, &a.clone()));
        assert!(!matches(&a, &b));
        assert!(!matches(&a, &a[..63]));
    }

    #[test]
    fn token_files_must_be_private_and_plain() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let write = |text: &str, mode: u32| {
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write("0123456789abcdef\n", 0o600);
        assert_eq!(read_file(&path).unwrap(), "0123456789abcdef");
        write("0123456789abcdef", 0o644);
        assert!(read_file(&path).unwrap_err().contains("readable by others"));
        write("short", 0o600);
        assert!(read_file(&path).unwrap_err().contains("16-512 characters"));
        write("0123456789abcdef;x", 0o600);
        assert!(read_file(&path).unwrap_err().contains("contains ';'"));
    }
}
