//! What the unit tests render and steer: panes and agents as a daemon reports them.

use fugue_client::protocol::{
    AgentInfo, AgentKind, AgentState, Attention, ExitStatus, PaneId, PaneInfo, PaneOverview, PaneSize, PaneState,
    RestartPolicy, SessionId, StateSource,
};

/// 2026-11-27 12:00:00 UTC: every age in a test is counted back from it.
pub const NOW: u64 = 1_795_780_800_000;

pub fn pane_id(index: u32) -> PaneId {
    PaneId(uuid::Uuid::from_u128(((0x1234_5670 + index as u128) << 96) | 1))
}

/// Pane `index` of session "work", started an hour ago.
pub fn pane(index: u32, title: &str, state: PaneState, exit: Option<ExitStatus>) -> PaneInfo {
    PaneInfo {
        id: pane_id(index),
        session_id: SessionId(uuid::Uuid::from_u128(0xabcd_ef00_0000_0000_0000_0000_0000_0001)),
        session_name: "work".into(),
        index,
        title: title.into(),
        purpose: "tests".into(),
        command: vec!["cargo".into(), "test".into()],
        shell: true,
        cwd: "/src".into(),
        state,
        pid: 4000 + index,
        exit,
        size: PaneSize { cols: 120, rows: 40 },
        started_at_ms: NOW - 3_723_000,
        exited_at_ms: exit.map(|_| NOW - 60_000),
        restart: RestartPolicy::Never,
        restarts: 0,
        last_exit: None,
        agent_session: None,
        tmux: None,
    }
}

/// Claude Code in `state`, needing `needs`, since `since_ms`.
pub fn agent(state: AgentState, needs: Attention, since_ms: u64) -> AgentInfo {
    AgentInfo {
        agent: Some(AgentKind::Claude),
        state,
        needs,
        source: StateSource::Hook,
        version: Some("2.1.197".into()),
        session_id: Some("5f0c".into()),
        since_ms,
        prompt_id: (state == AgentState::WaitingForPermission).then(|| "p-1".into()),
        evidence: vec!["Do you want to run rm?".into()],
        signals: Vec::new(),
        draft: None,
        resets_at_ms: None,
        tokens: None,
    }
}

/// A running pane of the overview, with an agent or none.
pub fn overview(index: u32, title: &str, agent: Option<AgentInfo>) -> PaneOverview {
    PaneOverview {
        pane: pane(index, title, PaneState::Running, None),
        agent,
        last_line: format!("{title} says hello"),
    }
}
