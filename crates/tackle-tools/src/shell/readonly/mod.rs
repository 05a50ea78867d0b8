//! Which `bash` commands only read (docs/reference/safety.md#read-only-shell-commands), for the permission modes: such a call runs
//! without asking in every mode. The answer is conservative: anything this small lexer does not
//! fully understand (control keywords, arithmetic, a command name from a variable, a write
//! redirection, an unknown option that could write or run a program) is not read-only.
//!
//! A command is read-only when every sub-command (split at `&&`, `||`, `;`, `|`, `|&`, `&`,
//! newlines, parentheses, and inside `$( … )`, backticks, `<( … )`, `>( … )`) is on the safe
//! list with safe arguments, and no output is redirected anywhere but `/dev/null`.

mod lexer;

use self::lexer::{Lexer, Word, is_name};

/// Commands that only read, whatever their arguments (some get argument checks below).
const SAFE: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "date", "which", "type", "file", "stat", "du", "df",
    "tree", "sort", "uniq", "cut", "tr", "diff", "cmp", "basename", "dirname", "realpath", "true", "false", "test",
    "[", "rg", "grep", "egrep", "fgrep", "find", "sed", "git", "cargo",
];

/// Git subcommands that only read.
const GIT_SAFE: &[&str] = &["status", "log", "diff", "show", "branch", "rev-parse", "ls-files", "blame", "grep"];

/// Whether `command` only reads.
pub fn is_read_only(command: &str) -> bool {
    match Lexer::new(command).commands() {
        Some(commands) => !commands.is_empty() && commands.iter().all(|words| command_is_safe(words)),
        None => false,
    }
}

/// Whether one simple command is on the safe list with safe arguments.
fn command_is_safe(words: &[Word]) -> bool {
    let words: Vec<&Word> = words.iter().filter(|w| w.text != "{" && w.text != "}").collect();
    let mut rest = words.as_slice();
    // Leading `NAME=value` assignments only set the command's environment...
    while let Some((first, tail)) = rest.split_first() {
        match first.text.split_once('=') {
            Some((name, _)) if is_name(name) => rest = tail,
            _ => break,
        }
    }
    // ...but a command of nothing but assignments changes the shell.
    let Some((name, args)) = rest.split_first() else { return words.is_empty() };
    if name.expands || !SAFE.contains(&name.text.as_str()) {
        return false;
    }
    let args: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let has = |options: &[&str]| args.iter().any(|a| options.iter().any(|o| a == o || a.starts_with(&format!("{o}="))));
    match name.text.as_str() {
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

#[cfg(test)]
mod tests {
    use super::is_read_only;

    #[test]
    fn read_only_commands() {
        for command in [
            "ls -la",
            "cat src/main.rs | head -n 20",
            "grep -rn 'fn main' src && wc -l README.md",
            "git status; git diff HEAD~1 -- src",
            "git -C sub log --oneline -5",
            "git branch",
            "git branch -a -v",
            "git branch --list 'feat*'",
            "find . -name '*.rs' -type f 2>/dev/null",
            "sed -n '1,20p' file.txt",
            "sed 's/foo/bar/g' file.txt",
            "sed -e '/^#/d' -e 's|a|b|' f",
            "echo $(pwd) `basename $HOME`",
            "diff <(sort a) <(sort b)",
            "ls > /dev/null 2>&1",
            "cat file 2>&1 | sort | uniq -c",
            "cargo metadata --format-version 1",
            "cargo tree -e normal",
            "rg -n TODO --type rust",
            "echo \"a;b\" 'c|d'",
            "cat <<EOF\nhello\nEOF",
            "LC_ALL=C sort file",
            "test -f x && echo yes || echo no",
            "[ -d src ]",
            "echo ${HOME:-/root}",
            "ls # a comment; rm -rf /",
            "(ls && pwd)",
            "cat <<'EOF'\n$(rm x)\nEOF\necho done",
            "cat <<-END\n\tline\n\tEND",
            "cat <<< \"a b\"",
            "{ ls; pwd; }",
        ] {
            assert!(is_read_only(command), "should be read-only: {command}");
        }
    }

    #[test]
    fn commands_that_write_run_programs_or_are_not_understood() {
        for command in [
            "rm -rf target",
            "ls > out.txt",
            "echo hi >> log",
            "cat a &> all.txt",
            "ls >&out.txt",
            "sed -i 's/a/b/' f",
            "sed 's/a/b/w out' f",
            "sed '1e rm -rf /' f",
            "sed -f script.sed f",
            "find . -delete",
            "find . -exec rm {} \\;",
            "find . -fprint out",
            "git commit -m x",
            "git push",
            "git -c core.pager=sh log",
            "git diff --output=patch.diff",
            "git branch new-feature",
            "git branch -D old",
            "git grep -O vim foo",
            "cargo build",
            "echo $(rm -rf /)",
            "echo `touch x`",
            "ls && touch x",
            "ls; npm install",
            "ls | xargs rm",
            "$CMD args",
            "x=1",
            "echo $((x=5))",
            "echo ${x:=5}",
            "for f in *; do cat $f; done",
            "if true; then ls; fi",
            "sort -o out in",
            "uniq in out",
            "date -s '2020-01-01'",
            "printf -v var x",
            "rg --pre ./evil foo",
            "tree -o out.txt",
            "python3 -c 'print(1)'",
            "/bin/ls",
            "cat > file <<EOF\nx\nEOF",
            "echo 'unterminated",
            "",
            "ls >",
            "tee out.txt",
            "diff <(rm a) b",
            "cd src",
            "cat <<EOF\n$(rm x)\nEOF",
            "cat <<EOF\nx\nEOF\nrm y",
        ] {
            assert!(!is_read_only(command), "should not be read-only: {command}");
        }
    }
}
