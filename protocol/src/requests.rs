//! Every request, declared once with the type of its reply.
//!
//! The [`requests!`] table below is the one place a request is declared. From each
//! line it makes:
//! - the request's struct (`requests::KillPane { pane, signal }`), with serde and
//!   [`arbitrary`] derives (the codec's property tests and the fuzz targets make
//!   requests from random bytes, so a new request is covered without a strategy);
//! - its [`Rpc`] impl: the reply type, its name, and how large its reply may be;
//! - a variant of [`Request`] holding it and a variant of [`Response`] holding
//!   its reply, both named after it, so the daemon can only answer a request with
//!   the reply the table names (`Response::KillPane(pane_info)`), and the client's
//!   [`Rpc::reply`] can only take that one out.
//!
//! Each request struct must also implement [`Validate`] (in `limits.rs`), or the
//! table does not compile.
//!
//! ## Wire tags
//! Every line starts with the request's wire tag: permanent, never moved, never
//! reused (a retired request's tag goes into [`RETIRED_TAGS`]). On the wire a
//! request is its tag (a bincode varint) followed by its fields, and its reply
//! the same tag followed by the reply: the layout serde gives an enum variant
//! whose index is the tag, so the tag, not a position in this table, names it.
//! A daemon that reads a tag it does not know answers `unsupported_request` and
//! keeps the connection (see [`crate::codec::decode_client_frame`]). The rule for
//! changing this table is in CONTRIBUTING.md ("A protocol that can grow"), and
//! `tests::the_wire_table_is_pinned` holds it to `protocol/wire-table.txt`.

use crate::agent::*;
use crate::devices::*;
use crate::error::ErrorReply;
use crate::limits::{Validate, MAX_READ_BYTES};
use crate::messages::*;
use arbitrary::Arbitrary;
use serde::{Deserialize, Serialize};

/// Reply room reserved for a request whose reply is small (an id, a status).
pub const SMALL_REPLY_BYTES: usize = 4096;
/// Reply room reserved for a list (sessions, panes, an overview).
pub const LIST_REPLY_BYTES: usize = 256 * 1024;

/// A request with its reply type: what [`requests!`] makes for each line.
pub trait Rpc: Validate + Into<Request> + Send + 'static {
    /// What the daemon answers it with.
    type Reply: Send + 'static;
    /// The request's name, for logs and errors.
    const NAME: &'static str;
    /// Its permanent wire tag (see the module's "Wire tags").
    const TAG: u32;
    /// The most bytes its reply may take, reserved before it runs.
    fn reply_bytes(&self) -> usize;
    /// Its reply out of a [`Response`]; for any other reply, that reply's name.
    fn reply(response: Response) -> Result<Self::Reply, &'static str>;
}

macro_rules! requests {
    ($(
        $(#[doc = $doc:literal])*
        $tag:literal => $name:ident { $( $(#[$field_meta:meta])* $field:ident : $ty:ty ),* $(,)? } -> $reply:ty
        $(, reply_bytes($this:ident) = $estimate:expr)? ;
    )*) => {
        $(
            $(#[doc = $doc])*
            #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Arbitrary)]
            pub struct $name {
                $( $(#[$field_meta])* pub $field: $ty, )*
            }

            impl Rpc for $name {
                type Reply = $reply;
                const NAME: &'static str = stringify!($name);
                const TAG: u32 = $tag;

                fn reply_bytes(&self) -> usize {
                    requests!(@reply_bytes self $(, $this, $estimate)?)
                }

                fn reply(response: Response) -> Result<$reply, &'static str> {
                    match response {
                        Response::$name(reply) => Ok(reply),
                        other => Err(other.name()),
                    }
                }
            }

            impl From<$name> for Request {
                fn from(request: $name) -> Request {
                    Request::$name(request)
                }
            }
        )*

        /// Every request a client can make. Targets are strings the daemon
        /// resolves (see [`crate::target`]): a full UUID, a unique prefix of at
        /// least 4 hex digits, or a name.
        #[derive(Clone, Debug, PartialEq, Arbitrary)]
        pub enum Request {
            $( $(#[doc = $doc])* $name($name), )*
        }

        /// A request's reply, in the variant named after the request.
        #[derive(Clone, Debug, PartialEq, Arbitrary)]
        pub enum Response {
            $( $name($reply), )*
        }

        /// Every request's wire tag and name, in table order.
        pub const TABLE: &[WireEntry] = &[$(
            WireEntry {
                tag: $tag,
                name: stringify!($name),
                fields: concat!($( stringify!($field), ": ", stringify!($ty), ", ", )*),
                reply: stringify!($reply),
            },
        )*];

        impl Request {
            /// The request's name, for logs.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Request::$name(_) => stringify!($name), )*
                }
            }

            /// The request's permanent wire tag.
            pub fn tag(&self) -> u32 {
                match self {
                    $( Request::$name(_) => $tag, )*
                }
            }

            /// Reads the fields of the request tagged `tag` (all of `body`).
            pub fn decode_body(tag: u32, body: &[u8]) -> Result<Request, UnreadableRequest> {
                match tag {
                    $( $tag => crate::codec::decode::<$name>(body)
                        .map(Request::$name)
                        .map_err(|err| UnreadableRequest::Malformed {
                            tag,
                            name: stringify!($name),
                            why: err.to_string(),
                        }), )*
                    _ => Err(UnreadableRequest::Unknown { tag }),
                }
            }

            /// Checks every bound of this request (see [`Validate`]). The daemon
            /// refuses a request that fails with the returned error and does
            /// nothing else for it.
            pub fn validate(&self) -> Result<(), ErrorReply> {
                match self {
                    $( Request::$name(request) => request.validate(), )*
                }
            }

            /// The most bytes its reply may take (see [`Rpc::reply_bytes`]).
            pub fn reply_bytes(&self) -> usize {
                match self {
                    $( Request::$name(request) => request.reply_bytes(), )*
                }
            }
        }

        impl Response {
            /// The name of the request this replies to.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Response::$name(_) => stringify!($name), )*
                }
            }

            /// The wire tag of the request this replies to.
            pub fn tag(&self) -> u32 {
                match self {
                    $( Response::$name(_) => $tag, )*
                }
            }
        }

        impl Serialize for Request {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeTuple;
                let mut tuple = serializer.serialize_tuple(2)?;
                tuple.serialize_element(&self.tag())?;
                match self {
                    $( Request::$name(request) => tuple.serialize_element(request)?, )*
                }
                tuple.end()
            }
        }

        impl<'de> Deserialize<'de> for Request {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Tagged;
                impl<'de> serde::de::Visitor<'de> for Tagged {
                    type Value = Request;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a request's tag and fields")
                    }
                    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Request, A::Error> {
                        use serde::de::Error;
                        let tag: u32 = seq.next_element()?.ok_or_else(|| A::Error::custom("no request tag"))?;
                        match tag {
                            $( $tag => Ok(Request::$name(
                                seq.next_element()?.ok_or_else(|| A::Error::custom("no request fields"))?,
                            )), )*
                            _ => Err(A::Error::custom(format!("unknown request tag {tag}"))),
                        }
                    }
                }
                deserializer.deserialize_tuple(2, Tagged)
            }
        }

        impl Serialize for Response {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeTuple;
                let mut tuple = serializer.serialize_tuple(2)?;
                tuple.serialize_element(&self.tag())?;
                match self {
                    $( Response::$name(reply) => tuple.serialize_element(reply)?, )*
                }
                tuple.end()
            }
        }

        impl<'de> Deserialize<'de> for Response {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Tagged;
                impl<'de> serde::de::Visitor<'de> for Tagged {
                    type Value = Response;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a reply's tag and value")
                    }
                    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Response, A::Error> {
                        use serde::de::Error;
                        let tag: u32 = seq.next_element()?.ok_or_else(|| A::Error::custom("no reply tag"))?;
                        match tag {
                            $( $tag => Ok(Response::$name(
                                seq.next_element()?.ok_or_else(|| A::Error::custom("no reply value"))?,
                            )), )*
                            _ => Err(A::Error::custom(format!("unknown reply tag {tag}"))),
                        }
                    }
                }
                deserializer.deserialize_tuple(2, Tagged)
            }
        }
    };
    (@reply_bytes $self:ident) => { SMALL_REPLY_BYTES };
    (@reply_bytes $self:ident, $this:ident, $estimate:expr) => {{
        let $this = $self;
        $estimate
    }};
}

/// Tags of requests that were retired: never given to another request.
///
/// - 33 `ClaimPromptKey` and 34 `RecordPromptReceipt` (generation 11): a client
///   ran the prompt transaction and wrote its own receipt; `SendPrompt` runs it
///   in the daemon, so no client can write a receipt.
pub const RETIRED_TAGS: &[u32] = &[33, 34];

/// One line of the wire table: what `protocol/wire-table.txt` pins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireEntry {
    pub tag: u32,
    pub name: &'static str,
    /// The request's fields as written in the table (`name: Type, ...`).
    pub fields: &'static str,
    /// Its reply type as written in the table.
    pub reply: &'static str,
}

/// A request the daemon could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnreadableRequest {
    /// A tag this build does not know: a newer client's request.
    Unknown { tag: u32 },
    /// A known tag whose fields do not decode.
    Malformed { tag: u32, name: &'static str, why: String },
}

impl Request {
    /// The name of the request with wire tag `tag`, if this build knows one.
    pub fn name_of(tag: u32) -> Option<&'static str> {
        TABLE.iter().find(|entry| entry.tag == tag).map(|entry| entry.name)
    }
}

// Each line's number is its permanent wire tag: never change or reuse one.
requests! {
    0 => Ping {} -> ();
    1 => DaemonStatus {} -> DaemonInfo;
    /// Graceful shutdown: every pane is terminated, then the daemon exits. The
    /// shutdown begins once the reply is written.
    2 => Shutdown {} -> ();
    3 => CreateSession {
        name: String,
        /// Absolute directory; the daemon's home when `None`.
        cwd: Option<String>,
        env: Vec<EnvVar>,
    } -> SessionInfo;
    4 => DestroySession { session: String } -> SessionInfo;
    5 => ListSessions {} -> Vec<SessionInfo>, reply_bytes(_request) = LIST_REPLY_BYTES;
    6 => RenameSession { session: String, name: String } -> SessionRenamed;
    7 => CreatePane { spec: SpawnSpec } -> PaneInfo;
    /// Panes of one session, or of all sessions when `None`.
    8 => ListPanes { session: Option<String> } -> Vec<PaneInfo>, reply_bytes(_request) = LIST_REPLY_BYTES;
    9 => PaneStatus { pane: String } -> PaneInfo;
    10 => WriteInput {
        pane: String,
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
        /// A paste: wrapped in bracketed-paste markers when the program enabled them.
        paste: bool,
    } -> ();
    /// Key names as in [`crate::keys`] (Enter, C-c, F5, ...).
    11 => SendKeys { pane: String, keys: Vec<String> } -> ();
    /// SIGINT to the pane's foreground process group; the PTY and shell stay.
    12 => Interrupt { pane: String } -> ();
    /// Signal the pane's processes (default TERM), escalating to KILL after the grace.
    13 => KillPane { pane: String, signal: Option<String> } -> PaneInfo;
    /// Remove the pane at once, killing it first if it runs.
    14 => ReleasePane { pane: String } -> ();
    15 => ResizePane { pane: String, size: PaneSize } -> ();
    16 => RenamePane { pane: String, title: String } -> PaneInfo;
    /// New order of a session's panes: every pane exactly once.
    17 => ReorderPanes { session: String, panes: Vec<String> } -> Vec<PaneInfo>,
        reply_bytes(_request) = LIST_REPLY_BYTES;
    18 => ReadOutput { pane: String, mode: ReadMode } -> OutputChunk, reply_bytes(request) = match request.mode {
        ReadMode::Raw { max_bytes: Some(max), .. } => (max as usize).min(MAX_READ_BYTES) + SMALL_REPLY_BYTES,
        _ => MAX_READ_BYTES + SMALL_REPLY_BYTES,
    };
    /// Wait until the pane's process exits, or the timeout passes (no timeout: forever).
    19 => WaitForExit { pane: String, timeout_ms: Option<u64> } -> ExitWaited;
    /// Push session and pane lifecycle events on this connection from now on.
    20 => Subscribe {} -> ();
    /// The rendered screen and/or scrollback of a pane.
    21 => Capture {
        pane: String,
        what: CaptureWhat,
        /// First line, as tmux's `capture-pane -S`: 0 is the top visible row,
        /// negative numbers reach into scrollback. Default: the start of `what`.
        start: Option<i64>,
        /// Last line (inclusive), as `-E`. Default: the end of `what`.
        end: Option<i64>,
        /// Include colours and attributes as SGR sequences (screen rows).
        ansi: bool,
        /// Join soft-wrapped rows into one line.
        join_wrapped: bool,
    } -> CaptureResult, reply_bytes(_request) = MAX_READ_BYTES + SMALL_REPLY_BYTES;
    /// Follow a pane on this connection: a [`Event::Redraw`] first, then its output,
    /// title, bell and exit events. With a size (and not read-only) the client takes
    /// part in the pane's size policy; read-only clients never resize or type.
    22 => Attach { pane: String, read_only: bool, size: Option<PaneSize> } -> PaneInfo;
    23 => Detach { pane: String } -> ();
    /// The size of this connection's terminal attached to the pane changed.
    24 => ClientResize { pane: String, size: PaneSize } -> ();
    25 => SetSizePolicy { pane: String, policy: SizePolicy } -> ();
    /// Wait until the first of several conditions holds (or the timeout passes).
    /// The daemon waits on the pane's events; nothing polls.
    26 => WaitFor { pane: String, until: WaitUntil, timeout_ms: u64 } -> WaitOutcome;
    /// Which agent CLI runs in the pane, and whether it is busy, idle or waiting
    /// for permission, read from the rendered screen.
    27 => AgentStatus { pane: String } -> AgentInfo;
    /// A hook of the agent CLI in a pane fired (`fugue agent-event`, run by the
    /// agent with the pane's `FUGUE_PANE`): the most trusted signal of its state.
    /// `token` is the pane process's `FUGUE_PANE_TOKEN`: a report without the
    /// token of the process now in the pane is refused, so another pane cannot
    /// speak for this one.
    28 => ReportHook { pane: String, token: String, hook: AgentHook } -> ();
    /// Answer the permission prompt `prompt_id` (from [`AgentInfo::prompt_id`])
    /// of the agent CLI in a pane, only if that same prompt is on screen now and
    /// nobody answered it yet; the daemon checks and sends the agent's key in one
    /// step, so no other client's answer or keystroke lands between. Answering a
    /// prompt again sends nothing and says what it was answered with.
    29 => AnswerPermission { pane: String, prompt_id: String, answer: PermissionAnswer } -> PermissionAnswered;
    /// Start the agent whose session a pane recorded again, in the same directory,
    /// with its resume flag (`claude --resume ID`, `codex resume ID`, ...), as a new
    /// pane of the same session. The old pane must no longer run.
    30 => ResumeAgent { pane: String } -> PaneInfo;
    /// Abandon request `id` of this connection (its reply is a `cancelled` error).
    31 => Cancel { id: u64 } -> ();
    /// Replace the running daemon with the binary now on disk, keeping every pane
    /// and process. Replies once the new binary was checked; connections then close
    /// and clients reconnect to the upgraded daemon.
    32 => UpgradeDaemon {} -> ();
    /// Every pane of one session (or of all when `None`) with what a person
    /// needs to see at a glance: its agent's state and its last line of output.
    35 => Overview { session: Option<String> } -> Vec<PaneOverview>, reply_bytes(_request) = 4 * LIST_REPLY_BYTES;
    /// The lines of every pane's text view and scrollback (of one session, or
    /// of all) that match `pattern` (a wait pattern's syntax and limits), in
    /// pane order, at most `max_matches` (up to [`crate::limits::MAX_GREP_MATCHES`]).
    36 => Grep { pattern: String, session: Option<String>, max_matches: u32 } -> GrepResult,
        reply_bytes(_request) = crate::limits::MAX_GREP_REPLY_BYTES + SMALL_REPLY_BYTES;
    /// Send a prompt to the agent CLI in a pane as a person would, as one
    /// transaction the daemon runs: refused (nothing sent) while the agent waits
    /// for a person or a person's draft sits in its input box; else pasted, Enter
    /// once the input box took the paste in, and the turn watched for up to 5 s.
    /// The receipt is built from what the daemon saw. With `key`, the same key
    /// again sends nothing and returns the first receipt (`prompt_in_flight`
    /// while that send is under way).
    37 => SendPrompt { pane: String, text: String, key: Option<String> } -> PromptReceipt,
        reply_bytes(_request) = crate::limits::MAX_PROMPT_RECEIPT_BYTES + SMALL_REPLY_BYTES;
    /// Put the pane's agent to rest: its program ends (its own quit, then
    /// signals) and the pane stays, `hibernated`, screen and records kept, until
    /// a prompt, an attach or [`WakePane`] resumes it on its recorded session.
    /// Refused while the agent is busy, waits for a person or holds a draft, and
    /// for an agent fugue cannot resume.
    38 => HibernatePane { pane: String } -> PaneInfo;
    /// Resume a hibernated pane's agent in the same pane, on its recorded session,
    /// and reply once it is ready for a prompt (a running pane: at once). A
    /// session in which no turn ran has nothing to resume: the agent starts
    /// afresh with the pane's own command, and the reply says so.
    39 => WakePane { pane: String } -> Woken;
    /// A tmux command line (`fugue tmux ARGS...`: what follows `tmux`), run on
    /// fugue's panes as tmux would (`crate::tmux`). `caller` is the pane the
    /// calling program runs in, if any: its panes become the caller's children,
    /// in the caller's session. New panes get `env` and `cwd` (the caller's).
    40 => Tmux {
        argv: Vec<String>,
        caller: Option<PaneCaller>,
        cwd: String,
        env: Vec<EnvVar>,
    } -> TmuxOutput, reply_bytes(_request) = MAX_READ_BYTES + LIST_REPLY_BYTES;
    /// fugued's VAPID public key (RFC 8292), made once and kept in its state
    /// directory: the `applicationServerKey` a page subscribes to push with.
    41 => PushKey {} -> VapidKey;
    /// Keep a browser's push subscription: fugued sends it the notifications
    /// its sinks get (docs/browser.md, "Push"). The endpoint must be https on a
    /// public host. Subscribing an endpoint again replaces its keys.
    42 => AddPushSubscription {
        subscription: PushSubscription,
        device: Option<String>,
        content_free: bool,
    } -> PushSubscribed;
    /// Forget a push subscription; replies whether there was one.
    43 => RemovePushSubscription { endpoint: String } -> bool;
    /// Answer a permission prompt with the one-use action token a push carried
    /// (bound to one pane, prompt and answer), under `AnswerPermission`'s guards.
    44 => AnswerFromPush { token: String } -> PushAnswered;
    /// Pair a browser or phone: a new credential of its own, kept hashed.
    45 => AddDevice { name: String } -> NewDevice;
    /// The paired devices.
    46 => ListDevices {} -> Vec<DeviceInfo>, reply_bytes(_request) = LIST_REPLY_BYTES;
    /// Unpair a device: its credential stops working and its push
    /// subscriptions are forgotten.
    47 => RevokeDevice { device: String } -> DeviceInfo;
    /// The device a credential belongs to (`permission_denied` for none).
    48 => CheckDevice { credential: String } -> DeviceInfo;
    /// The agent sessions running outside any pane that fugued reads (Claude
    /// Code's `claude --bg` sessions of the daemon's user, in directories its
    /// panes use): docs/agents.md, "Background sessions".
    49 => BackgroundAgents {} -> Vec<BackgroundAgent>, reply_bytes(_request) = LIST_REPLY_BYTES;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_come_out_of_their_own_variant_only() {
        let pane = Response::Ping(());
        assert_eq!(Ping::reply(pane.clone()), Ok(()));
        assert_eq!(Shutdown::reply(pane), Err("Ping"));
        assert_eq!(Request::from(ListSessions {}).name(), "ListSessions");
        assert_eq!(<ListSessions as Rpc>::NAME, "ListSessions");
    }

    #[test]
    fn reply_room_follows_what_a_read_may_return() {
        let read = |max_bytes| ReadOutput {
            pane: "p".into(),
            mode: ReadMode::Raw { since: None, max_bytes },
        };
        assert_eq!(read(Some(10)).reply_bytes(), 10 + SMALL_REPLY_BYTES);
        assert_eq!(read(Some(u64::MAX)).reply_bytes(), MAX_READ_BYTES + SMALL_REPLY_BYTES);
        assert_eq!(Request::from(Ping {}).reply_bytes(), SMALL_REPLY_BYTES);
    }

    #[test]
    fn a_tag_names_one_request_and_is_never_a_retired_one() {
        let mut tags: Vec<u32> = TABLE.iter().map(|e| e.tag).collect();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), TABLE.len(), "two requests share a tag");
        for retired in RETIRED_TAGS {
            assert!(
                !tags.contains(retired),
                "tag {retired} is retired and may not be reused"
            );
        }
        assert_eq!(Request::name_of(36), Some("Grep"));
        assert_eq!(Request::name_of(9999), None);
    }

    /// The table as `protocol/wire-table.txt` holds it.
    fn wire_table() -> String {
        let mut out = format!(
            "# fugue's wire table: generation (PROTOCOL_VERSION) {}, revision (PROTOCOL_REVISION) {}.\n\
             # Written by `FUGUE_WRITE_WIRE_TABLE=1 cargo test -p fugue-protocol wire_table`;\n\
             # the rule for changing it is in CONTRIBUTING.md (\"A protocol that can grow\").\n\
             # tag name {{fields}} -> reply\n",
            crate::PROTOCOL_VERSION,
            crate::PROTOCOL_REVISION
        );
        for entry in TABLE {
            out.push_str(&format!(
                "{} {} {{{}}} -> {}\n",
                entry.tag,
                entry.name,
                entry.fields.trim_end_matches(", "),
                entry.reply
            ));
        }
        for tag in RETIRED_TAGS {
            out.push_str(&format!("{tag} retired\n"));
        }
        out
    }

    /// (generation, revision, tag -> line) of a written table.
    fn parse_table(text: &str) -> (u32, u32, std::collections::BTreeMap<u32, String>) {
        let header = text.lines().next().unwrap_or_default();
        let number_after = |word: &str| -> u32 {
            header
                .split(word)
                .nth(1)
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).find(|s| !s.is_empty()))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        let lines = text
            .lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .filter_map(|line| Some((line.split(' ').next()?.parse().ok()?, line.to_string())))
            .collect();
        (
            number_after("(PROTOCOL_VERSION)"),
            number_after("(PROTOCOL_REVISION)"),
            lines,
        )
    }

    /// What the rule in CONTRIBUTING.md allows between the pinned table and
    /// this build's: `Err` says which rule a change broke.
    fn follows_the_rule(pinned: &str, now: &str) -> Result<(), String> {
        let (old_gen, old_rev, old) = parse_table(pinned);
        let (new_gen, new_rev, new) = parse_table(now);
        // A tag keeps its name forever, in every generation.
        for (tag, line) in &new {
            let name = |l: &str| l.split(' ').nth(1).unwrap_or_default().to_string();
            if let Some(before) = old.get(tag) {
                let retired_now = name(line) == "retired";
                if name(before) != name(line) && !retired_now {
                    return Err(format!(
                        "tag {tag} was {} and is now {}: tags are never reused",
                        name(before),
                        name(line)
                    ));
                }
            }
        }
        if new_gen > old_gen {
            return Ok(());
        }
        if new_gen < old_gen {
            return Err("PROTOCOL_VERSION went down".into());
        }
        for (tag, before) in &old {
            match new.get(tag) {
                Some(line) if line == before => {}
                Some(line) => {
                    return Err(format!(
                        "request {tag} changed from `{before}` to `{line}` in generation {new_gen}: \
                         bincode is not self-describing, so this needs a new PROTOCOL_VERSION"
                    ))
                }
                None => {
                    return Err(format!(
                        "request `{before}` left the table: list its tag in RETIRED_TAGS and bump PROTOCOL_VERSION"
                    ))
                }
            }
        }
        let added = new.keys().filter(|tag| !old.contains_key(tag)).count();
        if added > 0 && new_rev <= old_rev {
            return Err(format!(
                "{added} request(s) added: a compatible step, so bump PROTOCOL_REVISION (now {new_rev})"
            ));
        }
        Ok(())
    }

    #[test]
    fn the_wire_table_is_pinned() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/wire-table.txt");
        let now = wire_table();
        let pinned = std::fs::read_to_string(path).unwrap_or_default();
        if let Err(broken) = follows_the_rule(&pinned, &now) {
            panic!("the wire table changed against the rule: {broken}");
        }
        if std::env::var_os("FUGUE_WRITE_WIRE_TABLE").is_some() {
            std::fs::write(path, &now).unwrap();
            return;
        }
        assert!(
            pinned == now,
            "protocol/wire-table.txt is stale; after following the rule in CONTRIBUTING.md, write it again with \
             `FUGUE_WRITE_WIRE_TABLE=1 cargo test -p fugue-protocol wire_table`"
        );
    }

    #[test]
    fn the_rule_catches_what_breaks_a_peer() {
        let table = |generation: u32, revision: u32, lines: &[&str]| {
            format!(
                "# fugue's wire table: generation (PROTOCOL_VERSION) {generation}, revision (PROTOCOL_REVISION) {revision}.\n{}\n",
                lines.join("\n")
            )
        };
        let base = table(10, 0, &["0 Ping {} -> ()", "1 Grep {pattern: String} -> GrepResult"]);
        // Adding a request is compatible with a new revision, not without one.
        let added = |rev| {
            table(
                10,
                rev,
                &[
                    "0 Ping {} -> ()",
                    "1 Grep {pattern: String} -> GrepResult",
                    "2 New {} -> ()",
                ],
            )
        };
        assert!(follows_the_rule(&base, &added(1)).is_ok());
        assert!(follows_the_rule(&base, &added(0))
            .unwrap_err()
            .contains("PROTOCOL_REVISION"));
        // Changing a request's fields needs a new generation.
        let changed = |generation| {
            table(
                generation,
                0,
                &["0 Ping {} -> ()", "1 Grep {pattern: String, max: u32} -> GrepResult"],
            )
        };
        assert!(follows_the_rule(&base, &changed(10))
            .unwrap_err()
            .contains("PROTOCOL_VERSION"));
        assert!(follows_the_rule(&base, &changed(11)).is_ok());
        // Removing one needs both; moving a tag to another request never works.
        let removed = table(10, 1, &["0 Ping {} -> ()"]);
        assert!(follows_the_rule(&base, &removed).unwrap_err().contains("RETIRED_TAGS"));
        let reused = table(11, 0, &["0 Ping {} -> ()", "1 Other {} -> ()"]);
        assert!(follows_the_rule(&base, &reused).unwrap_err().contains("never reused"));
        let retired = table(11, 0, &["0 Ping {} -> ()", "1 retired"]);
        assert!(follows_the_rule(&base, &retired).is_ok());
    }

    #[test]
    fn requests_and_replies_carry_their_tag_not_their_place() {
        let grep = Request::from(Grep {
            pattern: "x".into(),
            session: None,
            max_matches: 1,
        });
        let bytes = crate::codec::encode(&grep).unwrap();
        assert_eq!(bytes[0], 36, "the tag leads");
        assert_eq!(crate::codec::decode::<Request>(&bytes).unwrap(), grep);
        assert_eq!(Request::decode_body(36, &bytes[1..]).unwrap(), grep);
        assert_eq!(
            Request::decode_body(200, &bytes[1..]),
            Err(UnreadableRequest::Unknown { tag: 200 })
        );
        assert!(matches!(
            Request::decode_body(36, &[1]),
            Err(UnreadableRequest::Malformed { name: "Grep", .. })
        ));
        let reply = crate::codec::encode(&Response::Cancel(())).unwrap();
        assert_eq!(reply, vec![31]);
    }
}
