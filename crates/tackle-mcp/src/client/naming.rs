//! Wire names of imported tools (docs/mcp.md#names, Codex's scheme): `mcp__{server}__{tool}`, each
//! part sanitized to `[A-Za-z0-9_-]`, at most 64 characters, with `_` and 12 hex digits of
//! SHA-1(`server \0 raw_tool_name`) replacing the end when the name is too long or taken.
//! Providers reject names outside `^[a-zA-Z0-9_-]{1,64}$` although MCP allows `.`, `/` and
//! 128 characters. Names are never split on `__`: the caller keeps the raw names.

use std::collections::HashSet;

/// The longest wire name providers accept.
pub const MAX_NAME_LEN: usize = 64;

/// Hex digits of the hash suffix.
const HASH_LEN: usize = 12;

/// Every character outside `[A-Za-z0-9_-]` becomes `_`.
pub fn sanitize(part: &str) -> String {
    part.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// The wire name of `raw_tool` from `server`, distinct from every name in `taken`. The same
/// inputs give the same name.
pub fn tool_name(server: &str, raw_tool: &str, taken: &HashSet<String>) -> String {
    let plain = format!("mcp__{}__{}", sanitize(server), sanitize(raw_tool));
    if plain.len() <= MAX_NAME_LEN && !taken.contains(&plain) {
        return plain;
    }
    let keep = MAX_NAME_LEN - HASH_LEN - 1;
    let stem = &plain[..plain.len().min(keep)];
    // A second collision (a different tool whose cut name and hash both match) is resolved
    // by hashing again with a counter.
    (0u32..)
        .map(|attempt| {
            let mut input = format!("{server}\0{raw_tool}");
            if attempt > 0 {
                input.push_str(&format!("\0{attempt}"));
            }
            let digest = sha1_smol::Sha1::from(input.as_bytes()).digest().to_string();
            format!("{stem}_{}", &digest[..HASH_LEN])
        })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(plain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn valid(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= MAX_NAME_LEN
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_keep_dashes_and_lose_dots_and_slashes() {
        let none = HashSet::new();
        assert_eq!(tool_name("everything", "get-sum", &none), "mcp__everything__get-sum");
        assert_eq!(tool_name("git", "git_status", &none), "mcp__git__git_status");
        assert_eq!(tool_name("my.server", "fs/read.file", &none), "mcp__my_server__fs_read_file");
        assert_eq!(tool_name("s", "naïve tool", &none), "mcp__s__na_ve_tool");
    }

    #[test]
    fn long_names_are_cut_and_hashed_deterministically() {
        let none = HashSet::new();
        let raw = format!("{}.{}", "a/".repeat(60), "b".repeat(80));
        let name = tool_name("server", &raw, &none);
        assert!(valid(&name), "{name}");
        assert_eq!(name.len(), MAX_NAME_LEN);
        let digest = sha1_smol::Sha1::from(format!("server\0{raw}").as_bytes()).digest().to_string();
        assert_eq!(&name[MAX_NAME_LEN - 13..], format!("_{}", &digest[..12]));
        assert!(name.starts_with("mcp__server__a_a_a_"));
        assert_eq!(tool_name("server", &raw, &none), name, "deterministic");
    }

    #[test]
    fn collisions_get_a_hash_and_a_second_collision_another() {
        // `a.b` and `a/b` both sanitize to `a_b`.
        let mut taken = HashSet::new();
        let first = tool_name("s", "a.b", &taken);
        assert_eq!(first, "mcp__s__a_b");
        taken.insert(first);
        let second = tool_name("s", "a/b", &taken);
        assert!(second.starts_with("mcp__s__a_b_") && valid(&second), "{second}");
        assert_ne!(second, "mcp__s__a_b");
        taken.insert(second.clone());
        // Force the hashed name to be taken too: the retry loop finds another.
        let third = tool_name("s", "a/b", &taken);
        assert!(valid(&third) && third != second && !taken.contains(&third), "{third}");
    }

    #[test]
    fn two_hundred_character_names_with_dots_and_slashes_are_all_distinct_and_valid() {
        let mut taken = HashSet::new();
        for i in 0..50 {
            let raw = format!("{}/{i}.{}", "x".repeat(100), "y".repeat(95));
            let name = tool_name("srv", &raw, &taken);
            assert!(valid(&name), "{name}");
            assert!(taken.insert(name), "duplicate for {i}");
        }
    }
}
