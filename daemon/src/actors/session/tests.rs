//! The session actor on its own: real panes (real `sh` processes on real PTYs),
//! a recorder in the supervisor's place, no socket and no store.

use super::*;
use crate::budget::Budget;
use std::sync::Mutex;

/// Stands in for the supervisor: keeps every report the session sends up.
struct Recorder;

impl Actor for Recorder {
    type Msg = SessionReport;
    type State = Arc<Mutex<Vec<SessionReport>>>;
    type Arguments = Arc<Mutex<Vec<SessionReport>>>;

    async fn pre_start(
        &self,
        _: ActorRef<Self::Msg>,
        seen: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(seen)
    }

    async fn handle(
        &self,
        _: ActorRef<Self::Msg>,
        report: SessionReport,
        seen: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        seen.lock().unwrap().push(report);
        Ok(())
    }
}

struct Session {
    actor: ActorRef<SessionMsg>,
    reports: Arc<Mutex<Vec<SessionReport>>>,
    _dir: tempfile::TempDir,
}

async fn session(max_running: usize) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let mut config = DaemonConfig::new(dir.path().join("fugue.sock"));
    config.max_running_panes = max_running;
    let reports = Arc::new(Mutex::new(Vec::new()));
    let (recorder, _) = Actor::spawn(None, Recorder, reports.clone()).await.unwrap();
    let args = SessionArgs {
        id: SessionId::new(),
        name: "unit".into(),
        cwd: dir.path().to_path_buf(),
        env: Vec::new(),
        config: Arc::new(config),
        parent: recorder.get_derived(),
        events: EventBus::new(Budget::new("events", 1 << 20)),
        store: Store::disabled(),
        hook_sockets: Default::default(),
        tmux_ids: Default::default(),
    };
    let (actor, _) = Actor::spawn(None, SessionActor, args).await.unwrap();
    Session {
        actor,
        reports,
        _dir: dir,
    }
}

const CALL: Option<Duration> = Some(Duration::from_secs(10));

async fn call<T: Send + 'static>(actor: &ActorRef<SessionMsg>, msg: impl FnOnce(RpcReplyPort<T>) -> SessionMsg) -> T {
    match actor.call(msg, CALL).await.unwrap() {
        ractor::rpc::CallResult::Success(value) => value,
        ractor::rpc::CallResult::Timeout => panic!("the session did not answer in time"),
        ractor::rpc::CallResult::SenderError => panic!("the session went away"),
    }
}

fn sleeper(title: &str) -> SpawnSpec {
    let mut spec = SpawnSpec::new("unit");
    spec.shell = false;
    spec.command = Some("sleep".into());
    spec.args = vec!["600".into()];
    spec.title = Some(title.into());
    spec
}

async fn create(session: &Session, title: &str) -> Result<PaneHandle, ErrorReply> {
    let spec = sleeper(title);
    call(&session.actor, |reply| SessionMsg::CreatePane {
        spec,
        tmux: None,
        reply,
    })
    .await
}

async fn titles(session: &Session) -> Vec<String> {
    let panes = call(&session.actor, SessionMsg::ListPanes).await;
    panes.into_iter().map(|p| format!("{}:{}", p.index, p.title)).collect()
}

#[tokio::test]
async fn panes_keep_their_order_names_and_targets() {
    let session = session(10).await;
    for title in ["build", "test", "serve"] {
        create(&session, title).await.unwrap();
    }
    assert_eq!(titles(&session).await, ["0:build", "1:test", "2:serve"]);

    let by_title = PaneLookup::Target("serve".into());
    let serve = call(&session.actor, |reply| SessionMsg::GetPane {
        lookup: by_title,
        reply,
    })
    .await
    .unwrap();
    let by_index = PaneLookup::Target("2".into());
    let again = call(&session.actor, |reply| SessionMsg::GetPane {
        lookup: by_index,
        reply,
    })
    .await
    .unwrap();
    assert_eq!(serve.info.id, again.info.id);

    let targets = vec!["serve".to_string(), "build".into(), "test".into()];
    call(&session.actor, |reply| SessionMsg::Reorder { targets, reply })
        .await
        .unwrap();
    assert_eq!(titles(&session).await, ["0:serve", "1:build", "2:test"]);
    // Every pane exactly once, or nothing changes.
    let targets = vec!["serve".to_string(), "build".into()];
    let refused = call(&session.actor, |reply| SessionMsg::Reorder { targets, reply }).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(titles(&session).await, ["0:serve", "1:build", "2:test"]);

    let id = serve.info.id;
    let renamed = call(&session.actor, |reply| SessionMsg::RenamePane {
        id,
        title: "web".into(),
        reply,
    })
    .await
    .unwrap();
    assert_eq!(renamed.title, "web");
    let missing = PaneLookup::Target("serve".into());
    let gone = call(&session.actor, |reply| SessionMsg::GetPane { lookup: missing, reply }).await;
    assert_eq!(gone.err().map(|e| e.code), Some(ErrorCode::PaneNotFound));

    call(&session.actor, |reply| SessionMsg::ReleasePane { id, reply })
        .await
        .unwrap();
    assert_eq!(titles(&session).await, ["0:build", "1:test"]);
    let reports = session.reports.lock().unwrap();
    let added = reports
        .iter()
        .filter(|r| matches!(r, SessionReport::PaneAdded { .. }))
        .count();
    let removed = reports
        .iter()
        .filter(|r| matches!(r, SessionReport::PaneRemoved { pane } if *pane == id))
        .count();
    assert_eq!((added, removed), (3, 1));
}

#[tokio::test]
async fn the_running_cap_refuses_one_more_and_names_the_running() {
    let session = session(2).await;
    create(&session, "one").await.unwrap();
    let two = create(&session, "two").await.unwrap();
    let Err(refused) = create(&session, "three").await else {
        panic!("a third running pane was started");
    };
    assert_eq!(refused.code, ErrorCode::LimitReached);
    assert!(
        refused.message.contains("the limit is 2") && refused.message.contains("1 (two)"),
        "{}",
        refused.message
    );
    // Releasing one makes room.
    let id = two.info.id;
    call(&session.actor, |reply| SessionMsg::ReleasePane { id, reply })
        .await
        .unwrap();
    create(&session, "three").await.unwrap();
    assert_eq!(titles(&session).await, ["0:one", "1:three"]);
}
