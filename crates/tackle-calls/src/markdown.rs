//! Langtag dispatch (docs/reference/formats.md#langtag-dispatch): which code blocks are calls, and their arguments.
//!
//! The first word of the langtag is looked up among the loaded tools' block langtags, names
//! and aliases ([`ToolIndex::by_langtag`]). No match, or a first word holding `.` or `/` (a
//! file name label such as `src/main.rs`), means the block is prose. A tool with a block
//! mapping takes the body (and, for `save PATH`, the rest of the langtag); any other tool takes
//! a JSON object as its body. A whitespace-only body counts as `{}` (as the empty string does
//! for native calls, docs/reference/formats.md#native).

use serde_json::Value;

use crate::call::CallDraft;
use crate::json::{self, JsonProblem};
use crate::pytext;
use crate::tools::{SpecExt, ToolIndex};

/// The call a block makes, if it is one.
pub(crate) fn dispatch(tools: &ToolIndex, lang: &str, body: &str) -> Option<CallDraft> {
    let (word, rest) = match lang.find(pytext::is_space) {
        Some(at) => (&lang[..at], pytext::strip(&lang[at..])),
        None => (lang, ""),
    };
    if word.is_empty() || word.contains(['.', '/']) {
        return None;
    }
    let spec = tools.by_langtag(word)?;
    let mut draft = CallDraft::new(&spec.name);
    match spec.mapping() {
        Some(mapping) => {
            let body = if mapping.strip_prompt { body.strip_prefix("$ ").unwrap_or(body) } else { body };
            match &mapping.words_param {
                Some(param) if !rest.is_empty() => {
                    draft.args.insert(param.clone(), Value::String(rest.to_owned()));
                }
                Some(_) => {}
                None if !rest.is_empty() => draft.errors.push(no_words(word)),
                None => {}
            }
            draft.args.insert(mapping.body_param.clone(), Value::String(body.to_owned()));
        }
        None => {
            if !rest.is_empty() {
                draft.errors.push(no_words(word));
            }
            if !body.trim().is_empty() {
                match json::read_object(body) {
                    Ok(args) => draft.args = args,
                    Err(problem) => draft.errors.push(format!(
                        "The body of a ```{word} block must be a JSON object with the tool's parameters: {}",
                        match problem {
                            JsonProblem::Invalid(message) => message,
                            JsonProblem::NotObject(kind) => format!("got {kind}"),
                        }
                    )),
                }
            }
        }
    }
    Some(draft)
}

fn no_words(word: &str) -> String {
    format!("```{word} blocks take no words after the language tag")
}
