//! Codex's app-server protocol, as far as fugued reads it: generated from
//! `codex app-server generate-json-schema` (Codex 0.169.0) by
//! tests/src/codex_schema.rs. Do not edit: `FUGUE_WRITE_CODEX_TYPES=1 cargo
//! nextest run -p fugue-tests --test agents -E 'test(/app_server_types/)'`
//! writes it again. Every field is optional: what another Codex leaves out
//! reads as nothing.

#![allow(dead_code)]

use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ThreadStartedNotification {
    #[serde(rename = "thread")]
    pub thread: Option<Thread>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Thread {
    #[serde(rename = "id")]
    pub id: Option<String>,
    #[serde(rename = "ephemeral")]
    pub ephemeral: Option<bool>,
    #[serde(rename = "parentThreadId")]
    pub parent_thread_id: Option<String>,
    #[serde(rename = "status")]
    pub status: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ThreadStatusChangedNotification {
    #[serde(rename = "threadId")]
    pub thread_id: Option<String>,
    #[serde(rename = "status")]
    pub status: Option<ThreadStatus>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ThreadStatus {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    #[serde(rename = "activeFlags")]
    pub active_flags: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TurnStartedNotification {
    #[serde(rename = "threadId")]
    pub thread_id: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TurnCompletedNotification {
    #[serde(rename = "threadId")]
    pub thread_id: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ServerRequestResolvedNotification {
    #[serde(rename = "threadId")]
    pub thread_id: Option<String>,
    #[serde(rename = "requestId")]
    pub request_id: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ThreadTokenUsageUpdatedNotification {
    #[serde(rename = "threadId")]
    pub thread_id: Option<String>,
    #[serde(rename = "tokenUsage")]
    pub token_usage: Option<ThreadTokenUsage>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ThreadTokenUsage {
    #[serde(rename = "total")]
    pub total: Option<TokenUsageBreakdown>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TokenUsageBreakdown {
    #[serde(rename = "inputTokens")]
    pub input_tokens: Option<i64>,
    #[serde(rename = "cachedInputTokens")]
    pub cached_input_tokens: Option<i64>,
    #[serde(rename = "outputTokens")]
    pub output_tokens: Option<i64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct AccountRateLimitsUpdatedNotification {
    #[serde(rename = "rateLimits")]
    pub rate_limits: Option<RateLimitSnapshot>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RateLimitSnapshot {
    #[serde(rename = "primary")]
    pub primary: Option<RateLimitWindow>,
    #[serde(rename = "secondary")]
    pub secondary: Option<RateLimitWindow>,
    #[serde(rename = "rateLimitReachedType")]
    pub rate_limit_reached_type: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RateLimitWindow {
    #[serde(rename = "usedPercent")]
    pub used_percent: Option<i64>,
    #[serde(rename = "resetsAt")]
    pub resets_at: Option<i64>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ErrorNotification {
    #[serde(rename = "threadId")]
    pub thread_id: Option<String>,
    #[serde(rename = "error")]
    pub error: Option<TurnError>,
    #[serde(rename = "willRetry")]
    pub will_retry: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TurnError {
    #[serde(rename = "message")]
    pub message: Option<String>,
    #[serde(rename = "codexErrorInfo")]
    pub codex_error_info: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct CommandExecutionRequestApprovalParams {
    #[serde(rename = "threadId")]
    pub thread_id: Option<String>,
    #[serde(rename = "itemId")]
    pub item_id: Option<String>,
    #[serde(rename = "approvalId")]
    pub approval_id: Option<String>,
    #[serde(rename = "command")]
    pub command: Option<String>,
    #[serde(rename = "cwd")]
    pub cwd: Option<serde_json::Value>,
    #[serde(rename = "reason")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct FileChangeRequestApprovalParams {
    #[serde(rename = "threadId")]
    pub thread_id: Option<String>,
    #[serde(rename = "itemId")]
    pub item_id: Option<String>,
    #[serde(rename = "reason")]
    pub reason: Option<String>,
    #[serde(rename = "grantRoot")]
    pub grant_root: Option<String>,
}
