//! Running a command that was allowed only because the shell analysis judged it read-only
//! (docs/shell.md, "Read-only commands run restricted").
//!
//! The whole command runs in a child `bash -c` under the read-only wrapper of
//! `tackle_sandbox::process::restrict` (no writes but its own temporary directory and
//! `/dev/null`, no network, no capabilities). Nothing of it is parsed again here: whatever
//! the analysis misread — a heredoc it ended elsewhere, an option it did not know — runs
//! restricted all the same. The child starts from the persistent shell's working directory and
//! exported variables; it does not see the shell's functions, aliases or unexported
//! variables, so an earlier definition cannot turn a read-only name into something else.
//!
//! What a read-only command may still change in the shell itself comes back as a report on a
//! pipe, which the persistent shell applies: its working directory (`cd src && ls`) and the
//! exported variables of a short list of harmless names (`export LANG=C`). The report is
//! data, never evaluated, and filtered again when applied, so a forged one can only move the
//! working directory or set one of those names. Everything else it changes is not kept.

use std::path::Path;

/// Exported variables whose value a restricted command may leave in the persistent shell:
/// locale, time zone and terminal presentation, which programs read only as data.
const KEPT_EXPORTS: &[&str] = &["LANG", "LANGUAGE", "TZ", "NO_COLOR", "TERM", "COLUMNS", "LINES"];

/// And every exported variable whose name starts with this (the locale categories).
const KEPT_PREFIX: &str = "LC_";

/// `text` as one single-quoted bash word.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The command for the restricted child bash: `command`, reporting the working directory and
/// the kept exports on fd 3 when it exits (the command itself runs with fd 3 closed).
fn child_script(command: &str) -> String {
    // The names are listed without a fork: the fixed ones and every `LC_*` that is set.
    let names = KEPT_EXPORTS.join(" ");
    let report = format!(
        r#"{{ builtin printf 'cwd=%s\n' "$PWD"; for __tackle_n in {names} ${{!{KEPT_PREFIX}@}}; do [[ -v $__tackle_n && ${{!__tackle_n}} != *$'\n'* ]] && builtin printf 'env=%s=%s\n' "$__tackle_n" "${{!__tackle_n}}"; done; }} >&3 2>/dev/null"#
    );
    format!("builtin trap {} EXIT\n{{ {command}\n}} 3>&-", quoted(&report))
}

/// The text the persistent shell runs in place of `command`: the child under `helper`, then
/// the report applied. Its exit status is the child's.
pub(super) fn foreground(command: &str, helper: &Path) -> String {
    let helper = quoted(&helper.to_string_lossy());
    let script = quoted(&child_script(command));
    let mut kept: Vec<String> = KEPT_EXPORTS.iter().map(|name| format!("env={name}=*")).collect();
    kept.push(format!("env={KEPT_PREFIX}[A-Z]*=*"));
    let kept = kept.join("|");
    // A locale or time zone with a `/` in it may name a file glibc would load (`LANG=./x`,
    // `TZ=:/tmp/zone`): not kept. A zone name such as `Europe/Paris` must then be set by a
    // command that is asked for or allowed outright.
    let path_locales = format!("env=LANG=*/*|env=LANGUAGE=*/*|env=TZ=*/*|env={KEPT_PREFIX}[A-Z]*=*/*");
    format!(
        r#"{{ __tackle_ro=$({helper} __restrict -- "$BASH" -c {script} 3>&1 1>&4 4>&-); }} 4>&1
__tackle_ro_rc=$?
while IFS= \builtin read -r __tackle_ro_line; do
  case $__tackle_ro_line in
    {path_locales}) ;;
    cwd=/*) \builtin cd -- "${{__tackle_ro_line#cwd=}}" ;;
    {kept}) \builtin export -- "${{__tackle_ro_line#env=}}" ;;
  esac
done <<< "$__tackle_ro"
\builtin unset __tackle_ro __tackle_ro_line
__tackle_ro_status() {{ \builtin return "$1"; }}
__tackle_ro_status "$__tackle_ro_rc""#
    )
}

/// The command a background job runs in place of `command` (it has no shell to report to).
pub(super) fn background(command: &str, helper: &Path) -> String {
    format!("{} __restrict -- \"$BASH\" -c {}", quoted(&helper.to_string_lossy()), quoted(command)) + " 3>&-"
}
