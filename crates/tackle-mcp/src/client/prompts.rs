//! The prompts of imported servers (docs/mcp.md#resources-and-prompts): listed, filled in
//! with arguments, and turned into text — for `tackle mcp prompt SERVER PROMPT --arg k=v`,
//! which prints them, and for chat's `/mcp__SERVER__PROMPT ARGS`, which sends them as the
//! next task. Arguments are `k=v` words, or plain words given to the prompt's arguments in
//! their declared order (the last one takes the rest of the line), as Claude Code does.

use rmcp::model::GetPromptRequestParams;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::connection::Connection;
use super::naming::sanitize;
use super::request::{RequestError, request};

/// Whether a started server said it offers prompts.
pub fn offers_prompts(peer: &rmcp::Peer<rmcp::service::RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| info.capabilities.prompts.is_some())
}

/// One prompt as the server listed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPrompt {
    /// Its name on the server.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Its arguments, in order, each with whether it is required.
    pub arguments: Vec<(String, bool)>,
}

impl ListedPrompt {
    /// `/mcp__SERVER__NAME`, the chat command for it.
    pub fn command(&self, server: &str) -> String {
        format!("/mcp__{}__{}", sanitize(server), sanitize(&self.name))
    }
}

/// Why a prompt could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error(transparent)]
    Request(#[from] RequestError),
    /// No server offers the chat command's prompt (the command as typed).
    #[error("no MCP server of this session offers a prompt {0}")]
    NoneOffered(String),
    /// The chat command names no prompt; `known` lists those there are, with their usage.
    #[error("no MCP prompt {command}; the prompts there are:\n  {}", known.join("\n  "))]
    Unknown { command: String, known: Vec<String> },
    /// Words were given to a prompt (named) without arguments.
    #[error("the prompt '{0}' takes no arguments")]
    TakesNoArguments(String),
    #[error("the prompt '{prompt}' needs {} (its arguments: {usage})", missing.join(", "))]
    Missing { prompt: String, missing: Vec<String>, usage: String },
    #[error("a quote is not closed")]
    UnclosedQuote,
}

/// The server's prompts.
pub async fn list(connection: &Connection, cancel: &CancellationToken) -> Result<Vec<ListedPrompt>, PromptError> {
    let peer = connection.peer(cancel).await.map_err(RequestError::Unavailable)?;
    if !offers_prompts(&peer) {
        return Ok(Vec::new());
    }
    let prompts = request(connection, cancel, "prompts/list", |peer| async move {
        super::resources::paged(|params| {
            let peer = peer.clone();
            async move { peer.list_prompts(params).await.map(|page| (page.prompts, page.next_cursor)) }
        })
        .await
    })
    .await?;
    Ok(prompts
        .into_iter()
        .map(|prompt| ListedPrompt {
            name: prompt.name,
            description: prompt.description,
            arguments: prompt
                .arguments
                .unwrap_or_default()
                .into_iter()
                .map(|argument| (argument.name, argument.required.unwrap_or(false)))
                .collect(),
        })
        .collect())
}

/// The prompt `name` filled in with `arguments`, as text ([`messages_text`]).
pub async fn get(
    connection: &Connection,
    name: &str,
    arguments: Map<String, Value>,
    cancel: &CancellationToken,
) -> Result<String, PromptError> {
    let params = GetPromptRequestParams::new(name).with_arguments(arguments);
    let result =
        request(connection, cancel, "prompts/get", |peer| async move { peer.get_prompt(params).await }).await?;
    Ok(messages_text(&serde_json::to_value(&result).unwrap_or_default()))
}

/// The server and prompt a chat command `/mcp__SERVER__PROMPT` names among `connections`
/// (names compared as sanitized, as tool names are); an error lists the prompts there are.
pub async fn find(
    connections: &[std::sync::Arc<Connection>],
    command: &str,
    cancel: &CancellationToken,
) -> Result<(std::sync::Arc<Connection>, ListedPrompt), PromptError> {
    let mut known = Vec::new();
    for connection in connections {
        let prefix = format!("/mcp__{}__", sanitize(connection.name()));
        let listed = if command.starts_with(&prefix) || known.len() < 50 {
            list(connection, cancel).await.unwrap_or_default()
        } else {
            Vec::new()
        };
        for prompt in listed {
            let name = prompt.command(connection.name());
            if name == command {
                return Ok((std::sync::Arc::clone(connection), prompt));
            }
            let usage = super::elicitation::shown(&usage(&prompt), 200).replace('\n', " ");
            known.push(format!("{name} {usage}").trim_end().to_owned());
        }
    }
    if known.is_empty() {
        return Err(PromptError::NoneOffered(command.to_owned()));
    }
    Err(PromptError::Unknown { command: command.to_owned(), known })
}

/// The arguments of `prompt` from the words after its command: `k=v` words by name (every
/// word must then be one), else the words in the arguments' order, the last argument taking
/// the rest. A missing required argument, or an unknown name, is an error naming them.
pub fn arguments(prompt: &ListedPrompt, words: &[String]) -> Result<Map<String, Value>, PromptError> {
    let names: Vec<&str> = prompt.arguments.iter().map(|(name, _)| name.as_str()).collect();
    let by_name =
        !words.is_empty() && words.iter().all(|word| word.split_once('=').is_some_and(|(key, _)| names.contains(&key)));
    let mut map = Map::new();
    if by_name {
        for word in words {
            let (key, value) = word.split_once('=').unwrap_or_default();
            map.insert(key.to_owned(), Value::String(value.to_owned()));
        }
    } else {
        let mut rest = words.iter();
        for (index, name) in names.iter().enumerate() {
            let value = if index + 1 == names.len() {
                let tail: Vec<&str> = rest.by_ref().map(String::as_str).collect();
                (!tail.is_empty()).then(|| tail.join(" "))
            } else {
                rest.next().cloned()
            };
            if let Some(value) = value {
                map.insert((*name).to_owned(), Value::String(value));
            }
        }
        if names.is_empty() && !words.is_empty() {
            return Err(PromptError::TakesNoArguments(prompt.name.clone()));
        }
    }
    let missing: Vec<String> = prompt
        .arguments
        .iter()
        .filter(|(name, required)| *required && !map.contains_key(name))
        .map(|(name, _)| name.clone())
        .collect();
    if !missing.is_empty() {
        return Err(PromptError::Missing { prompt: prompt.name.clone(), missing, usage: usage(prompt) });
    }
    Ok(map)
}

/// The words of a chat command's arguments: split at whitespace, a `"…"` or `'…'` group
/// (anywhere in a word) kept whole without its quotes. An unterminated quote is an error.
pub fn split_words(text: &str) -> Result<Vec<String>, PromptError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(PromptError::UnclosedQuote);
    }
    words.extend(word);
    Ok(words)
}

/// The prompt's arguments as a usage line: `code [focus]`.
pub fn usage(prompt: &ListedPrompt) -> String {
    prompt
        .arguments
        .iter()
        .map(|(name, required)| if *required { name.clone() } else { format!("[{name}]") })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `prompts/get` result (its wire JSON) as text: the messages' texts, each under its role
/// when some message is not the user's; an image or audio block is named, a resource's text
/// included.
pub fn messages_text(result: &Value) -> String {
    let messages = result.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let all_user = messages.iter().all(|m| m.get("role").and_then(Value::as_str) == Some("user"));
    messages
        .iter()
        .map(|message| {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
            let content = message.get("content").cloned().unwrap_or_default();
            let field = |key: &str| content.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
            let text = match field("type").as_str() {
                "text" => field("text"),
                "resource" => {
                    let resource = content.get("resource").cloned().unwrap_or_default();
                    let uri = resource.get("uri").and_then(Value::as_str).unwrap_or_default();
                    match resource.get("text").and_then(Value::as_str) {
                        Some(text) => format!("--- {uri} ---\n{text}"),
                        None => format!("[binary resource {uri}]"),
                    }
                }
                "resource_link" => format!("[resource: {} {}]", field("name"), field("uri")),
                kind => format!("[{kind}: {}]", field("mimeType")),
            };
            if all_user { text } else { format!("[{role}]\n{text}") }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn review() -> ListedPrompt {
        ListedPrompt {
            name: "review".into(),
            description: None,
            arguments: vec![("code".into(), true), ("focus".into(), false)],
        }
    }

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn arguments_by_name_or_by_position() {
        let prompt = review();
        assert_eq!(
            arguments(&prompt, &words("focus=speed code=x()")).unwrap(),
            json!({"focus": "speed", "code": "x()"}).as_object().unwrap().clone()
        );
        assert_eq!(
            arguments(&prompt, &words("f() style and names")).unwrap(),
            json!({"code": "f()", "focus": "style and names"}).as_object().unwrap().clone()
        );
        // A word with '=' whose key is no argument is a plain word.
        assert_eq!(arguments(&prompt, &words("a=b")).unwrap(), json!({"code": "a=b"}).as_object().unwrap().clone());
        assert_eq!(
            arguments(&prompt, &[]).unwrap_err().to_string(),
            "the prompt 'review' needs code (its arguments: code [focus])"
        );
        assert_eq!(
            arguments(&prompt, &words("focus=x")).unwrap_err().to_string(),
            "the prompt 'review' needs code (its arguments: code [focus])"
        );
        let bare = ListedPrompt { name: "p".into(), description: None, arguments: vec![] };
        assert!(arguments(&bare, &[]).unwrap().is_empty());
        assert!(arguments(&bare, &words("x")).is_err());
        assert_eq!(review().command("my.server"), "/mcp__my_server__review");
    }

    #[test]
    fn chat_words_keep_quoted_groups() {
        assert_eq!(split_words(r#"a "b c" code='x = 1' "" d"#).unwrap(), ["a", "b c", "code=x = 1", "", "d"]);
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
        assert!(split_words("\"open").is_err());
    }

    #[test]
    fn messages_become_text() {
        let user = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}},
                                       {"role": "user", "content": {"type": "resource", "resource": {"uri": "a://b", "text": "body"}}}]});
        assert_eq!(messages_text(&user), "hi\n\n--- a://b ---\nbody");
        let mixed = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "q"}},
                                        {"role": "assistant", "content": {"type": "image", "data": "", "mimeType": "image/png"}}]});
        assert_eq!(messages_text(&mixed), "[user]\nq\n\n[assistant]\n[image: image/png]");
    }
}
