//! Signal names and numbers, as the CLI and the kill request take them.

const SIGNALS: &[(&str, i32)] = &[
    ("HUP", libc::SIGHUP),
    ("INT", libc::SIGINT),
    ("QUIT", libc::SIGQUIT),
    ("ILL", libc::SIGILL),
    ("TRAP", libc::SIGTRAP),
    ("ABRT", libc::SIGABRT),
    ("BUS", libc::SIGBUS),
    ("FPE", libc::SIGFPE),
    ("KILL", libc::SIGKILL),
    ("USR1", libc::SIGUSR1),
    ("SEGV", libc::SIGSEGV),
    ("USR2", libc::SIGUSR2),
    ("PIPE", libc::SIGPIPE),
    ("ALRM", libc::SIGALRM),
    ("TERM", libc::SIGTERM),
    ("CHLD", libc::SIGCHLD),
    ("CONT", libc::SIGCONT),
    ("STOP", libc::SIGSTOP),
    ("TSTP", libc::SIGTSTP),
    ("TTIN", libc::SIGTTIN),
    ("TTOU", libc::SIGTTOU),
    ("URG", libc::SIGURG),
    ("XCPU", libc::SIGXCPU),
    ("XFSZ", libc::SIGXFSZ),
    ("VTALRM", libc::SIGVTALRM),
    ("PROF", libc::SIGPROF),
    ("WINCH", libc::SIGWINCH),
    ("IO", libc::SIGIO),
    ("SYS", libc::SIGSYS),
];

/// Parses `TERM`, `SIGTERM`, `sigterm` or `15`.
pub fn parse_signal(text: &str) -> Result<i32, String> {
    let trimmed = text.trim();
    if let Ok(n) = trimmed.parse::<i32>() {
        if SIGNALS.iter().any(|(_, num)| *num == n) {
            return Ok(n);
        }
        return Err(format!("unknown signal number {n}"));
    }
    let upper = trimmed.to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    SIGNALS
        .iter()
        .find(|(name, _)| *name == bare)
        .map(|(_, num)| *num)
        .ok_or_else(|| format!("unknown signal '{text}'; use a name like TERM, KILL, INT, HUP or a number"))
}

/// `SIGTERM` for 15; `signal N` for numbers without a name here.
pub fn signal_name(signal: i32) -> String {
    SIGNALS
        .iter()
        .find(|(_, num)| *num == signal)
        .map(|(name, _)| format!("SIG{name}"))
        .unwrap_or_else(|| format!("signal {signal}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_numbers() {
        assert_eq!(parse_signal("TERM"), Ok(libc::SIGTERM));
        assert_eq!(parse_signal("sigkill"), Ok(libc::SIGKILL));
        assert_eq!(parse_signal("9"), Ok(libc::SIGKILL));
        assert!(parse_signal("NOPE").unwrap_err().contains("unknown signal 'NOPE'"));
        assert!(parse_signal("999").is_err());
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
    }
}
