//! Secrets fugue checks: bearer tokens of its HTTP front ends and the token a
//! pane's agent hooks report with.

use subtle::ConstantTimeEq;

/// Whether `candidate` is `secret`, compared in time independent of where they
/// differ (their length is no secret).
pub fn matches(secret: &str, candidate: &str) -> bool {
    secret.len() == candidate.len() && bool::from(secret.as_bytes().ct_eq(candidate.as_bytes()))
}

/// `bytes` bytes from the kernel's random source, as hex: tokens, credentials,
/// pairing codes.
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buf)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_same_secret_matches() {
        assert!(super::matches("abc123", "abc123"));
        assert!(!super::matches("abc123", "abc124"));
        assert!(!super::matches("abc123", "abc12"));
        assert!(!super::matches("", "x"));
    }
}
