//! Reading a program's options the way getopt_long reads them, for the read-only list
//! ([`super::readonly`]) and the wrappers ([`super::wrappers`]): bundled short options are
//! split (`-nf p` is `-n -f p`), an option's argument is glued or the next word, and a long
//! option is resolved as getopt resolves it — an exact name, or a prefix of exactly one name
//! (`--exp` is `--expression`); an ambiguous or unknown one is an error. The analysis cannot
//! know what an unknown option does, so an error means "not read-only" (or, for a wrapper,
//! "unanalyzable").

/// A command line the table cannot read; the analysis cannot know what it does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// `--word` is a prefix of more than one long option.
    #[error("the option `--{0}` is ambiguous")]
    Ambiguous(String),
    /// `--word` is no long option's prefix.
    #[error("the option `--{0}` is not known")]
    UnknownLong(String),
    /// `--name=value` for an option without an argument.
    #[error("the option `--{0}` takes no argument")]
    TakesNoArgument(&'static str),
    /// `--name` last, without its argument.
    #[error("`--{0}` needs an argument")]
    LongNeedsArgument(&'static str),
    /// `-x` is not in the table.
    #[error("the option `-{0}` is not known")]
    UnknownShort(char),
    /// `-x` last, without its argument.
    #[error("`-{0}` needs an argument")]
    ShortNeedsArgument(char),
}

/// The options of one program.
#[derive(Debug, Clone, Copy)]
pub struct OptionTable {
    /// Short options in getopt's notation: a letter, `:` after it when it takes an argument,
    /// `::` when the argument is optional (only glued: `-i.bak`).
    pub short: &'static str,
    /// Long options: `name`, `name=` (takes an argument), `name?` (optional argument, only
    /// after `=`).
    pub long: &'static [&'static str],
    /// Stop at the first operand (`+` in getopt, and every wrapper): what follows is the
    /// command. Otherwise options and operands mix, as GNU programs permute them.
    pub stop_at_operand: bool,
}

/// How an option takes an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Required,
    Optional,
}

/// One word of a command line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An option by its canonical name (`-n`, `--expression`) with its argument.
    Option { name: String, value: Option<String> },
    /// An operand.
    Operand(String),
}

/// The words read: options and operands in order, and for a table that stops at the first
/// operand, the index in `args` where the rest (the command) begins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Read {
    /// Options and operands in order (for `stop_at_operand`, only the options).
    pub items: Vec<Item>,
    /// With `stop_at_operand`: where the first operand is (after `--`, the word after it).
    pub rest: usize,
}

impl OptionTable {
    fn short_takes(&self, letter: char) -> Option<Takes> {
        for (at, c) in self.short.char_indices() {
            if c != ':' && c == letter {
                let tail = &self.short[at + c.len_utf8()..];
                return Some(if tail.starts_with("::") {
                    Takes::Optional
                } else if tail.starts_with(':') {
                    Takes::Required
                } else {
                    Takes::Nothing
                });
            }
        }
        None
    }

    /// Resolves `--word` (without the dashes) to one long option.
    fn resolve_long(&self, word: &str) -> Result<(&'static str, Takes), OptionError> {
        let split = |entry: &'static str| -> (&'static str, Takes) {
            if let Some(name) = entry.strip_suffix('=') {
                (name, Takes::Required)
            } else if let Some(name) = entry.strip_suffix('?') {
                (name, Takes::Optional)
            } else {
                (entry, Takes::Nothing)
            }
        };
        if let Some(exact) = self.long.iter().map(|e| split(e)).find(|(name, _)| *name == word) {
            return Ok(exact);
        }
        let mut found = self.long.iter().map(|e| split(e)).filter(|(name, _)| name.starts_with(word));
        match (found.next(), found.next()) {
            (Some(one), None) if !word.is_empty() => Ok(one),
            (Some(_), Some(_)) => Err(OptionError::Ambiguous(word.to_owned())),
            _ => Err(OptionError::UnknownLong(word.to_owned())),
        }
    }

    /// Reads `args` (the words after the program name).
    pub fn read(&self, args: &[String]) -> Result<Read, OptionError> {
        let mut out = Read::default();
        let mut at = 0;
        while at < args.len() {
            let arg = &args[at];
            at += 1;
            if arg == "--" {
                if self.stop_at_operand {
                    out.rest = at;
                    return Ok(out);
                }
                out.items.extend(args[at..].iter().map(|a| Item::Operand(a.clone())));
                return Ok(out);
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (word, glued) = match long.split_once('=') {
                    Some((word, value)) => (word, Some(value.to_owned())),
                    None => (long, None),
                };
                let (name, takes) = self.resolve_long(word)?;
                let value = match (takes, glued) {
                    (Takes::Nothing, Some(_)) => return Err(OptionError::TakesNoArgument(name)),
                    (Takes::Required, None) => {
                        let value = args.get(at).cloned().ok_or(OptionError::LongNeedsArgument(name))?;
                        at += 1;
                        Some(value)
                    }
                    (_, glued) => glued,
                };
                out.items.push(Item::Option { name: format!("--{name}"), value });
            } else if arg.len() > 1 && arg.starts_with('-') {
                let letters = &arg[1..];
                for (offset, letter) in letters.char_indices() {
                    let takes = self.short_takes(letter).ok_or(OptionError::UnknownShort(letter))?;
                    let glued = &letters[offset + letter.len_utf8()..];
                    match takes {
                        Takes::Nothing => out.items.push(Item::Option { name: format!("-{letter}"), value: None }),
                        Takes::Optional => {
                            let value = (!glued.is_empty()).then(|| glued.to_owned());
                            out.items.push(Item::Option { name: format!("-{letter}"), value });
                            break;
                        }
                        Takes::Required => {
                            let value = if glued.is_empty() {
                                let value = args.get(at).cloned().ok_or(OptionError::ShortNeedsArgument(letter))?;
                                at += 1;
                                value
                            } else {
                                glued.to_owned()
                            };
                            out.items.push(Item::Option { name: format!("-{letter}"), value: Some(value) });
                            break;
                        }
                    }
                }
            } else if self.stop_at_operand {
                out.rest = at - 1;
                return Ok(out);
            } else {
                out.items.push(Item::Operand(arg.clone()));
            }
        }
        out.rest = args.len();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SED: OptionTable = OptionTable {
        short: "nsEre:f:i::l:uz",
        long: &["expression=", "file=", "in-place?", "quiet", "silent", "sandbox", "separate"],
        stop_at_operand: false,
    };

    fn read(table: &OptionTable, line: &str) -> Result<Vec<Item>, OptionError> {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        table.read(&args).map(|r| r.items)
    }

    fn option(name: &str, value: Option<&str>) -> Item {
        Item::Option { name: name.to_owned(), value: value.map(str::to_owned) }
    }

    #[test]
    fn short_options_bundle_and_take_glued_or_next_arguments() {
        assert_eq!(
            read(&SED, "-nf p x").unwrap(),
            vec![option("-n", None), option("-f", Some("p")), Item::Operand("x".into())]
        );
        assert_eq!(read(&SED, "-ne1p").unwrap(), vec![option("-n", None), option("-e", Some("1p"))]);
        assert_eq!(read(&SED, "-i.bak x").unwrap(), vec![option("-i", Some(".bak")), Item::Operand("x".into())]);
        assert_eq!(read(&SED, "-i x").unwrap(), vec![option("-i", None), Item::Operand("x".into())]);
        assert_eq!(read(&SED, "-nq"), Err(OptionError::UnknownShort('q')));
        assert_eq!(read(&SED, "-e"), Err(OptionError::ShortNeedsArgument('e')));
        assert_eq!(read(&SED, "-e").unwrap_err().to_string(), "`-e` needs an argument");
    }

    #[test]
    fn long_options_resolve_by_unique_prefix() {
        assert_eq!(read(&SED, "--exp=1e").unwrap(), vec![option("--expression", Some("1e"))]);
        assert_eq!(read(&SED, "--exp 1e").unwrap(), vec![option("--expression", Some("1e"))]);
        assert_eq!(read(&SED, "--i").unwrap(), vec![option("--in-place", None)]);
        assert_eq!(read(&SED, "--quiet").unwrap(), vec![option("--quiet", None)]);
        assert_eq!(read(&SED, "--s"), Err(OptionError::Ambiguous("s".into())));
        assert_eq!(read(&SED, "--s").unwrap_err().to_string(), "the option `--s` is ambiguous");
        assert_eq!(read(&SED, "--sandboxx"), Err(OptionError::UnknownLong("sandboxx".into())));
        assert_eq!(read(&SED, "--quiet=1"), Err(OptionError::TakesNoArgument("quiet")));
        assert_eq!(read(&SED, "--quiet=1").unwrap_err().to_string(), "the option `--quiet` takes no argument");
        assert_eq!(read(&SED, "--exp"), Err(OptionError::LongNeedsArgument("expression")));
        assert_eq!(read(&SED, "-- -i").unwrap(), vec![Item::Operand("-i".into())]);
    }

    #[test]
    fn a_wrapper_stops_at_its_first_operand() {
        let table = OptionTable { short: "n:", long: &["adjustment="], stop_at_operand: true };
        let args: Vec<String> = "-n 5 rm -n x".split_whitespace().map(str::to_owned).collect();
        let read = table.read(&args).unwrap();
        assert_eq!(read.rest, 2);
        assert_eq!(read.items, vec![option("-n", Some("5"))]);
    }
}
