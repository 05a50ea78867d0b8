//! The resources of imported servers as two tools (docs/mcp.md#resources-and-prompts), with
//! Claude Code's inputs: `list_mcp_resources` (`server` optional) lists the resources and the
//! resource templates of every server that offers resources; `read_mcp_resource` (`server`,
//! `uri`) reads one: text as text, an `image/*` blob as an image the model is shown, any other
//! blob as base64 text. The hub registers them only when some imported server offers
//! resources; like every imported tool they go through the permission rules, and their output
//! through the output budgets.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams};
use rmcp::service::{RoleClient, ServiceError};
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_core::{BoxFuture, ContentPart, DynTool, PreparedCall, ToolError, ToolOutput, ToolSpec};
use tokio_util::sync::CancellationToken;

use super::connection::Connection;
use super::request::request;

/// The listing tool's name.
pub const LIST_RESOURCES: &str = "list_mcp_resources";

/// The reading tool's name.
pub const READ_RESOURCE: &str = "read_mcp_resource";

/// The largest image attached for the model (providers refuse larger ones; Anthropic's limit
/// is 5 MB): a larger one is described, not attached.
pub const MAX_IMAGE_BYTES: usize = 5 << 20;

/// The source the two tools are registered under (no server can be named `*` in a listing the
/// person reads as a name, and a server that is gives way to them: they are registered last).
pub const RESOURCES_SOURCE: &str = "*";

/// Whether a started server said it offers resources.
pub fn offers_resources(peer: &rmcp::Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| info.capabilities.resources.is_some())
}

/// The servers that offer resources, shared by the two tools.
type Servers = Arc<Vec<Arc<Connection>>>;

/// `list_mcp_resources`.
pub struct ListResources {
    spec: ToolSpec,
    servers: Servers,
}

/// `read_mcp_resource`.
pub struct ReadResource {
    spec: ToolSpec,
    servers: Servers,
}

/// The two tools over `servers` (which offer resources).
pub fn tools(servers: Vec<Arc<Connection>>) -> (Arc<ListResources>, Arc<ReadResource>) {
    let names: Vec<&str> = servers.iter().map(|s| s.name()).collect();
    let named = names.join(", ");
    let mut list_spec = ToolSpec::new(
        LIST_RESOURCES,
        format!(
            "Lists the resources (and resource templates) of the MCP servers that offer them: {named}. \
             Each entry has its server, uri (or uriTemplate), name, and when given description and mimeType. \
             Read one with {READ_RESOURCE}."
        ),
    )
    .input_schema(json!({
        "type": "object",
        "properties": {"server": {"type": "string", "description": "Only this server's resources.", "enum": names}},
        "additionalProperties": false
    }));
    list_spec.annotations.read_only = true;
    list_spec.annotations.destructive = false;
    list_spec.annotations.open_world = true;
    let mut read_spec = ToolSpec::new(
        READ_RESOURCE,
        format!("Reads one resource of an MCP server ({named}) by its URI, as {LIST_RESOURCES} lists it."),
    )
    .input_schema(json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The server's name.", "enum": names},
            "uri": {"type": "string", "description": "The resource's URI."}
        },
        "required": ["server", "uri"],
        "additionalProperties": false
    }));
    // A server that is not trusted is not believed about side effects: reading asks, as its
    // tools do (docs/reference/safety.md#permission-modes).
    read_spec.annotations.destructive = false;
    read_spec.annotations.open_world = true;
    let servers = Arc::new(servers);
    (
        Arc::new(ListResources { spec: list_spec, servers: Arc::clone(&servers) }),
        Arc::new(ReadResource { spec: read_spec, servers }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListInput {
    #[serde(default)]
    server: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    server: String,
    uri: String,
}

fn input<T: for<'de> Deserialize<'de>>(tool: &str, args: &Value) -> Result<T, ToolError> {
    serde_json::from_value(args.clone())
        .map_err(|err| ToolError::InvalidInput(format!("Invalid parameters for tool '{tool}': {err}")))
}

/// The server named `name` among `servers`, or an error naming those there are.
fn find(servers: &Servers, name: &str) -> Result<Arc<Connection>, ToolError> {
    servers.iter().find(|s| s.name() == name).cloned().ok_or_else(|| {
        let names: Vec<&str> = servers.iter().map(|s| s.name()).collect();
        ToolError::InvalidInput(format!(
            "No MCP server named '{name}' offers resources; those that do: {}.",
            names.join(", ")
        ))
    })
}

/// The longest a request to any of `servers` may take.
fn deadline(servers: &Servers) -> Duration {
    servers.iter().map(|s| s.config().call_timeout).max().unwrap_or_default() + Duration::from_secs(5)
}

/// Every page of a listing (`resources/list`, `resources/templates/list`, `prompts/list`),
/// following cursors: at most [`super::connection::MAX_PAGES`] pages, and a repeated cursor
/// ends the listing (rmcp's own `list_all_*` would follow a hostile server's cursors for
/// ever, gathering what it sends until the timeout).
pub async fn paged<T, F, Fut>(mut page: F) -> Result<Vec<T>, ServiceError>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..super::connection::MAX_PAGES {
        let params = cursor.clone().map(|cursor| {
            let mut params = PaginatedRequestParams::default();
            params.cursor = Some(cursor);
            params
        });
        let (more, next) = page(params).await?;
        items.extend(more);
        match next {
            Some(next) if seen.insert(next.clone()) => cursor = Some(next),
            _ => break,
        }
    }
    Ok(items)
}

/// One server's resources and templates, each as an entry naming the server.
async fn listing(server: &Connection, cancel: &CancellationToken) -> Vec<Value> {
    let name = server.name();
    let mut entries = Vec::new();
    let resources = request(server, cancel, "resources/list", |peer| async move {
        paged(|params| {
            let peer = peer.clone();
            async move { peer.list_resources(params).await.map(|page| (page.resources, page.next_cursor)) }
        })
        .await
    })
    .await;
    match resources {
        Ok(resources) => {
            for resource in resources {
                let mut entry = serde_json::to_value(&resource).unwrap_or_default();
                with_server(&mut entry, name);
                entries.push(entry);
            }
        }
        Err(why) => entries.push(json!({"server": name, "error": why.to_string()})),
    }
    let templates =
        request(
            server,
            cancel,
            "resources/templates/list",
            |peer| async move { peer.list_all_resource_templates().await },
        )
        .await;
    match templates {
        Ok(templates) => {
            for template in templates {
                let mut entry = serde_json::to_value(&template).unwrap_or_default();
                with_server(&mut entry, name);
                entries.push(entry);
            }
        }
        // A server with resources but no templates may not know the method.
        Err(why) if why.is_unknown_method() => {}
        Err(why) => entries.push(json!({"server": name, "error": why.to_string()})),
    }
    entries
}

/// Puts `"server": name` first in an entry.
fn with_server(entry: &mut Value, name: &str) {
    if let Value::Object(map) = entry {
        let mut ordered = serde_json::Map::new();
        ordered.insert("server".into(), json!(name));
        for (key, value) in std::mem::take(map) {
            if key != "server" && key != "_meta" && key != "icons" {
                ordered.insert(key, value);
            }
        }
        *map = ordered;
    }
}

impl DynTool for ListResources {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: &Value) -> Result<PreparedCall, ToolError> {
        let only: ListInput = input(LIST_RESOURCES, args)?;
        let chosen: Vec<Arc<Connection>> = match &only.server {
            Some(name) => vec![find(&self.servers, name)?],
            None => self.servers.iter().cloned().collect(),
        };
        Ok(PreparedCall::new(true, true, Some(deadline(&self.servers)), move |ctx| {
            Box::pin(async move {
                let cancel = ctx.cancel_token().clone();
                let listed = futures::future::join_all(chosen.iter().map(|server| listing(server, &cancel))).await;
                let entries: Vec<Value> = listed.into_iter().flatten().collect();
                let mut output = ToolOutput::text(serde_json::to_string_pretty(&entries).unwrap_or_default());
                output.structured = Some(json!({"resources": entries}));
                Ok(output)
            })
        }))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

impl DynTool for ReadResource {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: &Value) -> Result<PreparedCall, ToolError> {
        let wanted: ReadInput = input(READ_RESOURCE, args)?;
        let server = find(&self.servers, &wanted.server)?;
        Ok(PreparedCall::new(false, false, Some(deadline(&self.servers)), move |ctx| {
            Box::pin(async move {
                let cancel = ctx.cancel_token().clone();
                let uri = wanted.uri.clone();
                let read = request(&server, &cancel, "resources/read", |peer| async move {
                    peer.read_resource(ReadResourceRequestParams::new(uri)).await
                })
                .await;
                match read {
                    Ok(result) => Ok(contents_output(&serde_json::to_value(&result).unwrap_or_default())),
                    Err(why) => Ok(ToolOutput::error(format!("MCP server {}: {why}", server.name()))),
                }
            })
        }))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// A `resources/read` result (its wire JSON) as an output: each text as a section under its
/// URI; an `image/*` blob as an image part (with a line saying so); any other blob as base64.
pub fn contents_output(result: &Value) -> ToolOutput {
    let contents = result.get("contents").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for content in contents {
        let field = |key: &str| content.get(key).and_then(Value::as_str);
        let uri = field("uri").unwrap_or_default();
        let mime = field("mimeType").unwrap_or("application/octet-stream");
        match (field("text"), field("blob")) {
            (Some(text), _) => {
                let shown = if contents.len() == 1 { text.to_owned() } else { format!("--- {uri} ---\n{text}") };
                texts.push(shown);
            }
            (None, Some(blob)) => {
                let bytes = STANDARD.decode(blob.trim()).map(|b| b.len());
                match bytes {
                    Err(_) => texts.push(format!("[{uri}: a blob that is not valid base64]")),
                    Ok(len) if mime.starts_with("image/") && len > MAX_IMAGE_BYTES => {
                        texts.push(format!(
                            "[image {uri}: {mime}, {len} bytes: larger than the {MAX_IMAGE_BYTES} bytes attached, so left out]"
                        ));
                    }
                    Ok(len) if mime.starts_with("image/") => {
                        texts.push(format!("[image {uri}: {mime}, {len} bytes, attached]"));
                        images.push(ContentPart::Image { mime_type: mime.to_owned(), data: blob.trim().to_owned() });
                    }
                    Ok(len) => texts.push(format!("[blob {uri}: {mime}, {len} bytes, base64]\n{}", blob.trim())),
                }
            }
            (None, None) => texts.push(format!("[{uri}: no content]")),
        }
    }
    if contents.is_empty() {
        texts.push("The resource has no contents.".to_owned());
    }
    let mut output = ToolOutput::text("");
    output.content = vec![ContentPart::Text { text: texts.join("\n") }];
    output.content.extend(images);
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn a_listing_stops_at_a_repeated_cursor_and_at_the_page_limit() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let looping = paged(|_| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { Ok((vec![1], Some("again".to_owned()))) }
        })
        .await
        .unwrap();
        assert_eq!((looping.len(), calls.load(std::sync::atomic::Ordering::SeqCst)), (2, 2));
        let counter = std::sync::atomic::AtomicUsize::new(0);
        let endless = paged(|_| {
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move { Ok((vec![n], Some(format!("c{n}")))) }
        })
        .await
        .unwrap();
        assert_eq!(endless.len(), crate::client::connection::MAX_PAGES);
        let two = std::sync::atomic::AtomicUsize::new(0);
        let finite = paged(|params| {
            let n = two.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            assert_eq!(params.is_some(), n > 0);
            async move { Ok((vec![n], (n == 0).then(|| "next".to_owned()))) }
        })
        .await
        .unwrap();
        assert_eq!(finite, [0, 1]);
    }

    #[test]
    fn texts_images_and_other_blobs() {
        let one = contents_output(&json!({"contents": [{"uri": "file:///a", "text": "hello"}]}));
        assert_eq!(one.text_content(), "hello");
        let many = contents_output(&json!({"contents": [
            {"uri": "file:///a", "mimeType": "text/plain", "text": "A"},
            {"uri": "img://x", "mimeType": "image/png", "blob": "aGVsbG8="},
            {"uri": "bin://y", "blob": "AAEC"},
            {"uri": "bad://z", "blob": "!!"}
        ]}));
        assert_eq!(
            many.text_content(),
            "--- file:///a ---\nA\n[image img://x: image/png, 5 bytes, attached]\n\
             [blob bin://y: application/octet-stream, 3 bytes, base64]\nAAEC\n[bad://z: a blob that is not valid base64]"
        );
        assert_eq!(many.content[1], ContentPart::Image { mime_type: "image/png".into(), data: "aGVsbG8=".into() });
        assert_eq!(contents_output(&json!({})).text_content(), "The resource has no contents.");
        // An image too large for providers is described, not attached.
        let big = STANDARD.encode(vec![0u8; MAX_IMAGE_BYTES + 1]);
        let output =
            contents_output(&json!({"contents": [{"uri": "img://big", "mimeType": "image/png", "blob": big}]}));
        assert_eq!(output.content.len(), 1);
        assert!(output.text_content().contains("left out"), "{}", output.text_content());
    }
}
