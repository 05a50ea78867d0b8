//! Normalization of one simple command (docs/reference/safety.md#compound-shell-commands):
//! the programs that only run another program (`timeout`, `nice`, `nohup`, `time`, `stdbuf`,
//! `env`, `xargs`, `flock`, `setsid`, `ionice`, `taskset`, `chrt`, `chronic`, `busybox`,
//! `command`, `builtin`, `exec`, and `sudo`/`doas` for deny rules) are peeled off, each with
//! its options read from its table ([`super::options`]; an unknown option makes the command
//! unanalyzable), so a rule sees the program that really runs; `find -exec` yields the command
//! it runs; `bash -c 'S'` (and `sh`, `zsh`, `dash`, `ksh`) and `flock F -c 'S'` yield a script
//! for a recursive parse. Programs that run a command through options not read here
//! (`strace`, `watch`, `unshare`, …) make the command unanalyzable.

use super::options::{Item, OptionTable};

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
    /// A wrapper's option writes a file (`/usr/bin/time -o FILE`).
    pub writes_files: bool,
    /// The names `env NAME=value CMD` assigns.
    pub assigned: Vec<String>,
}

/// The argument that stands, in a deny form, for those `xargs` appends at run time.
const APPENDED_ARGUMENT: &str = "{}";

/// The shells whose `-c` script is parsed again.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "mksh", "ash"];

/// Programs that run another program with options the analysis does not read (or that take
/// the command as one string): the command they run cannot be known.
const OPAQUE_RUNNERS: &[&str] = &[
    "strace",
    "ltrace",
    "watch",
    "script",
    "su",
    "runuser",
    "chroot",
    "unshare",
    "nsenter",
    "setpriv",
    "prlimit",
    "fakeroot",
    "fakechroot",
    "firejail",
    "systemd-run",
    "parallel",
    "unbuffer",
    "catchsegv",
    "valgrind",
    "gdb",
    "faketime",
    "proxychains",
    "proxychains4",
    "torsocks",
    "numactl",
    "sg",
    "newgrp",
    "pkexec",
    "dbus-run-session",
    "dbus-launch",
    "ssh-agent",
    "bwrap",
    "flatpak-spawn",
    "cpulimit",
    "tsp",
    "entr",
    "at",
    "batch",
    "screen",
    "tmux",
    "expect",
    "rlwrap",
    "sem",
    "nq",
    "caffeinate",
    "with-lock-ex",
    "lockrun",
    "run-one",
    "ts",
    "pv",
    "xvfb-run",
    "dbus-send",
    "stdbuf2",
    "coproc",
    "time2",
];

/// A program that runs the command after its options (and after `operands` operands of its own).
struct Wrapper {
    name: &'static str,
    options: OptionTable,
    /// Operands of the wrapper before the command (`timeout 5 CMD`: 1).
    operands: usize,
    /// Options after which the wrapper runs no command (`command -v`, `taskset -p`).
    no_command: &'static [&'static str],
    /// Options that write a file (`/usr/bin/time -o`).
    writes: &'static [&'static str],
}

const fn runs(short: &'static str, long: &'static [&'static str]) -> OptionTable {
    OptionTable { short, long, stop_at_operand: true }
}

/// The wrappers peeled, with their options.
const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        name: "timeout",
        options: runs(
            "k:s:v",
            &["kill-after=", "signal=", "preserve-status", "foreground", "verbose", "help", "version"],
        ),
        operands: 1,
        no_command: &["--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "nice",
        options: runs("n:", &["adjustment=", "help", "version"]),
        operands: 0,
        no_command: &["--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "nohup",
        options: runs("", &["help", "version"]),
        operands: 0,
        no_command: &["--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "time",
        options: runs(
            "apqvo:f:",
            &["append", "format=", "output=", "portability", "quiet", "verbose", "help", "version"],
        ),
        operands: 0,
        no_command: &["--help", "--version"],
        writes: &["-o", "--output"],
    },
    Wrapper {
        name: "stdbuf",
        options: runs("i:o:e:", &["input=", "output=", "error=", "help", "version"]),
        operands: 0,
        no_command: &["--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "env",
        options: runs(
            "0iu:C:S:v",
            &[
                "ignore-environment",
                "null",
                "unset=",
                "chdir=",
                "split-string=",
                "block-signal?",
                "default-signal?",
                "ignore-signal?",
                "list-signal-handling",
                "debug",
                "help",
                "version",
            ],
        ),
        operands: 0,
        no_command: &["--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "xargs",
        options: runs(
            "0a:d:E:e::I:i::L:l::n:oP:prs:tx",
            &[
                "null",
                "arg-file=",
                "delimiter=",
                "eof?",
                "replace?",
                "max-lines?",
                "max-args=",
                "open-tty",
                "max-procs=",
                "interactive",
                "process-slot-var=",
                "no-run-if-empty",
                "max-chars=",
                "show-limits",
                "verbose",
                "exit",
                "help",
                "version",
            ],
        ),
        operands: 0,
        no_command: &["--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "flock",
        options: runs(
            "sexunw:E:oFhV",
            &[
                "shared",
                "exclusive",
                "unlock",
                "nonblock",
                "nb",
                "timeout=",
                "wait=",
                "conflict-exit-code=",
                "close",
                "no-fork",
                "verbose",
                "help",
                "version",
            ],
        ),
        operands: 1,
        no_command: &["-h", "-V", "--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "setsid",
        options: runs("cfwhV", &["ctty", "fork", "wait", "help", "version"]),
        operands: 0,
        no_command: &["-h", "-V", "--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "ionice",
        options: runs("c:n:pPtuhV", &["class=", "classdata=", "pid", "pgid", "ignore", "uid", "help", "version"]),
        operands: 0,
        no_command: &["-p", "-P", "-u", "--pid", "--pgid", "--uid", "-h", "-V", "--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "taskset",
        options: runs("apchV", &["all-tasks", "pid", "cpu-list", "help", "version"]),
        operands: 1,
        no_command: &["-p", "--pid", "-h", "-V", "--help", "--version"],
        writes: &[],
    },
    Wrapper {
        name: "chrt",
        options: runs(
            "bdfiorRT:P:D:ampvhV",
            &[
                "batch",
                "deadline",
                "fifo",
                "idle",
                "other",
                "rr",
                "reset-on-fork",
                "sched-runtime=",
                "sched-period=",
                "sched-deadline=",
                "all-tasks",
                "max",
                "pid",
                "verbose",
                "help",
                "version",
            ],
        ),
        operands: 1,
        no_command: &["-m", "-p", "--max", "--pid", "-h", "-V", "--help", "--version"],
        writes: &[],
    },
    Wrapper { name: "chronic", options: runs("ev", &[]), operands: 0, no_command: &[], writes: &[] },
    Wrapper { name: "command", options: runs("pvV", &[]), operands: 0, no_command: &["-v", "-V"], writes: &[] },
    Wrapper { name: "builtin", options: runs("", &[]), operands: 0, no_command: &[], writes: &[] },
    Wrapper { name: "exec", options: runs("cla:", &[]), operands: 0, no_command: &[], writes: &[] },
    Wrapper {
        name: "sudo",
        options: runs(
            "AbEeHiKklnPSsVvg:h::p:r:t:U:u:C:D:T:R:",
            &[
                "askpass",
                "background",
                "bell",
                "close-from=",
                "chdir=",
                "preserve-env?",
                "edit",
                "group=",
                "set-home",
                "help",
                "host=",
                "login",
                "remove-timestamp",
                "reset-timestamp",
                "list",
                "non-interactive",
                "preserve-groups",
                "prompt=",
                "chroot=",
                "role=",
                "stdin",
                "shell",
                "type=",
                "command-timeout=",
                "other-user=",
                "user=",
                "version",
                "validate",
            ],
        ),
        operands: 0,
        no_command: &["-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K", "-V", "--version", "--help"],
        writes: &[],
    },
    Wrapper { name: "doas", options: runs("a:C:Lnsu:", &[]), operands: 0, no_command: &["-C", "-L"], writes: &[] },
];

/// The basename of a program given by path (`/bin/rm` → `rm`).
pub fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// What one wrapper layer gives.
enum Layer<'a> {
    /// Not a wrapper, or a wrapper that runs nothing: the command is this one.
    Stop,
    /// The command the wrapper runs.
    Runs(&'a [String]),
    /// The wrapper runs a shell script string (`flock FILE -c 'S'`).
    Script(String),
    /// The analysis cannot tell what it runs.
    Unanalyzable(String),
}

/// Reads one wrapper's options and operands; `peeled` learns of an option that writes a file
/// and of `env`'s assignments.
fn layer<'a>(wrapper: &Wrapper, args: &'a [String], peeled: &mut Peeled) -> Layer<'a> {
    let name = wrapper.name;
    let mut args = args;
    // `nice -5 CMD` (the historical spelling of `-n 5`).
    if name == "nice" && args.first().is_some_and(|a| a.starts_with('-') && a[1..].parse::<i32>().is_ok()) {
        args = &args[1..];
    }
    // `env -` is `env -i`.
    if name == "env" && args.first().is_some_and(|a| a == "-") {
        args = &args[1..];
    }
    let read = match wrapper.options.read(args) {
        Ok(read) => read,
        Err(why) => return Layer::Unanalyzable(format!("`{name}`: {why}")),
    };
    for item in &read.items {
        let Item::Option { name: option, .. } = item else { continue };
        if wrapper.no_command.contains(&option.as_str()) {
            return Layer::Stop;
        }
        if wrapper.writes.contains(&option.as_str()) {
            peeled.writes_files = true;
        }
        if name == "env" && matches!(option.as_str(), "-S" | "--split-string") {
            return Layer::Unanalyzable("env -S splits a string into a command".to_owned());
        }
    }
    let mut rest = &args[read.rest..];
    if rest.len() < wrapper.operands {
        return Layer::Stop;
    }
    if name == "flock" {
        rest = &rest[1..];
        if let Some(first) = rest.first()
            && (first == "-c"
                || first == "--command"
                || (first.starts_with("--c") && "--command".starts_with(first.as_str())))
        {
            return match rest.get(1) {
                Some(script) => Layer::Script(script.clone()),
                None => Layer::Unanalyzable("flock -c without a command".to_owned()),
            };
        }
    } else {
        rest = &rest[wrapper.operands..];
    }
    if name == "env" {
        while let Some(name) = rest.first().and_then(|a| assigned_name(a)) {
            peeled.assigned.push(name.to_owned());
            rest = &rest[1..];
        }
    }
    if rest.is_empty() { Layer::Stop } else { Layer::Runs(rest) }
}

/// Peels `words` (leading assignments already removed).
pub fn peel(words: &[String]) -> Peeled {
    let mut peeled = Peeled::default();
    let mut rest: &[String] = words;
    let mut layers = 0;
    // Whether a wrapper appends arguments to the command at run time (`xargs`).
    let mut appends_arguments = false;
    while let Some(first) = rest.first() {
        layers += 1;
        if layers > 32 {
            peeled.unanalyzable = Some("too many nested wrapper programs".to_owned());
            break;
        }
        let name = program_name(first);
        let next = if name == "busybox" {
            // `busybox rm` runs the applet `rm`; `busybox --list` runs nothing.
            match rest.get(1) {
                Some(applet) if !applet.starts_with('-') => Layer::Runs(&rest[1..]),
                _ => Layer::Stop,
            }
        } else if let Some(wrapper) = WRAPPERS.iter().find(|w| w.name == name) {
            if matches!(name, "sudo" | "doas") {
                let mut outer = Peeled::default();
                if let Layer::Runs(after) = layer(wrapper, &rest[1..], &mut outer) {
                    // An allow rule never sees through sudo: the inner command only joins the
                    // forms deny rules match.
                    let inner = peel(after);
                    peeled.deny_forms.push(after.to_vec());
                    peeled.deny_forms.extend(inner.deny_forms);
                    peeled.deny_forms.push(inner.words);
                    peeled.runs.extend(inner.runs);
                    peeled.script = inner.script;
                    peeled.unanalyzable = inner.unanalyzable;
                    peeled.writes_files |= inner.writes_files;
                    peeled.assigned.extend(inner.assigned);
                }
                break;
            }
            layer(wrapper, &rest[1..], &mut peeled)
        } else if OPAQUE_RUNNERS.contains(&name) {
            Layer::Unanalyzable(format!("`{name}` runs a command the analysis does not read"))
        } else {
            Layer::Stop
        };
        match next {
            Layer::Runs(next) => {
                appends_arguments |= name == "xargs";
                peeled.deny_forms.push(rest.to_vec());
                rest = next;
            }
            Layer::Script(script) => {
                // `flock F -c S` runs `sh -c S`.
                peeled.runs.push(vec!["sh".to_owned(), "-c".to_owned(), script]);
                break;
            }
            Layer::Unanalyzable(why) => {
                peeled.unanalyzable = Some(why);
                break;
            }
            Layer::Stop => {
                // `xargs` with no command runs `echo`.
                if name == "xargs" {
                    peeled.runs.push(vec!["echo".to_owned()]);
                }
                break;
            }
        }
    }
    peeled.words = rest.to_vec();
    if appends_arguments && !rest.is_empty() {
        // `echo v | xargs rm` runs `rm v`: deny and ask rules also see the command with an
        // argument after its own ones, so `Bash(rm *)` matches it as `Bash(rm:*)` does.
        let mut appended = rest.to_vec();
        appended.push(APPENDED_ARGUMENT.to_owned());
        peeled.deny_forms.push(appended);
    }
    if let Some(first) = rest.first() {
        let name = program_name(first);
        match name {
            "eval" | "source" | "." | "alias" | "trap" | "fc" | "enable" | "coproc" | "let" | "hash" | "compgen"
            | "complete" | "bind" => {
                peeled.unanalyzable = Some(format!("`{name}` runs text the analysis cannot see"));
            }
            "mapfile" | "readarray"
                if rest.iter().any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('C')) =>
            {
                peeled.unanalyzable = Some(format!("`{name} -C` runs a callback the analysis cannot see"));
            }
            _ if SHELLS.contains(&name) => shell_script(&rest[1..], &mut peeled),
            "find" => peeled.runs.extend(find_exec(&rest[1..])),
            _ => {}
        }
    }
    peeled
}

/// The name `NAME=value` assigns, if the word is an assignment.
fn assigned_name(word: &str) -> Option<&str> {
    word.split_once('=')
        .map(|(name, _)| name)
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// `bash -c 'S' …` gives its script (the first operand after `-c` and any further options);
/// a shell running a script file or reading its standard input runs commands the analysis
/// cannot see.
fn shell_script(args: &[String], peeled: &mut Peeled) {
    let mut iter = args.iter();
    let mut command_string = false;
    let mut stdin = false;
    let mut operand = None;
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--" => {
                operand = iter.next();
                break;
            }
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => {
                iter.next();
            }
            long if long.starts_with("--") => {}
            short if short.starts_with(['-', '+']) && short.len() > 1 => {
                command_string |= short.starts_with('-') && short.contains('c');
                stdin |= short.starts_with('-') && short.contains('s');
                // `-co opt` / `-ceO opt`: a bundled `o`/`O` takes the next word.
                if short.len() > 2 && short.ends_with(['o', 'O']) {
                    iter.next();
                }
            }
            _ => {
                operand = Some(arg);
                break;
            }
        }
    }
    peeled.unanalyzable = match (command_string, operand) {
        (true, Some(script)) => {
            peeled.script = Some(script.clone());
            None
        }
        (true, None) => Some("a shell's -c without a script".to_owned()),
        (false, Some(_)) if !stdin => Some("a shell running a script file".to_owned()),
        _ => Some("a shell reading commands from its standard input".to_owned()),
    };
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

    #[test]
    fn deny_rules_see_the_arguments_xargs_appends() {
        for input in ["xargs rm", "xargs -0 rm", "nice xargs -n1 rm", "sudo xargs rm", "xargs -I{} rm"] {
            let peeled = peel(&words(input));
            assert!(peeled.deny_forms.contains(&words("rm {}")), "{input}: {:?}", peeled.deny_forms);
        }
        // The command an allow rule sees stays as written.
        assert_eq!(peel(&words("xargs rm")).words, words("rm"));
        // Without xargs nothing is appended.
        assert!(!peel(&words("nice rm")).deny_forms.contains(&words("rm {}")));
    }
}
