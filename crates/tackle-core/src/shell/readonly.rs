//! The safe list of docs/reference/safety.md#read-only-shell-commands: programs that only read,
//! with the argument checks that keep them so (`find` without `-exec`, `sed` without `-i` or
//! a writing script, read-only `git` subcommands). [`super::Analysis::is_read_only`] applies it
//! to every sub-command of a command.

/// Commands that only read, whatever their arguments (some get argument checks below).
const SAFE: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "date", "which", "type", "file", "stat", "du", "df",
    "tree", "sort", "uniq", "cut", "tr", "diff", "cmp", "basename", "dirname", "realpath", "true", "false", "test",
    "[", "rg", "grep", "egrep", "fgrep", "find", "sed", "git", "cargo",
];

/// Git subcommands that only read.
const GIT_SAFE: &[&str] = &["status", "log", "diff", "show", "branch", "rev-parse", "ls-files", "blame", "grep"];

/// Whether one simple command (normalized by [`super::analyze`]) is on the safe list with
/// safe arguments.
pub fn is_safe_command(words: &[String]) -> bool {
    let Some((name, args)) = words.split_first() else { return false };
    if !SAFE.contains(&name.as_str()) {
        return false;
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let has = |options: &[&str]| args.iter().any(|a| options.iter().any(|o| a == o || a.starts_with(&format!("{o}="))));
    match name.as_str() {
        "find" => !args.iter().any(|a| {
            matches!(*a, "-delete" | "-exec" | "-execdir" | "-ok" | "-okdir" | "-fls") || a.starts_with("-fprint")
        }),
        "sed" => sed_is_safe(&args),
        "git" => git_is_safe(&args),
        "cargo" => matches!(args.iter().find(|a| !a.starts_with('-')), Some(&"metadata" | &"tree")),
        "sort" => !has(&["-o", "--output"]) && !args.iter().any(|a| a.starts_with("-o")),
        "tree" => !args.iter().any(|a| a.starts_with("-o")),
        "date" => !has(&["-s", "--set"]) && !args.iter().any(|a| a.starts_with("-s")),
        "file" => !has(&["-C", "--compile"]),
        "printf" => !args.iter().any(|a| a.starts_with("-v")),
        "rg" => !has(&["--pre", "--pre-glob"]),
        "uniq" => args.iter().filter(|a| !a.starts_with('-')).count() <= 1,
        _ => true,
    }
}

fn git_is_safe(args: &[&str]) -> bool {
    let mut rest = args;
    // Global options before the subcommand (`-c` could install a program to run: refused).
    loop {
        match rest.split_first() {
            Some((&"-C", tail)) if !tail.is_empty() => rest = &tail[1..],
            Some((opt, tail))
                if *opt == "--no-pager" || opt.starts_with("--git-dir=") || opt.starts_with("--work-tree=") =>
            {
                rest = tail;
            }
            _ => break,
        }
    }
    let Some((sub, sub_args)) = rest.split_first() else { return false };
    if !GIT_SAFE.contains(sub) || sub_args.iter().any(|a| *a == "--output" || a.starts_with("--output=")) {
        return false;
    }
    match *sub {
        "grep" => !sub_args.iter().any(|a| *a == "-O" || a.starts_with("--open-files-in-pager") || a.starts_with("-O")),
        "branch" => {
            const WRITES: &[&str] = &[
                "-d",
                "-D",
                "-m",
                "-M",
                "-c",
                "-C",
                "-f",
                "-u",
                "-t",
                "--delete",
                "--move",
                "--copy",
                "--force",
                "--set-upstream-to",
                "--unset-upstream",
                "--edit-description",
                "--track",
                "--no-track",
            ];
            let listing = sub_args.iter().any(|a| *a == "--list" || *a == "-l");
            !sub_args.iter().any(|a| WRITES.iter().any(|w| a == w || a.starts_with(&format!("{w}="))))
                && (listing || sub_args.iter().all(|a| a.starts_with('-')))
        }
        _ => true,
    }
}

/// `sed` without `-i`, whose scripts only print, delete or substitute (no `w`, `W`, `e`, `r`
/// commands, no `w`/`e` substitution flags).
fn sed_is_safe(args: &[&str]) -> bool {
    let mut scripts = Vec::new();
    let mut positional_script = true;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg.starts_with("-i") || arg.starts_with("--in-place") || *arg == "-f" || arg.starts_with("--file") {
            return false;
        }
        if *arg == "-e" || *arg == "--expression" {
            positional_script = false;
            match iter.next() {
                Some(script) => scripts.push(*script),
                None => return false,
            }
        } else if let Some(script) = arg.strip_prefix("--expression=") {
            positional_script = false;
            scripts.push(script);
        } else if !arg.starts_with('-') && positional_script && scripts.is_empty() {
            scripts.push(arg);
        }
    }
    scripts.iter().all(|script| sed_script_is_safe(script))
}

fn sed_script_is_safe(script: &str) -> bool {
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // Addresses, separators and harmless commands.
            '0'..='9'
            | '$'
            | ','
            | '+'
            | '~'
            | '!'
            | ';'
            | '{'
            | '}'
            | ' '
            | '\t'
            | '\n'
            | 'p'
            | 'P'
            | 'd'
            | 'D'
            | 'n'
            | 'N'
            | 'q'
            | 'Q'
            | '='
            | 'l'
            | 'g'
            | 'G'
            | 'h'
            | 'H'
            | 'x' => {}
            '/' => {
                // A regex address.
                if !skip_delimited(&mut chars, '/') {
                    return false;
                }
                while chars.next_if(|&c| c == 'I' || c == 'M').is_some() {}
            }
            's' | 'y' => {
                let Some(delim) = chars.next() else { return false };
                if delim == '\\'
                    || delim == '\n'
                    || !skip_delimited(&mut chars, delim)
                    || !skip_delimited(&mut chars, delim)
                {
                    return false;
                }
                if c == 's' {
                    while let Some(flag) = chars.next_if(|&f| !matches!(f, ';' | '\n' | '}')) {
                        if !matches!(flag, 'g' | 'i' | 'I' | 'm' | 'M' | 'p' | '0'..='9' | ' ') {
                            return false;
                        }
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// Skips to just after the next unescaped `delim`; false if there is none.
fn skip_delimited(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, delim: char) -> bool {
    while let Some(c) = chars.next() {
        if c == '\\' {
            chars.next();
        } else if c == delim {
            return true;
        }
    }
    false
}
