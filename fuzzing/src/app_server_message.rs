//! What a Codex app-server sends fugued (JSON-RPC text, whatever a server
//! or a program pretending to be one writes): taking any message must never
//! panic, and what fugued then reads of the agent stays within its bounds
//! (an approval's evidence lines and their length).

use fugue_daemon::agent::app_server::AppServer;

/// One input, as the fuzz target `app_server_message` and the corpus replay
/// give it: newline-separated messages, taken in order by one connection.
pub fn run(data: &[u8]) {
    let server = AppServer::default();
    server.connect_for_fuzzing();
    for message in data.split(|b| *b == b'\n') {
        server.take(&String::from_utf8_lossy(message));
        if let Some(reading) = server.reading() {
            assert!(reading.evidence.len() <= 6, "{:?}", reading.evidence);
            assert!(reading.evidence.iter().all(|line| line.chars().count() <= 520));
        }
    }
}
