//! The workspace path policy (docs/reference/safety.md#path-policy) on real directories, symlinks and FIFOs: every
//! escape is refused with the normative message, every in-workspace path (through symlinks
//! that stay inside) resolves to the file the kernel would open.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use tackle_core::{Access, ErrorKind, PathPolicy};
use tackle_policy::config::Config;
use tackle_sandbox::{PathError, WorkspacePolicy, policy_from_config};

struct Fixture {
    _dir: tempfile::TempDir,
    /// The workspace (canonical).
    ws: PathBuf,
    /// A sibling directory outside the workspace (canonical).
    outside: PathBuf,
    policy: WorkspacePolicy,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    let policy = WorkspacePolicy::new(&ws).unwrap().with_home(Some(base.join("home")));
    Fixture { _dir: dir, ws, outside, policy }
}

fn outside_message(shown: &str, ws: &Path) -> String {
    format!(
        "Path {shown} is outside the workspace ({}). Use a path inside it; the user can allow another directory \
         with [workspace] extra_roots in {}.",
        ws.display(),
        tackle_policy::config::user_config_shown()
    )
}

#[test]
fn relative_and_absolute_paths_inside_resolve() {
    let fx = fixture();
    for access in [Access::Read, Access::Write] {
        assert_eq!(fx.policy.check("src/main.rs", access).unwrap(), fx.ws.join("src/main.rs"));
        assert_eq!(fx.policy.check("./src/../src/main.rs", access).unwrap(), fx.ws.join("src/main.rs"));
        let absolute = fx.ws.join("src/main.rs");
        assert_eq!(fx.policy.check(absolute.to_str().unwrap(), access).unwrap(), absolute);
        // Paths that do not exist yet resolve below their deepest existing ancestor.
        assert_eq!(fx.policy.check("new/dir/file.txt", access).unwrap(), fx.ws.join("new/dir/file.txt"));
    }
    assert_eq!(fx.policy.check(".", Access::Read).unwrap(), fx.ws);
    assert_eq!(fx.policy.workspace(), fx.ws);
}

#[test]
fn dot_dot_escapes_are_refused_with_the_message() {
    let fx = fixture();
    for raw in ["..", "../outside/secret.txt", "src/../../outside/secret.txt", "a/b/../../../x"] {
        for access in [Access::Read, Access::Write] {
            let err = fx.policy.check(raw, access).unwrap_err();
            assert_eq!(err.to_string(), outside_message(raw, &fx.ws), "{raw}");
        }
    }
    // `..` that stays inside is fine, lexically, even through a directory that does not exist.
    assert_eq!(fx.policy.check("nowhere/../src/main.rs", Access::Read).unwrap(), fx.ws.join("src/main.rs"));
}

#[test]
fn absolute_paths_outside_are_refused() {
    let fx = fixture();
    let raw = fx.outside.join("secret.txt");
    let err = fx.policy.check(raw.to_str().unwrap(), Access::Read).unwrap_err();
    assert_eq!(err.to_string(), outside_message(raw.to_str().unwrap(), &fx.ws));
    let err = fx.policy.resolve("/etc/passwd", Access::Read).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Denied);
    assert_eq!(err.to_string(), outside_message("/etc/passwd", &fx.ws));
    // A prefix that is not a path prefix is not inside: ws-other is not ws.
    let sibling = fx.ws.with_file_name("ws-other");
    std::fs::create_dir(&sibling).unwrap();
    assert!(fx.policy.check(sibling.join("f").to_str().unwrap(), Access::Read).is_err());
}

#[test]
fn tilde_expands_to_home_which_is_outside_unless_a_root() {
    let fx = fixture();
    let err = fx.policy.check("~/.ssh/id_rsa", Access::Read).unwrap_err();
    assert_eq!(err.to_string(), outside_message("~/.ssh/id_rsa", &fx.ws));
    assert!(fx.policy.check("~", Access::Read).is_err());
    // `~name` is not expanded: it is a file name in the workspace.
    assert_eq!(fx.policy.check("~backup", Access::Read).unwrap(), fx.ws.join("~backup"));
    // With home inside the workspace, ~ paths are fine.
    let policy = fx.policy.clone().with_home(Some(fx.ws.join("src")));
    assert_eq!(policy.check("~/main.rs", Access::Read).unwrap(), fx.ws.join("src/main.rs"));
    let no_home = fx.policy.with_home(None);
    let err = no_home.check("~/x", Access::Read).unwrap_err();
    assert!(matches!(err, PathError::NoHome { .. }), "{err}");
}

#[test]
fn symlinks_inside_are_followed_and_escapes_refused() {
    let fx = fixture();
    // Inside → inside: allowed, and resolved to the target (differs from BareAgent).
    symlink("src", fx.ws.join("code")).unwrap();
    symlink(fx.ws.join("src/main.rs"), fx.ws.join("main-link.rs")).unwrap();
    assert_eq!(fx.policy.check("code/main.rs", Access::Write).unwrap(), fx.ws.join("src/main.rs"));
    assert_eq!(fx.policy.check("main-link.rs", Access::Write).unwrap(), fx.ws.join("src/main.rs"));
    assert_eq!(fx.policy.check("code/new.rs", Access::Write).unwrap(), fx.ws.join("src/new.rs"));

    // Inside → outside: refused for the link, for files below it, and for new files below it.
    symlink(&fx.outside, fx.ws.join("escape")).unwrap();
    symlink(fx.outside.join("secret.txt"), fx.ws.join("secret-link")).unwrap();
    for raw in ["escape", "escape/secret.txt", "escape/new.txt", "secret-link"] {
        for access in [Access::Read, Access::Write] {
            let err = fx.policy.check(raw, access).unwrap_err();
            assert_eq!(err.to_string(), outside_message(raw, &fx.ws), "{raw} {access:?}");
        }
    }
    // A relative link target with `..` that climbs out.
    symlink("../outside/secret.txt", fx.ws.join("climb")).unwrap();
    assert!(matches!(fx.policy.check("climb", Access::Read), Err(PathError::Outside { .. })));
    // A dangling link to the outside: a write would create the file outside.
    symlink(fx.outside.join("planted.sh"), fx.ws.join("dangling")).unwrap();
    assert!(matches!(fx.policy.check("dangling", Access::Write), Err(PathError::Outside { .. })));
    // A dangling link inside points where a write lands.
    symlink("src/later.rs", fx.ws.join("later")).unwrap();
    assert_eq!(fx.policy.check("later", Access::Write).unwrap(), fx.ws.join("src/later.rs"));
    // An absolute path outside that links back inside is inside.
    symlink(fx.ws.join("src"), fx.outside.join("back")).unwrap();
    let back = fx.outside.join("back/main.rs");
    assert_eq!(fx.policy.check(back.to_str().unwrap(), Access::Read).unwrap(), fx.ws.join("src/main.rs"));
}

#[test]
fn symlink_loops_are_refused() {
    let fx = fixture();
    symlink("loop-b", fx.ws.join("loop-a")).unwrap();
    symlink("loop-a", fx.ws.join("loop-b")).unwrap();
    let err = fx.policy.resolve("loop-a/x", Access::Read).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(err.to_string(), "Path loop-a/x cannot be resolved: too many levels of symbolic links.");
}

#[test]
fn nul_bytes_empty_and_over_long_paths_are_refused() {
    let fx = fixture();
    let err = fx.policy.resolve("src/main.rs\0.txt", Access::Read).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        err.to_string(),
        "Path src/main.rs\\0.txt contains a NUL byte, which no file name can hold. Give the path without it."
    );
    assert_eq!(
        fx.policy.check("", Access::Read).unwrap_err().to_string(),
        "The path is empty. Give a path relative to the workspace, or an absolute path inside it."
    );
    let long_name = "n".repeat(256);
    let err = fx.policy.check(&format!("src/{long_name}"), Access::Write).unwrap_err();
    assert!(err.to_string().contains("has a name of 256 bytes; names are limited to 255 bytes"), "{err}");
    let long_path = "abcdefgh/".repeat(600);
    let err = fx.policy.check(&long_path, Access::Read).unwrap_err();
    assert!(err.to_string().contains("is too long (5400 bytes; the limit is 4096)"), "{err}");
    // The message shows only the start of a very long path.
    assert!(err.to_string().len() < 400, "{err}");
    // 255 bytes is allowed.
    assert!(fx.policy.check(&"n".repeat(255), Access::Write).is_ok());
}

#[test]
fn protected_directories_are_readable_but_not_writable() {
    let fx = fixture();
    std::fs::create_dir_all(fx.ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(fx.ws.join("vendor/lib/.git")).unwrap();
    let cases = [
        (".git/config", ".git/"),
        (".git", ".git/"),
        (".git/hooks/pre-commit", ".git/"),
        (".GIT/config", ".git/"),
        ("vendor/lib/.git/config", ".git/"),
        (".tackle/outputs/x.txt", ".tackle/"),
        (".claude/settings.json", ".claude/"),
        ("tackle.toml", "tackle.toml"),
        (".mcp.json", ".mcp.json"),
        ("src/../.git/config", ".git/"),
    ];
    for (raw, dir) in cases {
        let err = fx.policy.resolve(raw, Access::Write).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Denied);
        assert_eq!(
            err.to_string(),
            format!("{raw} is inside a protected directory ({dir}); file tools cannot write there.")
        );
        assert!(fx.policy.check(raw, Access::Read).is_ok(), "{raw} should be readable");
    }
    // Look-alikes are not protected.
    for raw in ["tackle.toml.bak", "src/tackle.toml", "docs/.mcp.json", ".gitignore", ".github/workflows/ci.yml"] {
        assert!(fx.policy.check(raw, Access::Write).is_ok(), "{raw}");
    }
    // A symlink into .git is protected by its target; a .git symlink by its name.
    symlink(".git", fx.ws.join("gitdir")).unwrap();
    assert!(matches!(fx.policy.check("gitdir/config", Access::Write), Err(PathError::Protected { .. })));
    std::fs::create_dir(fx.ws.join("real-git")).unwrap();
    symlink("real-git", fx.ws.join("vendor/.git")).unwrap();
    assert!(matches!(fx.policy.check("vendor/.git/hooks/x", Access::Write), Err(PathError::Protected { .. })));
}

#[test]
fn writable_protected_opens_only_the_named_subpath() {
    let mut fx = fixture();
    fx.policy.allow_protected(Path::new(".tackle/skills"));
    assert_eq!(
        fx.policy.check(".tackle/skills/x/SKILL.md", Access::Write).unwrap(),
        fx.ws.join(".tackle/skills/x/SKILL.md")
    );
    assert!(fx.policy.check(".tackle/other", Access::Write).is_err());
    assert!(fx.policy.check(".tackle/skills-evil/x", Access::Write).is_err());
}

#[test]
fn device_paths_and_fifos_are_never_read() {
    let mut fx = fixture();
    fx.policy.add_root(Path::new("/"), false).unwrap();
    for raw in ["/dev/zero", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/dev/urandom"] {
        let err = fx.policy.resolve(raw, Access::Read).unwrap_err();
        assert_eq!(err.to_string(), format!("Reading {raw} is blocked (device path)."));
        assert_eq!(err.kind(), ErrorKind::Denied);
    }
    assert_eq!(fx.policy.check("/dev/null", Access::Read).unwrap(), PathBuf::from("/dev/null"));
    // Writing never targets a device, /dev/null included.
    let err = fx.policy.check("/dev/null", Access::Write).unwrap_err();
    assert_eq!(err.to_string(), "Writing /dev/null is blocked (device path).");
    // A symlink in the workspace that points at a device is refused too.
    symlink("/dev/zero", fx.ws.join("zeros")).unwrap();
    assert_eq!(
        fx.policy.check("zeros", Access::Read).unwrap_err().to_string(),
        "Reading zeros is blocked (device path)."
    );
}

#[test]
fn fifos_are_refused_as_not_regular_files() {
    // A FIFO in the workspace would hang a read (or the diff of a write); it is no device path
    // (docs/reference/safety.md#path-policy names /dev and /proc), so the refusal says what it is (docs/reference/formats.md#block-tools).
    let fx = fixture();
    let fifo = fx.ws.join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    symlink(&fifo, fx.ws.join("to-pipe")).unwrap();
    for raw in ["pipe", "to-pipe"] {
        for access in [Access::Read, Access::Write] {
            let err = fx.policy.resolve(raw, access).unwrap_err();
            assert_eq!(err.to_string(), format!("{raw} is not a regular file"));
            assert_eq!(err.kind(), ErrorKind::InvalidInput);
        }
    }
    // Outside the workspace, the root check speaks first.
    let outside = fx.outside.join("pipe");
    assert!(std::process::Command::new("mkfifo").arg(&outside).status().unwrap().success());
    let err = fx.policy.check(outside.to_str().unwrap(), Access::Read).unwrap_err();
    assert!(err.to_string().contains("is outside the workspace"), "{err}");
}

#[test]
fn extra_roots_and_read_only_roots() {
    let mut fx = fixture();
    fx.policy.add_root(&fx.outside, false).unwrap();
    let secret = fx.outside.join("secret.txt");
    let raw = secret.to_str().unwrap();
    assert_eq!(fx.policy.check(raw, Access::Read).unwrap(), secret);
    let err = fx.policy.check(raw, Access::Write).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{raw} is inside the read-only root {}; file tools can read there but not write.",
            fx.outside.display()
        )
    );
    fx.policy.add_root(&fx.outside, true).unwrap();
    assert_eq!(fx.policy.check(raw, Access::Write).unwrap(), secret);
    // A writable root nested in a read-only one: the deepest root decides.
    assert!(fx.policy.make_read_only(&fx.ws));
    assert!(matches!(fx.policy.check("src/main.rs", Access::Write), Err(PathError::ReadOnlyRoot { .. })));
    fx.policy.add_root(&fx.ws.join("src"), true).unwrap();
    assert!(fx.policy.check("src/main.rs", Access::Write).is_ok());
    assert!(fx.policy.add_root(&fx.ws.join("missing"), true).is_err());
    // The root a resolved path is opened beneath: the deepest one holding it.
    let policy: &dyn PathPolicy = &fx.policy;
    assert_eq!(policy.root_of(&fx.ws.join("src/main.rs")), Some(fx.ws.join("src").as_path()));
    assert_eq!(policy.root_of(&fx.ws.join("README")), Some(fx.ws.as_path()));
    assert_eq!(policy.root_of(&secret), Some(fx.outside.as_path()));
    assert_eq!(policy.root_of(Path::new("/etc/passwd")), None);
}

fn config(user: &str, workspace: &str, trusted: bool) -> Config {
    Config::from_tables(user.parse().unwrap(), workspace.parse().unwrap(), trusted)
}

#[test]
fn configuration_adds_roots_and_workspaces_cannot_widen_access_even_when_trusted() {
    let fx = fixture();
    let other = fx.outside.to_str().unwrap();
    let secret = fx.outside.join("secret.txt");
    let secret = secret.to_str().unwrap();

    // The user's own configuration applies.
    let built =
        policy_from_config(&config(&format!("[workspace]\nextra_roots = [\"{other}\"]"), "", false), &fx.ws).unwrap();
    assert!(built.notices.is_empty(), "{:?}", built.notices);
    assert!(built.policy.check(secret, Access::Write).is_ok());

    // The workspace's file never widens, trusted or not; each ignored entry is named.
    let local = "[workspace]\nextra_roots = [\"../outside\", \"/\"]\nwritable_protected = [\".git\"]\n\
                 read_only_roots = [\".\", \"/tmp\"]";
    let why = format!(
        "from the workspace's tackle.toml: it would widen the sandbox, the path policy or the environment, \
         which only your user config ({}) and flags may do",
        tackle_policy::config::user_config_shown()
    );
    for trusted in [false, true] {
        let config = config("", local, trusted);
        let built = policy_from_config(&config, &fx.ws).unwrap();
        assert!(built.policy.check(secret, Access::Read).is_err());
        assert!(built.policy.check("/etc/hostname", Access::Read).is_err());
        assert!(
            built
                .policy
                .check(".git/config", Access::Write)
                .is_err_and(|e| matches!(e, PathError::ReadOnlyRoot { .. }))
        );
        assert_eq!(
            config.notices(),
            [
                format!("ignoring [workspace] extra_roots {why}"),
                format!("ignoring [workspace] writable_protected {why}")
            ]
        );
        assert_eq!(
            built.notices,
            [format!("ignoring [workspace] read_only_roots entry '/tmp' (not a root, so it would add one) {why}")]
        );
        // Narrowing applies: the workspace itself became read-only.
        assert!(matches!(built.policy.check("src/main.rs", Access::Write), Err(PathError::ReadOnlyRoot { .. })));
    }

    // Unusable entries and bad sections are reported, not fatal or silent.
    let built =
        policy_from_config(&config("[workspace]\nextra_roots = [\"/no/such/dir\"]", "", false), &fx.ws).unwrap();
    assert_eq!(built.notices.len(), 1);
    assert!(built.notices[0].starts_with("ignoring [workspace] root '/no/such/dir':"), "{:?}", built.notices);
    let err = policy_from_config(&config("[workspace]\nextra_root = [\"x\"]", "", false), &fx.ws).unwrap_err();
    assert!(err.to_string().contains("unknown field `extra_root`"), "{err}");
}

/// The layouts where the real git directory is not `.git` (issue 24 point 7): `.git` a symlink,
/// a `gitdir:` file, and a worktree's gitdir whose `commondir` names the main directory. A host
/// `git` reads `config` and `hooks` from those, so file tools may not write them.
#[test]
fn the_real_git_directory_is_protected_wherever_it_is() {
    let layouts: [(&str, PlantGitDir); 4] = [
        ("symlink", |ws| symlink("gitstore", ws.join(".git")).unwrap()),
        ("gitdir file", |ws| std::fs::write(ws.join(".git"), "gitdir: gitstore\n").unwrap()),
        ("absolute gitdir file", |ws| {
            std::fs::write(ws.join(".git"), format!("gitdir: {}\n", ws.join("gitstore").display())).unwrap();
        }),
        ("worktree commondir", |ws| {
            std::fs::create_dir_all(ws.join("wtdir")).unwrap();
            std::fs::write(ws.join("wtdir/commondir"), "../gitstore\n").unwrap();
            std::fs::write(ws.join(".git"), "gitdir: wtdir\n").unwrap();
        }),
    ];
    for (name, plant) in layouts {
        let fx = fixture();
        std::fs::create_dir_all(fx.ws.join("gitstore/hooks")).unwrap();
        std::fs::write(fx.ws.join("gitstore/config"), "[core]\n").unwrap();
        plant(&fx.ws);
        for raw in ["gitstore/config", "gitstore/hooks/pre-commit", "gitstore", "./gitstore/../gitstore/HEAD"] {
            let err = fx.policy.resolve(raw, Access::Write).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Denied, "{name}: {raw}");
            assert_eq!(
                err.to_string(),
                format!(
                    "{raw} is inside a protected directory (gitstore/, the git directory .git leads to); file tools \
                     cannot write there."
                ),
                "{name}"
            );
            assert!(fx.policy.check(raw, Access::Read).is_ok(), "{name}: {raw} stays readable");
        }
        // A link to it is refused by its target.
        symlink("gitstore", fx.ws.join("alias")).unwrap();
        assert!(matches!(fx.policy.check("alias/config", Access::Write), Err(PathError::Protected { .. })), "{name}");
        // Its neighbours are not protected.
        assert!(fx.policy.check("gitstore-notes/x", Access::Write).is_ok(), "{name}");
        assert!(fx.policy.check("src/main.rs", Access::Write).is_ok(), "{name}");
    }
    // A nested checkout's git directories (a worktree's and the commondir it names) are known by
    // their contents, whatever points at them.
    let fx = fixture();
    for dir in ["gitstore/worktrees/w", "gitstore/objects", "gitstore/refs"] {
        std::fs::create_dir_all(fx.ws.join(dir)).unwrap();
    }
    std::fs::write(fx.ws.join("gitstore/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(fx.ws.join("gitstore/worktrees/w/HEAD"), "ref: refs/heads/w\n").unwrap();
    std::fs::write(fx.ws.join("gitstore/worktrees/w/commondir"), "../..\n").unwrap();
    std::fs::create_dir_all(fx.ws.join("checkout")).unwrap();
    std::fs::write(fx.ws.join("checkout/.git"), "gitdir: ../gitstore/worktrees/w\n").unwrap();
    for raw in ["gitstore/worktrees/w/config.worktree", "gitstore/hooks/post-checkout"] {
        assert!(
            matches!(fx.policy.check(&format!("checkout/../{raw}"), Access::Write), Err(PathError::Protected { .. })),
            "{raw}"
        );
    }
    // A gitdir outside the roots is not the policy's to protect: it is outside anyway.
    let fx = fixture();
    std::fs::write(fx.ws.join(".git"), format!("gitdir: {}\n", fx.outside.display())).unwrap();
    assert!(fx.policy.check("src/x", Access::Write).is_ok());
}

/// Plants a `.git` that leads to `gitstore/` in the workspace given.
type PlantGitDir = fn(&Path);
