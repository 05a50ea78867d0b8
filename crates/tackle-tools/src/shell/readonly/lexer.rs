//! A small shell lexer for the read-only check: it splits a command line into simple commands
//! (lists of words) and refuses, by answering `None`, whatever could write or run something it
//! cannot see through: output redirections other than `/dev/null`, arithmetic, assigning
//! parameter expansions, and substitutions whose commands are not read-only themselves.

use super::is_read_only;

/// One word of a simple command.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Word {
    pub(super) text: String,
    /// It holds an unquoted or double-quoted `$` expansion or a glob: its value is not literal.
    pub(super) expands: bool,
}

/// Splits a command line into simple commands (lists of words), checking redirections and
/// substitutions on the way. `None` means "not read-only" (or not understood).
pub(super) struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    commands: Vec<Vec<Word>>,
    words: Vec<Word>,
    word: Option<Word>,
    /// Here-documents whose bodies start after the next newline: delimiter, `<<-`, quoted.
    heredocs: Vec<(String, bool, bool)>,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Lexer {
            chars: text.chars().peekable(),
            commands: Vec::new(),
            words: Vec::new(),
            word: None,
            heredocs: Vec::new(),
        }
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            self.words.push(word);
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            self.commands.push(std::mem::take(&mut self.words));
        }
    }

    pub(super) fn commands(mut self) -> Option<Vec<Vec<Word>>> {
        while let Some(c) = self.chars.next() {
            match c {
                ' ' | '\t' => self.end_word(),
                '\n' => {
                    self.end_command();
                    self.heredoc_bodies()?;
                }
                ';' | '(' | ')' => self.end_command(),
                '|' => {
                    self.chars.next_if(|&n| n == '|' || n == '&');
                    self.end_command();
                }
                '&' => {
                    if self.chars.next_if_eq(&'>').is_some() {
                        self.chars.next_if_eq(&'>');
                        self.end_word();
                        self.redirect_target(true)?;
                    } else {
                        self.chars.next_if_eq(&'&');
                        self.end_command();
                    }
                }
                '>' | '<' => self.redirection(c)?,
                '#' if self.word.is_none() => while self.chars.next_if(|&n| n != '\n').is_some() {},
                '\\' => match self.chars.next() {
                    Some('\n') | None => {}
                    Some(escaped) => self.word().text.push(escaped),
                },
                '\'' => {
                    let word = self.word.get_or_insert_with(Word::default);
                    loop {
                        match self.chars.next()? {
                            '\'' => break,
                            other => word.text.push(other),
                        }
                    }
                }
                '"' => self.double_quoted()?,
                '`' => {
                    let inner = self.until_backtick()?;
                    self.substitution(&inner)?;
                }
                '$' => self.dollar()?,
                '*' | '?' | '[' | '{' | '}' | '~' => {
                    let word = self.word();
                    word.text.push(c);
                    word.expands |= c != '[' || word.text.len() > 1;
                }
                other => self.word().text.push(other),
            }
        }
        self.end_command();
        Some(self.commands)
    }

    /// `>`, `>>`, `>|`, `>&`, `<`, `<<`, `<<<`, `<&`, `<>` (an all-digit word just before is
    /// the descriptor).
    fn redirection(&mut self, first: char) -> Option<()> {
        if self.word.as_ref().is_some_and(|w| !w.text.is_empty() && w.text.chars().all(|c| c.is_ascii_digit())) {
            self.word = None;
        }
        self.end_word();
        if first == '<' {
            if self.chars.next_if_eq(&'(').is_some() {
                return self.process_substitution();
            }
            if self.chars.next_if_eq(&'>').is_some() {
                return self.redirect_target(true).map(drop);
            }
            if self.chars.next_if_eq(&'&').is_some() {
                return self.redirect_target(false).map(drop);
            }
            if self.chars.next_if_eq(&'<').is_some() {
                if self.chars.next_if_eq(&'<').is_some() {
                    return self.redirect_target(false).map(drop);
                }
                let strip_tabs = self.chars.next_if_eq(&'-').is_some();
                let (delimiter, quoted) = self.redirect_target(false)?;
                self.heredocs.push((delimiter, strip_tabs, quoted));
                return Some(());
            }
            return self.redirect_target(false).map(drop);
        }
        if self.chars.next_if_eq(&'(').is_some() {
            return self.process_substitution();
        }
        if self.chars.next_if_eq(&'&').is_some() {
            // `>&2`, `>&-`: a descriptor duplication; anything else names a file.
            self.skip_blanks();
            let dup = self.chars.peek().is_some_and(|c| c.is_ascii_digit() || *c == '-');
            return self.redirect_target(!dup).map(drop);
        }
        self.chars.next_if(|&c| c == '>' || c == '|');
        self.redirect_target(true).map(drop)
    }

    fn skip_blanks(&mut self) {
        while self.chars.next_if(|&c| c == ' ' || c == '\t').is_some() {}
    }

    /// Reads the target word of a redirection (and whether any of it was quoted); an output
    /// target must be `/dev/null`.
    fn redirect_target(&mut self, output: bool) -> Option<(String, bool)> {
        self.skip_blanks();
        let mut target = String::new();
        let mut quoted = false;
        while let Some(c) =
            self.chars.next_if(|&c| !matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')'))
        {
            match c {
                '\'' | '"' => {
                    quoted = true;
                    loop {
                        match self.chars.next()? {
                            end if end == c => break,
                            '$' | '`' if c == '"' => return None,
                            other => target.push(other),
                        }
                    }
                }
                '\\' => {
                    quoted = true;
                    target.push(self.chars.next()?);
                }
                '$' | '`' => return None,
                other => target.push(other),
            }
        }
        if target.is_empty() || (output && target != "/dev/null") {
            return None;
        }
        Some((target, quoted))
    }

    /// Skips the bodies of the pending here-documents (the lines after the newline just read).
    /// An unquoted body expands `$( … )` and backticks, which are refused there.
    fn heredoc_bodies(&mut self) -> Option<()> {
        for (delimiter, strip_tabs, quoted) in std::mem::take(&mut self.heredocs) {
            loop {
                let mut line = String::new();
                while let Some(c) = self.chars.next_if(|&c| c != '\n') {
                    line.push(c);
                }
                let at_end = self.chars.next().is_none();
                let line = if strip_tabs { line.trim_start_matches('\t') } else { line.as_str() };
                if line == delimiter {
                    break;
                }
                if !quoted && (line.contains("$(") || line.contains('`')) {
                    return None;
                }
                if at_end {
                    break;
                }
            }
        }
        Some(())
    }

    fn double_quoted(&mut self) -> Option<()> {
        self.word();
        loop {
            match self.chars.next()? {
                '"' => return Some(()),
                '\\' => {
                    let escaped = self.chars.next()?;
                    self.word().text.push(escaped);
                }
                '`' => {
                    let inner = self.until_backtick()?;
                    self.substitution(&inner)?;
                }
                '$' => self.dollar()?,
                other => self.word().text.push(other),
            }
        }
    }

    /// After `$`: a variable, `${…}`, `$(…)`; arithmetic `$((…))` is refused.
    fn dollar(&mut self) -> Option<()> {
        self.word().expands = true;
        match self.chars.peek() {
            Some('(') => {
                self.chars.next();
                if self.chars.peek() == Some(&'(') {
                    return None;
                }
                let inner = self.until_close_paren()?;
                self.substitution(&inner)
            }
            Some('{') => {
                self.chars.next();
                let mut inner = String::new();
                loop {
                    match self.chars.next()? {
                        '}' => break,
                        '$' | '`' => return None,
                        other => inner.push(other),
                    }
                }
                // `${x:=v}` and `${x=v}` assign.
                if inner.contains(":=") || inner.split_once('=').is_some_and(|(name, _)| is_name(name)) {
                    return None;
                }
                Some(())
            }
            _ => Some(()),
        }
    }

    fn process_substitution(&mut self) -> Option<()> {
        let inner = self.until_close_paren()?;
        self.substitution(&inner)
    }

    fn substitution(&mut self, inner: &str) -> Option<()> {
        self.word().expands = true;
        is_read_only(inner).then_some(())
    }

    /// The text up to the `)` that closes an already opened `(`, respecting quotes.
    fn until_close_paren(&mut self) -> Option<String> {
        let mut depth = 1;
        let mut inner = String::new();
        let mut quote: Option<char> = None;
        loop {
            let c = self.chars.next()?;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') => {
                    inner.push(c);
                    inner.push(self.chars.next()?);
                    continue;
                }
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '\\') => {
                    inner.push(c);
                    inner.push(self.chars.next()?);
                    continue;
                }
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(inner);
                    }
                }
                (None, _) => {}
            }
            inner.push(c);
        }
    }

    fn until_backtick(&mut self) -> Option<String> {
        let mut inner = String::new();
        loop {
            match self.chars.next()? {
                '`' => return Some(inner),
                '\\' => inner.push(self.chars.next()?),
                other => inner.push(other),
            }
        }
    }
}

/// Whether `text` is a shell variable name.
pub(super) fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
