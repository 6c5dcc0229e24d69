//! The MCP server around the tools: what it tells clients it serves, calls run
//! to their end or as tasks, and resources with their subscriptions.

use crate::resources::{self, Resource};
use crate::schema::drop_null_fields;
use crate::tasks;
use crate::tools::FugueTools;
use rmcp::model::CallToolResponse;
use rmcp::model::{
    CallToolRequestParams, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::service::{NotificationContext, SubscriptionContext};
use rmcp::ErrorData;
use rmcp::{tool_handler, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

const INSTRUCTIONS: &str = "Terminals for agents, run by fugued. Start long-running processes with fugue_start \
(check fugue_list first to reuse one), follow them with fugue_read (since_offset) and fugue_wait (no polling needed), \
steer them with fugue_write / fugue_send_keys / fugue_interrupt, and clean up with fugue_kill / fugue_release. \
Terminals are also resources (fugue://panes, fugue://agents, fugue://pane/{id}/screen and /output): subscribe to be \
told when one changes. Clients that declare the tasks extension get a task for a fugue_wait, fugue_exec or \
fugue_spawn_agent call that is not done within 0.5 s.";

impl FugueTools {
    /// Watches `resource` until `stop`, calling `tell` after each change until
    /// it fails (the client went), which stops the watch too.
    fn follow<Tell, Told>(&self, resource: Resource, stop: CancellationToken, tell: Tell)
    where
        Tell: Fn(String) -> Told + Send + 'static,
        Told: std::future::Future<Output = bool> + Send,
    {
        let (updates, mut updated) = tokio::sync::mpsc::channel(1);
        tokio::spawn(resources::watch(self.bridge.clone(), resource, updates, stop.clone()));
        tokio::spawn(async move {
            while let Some(uri) = updated.recv().await {
                if !tell(uri).await {
                    break;
                }
            }
            stop.cancel();
        });
    }
}

impl FugueTools {
    /// Runs a call to its end. Results leave out `null` fields, as their
    /// schemas say (see [`crate::schema`]).
    async fn call_to_end(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let mut response = self.tool_router.call(call).await?;
        if let CallToolResponse::Complete(result) = &mut response {
            if let Some(structured) = &mut result.structured_content {
                drop_null_fields(structured);
                // The text twin says the same as the structured result.
                if let Ok(text) = serde_json::to_string(structured) {
                    result.content = vec![rmcp::model::ContentBlock::text(text)];
                }
            }
        }
        Ok(response)
    }

    /// Starts the call on its own; its answer if it comes within the grace,
    /// else a task that holds the call. The call no longer hangs on the
    /// request: its cancellation is the task's, and it sends no progress (the
    /// request it would be about has been answered).
    async fn call_as_task(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        let limit = tasks::limit(&tool, request.arguments.as_ref());
        let stop = CancellationToken::new();
        let mut detached = context.clone();
        detached.ct = stop.child_token();
        detached.meta.remove("progressToken");
        let note = tasks::StatusNote::default();
        detached.extensions.insert(note.clone());
        let this = self.clone();
        let mut work = tokio::spawn(async move { this.call_to_end(request, detached).await });
        tokio::select! {
            done = &mut work => return joined(done),
            _ = context.ct.cancelled() => {
                stop.cancel();
                work.abort();
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
            _ = tokio::time::sleep(tasks::GRACE) => {}
        }
        match self.bridge.tasks.adopt(&tool, limit, work, stop, note) {
            Ok(task) => Ok(CallToolResponse::Task(rmcp::model::CreateTaskResult::new(task))),
            // The table filled meanwhile: the call ends as a blocking one.
            Err(work) => joined(work.await),
        }
    }
}

/// A call's answer from its task: a call that panicked is a protocol error.
fn joined(
    done: Result<Result<CallToolResponse, ErrorData>, tokio::task::JoinError>,
) -> Result<CallToolResponse, ErrorData> {
    done.map_err(|e| ErrorData::internal_error(format!("the call ended abnormally: {e}"), None))?
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FugueTools {
    fn get_info(&self) -> ServerConfig {
        // Only what fugue serves: tools and resources (no prompts, completions
        // or logging: clients are told "method not found" for those).
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(rmcp::model::Implementation::new("fugue-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS.to_string())
    }

    /// A long call (see [`tasks::eligible`]) from a client that declared the
    /// tasks extension answers within [`tasks::GRACE`] or becomes a task;
    /// every other call runs to its end.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
        if declared && tasks::eligible(&request.name) && self.bridge.tasks.has_room() {
            return self.call_as_task(request, context).await;
        }
        self.call_to_end(request, context).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.bridge
            .tasks
            .get(&request.task_id)
            .map(rmcp::model::GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.bridge.tasks.update(&request.task_id)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.bridge.tasks.cancel(&request.task_id)
    }

    async fn complete(
        &self,
        _: rmcp::model::CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        Err(ErrorData::method_not_found::<rmcp::model::CompleteRequestMethod>())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        Err(ErrorData::method_not_found::<rmcp::model::ListPromptsRequestMethod>())
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        resources::list(&self.bridge).await
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.bridge, &request.uri).await.map(Into::into)
    }

    /// Before 2026-07-28: watch `uri` and send `notifications/resources/updated`.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = request.uri;
        let resource = Resource::parse(&uri)
            .map_err(|e| ErrorData::resource_not_found(e, Some(serde_json::json!({ "uri": uri }))))?;
        let stop = {
            let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
            if watches.contains_key(&uri) {
                return Ok(());
            }
            if watches.len() >= resources::MAX_WATCHES {
                return Err(ErrorData::invalid_params(
                    format!(
                        "this session already watches {} resources, the most it may; unsubscribe from one first",
                        resources::MAX_WATCHES
                    ),
                    None,
                ));
            }
            let stop = self.session.child_token();
            watches.insert(uri.clone(), stop.clone());
            stop
        };
        let peer = context.peer;
        self.follow(resource, stop, move |uri| {
            let peer = peer.clone();
            async move {
                let updated = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
                peer.notify_resource_updated(updated).await.is_ok()
            }
        });
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stop) = watches.remove(&request.uri) {
            stop.cancel();
        }
        Ok(())
    }

    /// Before 2026-07-28: tell the client when the list of resources changes
    /// (a terminal started or went).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let peer = context.peer;
        self.follow(Resource::Panes, self.session.child_token(), move |_| {
            let peer = peer.clone();
            async move { peer.notify_resource_list_changed().await.is_ok() }
        });
    }

    /// From 2026-07-28 (`subscriptions/listen`): the resources fugue serves, and
    /// changes of the list.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| Resource::parse(uri).is_ok())
                .take(resources::MAX_WATCHES)
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let stop = self.session.child_token();
        let (updates, mut updated) = tokio::sync::mpsc::channel(1);
        let accepted = context.accepted().clone();
        for uri in accepted.resource_subscriptions.iter().flatten() {
            if let Ok(resource) = Resource::parse(uri) {
                tokio::spawn(resources::watch(
                    self.bridge.clone(),
                    resource,
                    updates.clone(),
                    stop.clone(),
                ));
            }
        }
        // The pane list's changes go to the client as list_changed, not as an update.
        let (list_updates, mut list_updated) = tokio::sync::mpsc::channel(1);
        if accepted.resources_list_changed == Some(true) {
            tokio::spawn(resources::watch(
                self.bridge.clone(),
                Resource::Panes,
                list_updates,
                stop.clone(),
            ));
        }
        drop(updates);
        let sink = context.sink().clone();
        let forward = async {
            loop {
                let sent = tokio::select! {
                    Some(uri) = updated.recv() => sink.notify_resource_updated(uri).await,
                    Some(_) = list_updated.recv() => sink.notify_resource_list_changed().await,
                    else => return,
                };
                if sent.is_err() {
                    return;
                }
            }
        };
        tokio::select! {
            _ = context.cancelled() => {}
            _ = forward => context.cancelled().await,
        }
        stop.cancel();
        Ok(())
    }
}
