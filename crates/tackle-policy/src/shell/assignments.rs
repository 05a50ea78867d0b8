//! Which environment variables a leading assignment (`LC_ALL=C sort f`, `env TZ=UTC date`) may
//! set with the command still read-only (docs/reference/safety.md#read-only-shell-commands).
//! Most variables are read by some program as configuration, and some name a program to run
//! or a library to load (`GIT_EXTERNAL_DIFF`, `PAGER`, `LD_PRELOAD`, `PATH`, `BASH_ENV`):
//! an assignment to those makes the command unanalyzable, since the program a rule names is
//! no longer what runs.

/// What an assignment to one name means for the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Risk {
    /// Formatting and locale only: the command may still be read-only.
    Harmless,
    /// Changes what programs run or load: unanalyzable.
    Dangerous,
    /// Anything else: analyzable, but not read-only.
    Other,
}

/// Names that only change formatting, locale or colours.
const HARMLESS: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "TERM",
    "COLUMNS",
    "LINES",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "COLORTERM",
    "TIME_STYLE",
    "QUOTING_STYLE",
    "BLOCK_SIZE",
    "BLOCKSIZE",
    "DU_BLOCK_SIZE",
    "DF_BLOCK_SIZE",
    "LS_BLOCK_SIZE",
    "LS_COLORS",
    "GREP_COLOR",
    "GREP_COLORS",
    "POSIXLY_CORRECT",
    "RUST_BACKTRACE",
];

/// Exact names that change what runs or is loaded.
const DANGEROUS: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "IFS",
    "HOME",
    "SHELL",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "TMPDIR",
    "MANPAGER",
    "BROWSER",
    "RIPGREP_CONFIG_PATH",
    "SUDO_ASKPASS",
    "SSH_ASKPASS",
    "LESSOPEN",
    "LESSCLOSE",
    "LESS",
    "MANOPT",
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "TERMINFO",
    "TERMINFO_DIRS",
    "HOSTALIASES",
    "RESOLV_HOST_CONF",
    "MAGIC",
    "SED",
    "GREP",
    "EXINIT",
    "VIMINIT",
    "MYVIMRC",
    "INPUTRC",
    "HISTFILE",
    "FIGNORE",
    "MAIL",
    "MAILPATH",
];

/// Prefixes and suffixes of names that change what runs or is loaded.
const DANGEROUS_PREFIXES: &[&str] = &[
    "LD_",
    "GIT_",
    "BASH_",
    "XDG_",
    "PYTHON",
    "PERL",
    "RUBY",
    "NODE_",
    "NPM_",
    "CARGO",
    "RUSTC",
    "RUSTDOC",
    "RUSTFLAGS",
    "DYLD_",
    "LESS",
    "SSH_",
    "GNUPG",
    "GPG",
    "MALLOC_",
    "GLIBC_",
    "GCONV",
];
const DANGEROUS_SUFFIXES: &[&str] =
    &["_OPTIONS", "_OPTS", "OPT", "_PAGER", "_EDITOR", "_CONFIG", "_PATH", "_HOME", "_ENV"];

/// The risk of assigning `name`.
pub fn risk(name: &str) -> Risk {
    if name.starts_with("LC_") || HARMLESS.contains(&name) {
        Risk::Harmless
    } else if name.is_empty()
        || DANGEROUS.contains(&name)
        || DANGEROUS_PREFIXES.iter().any(|p| name.starts_with(p))
        || DANGEROUS_SUFFIXES.iter().any(|s| name.ends_with(s))
        || name.contains("CONFIG")
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        Risk::Dangerous
    } else {
        Risk::Other
    }
}

#[cfg(test)]
mod tests {
    use super::{Risk, risk};

    #[test]
    fn names_fall_into_three_classes() {
        for name in ["LC_ALL", "LANG", "TZ", "NO_COLOR", "TERM", "COLUMNS"] {
            assert_eq!(risk(name), Risk::Harmless, "{name}");
        }
        for name in [
            "PATH",
            "LD_PRELOAD",
            "GIT_EXTERNAL_DIFF",
            "GIT_CONFIG_COUNT",
            "NODE_OPTIONS",
            "GREP_OPTIONS",
            "BASH_ENV",
            "ENV",
            "PAGER",
            "EDITOR",
            "IFS",
            "HOME",
            "XDG_CONFIG_HOME",
            "PYTHONSTARTUP",
            "a[$(rm v)]",
        ] {
            assert_eq!(risk(name), Risk::Dangerous, "{name}");
        }
        for name in ["FOO", "DEBUG", "CI"] {
            assert_eq!(risk(name), Risk::Other, "{name}");
        }
    }
}
