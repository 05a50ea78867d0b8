//! Filling in an imported MCP server's form on the terminal (docs/mcp.md#elicitation): the
//! form is shown (each field with its type, description, default and choices, the server's
//! text escaped), the person says whether to fill it in (yes, no = decline, c = cancel), then
//! answers field by field (Enter takes the default). Asked where approvals are asked
//! (`tty::TerminalPrompter`: stdin, else `/dev/tty`); one form at a time; the spinners are
//! held while it is open.

use std::sync::Arc;

use serde_json::Map;
use tackle::BoxFuture;
use tackle::agent::Prompter;
use tackle::mcp_servers::{ElicitAnswer, ElicitForm, Elicitor};

/// Wrong answers to one field before the form is cancelled.
const TRIES: usize = 3;

/// The terminal's elicitor.
pub struct TerminalElicitor {
    prompter: Arc<dyn Prompter>,
    /// Hides (true) and shows again (false) the run's spinners.
    hold_bars: Arc<dyn Fn(bool) + Send + Sync>,
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl TerminalElicitor {
    pub fn new(prompter: Arc<dyn Prompter>, hold_bars: Arc<dyn Fn(bool) + Send + Sync>) -> Self {
        TerminalElicitor { prompter, hold_bars, one_at_a_time: tokio::sync::Mutex::new(()) }
    }

    async fn fill_in(&self, form: &ElicitForm) -> ElicitAnswer {
        self.prompter.tell(form.describe().trim_end().to_owned());
        loop {
            let Some(choice) = self.prompter.ask("Fill it in? [y]es, [n]o (decline), [c]ancel: ".to_owned()).await
            else {
                return ElicitAnswer::Cancel;
            };
            match choice.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => break,
                "n" | "no" => return ElicitAnswer::Decline,
                "c" | "cancel" => return ElicitAnswer::Cancel,
                _ => self.prompter.tell("Answer y, n or c.".to_owned()),
            }
        }
        let mut content = Map::new();
        for field in &form.fields {
            let mut tries = 0;
            loop {
                let Some(line) = self.prompter.ask(field.question()).await else { return ElicitAnswer::Cancel };
                match field.parse(&line) {
                    Ok(Some(value)) => {
                        content.insert(field.name.clone(), value);
                        break;
                    }
                    Ok(None) => break,
                    Err(why) => {
                        tries += 1;
                        if tries >= TRIES {
                            self.prompter.tell(format!("  {why}; the form was cancelled."));
                            return ElicitAnswer::Cancel;
                        }
                        self.prompter.tell(format!("  {why}"));
                    }
                }
            }
        }
        ElicitAnswer::Accept(content)
    }
}

impl Elicitor for TerminalElicitor {
    fn elicit(&self, form: ElicitForm) -> BoxFuture<'_, ElicitAnswer> {
        Box::pin(async move {
            let _alone = self.one_at_a_time.lock().await;
            (self.hold_bars)(true);
            let answer = self.fill_in(&form).await;
            (self.hold_bars)(false);
            let said = match &answer {
                ElicitAnswer::Accept(_) => "sent",
                ElicitAnswer::Decline => "declined",
                ElicitAnswer::Cancel => "cancelled",
            };
            self.prompter.tell(format!(
                "(The form of MCP server '{}' was {said}.)",
                tackle::mcp_servers::shown(&form.server, 64)
            ));
            answer
        })
    }
}
