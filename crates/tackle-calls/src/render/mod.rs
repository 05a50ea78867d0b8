//! The other direction: calls, results and format instructions written for the model.

mod call;
mod instructions;
mod results;

pub use call::{RenderError, render_call};

pub use instructions::{MAX_DESCRIPTION_CHARS, instructions};
pub use results::{CallResult, render_results};
