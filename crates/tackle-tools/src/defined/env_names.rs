//! How a script tool's arguments reach its environment (docs/reference/tools.md#tools-defined-in-files):
//! the whole object as `TACKLE_ARGS`, and each top-level argument as `TACKLE_ARG_<NAME>`, its
//! name upper-cased with every character but an ASCII letter or digit turned into `_`.
//!
//! The arguments come from the model, so no argument ever names a variable itself: a variable
//! always carries the prefix, so `PATH`, `LD_PRELOAD` or `BASH_ENV` as argument names become
//! `TACKLE_ARG_PATH`, … and the command environment stays what the session gave it. Names that
//! would share a variable (`a-b` and `A_B`) are all left out of the per-argument variables
//! (the script still finds them in `TACKLE_ARGS`), and so is a value the environment cannot
//! carry (a NUL byte, more than the kernel takes for one variable).

use std::ffi::OsString;

use serde_json::{Map, Value};

/// The variable that holds every argument as one JSON object.
pub const ARGS_VAR: &str = "TACKLE_ARGS";

/// The prefix of the per-argument variables.
pub const ARG_PREFIX: &str = "TACKLE_ARG_";

/// The most bytes one variable (`NAME=value`) may hold: the kernel's `MAX_ARG_STRLEN` (32
/// pages), less its terminating NUL.
pub const MAX_VAR_BYTES: usize = 32 * 4096 - 1;

/// The variable of argument `name`, `None` for an empty name.
pub fn var_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let mapped: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    Some(format!("{ARG_PREFIX}{mapped}"))
}

/// The value of an argument in its variable: a string as it is, anything else as compact JSON.
fn var_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The variables of one call, and the arguments left out of them with the reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArgumentVars {
    /// `(name, value)` pairs: `TACKLE_ARGS` first, then the arguments in their order.
    pub vars: Vec<(OsString, OsString)>,
    /// Arguments without their own variable, each with why (for a note in the output).
    pub skipped: Vec<String>,
}

/// Why a call's arguments cannot reach the script at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the arguments are too large to pass in the environment ({0} bytes as JSON; at most {MAX_VAR_BYTES}); pass less, \
     or define the tool with command, which reads them on stdin"
)]
pub struct TooLarge(pub usize);

/// The variables for `args` (a JSON object).
pub fn argument_vars(args: &Map<String, Value>) -> Result<ArgumentVars, TooLarge> {
    let json = Value::Object(args.clone()).to_string();
    if ARGS_VAR.len() + 1 + json.len() > MAX_VAR_BYTES {
        return Err(TooLarge(json.len()));
    }
    let mut found = ArgumentVars { vars: vec![(ARGS_VAR.into(), json.into())], skipped: Vec::new() };
    let named: Vec<(&String, Option<String>)> = args.keys().map(|name| (name, var_name(name))).collect();
    for (name, var) in &named {
        let Some(var) = var else {
            found.skipped.push("an argument with an empty name has no variable".to_owned());
            continue;
        };
        let sharing: Vec<&str> = named
            .iter()
            .filter(|(other, v)| other != name && v.as_ref() == Some(var))
            .map(|(o, _)| o.as_str())
            .collect();
        if !sharing.is_empty() {
            found.skipped.push(format!("'{name}' shares {var} with '{}', so neither is set", sharing.join("', '")));
            continue;
        }
        let value = var_value(&args[name.as_str()]);
        if value.contains('\0') {
            found.skipped.push(format!("'{name}' holds a NUL byte, which no variable can; {var} is not set"));
        } else if var.len() + 1 + value.len() > MAX_VAR_BYTES {
            found.skipped.push(format!("'{name}' is too large for one variable; {var} is not set"));
        } else {
            found.vars.push((var.into(), value.into()));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn vars(args: Value) -> ArgumentVars {
        argument_vars(args.as_object().unwrap()).unwrap()
    }

    fn pairs(found: &ArgumentVars) -> Vec<(String, String)> {
        found.vars.iter().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())).collect()
    }

    #[test]
    fn names_are_prefixed_upper_cased_and_cleaned() {
        assert_eq!(var_name("path").as_deref(), Some("TACKLE_ARG_PATH"));
        assert_eq!(var_name("PATH").as_deref(), Some("TACKLE_ARG_PATH"));
        assert_eq!(var_name("max-count").as_deref(), Some("TACKLE_ARG_MAX_COUNT"));
        assert_eq!(var_name("a.b c=d").as_deref(), Some("TACKLE_ARG_A_B_C_D"));
        assert_eq!(var_name("é1").as_deref(), Some("TACKLE_ARG__1"));
        assert_eq!(var_name("1st").as_deref(), Some("TACKLE_ARG_1ST"));
        assert_eq!(var_name(""), None);
    }

    #[test]
    fn values_are_text_or_compact_json() {
        let found = vars(json!({"name": "x y", "n": 3, "flag": true, "list": [1, "a"], "none": null}));
        assert_eq!(
            pairs(&found),
            [
                ("TACKLE_ARGS".to_owned(), r#"{"name":"x y","n":3,"flag":true,"list":[1,"a"],"none":null}"#.to_owned()),
                ("TACKLE_ARG_NAME".to_owned(), "x y".to_owned()),
                ("TACKLE_ARG_N".to_owned(), "3".to_owned()),
                ("TACKLE_ARG_FLAG".to_owned(), "true".to_owned()),
                ("TACKLE_ARG_LIST".to_owned(), r#"[1,"a"]"#.to_owned()),
                ("TACKLE_ARG_NONE".to_owned(), "null".to_owned()),
            ]
        );
        assert!(found.skipped.is_empty());
    }

    #[test]
    fn hostile_names_never_set_a_variable_of_their_own() {
        let found = vars(json!({"PATH": "/evil", "LD_PRELOAD": "/evil.so", "BASH_ENV": "/evil.sh", "": "x"}));
        let names: Vec<String> = pairs(&found).into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["TACKLE_ARGS", "TACKLE_ARG_PATH", "TACKLE_ARG_LD_PRELOAD", "TACKLE_ARG_BASH_ENV"]);
        assert!(names.iter().all(|name| name.starts_with("TACKLE_ARG")));
        assert_eq!(found.skipped, ["an argument with an empty name has no variable"]);
    }

    #[test]
    fn colliding_nul_and_oversized_arguments_are_left_out() {
        let big = "x".repeat(MAX_VAR_BYTES);
        let found =
            argument_vars(json!({"a-b": "1", "A_B": "2", "z": "nul\u{0}byte", "ok": "fine"}).as_object().unwrap())
                .unwrap();
        let names: Vec<String> = pairs(&found).into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["TACKLE_ARGS", "TACKLE_ARG_OK"]);
        assert_eq!(
            found.skipped,
            [
                "'a-b' shares TACKLE_ARG_A_B with 'A_B', so neither is set",
                "'A_B' shares TACKLE_ARG_A_B with 'a-b', so neither is set",
                "'z' holds a NUL byte, which no variable can; TACKLE_ARG_Z is not set",
            ]
        );
        assert_eq!(argument_vars(json!({"big": big}).as_object().unwrap()), Err(TooLarge(MAX_VAR_BYTES + 10)));
        let half = "y".repeat(MAX_VAR_BYTES / 2);
        let found = vars(json!({"half": half}));
        assert_eq!(found.vars.len(), 2, "{:?}", found.skipped);
    }
}
