//! Normalization of one simple command (docs/reference/safety.md#compound-shell-commands):
//! the programs that only run another program (`timeout`, `nice`, `nohup`, `time`, `stdbuf`,
//! `env`, `xargs`, `command`, `builtin`, `exec`, and `sudo`/`doas` for deny rules) are peeled
//! off so a rule sees the program that really runs; `find -exec` yields the command it runs;
//! `bash -c 'S'` (and `sh`, `zsh`, `dash`, `ksh`) yields its script for a recursive parse.

/// What peeling a command's wrappers found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Peeled {
    /// The command a rule is matched against (wrappers removed).
    pub words: Vec<String>,
    /// Further forms that deny and ask rules also see: the command with each wrapper still
    /// on, and with `sudo`/`doas` removed (an allow rule never sees those).
    pub deny_forms: Vec<Vec<String>>,
    /// Commands this one runs besides itself (`find -exec CMD ;`).
    pub runs: Vec<Vec<String>>,
    /// The script of `bash -c 'S'`.
    pub script: Option<String>,
    /// Why the command cannot be analyzed (`eval`, `source`, a shell reading its stdin).
    pub unanalyzable: Option<String>,
}

/// The shells whose `-c` script is parsed again.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox"];

/// Options of the wrappers that take a value as the next word.
fn takes_value(wrapper: &str, option: &str) -> bool {
    match wrapper {
        "timeout" => matches!(option, "-s" | "--signal" | "-k" | "--kill-after"),
        "nice" => matches!(option, "-n" | "--adjustment"),
        "stdbuf" => matches!(option, "-i" | "-o" | "-e"),
        "env" => matches!(option, "-u" | "--unset" | "-C" | "--chdir"),
        "xargs" => matches!(
            option,
            "-I" | "-i" | "-n" | "-P" | "-d" | "-L" | "-l" | "-s" | "-E" | "-e" | "-a" | "--arg-file" | "--delimiter"
        ),
        "exec" => option == "-a",
        "sudo" | "doas" => matches!(option, "-u" | "-g" | "-C" | "-D" | "-h" | "-p" | "-r" | "-t" | "-U"),
        _ => false,
    }
}

/// The basename of a program given by path (`/bin/rm` → `rm`).
pub fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Peels `words` (leading assignments already removed).
pub fn peel(words: &[String]) -> Peeled {
    let mut peeled = Peeled::default();
    let mut rest: &[String] = words;
    let mut layers = 0;
    while let Some(first) = rest.first() {
        layers += 1;
        if layers > 32 {
            peeled.unanalyzable = Some("too many nested wrapper programs".to_owned());
            break;
        }
        let name = program_name(first);
        let next = match name {
            "timeout" => skip_options(name, &rest[1..]).get(1..),
            "nice" | "nohup" | "time" | "stdbuf" | "builtin" | "setsid" => Some(skip_options(name, &rest[1..])),
            "command" => {
                let args = &rest[1..];
                if args.first().is_some_and(|a| a.starts_with("-v") || a.starts_with("-V")) {
                    None
                } else {
                    Some(skip_options(name, args))
                }
            }
            "exec" => Some(skip_options(name, &rest[1..])),
            "env" => {
                let args = &rest[1..];
                if args.iter().any(|a| a == "-S" || a.starts_with("--split-string") || a.starts_with("-S")) {
                    peeled.unanalyzable = Some("env -S splits a string into a command".to_owned());
                    break;
                }
                let mut after = skip_options(name, args);
                while after.first().is_some_and(|a| is_assignment(a)) {
                    after = &after[1..];
                }
                Some(after)
            }
            "xargs" => Some(skip_options(name, &rest[1..])),
            "sudo" | "doas" => {
                let after = skip_options(name, &rest[1..]);
                if !after.is_empty() {
                    let inner = peel(after);
                    peeled.deny_forms.push(after.to_vec());
                    peeled.deny_forms.extend(inner.deny_forms);
                    peeled.deny_forms.push(inner.words);
                    peeled.runs.extend(inner.runs);
                    peeled.script = inner.script;
                    peeled.unanalyzable = inner.unanalyzable;
                }
                None
            }
            _ => None,
        };
        match next {
            // A wrapper with nothing after it runs nothing else (`time`, `env`): keep it.
            Some(next) if !next.is_empty() => {
                peeled.deny_forms.push(rest.to_vec());
                rest = next;
            }
            _ => break,
        }
    }
    peeled.words = rest.to_vec();
    if let Some(first) = rest.first() {
        let name = program_name(first);
        match name {
            "eval" | "source" | "." | "alias" | "trap" | "fc" | "enable" => {
                peeled.unanalyzable = Some(format!("`{name}` runs text the analysis cannot see"));
            }
            _ if SHELLS.contains(&name) => shell_script(&rest[1..], &mut peeled),
            "find" => peeled.runs.extend(find_exec(&rest[1..])),
            _ => {}
        }
    }
    peeled
}

/// Skips the options of `wrapper` (and their values) at the start of `args`.
fn skip_options<'a>(wrapper: &str, args: &'a [String]) -> &'a [String] {
    let mut rest = args;
    while let Some(first) = rest.first() {
        if first == "--" {
            return &rest[1..];
        }
        // `nice -5 cmd`, `stdbuf -oL cmd`: an option glued to its value.
        if !first.starts_with('-') || first == "-" {
            break;
        }
        let consumes_next = takes_value(wrapper, first);
        rest = &rest[1..];
        if consumes_next && !rest.is_empty() {
            rest = &rest[1..];
        }
    }
    rest
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=')
        .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// `bash -c 'S' …` gives its script; a shell without `-c` and without a script file reads
/// commands from its standard input, which the analysis cannot see.
fn shell_script(args: &[String], peeled: &mut Peeled) {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "-c" || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c')) {
            match iter.next() {
                Some(script) => peeled.script = Some(script.clone()),
                None => peeled.unanalyzable = Some("a shell's -c without a script".to_owned()),
            }
            return;
        }
        if arg == "-s" || arg.starts_with("-s") {
            break;
        }
        if arg == "-o" || arg == "+o" || arg == "-O" || arg == "+O" {
            iter.next();
            continue;
        }
        if !arg.starts_with(['-', '+']) {
            // A script file: it runs, but like any program it is matched by its name.
            return;
        }
    }
    peeled.unanalyzable = Some("a shell reading commands from its standard input".to_owned());
}

/// The commands `find … -exec CMD … ;` runs.
fn find_exec(args: &[String]) -> Vec<Vec<String>> {
    let mut runs = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if matches!(arg.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let command: Vec<String> = iter.by_ref().take_while(|a| *a != ";" && *a != "+").cloned().collect();
            if !command.is_empty() {
                runs.push(command);
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn wrappers_are_peeled() {
        for (input, expected) in [
            ("timeout -s KILL 5 rm -rf /", "rm -rf /"),
            ("nice -n 10 nohup time rm x", "rm x"),
            ("env -i A=1 B=2 rm x", "rm x"),
            ("xargs -I {} -n 1 rm", "rm"),
            ("stdbuf -oL command exec rm x", "rm x"),
            ("time", "time"),
        ] {
            assert_eq!(peel(&words(input)).words, words(expected), "{input}");
        }
    }

    #[test]
    fn shells_find_and_eval_are_seen_through() {
        assert_eq!(peel(&words("bash -c x")).script.as_deref(), Some("x"));
        assert_eq!(peel(&words("sh -xc y")).script.as_deref(), Some("y"));
        assert!(peel(&words("bash")).unanalyzable.is_some());
        assert!(peel(&words("bash -s")).unanalyzable.is_some());
        assert!(peel(&words("eval x")).unanalyzable.is_some());
        assert_eq!(peel(&words("find . -exec rm -f {} ;")).runs, vec![words("rm -f {}")]);
        assert_eq!(peel(&words("sudo -u root rm x")).deny_forms.last(), Some(&words("rm x")));
    }
}
