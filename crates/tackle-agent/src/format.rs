//! The call formats a run can use (`--call-format`, docs/reference/formats.md): native provider tool calls,
//! or one of `tackle-calls`' text formats that work with any model.

use std::str::FromStr;

/// How tool calls travel between the model and Tackle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CallFormat {
    /// Provider `tool_calls` / `tool_use` blocks.
    #[default]
    Native,
    /// A text format: calls written in the reply's text, results sent back as one text.
    Text(tackle_calls::TextFormat),
}

/// The format name was not one of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown call format '{0}'; use one of: native, markdown, xml, tool")]
pub struct UnknownCallFormat(pub String);

impl CallFormat {
    /// The text format of `tackle-calls`, or `None` for native calls.
    pub fn text(self) -> Option<tackle_calls::TextFormat> {
        match self {
            CallFormat::Native => None,
            CallFormat::Text(format) => Some(format),
        }
    }

    /// The name on the command line and in trajectories.
    pub fn name(self) -> &'static str {
        match self {
            CallFormat::Native => "native",
            CallFormat::Text(format) => format.name(),
        }
    }
}

impl FromStr for CallFormat {
    type Err = UnknownCallFormat;

    /// `native`, or a text format's name as `tackle-calls` reads it.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "native" {
            return Ok(CallFormat::Native);
        }
        s.parse().map(CallFormat::Text).map_err(|_| UnknownCallFormat(s.to_owned()))
    }
}

impl std::fmt::Display for CallFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_calls::TextFormat;

    #[test]
    fn names_parse_back_and_unknown_ones_list_the_choices() {
        let all = [
            CallFormat::Native,
            CallFormat::Text(TextFormat::Markdown),
            CallFormat::Text(TextFormat::Xml),
            CallFormat::Text(TextFormat::Tool),
        ];
        let names: Vec<&str> = all.iter().map(|f| f.name()).collect();
        assert_eq!(names, ["native", "markdown", "xml", "tool"]);
        for format in all {
            assert_eq!(format.name().parse::<CallFormat>(), Ok(format));
            assert_eq!(format.to_string(), format.name());
        }
        assert_eq!(CallFormat::default(), CallFormat::Native);
        assert_eq!(
            "json".parse::<CallFormat>().unwrap_err().to_string(),
            "unknown call format 'json'; use one of: native, markdown, xml, tool"
        );
        assert!("Native".parse::<CallFormat>().is_err());
    }
}
