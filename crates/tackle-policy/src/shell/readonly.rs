//! The safe list of docs/reference/safety.md#read-only-shell-commands: programs that only read,
//! each with the table of its options ([`super::options`]). A command is read-only when its
//! program is listed and every option it gives is in the program's table and not one of the
//! options that execute, write or read a script (listed in the table too, so a prefix such as
//! `--exp` resolves exactly as the program resolves it). An option not in the table means "not
//! read-only". Some programs get further checks: `sed` scripts, `find` predicates, `git`
//! subcommands, `date` operands. [`super::Analysis::is_read_only`] applies it to every
//! sub-command of a command.

use super::options::{Item, OptionTable};

/// One program of the safe list.
struct Program {
    name: &'static str,
    options: OptionTable,
    /// Options in the table that make the command not read-only (canonical: `-i`, `--in-place`).
    forbidden: &'static [&'static str],
    /// A further check of the options and operands read.
    check: Option<fn(&[Item]) -> bool>,
}

const fn table(short: &'static str, long: &'static [&'static str]) -> OptionTable {
    OptionTable { short, long, stop_at_operand: false }
}

const HELP: &[&str] = &["help", "version"];

/// The programs that only read, with their options.
const PROGRAMS: &[Program] = &[
    Program {
        name: "ls",
        options: table(
            "aAbBcCdDfFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ1",
            &[
                "all",
                "almost-all",
                "author",
                "escape",
                "block-size=",
                "ignore-backups",
                "color?",
                "directory",
                "dired",
                "classify?",
                "file-type",
                "format=",
                "full-time",
                "group-directories-first",
                "no-group",
                "human-readable",
                "si",
                "dereference-command-line",
                "dereference-command-line-symlink-to-dir",
                "hide=",
                "hyperlink?",
                "indicator-style=",
                "inode",
                "ignore=",
                "kibibytes",
                "dereference",
                "numeric-uid-gid",
                "literal",
                "hide-control-chars",
                "show-control-chars",
                "quote-name",
                "quoting-style=",
                "reverse",
                "recursive",
                "size",
                "sort=",
                "time=",
                "time-style=",
                "tabsize=",
                "width=",
                "context",
                "zero",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "cat",
        options: table(
            "AbeEnstTuv",
            &[
                "show-all",
                "number-nonblank",
                "show-ends",
                "number",
                "squeeze-blank",
                "show-tabs",
                "show-nonprinting",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "head",
        options: table(
            "c:n:qvz0123456789",
            &["bytes=", "lines=", "quiet", "silent", "verbose", "zero-terminated", "help", "version"],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "tail",
        options: table(
            "c:fFn:qs:vz0123456789",
            &[
                "bytes=",
                "follow?",
                "lines=",
                "max-unchanged-stats=",
                "pid=",
                "quiet",
                "silent",
                "retry",
                "sleep-interval=",
                "verbose",
                "zero-terminated",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "wc",
        options: table(
            "cmlLw",
            &["bytes", "chars", "lines", "files0-from=", "max-line-length", "words", "total=", "help", "version"],
        ),
        forbidden: &[],
        check: None,
    },
    Program { name: "pwd", options: table("LP", HELP), forbidden: &[], check: None },
    // Builtins that change only the shell's working directory: a read-only command runs
    // restricted in a child shell, which reports its directory back (docs/shell.md).
    Program { name: "cd", options: table("LPe@", &[]), forbidden: &[], check: None },
    Program { name: "pushd", options: table("n", &[]), forbidden: &[], check: None },
    Program { name: "popd", options: table("n", &[]), forbidden: &[], check: None },
    // `export NAME=value` of harmless names only (no options: `-f`, `-n` refused).
    Program {
        name: "export",
        options: table("", &[]),
        forbidden: &[],
        check: Some(|items| {
            items.iter().all(|item| match item {
                Item::Operand(word) => word
                    .split_once('=')
                    .is_some_and(|(name, _)| super::assignments::risk(name) == super::assignments::Risk::Harmless),
                Item::Option { .. } => false,
            })
        }),
    },
    Program { name: "echo", options: table("neE", &[]), forbidden: &[], check: Some(|_| true) },
    Program { name: "true", options: table("", &[]), forbidden: &[], check: None },
    Program { name: "false", options: table("", &[]), forbidden: &[], check: None },
    Program { name: "printf", options: table("v:", &[]), forbidden: &["-v"], check: None },
    Program {
        name: "date",
        options: table(
            "d:f:I::r:Rs:u",
            &[
                "date=",
                "file=",
                "iso-8601?",
                "resolution",
                "reference=",
                "rfc-email",
                "rfc-3339=",
                "debug",
                "set=",
                "utc",
                "universal",
                "help",
                "version",
            ],
        ),
        forbidden: &["-s", "--set"],
        // An operand other than `+FORMAT` sets the clock (`date 010203042020`).
        check: Some(|items| items.iter().all(|i| !matches!(i, Item::Operand(o) if !o.starts_with('+')))),
    },
    Program {
        name: "which",
        options: table(
            "as",
            &[
                "all",
                "skip-alias",
                "skip-functions",
                "skip-dot",
                "skip-tilde",
                "read-alias",
                "read-functions",
                "show-dot",
                "show-tilde",
                "tty-only",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        check: None,
    },
    Program { name: "type", options: table("afptP", &[]), forbidden: &[], check: None },
    Program {
        name: "file",
        options: table(
            "bcC0deE:F:f:hiIkLlm:nNpP:rsSvzZ",
            &[
                "brief",
                "checking-printout",
                "compile",
                "debug",
                "exclude=",
                "exclude-quiet=",
                "extension",
                "files-from=",
                "separator=",
                "mime",
                "mime-type",
                "mime-encoding",
                "keep-going",
                "list",
                "magic-file=",
                "no-buffer",
                "no-pad",
                "no-sandbox",
                "preserve-date",
                "parameter=",
                "raw",
                "special-files",
                "uncompress",
                "uncompress-noreport",
                "dereference",
                "no-dereference",
                "print0",
                "apple",
                "help",
                "version",
            ],
        ),
        // `-C` writes a compiled magic file; `-p` changes access times.
        forbidden: &["-C", "--compile", "-p", "--preserve-date"],
        check: None,
    },
    Program {
        name: "stat",
        options: table(
            "Lfc:t",
            &["dereference", "file-system", "format=", "printf=", "terse", "cached=", "help", "version"],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "du",
        options: table(
            "0abBcd:DhHklLmsStxX:",
            &[
                "null",
                "all",
                "apparent-size",
                "block-size=",
                "bytes",
                "total",
                "max-depth=",
                "dereference-args",
                "files0-from=",
                "human-readable",
                "inodes",
                "dereference",
                "no-dereference",
                "count-links",
                "si",
                "separate-dirs",
                "summarize",
                "threshold=",
                "time?",
                "time-style=",
                "exclude-from=",
                "exclude=",
                "one-file-system",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "df",
        options: table(
            "aB:hHiklPt:Tx:v",
            &[
                "all",
                "block-size=",
                "human-readable",
                "si",
                "inodes",
                "local",
                "output?",
                "portability",
                "sync",
                "no-sync",
                "total",
                "type=",
                "print-type",
                "exclude-type=",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "tree",
        options: table(
            "adlfxL:P:I:ospugDFqNQrtvhCAScnR:o:J",
            &[
                "noreport",
                "charset=",
                "filelimit=",
                "timefmt=",
                "dirsfirst",
                "sort=",
                "matchdirs",
                "ignore-case",
                "prune",
                "du",
                "si",
                "inodes",
                "device",
                "fromfile",
                "gitignore",
                "info",
                "help",
                "version",
                "output=",
            ],
        ),
        // `-o` writes its listing to a file; `-R` with `-H` writes 00Tree.html files.
        forbidden: &["-o", "--output", "-R"],
        check: None,
    },
    Program {
        name: "sort",
        options: table(
            "bcCdfghik:mMno:rRsS:t:T:uVy:z",
            &[
                "ignore-leading-blanks",
                "check?",
                "dictionary-order",
                "debug",
                "files0-from=",
                "ignore-case",
                "general-numeric-sort",
                "human-numeric-sort",
                "ignore-nonprinting",
                "key=",
                "merge",
                "month-sort",
                "numeric-sort",
                "output=",
                "reverse",
                "random-sort",
                "random-source=",
                "stable",
                "buffer-size=",
                "field-separator=",
                "temporary-directory=",
                "unique",
                "version-sort",
                "zero-terminated",
                "parallel=",
                "batch-size=",
                "compress-program=",
                "sort=",
                "help",
                "version",
            ],
        ),
        // `-o` writes a file, `--compress-program` runs a program, `-T` writes temporary files.
        forbidden: &["-o", "--output", "--compress-program", "-T", "--temporary-directory"],
        check: None,
    },
    Program {
        name: "uniq",
        options: table(
            "cdDf:is:uw:z",
            &[
                "count",
                "repeated",
                "all-repeated?",
                "skip-fields=",
                "group?",
                "ignore-case",
                "skip-chars=",
                "unique",
                "zero-terminated",
                "check-chars=",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        // A second operand is an output file.
        check: Some(|items| items.iter().filter(|i| matches!(i, Item::Operand(_))).count() <= 1),
    },
    Program {
        name: "cut",
        options: table(
            "b:c:d:f:nsz",
            &[
                "bytes=",
                "characters=",
                "delimiter=",
                "fields=",
                "complement",
                "only-delimited",
                "output-delimiter=",
                "zero-terminated",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "tr",
        options: table("cCdst", &["complement", "delete", "squeeze-repeats", "truncate-set1", "help", "version"]),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "diff",
        options: table(
            "abBcC:dD:eEfF:hiI:lL:nNpqrsS:tTuU:vwWx:X:y",
            &[
                "normal",
                "brief",
                "report-identical-files",
                "context?",
                "unified?",
                "ed",
                "rcs",
                "side-by-side",
                "width=",
                "left-column",
                "suppress-common-lines",
                "show-c-function",
                "show-function-line=",
                "label=",
                "expand-tabs",
                "initial-tab",
                "tabsize=",
                "suppress-blank-empty",
                "new-file",
                "unidirectional-new-file",
                "ignore-case",
                "ignore-tab-expansion",
                "ignore-trailing-space",
                "ignore-space-change",
                "ignore-all-space",
                "ignore-blank-lines",
                "ignore-matching-lines=",
                "text",
                "strip-trailing-cr",
                "recursive",
                "no-dereference",
                "starting-file=",
                "exclude=",
                "exclude-from=",
                "from-file=",
                "to-file=",
                "ignore-file-name-case",
                "no-ignore-file-name-case",
                "minimal",
                "horizon-lines=",
                "speed-large-files",
                "color?",
                "palette=",
                "old-line-format=",
                "new-line-format=",
                "unchanged-line-format=",
                "line-format=",
                "old-group-format=",
                "new-group-format=",
                "changed-group-format=",
                "unchanged-group-format=",
                "GTYPE-group-format=",
                "paginate",
                "ifdef=",
                "help",
                "version",
            ],
        ),
        // `--paginate` runs `pr`.
        forbidden: &["-l", "--paginate"],
        check: None,
    },
    Program {
        name: "cmp",
        options: table(
            "bi:ln:s",
            &["print-bytes", "ignore-initial=", "verbose", "bytes=", "quiet", "silent", "help", "version"],
        ),
        forbidden: &[],
        check: None,
    },
    Program {
        name: "basename",
        options: table("as:z", &["multiple", "suffix=", "zero", "help", "version"]),
        forbidden: &[],
        check: None,
    },
    Program { name: "dirname", options: table("z", &["zero", "help", "version"]), forbidden: &[], check: None },
    Program {
        name: "realpath",
        options: table(
            "eLmPqsz",
            &[
                "canonicalize-existing",
                "canonicalize-missing",
                "logical",
                "physical",
                "quiet",
                "relative-to=",
                "relative-base=",
                "strip",
                "no-symlinks",
                "zero",
                "help",
                "version",
            ],
        ),
        forbidden: &[],
        check: None,
    },
    Program { name: "grep", options: GREP, forbidden: &[], check: None },
    Program { name: "egrep", options: GREP, forbidden: &[], check: None },
    Program { name: "fgrep", options: GREP, forbidden: &[], check: None },
    Program {
        name: "rg",
        options: table(
            "A:B:bC:cd:E:e:f:FG:g:HhIiLlM:m:NnoPpqrRsSt:T:uUvVwxz0j:",
            &[
                "after-context=",
                "before-context=",
                "byte-offset",
                "case-sensitive",
                "color=",
                "colors=",
                "column",
                "context=",
                "context-separator=",
                "count",
                "count-matches",
                "crlf",
                "debug",
                "dfa-size-limit=",
                "encoding=",
                "engine=",
                "file=",
                "files",
                "files-with-matches",
                "files-without-match",
                "fixed-strings",
                "follow",
                "glob=",
                "glob-case-insensitive",
                "heading",
                "hidden",
                "iglob=",
                "ignore-case",
                "ignore-file=",
                "ignore-file-case-insensitive",
                "include-zero",
                "invert-match",
                "json",
                "line-buffered",
                "line-number",
                "line-regexp",
                "max-columns=",
                "max-columns-preview",
                "max-count=",
                "max-depth=",
                "max-filesize=",
                "mmap",
                "multiline",
                "multiline-dotall",
                "no-config",
                "no-filename",
                "no-heading",
                "no-hidden",
                "no-ignore",
                "no-ignore-dot",
                "no-ignore-exclude",
                "no-ignore-files",
                "no-ignore-global",
                "no-ignore-parent",
                "no-ignore-vcs",
                "no-line-number",
                "no-messages",
                "no-unicode",
                "null",
                "null-data",
                "only-matching",
                "passthru",
                "path-separator=",
                "pcre2",
                "pre=",
                "pre-glob=",
                "pretty",
                "quiet",
                "regexp=",
                "replace=",
                "search-zip",
                "smart-case",
                "sort=",
                "sortr=",
                "stats",
                "text",
                "threads=",
                "trim",
                "type=",
                "type-add=",
                "type-clear=",
                "type-list",
                "type-not=",
                "unrestricted",
                "vimgrep",
                "with-filename",
                "word-regexp",
                "help",
                "version",
                "files-with-matches",
                "hyperlink-format=",
            ],
        ),
        // `--pre` runs a program on every file; `-z` runs decompressors.
        forbidden: &["--pre", "--pre-glob", "-z", "--search-zip"],
        check: None,
    },
    Program { name: "find", options: table("HLPO::", &[]), forbidden: &[], check: Some(find_is_safe) },
    Program { name: "sed", options: SED, forbidden: &["-i", "--in-place", "-f", "--file"], check: Some(sed_is_safe) },
    Program { name: "test", options: table("", &[]), forbidden: &[], check: Some(|_| true) },
    Program { name: "[", options: table("", &[]), forbidden: &[], check: Some(|_| true) },
];

const GREP: OptionTable = table(
    "A:B:C:D:d:Ee:Ff:GHhIiLlm:noPqRrsTUuVvwxyZz0123456789ab",
    &[
        "extended-regexp",
        "fixed-strings",
        "basic-regexp",
        "perl-regexp",
        "regexp=",
        "file=",
        "ignore-case",
        "no-ignore-case",
        "word-regexp",
        "line-regexp",
        "null-data",
        "no-messages",
        "invert-match",
        "version",
        "help",
        "max-count=",
        "byte-offset",
        "line-number",
        "no-line-number",
        "line-buffered",
        "with-filename",
        "no-filename",
        "label=",
        "only-matching",
        "quiet",
        "silent",
        "binary-files=",
        "text",
        "directories=",
        "devices=",
        "recursive",
        "dereference-recursive",
        "include=",
        "exclude=",
        "exclude-from=",
        "exclude-dir=",
        "files-without-match",
        "files-with-matches",
        "count",
        "initial-tab",
        "null",
        "before-context=",
        "after-context=",
        "context=",
        "color?",
        "colour?",
        "binary",
    ],
);

const SED: OptionTable = table(
    "bnrsuzEe:f:i::l:",
    &[
        "binary",
        "debug",
        "expression=",
        "file=",
        "follow-symlinks",
        "in-place?",
        "line-length=",
        "null-data",
        "zero-terminated",
        "posix",
        "quiet",
        "silent",
        "regexp-extended",
        "sandbox",
        "separate",
        "unbuffered",
        "help",
        "version",
    ],
);

/// Whether one simple command (normalized by [`super::analyze`]) is on the safe list with
/// safe arguments.
pub fn is_safe_command(words: &[String]) -> bool {
    let Some((name, args)) = words.split_first() else { return false };
    if name == "git" {
        return git_is_safe(args);
    }
    let Some(program) = PROGRAMS.iter().find(|p| p.name == name) else { return false };
    // `echo`, `test` and `[` are builtins that take no options a getopt would read.
    if matches!(program.name, "echo" | "test" | "[") {
        return true;
    }
    if program.name == "printf" {
        return !args.first().is_some_and(|a| a.starts_with("-v"));
    }
    if program.name == "find" {
        // `find`'s own options (`-H`, `-L`, `-P`, `-O3`) come first, then its expression; `-D`
        // is refused with the rest of what is not known.
        let options =
            args.iter().take_while(|a| matches!(a.as_str(), "-H" | "-L" | "-P") || a.starts_with("-O")).count();
        let expression: Vec<Item> = args[options..].iter().map(|a| Item::Operand(a.clone())).collect();
        return find_is_safe(&expression);
    }
    let Ok(read) = program.options.read(args) else { return false };
    forbids_none(program, &read.items) && program.check.is_none_or(|check| check(&read.items))
}

fn forbids_none(program: &Program, items: &[Item]) -> bool {
    !items.iter().any(|i| matches!(i, Item::Option { name, .. } if program.forbidden.contains(&name.as_str())))
}

/// `find`'s expression: only the tests and actions that read and print.
fn find_is_safe(items: &[Item]) -> bool {
    const PREDICATES: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-regextype",
        "-type",
        "-xtype",
        "-maxdepth",
        "-mindepth",
        "-size",
        "-empty",
        "-newer",
        "-anewer",
        "-cnewer",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-nouser",
        "-nogroup",
        "-links",
        "-inum",
        "-samefile",
        "-lname",
        "-ilname",
        "-readable",
        "-writable",
        "-executable",
        "-fstype",
        "-true",
        "-false",
        "-not",
        "-and",
        "-or",
        "-a",
        "-o",
        "-print",
        "-print0",
        "-printf",
        "-ls",
        "-prune",
        "-quit",
        "-depth",
        "-d",
        "-xdev",
        "-mount",
        "-follow",
        "-noleaf",
        "-daystart",
        "-warn",
        "-nowarn",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-help",
        "-version",
        "-context",
    ];
    items.iter().all(|item| match item {
        Item::Operand(word) if word.starts_with('-') && word.len() > 1 => {
            PREDICATES.contains(&word.as_str()) || (word.starts_with("-newer") && word.len() == 8)
        }
        _ => true,
    })
}

/// Git subcommands that only read.
const GIT_SAFE: &[&str] = &["status", "log", "diff", "show", "branch", "rev-parse", "ls-files", "blame", "grep"];

/// Git's global options that may come before a read-only subcommand (`-c`, `--config-env`,
/// `--exec-path`, `-p`/`--paginate` are not among them).
const GIT_GLOBAL: OptionTable = OptionTable {
    short: "C:P",
    long: &[
        "no-pager",
        "git-dir=",
        "work-tree=",
        "no-optional-locks",
        "literal-pathspecs",
        "no-replace-objects",
        "bare",
        "namespace=",
        "glob-pathspecs",
        "noglob-pathspecs",
        "icase-pathspecs",
        "no-advice",
        "config-env=",
        "exec-path?",
        "paginate",
        "html-path",
        "man-path",
        "info-path",
        "list-cmds=",
        "attr-source=",
    ],
    stop_at_operand: true,
};

/// Options of the read-only subcommands that run a program, write a file or read a script
/// (git resolves abbreviations too, so any prefix of one is refused).
const GIT_FORBIDDEN_LONG: &[&str] = &[
    "output",
    "output-directory",
    "open-files-in-pager",
    "ext-diff",
    "textconv",
    "exec",
    "upload-pack",
    "receive-pack",
    "config",
    "edit-description",
    "set-upstream-to",
    "unset-upstream",
    "track",
    "no-track",
    "delete",
    "move",
    "copy",
    "force",
    "create-reflog",
    "recurse-submodules",
    "contents",
];

fn git_is_safe(args: &[String]) -> bool {
    let Ok(global) = GIT_GLOBAL.read(args) else { return false };
    let refused = ["--config-env", "--exec-path", "--paginate", "--list-cmds", "--attr-source"];
    if global.items.iter().any(|i| matches!(i, Item::Option { name, .. } if refused.contains(&name.as_str()))) {
        return false;
    }
    let Some((sub, sub_args)) = args[global.rest..].split_first() else { return false };
    if !GIT_SAFE.contains(&sub.as_str()) {
        return false;
    }
    for arg in sub_args {
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let word = long.split_once('=').map_or(long, |(w, _)| w);
            if GIT_FORBIDDEN_LONG.iter().any(|f| f.starts_with(word)) {
                return false;
            }
        } else if let Some(short) = arg.strip_prefix('-') {
            // `git grep -O`, `-Ovim`, `-nO`; `git branch -d`, `-D`, `-m`, `-M`, `-c`, `-C`, `-f`,
            // `-u`, `-t` and the like.
            let refused = match sub.as_str() {
                "grep" => "O",
                "branch" => "dDmMcCfut",
                _ => "",
            };
            if short.chars().any(|c| refused.contains(c)) {
                return false;
            }
        }
    }
    if sub == "branch" {
        // Without `--list`/`-l`, an operand creates a branch.
        let listing = sub_args.iter().any(|a| a == "--list" || a == "-l");
        return listing || sub_args.iter().all(|a| a.starts_with('-'));
    }
    true
}

/// `sed` whose scripts only print, delete or substitute (no `w`, `W`, `e`, `r` commands, no
/// `w`/`e` substitution flags). `-i` and `-f` are refused by the table.
fn sed_is_safe(items: &[Item]) -> bool {
    let mut scripts: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            Item::Option { name, value: Some(value) } if name == "-e" || name == "--expression" => Some(value.as_str()),
            _ => None,
        })
        .collect();
    if scripts.is_empty() {
        match items.iter().find_map(|i| match i {
            Item::Operand(o) => Some(o.as_str()),
            _ => None,
        }) {
            Some(script) => scripts.push(script),
            None => return false,
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
    use super::is_safe_command;

    fn safe(line: &str) -> bool {
        is_safe_command(&line.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
    }

    #[test]
    fn gnu_spellings_of_writing_options_are_refused() {
        for command in [
            "sed -nf p x",
            "sed --exp=1e x",
            "sed --e 1e x",
            "sed --i s/a/b/ f",
            "sed -ni p f",
            "sed p f -i",
            "sort -uo out in",
            "sort --o=out in",
            "sort -S 1 --compress-program=sh in",
            "sort --comp=sh in",
            "sort -T /tmp in",
            "date -s 2020-01-01",
            "date -us 2020-01-01",
            "date --se=2020-01-01",
            "date 010203042020",
            "git grep --op=vim x",
            "git grep -nO x",
            "git diff --out=x",
            "git diff --ext",
            "git log --textconv",
            "git -c core.pager=sh log",
            "git --config-env=a=B log",
            "git -p log",
            "git --pag log",
            "git branch -dr x",
            "find . -fprint0 x",
            "find . -exec rm ;",
            "find . -fls x",
            "find . -delete",
            "find -D exec .",
            "rg --pr=./x a",
            "rg -zn a",
            "cargo metadata",
            "cargo tree",
            "tree -o out",
            "file -C",
            "uniq a b",
            "ls --unknown-option",
            "cat --s",
            "head --bytes",
            "printf -v x y",
            "diff --pag a b",
        ] {
            assert!(!safe(command), "should not be read-only: {command}");
        }
    }

    #[test]
    fn read_only_spellings_stay_read_only() {
        for command in [
            "sed -n 1,20p f",
            "sed -ne 1p -e 2p f",
            "sed --quiet --expr=1p f",
            "sed -E s/a/b/g f",
            "sort -u -k 2 f",
            "sort -rn --key=2 f",
            "date +%s",
            "date -u +%F",
            "date -d yesterday",
            "ls -la --color=auto",
            "ls --col",
            "head -n5 f",
            "head -20 f",
            "git --no-pager log --oneline -5",
            "git -C sub status --short",
            "git diff --stat HEAD~1",
            "git grep -n foo",
            "git branch -a -v",
            "find . -name x -type f -print",
            "find -L . -newermt 2020-01-01",
            "rg -n --type rust TODO",
            "grep -rn --include=*.rs x .",
            "uniq -c",
            "cut -d: -f1",
            "wc -l",
        ] {
            assert!(safe(command), "should be read-only: {command}");
        }
    }
}
