//! What a run changed in its workspace, as one unified diff: `tackle run --json`'s `diff` and a
//! fleet task's `diff.patch` (docs/reference/cli.md#the-json-result).
//!
//! [`Baseline::take`] records the workspace when the run starts; [`Baseline::diff`] compares
//! it with the workspace at the end. New files are included, binary files are named
//! (`Binary files a/X and b/X differ`), and Tackle's own `.tackle/` is left out.
//!
//! - **A git repository** (a `.git` at the workspace's root): both states are trees written
//!   with a private index and a private object directory (the repository's objects are read
//!   through `GIT_ALTERNATE_OBJECT_DIRECTORIES`; nothing is written into it), so ignored files
//!   stay out as git users expect, and only changed files are read twice. The workspace's git
//!   configuration is untrusted (a cloned repository's `.git` may come from anyone), so git
//!   runs with nothing of it that executes: `core.fsmonitor` off, hooks off, every configured
//!   filter driver's `clean`/`smudge`/`process` emptied, no external diff, no textconv, the
//!   work tree pinned to the workspace (never `core.worktree`), and an environment without the
//!   caller's `GIT_*` variables.
//! - **Otherwise** a snapshot of the files' contents is kept in memory (files up to
//!   [`SNAPSHOT_FILE_BYTES`], [`SNAPSHOT_TOTAL_BYTES`] in all; past those a file is compared
//!   by size and hash and reported changed without its lines).
//!
//! - **A container session's workspace** (`--container`), which lives in the container, is
//!   recorded there the same way by git inside ([`ContainerBaseline`]: a private index in a
//!   scratch directory of the container's `/tmp`, the trees in the container's repository,
//!   the same settings switched off); a container without git, or whose workdir is not a
//!   repository, falls back to the host workspace's record ([`RunBaseline::take`]).
//!
//! Either way the diff is cut at [`MAX_DIFF_BYTES`] with a last line that says so.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rustix::fs::OFlags;
use tackle_core::fs::beneath::{Beneath, Links};

/// The largest diff returned; past it the diff is cut at a line end and says so.
pub const MAX_DIFF_BYTES: usize = 8 * 1024 * 1024;
/// The largest file whose text a snapshot keeps.
pub const SNAPSHOT_FILE_BYTES: u64 = 1024 * 1024;
/// The most file text a snapshot keeps in all.
pub const SNAPSHOT_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

/// Tackle's own state directory, never part of the diff.
const TACKLE_DIR: &str = ".tackle";

/// The workspace as a run found it.
#[derive(Debug)]
pub struct Baseline {
    workspace: PathBuf,
    state: State,
}

#[derive(Debug)]
enum State {
    Git(GitBaseline),
    Snapshot(BTreeMap<String, Entry>),
}

/// Why the changes could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum ChangesError {
    /// A git command failed.
    #[error("git {action} failed: {detail}")]
    Git {
        /// What was asked of git.
        action: &'static str,
        /// Its error output.
        detail: String,
    },
    /// Reading the workspace or the scratch directory failed.
    #[error("cannot read the workspace's changes: {0}")]
    Io(#[from] std::io::Error),
}

impl Baseline {
    /// Records `workspace` as it is now. A git repository whose state git cannot record (a
    /// repository git refuses, no `git` on the PATH) falls back to a snapshot.
    pub fn take(workspace: &Path) -> Baseline {
        let workspace = workspace.to_owned();
        if std::fs::symlink_metadata(workspace.join(".git")).is_ok() {
            match GitBaseline::take(&workspace) {
                Ok(git) => return Baseline { workspace, state: State::Git(git) },
                Err(err) => tracing::debug!("the diff falls back to a snapshot: {err}"),
            }
        }
        let state = State::Snapshot(snapshot(&workspace, &mut Allowance(SNAPSHOT_TOTAL_BYTES)));
        Baseline { workspace, state }
    }

    /// The unified diff from the recorded state to the workspace now (empty when nothing
    /// changed), cut at [`MAX_DIFF_BYTES`].
    pub fn diff(&self) -> Result<String, ChangesError> {
        let diff = match &self.state {
            State::Git(git) => git.diff(&self.workspace)?,
            State::Snapshot(before) => {
                let after = snapshot(&self.workspace, &mut Allowance(SNAPSHOT_TOTAL_BYTES));
                snapshot_diff(before, &after)
            }
        };
        Ok(cut(diff))
    }
}

/// What a run's diff is measured against: the host workspace, or the container's.
#[derive(Debug)]
pub enum RunBaseline {
    /// The workspace on this machine.
    Host(Baseline),
    /// The workspace inside the session's container.
    Container(Box<ContainerBaseline>),
}

impl RunBaseline {
    /// Records the workspace `agent` works on as it is now: in its container when it has one
    /// with git and a repository at its workdir, else on this machine.
    pub async fn take(agent: &crate::Agent) -> RunBaseline {
        let template = agent.template();
        if let Some(inside) = template.container() {
            match ContainerBaseline::take(&inside.container).await {
                Ok(baseline) => return RunBaseline::Container(Box::new(baseline)),
                Err(err) => tracing::debug!("the diff is measured on the host: {err}"),
            }
        }
        RunBaseline::Host(Baseline::take(template.workspace()))
    }

    /// The unified diff since [`RunBaseline::take`]; call it before the session (and its
    /// container) is closed.
    pub async fn diff(&self) -> Result<String, ChangesError> {
        match self {
            RunBaseline::Host(baseline) => baseline.diff(),
            RunBaseline::Container(baseline) => baseline.diff().await,
        }
    }
}

/// The container's workspace as a run found it: a tree written by git inside.
#[derive(Debug)]
pub struct ContainerBaseline {
    container: tackle_container::Container,
    /// The scratch directory (in the container) holding the private index.
    scratch: String,
    tree: String,
}

/// The shell lines, for git inside a container, that switch off what a repository's
/// configuration could run (as [`Git::new`] does on the host) and set the private index.
const CONTAINER_GIT_SETUP: &str = r#"O="-c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.untrackedCache=false -c diff.external="
for driver in $(git config --name-only --get-regexp '^filter\.' 2>/dev/null | sed -n 's/^filter\.\(.*\)\.[^.]*$//p' | sort -u); do
  O="$O -c filter.$driver.clean= -c filter.$driver.smudge= -c filter.$driver.process= -c filter.$driver.required=false"
done
export GIT_INDEX_FILE="$d/index" GIT_OPTIONAL_LOCKS=0 GIT_TERMINAL_PROMPT=0
git $O add -A --ignore-errors >/dev/null 2>&1 || true
git $O rm -r -q --cached --ignore-unmatch -- .tackle >/dev/null
"#;

impl ContainerBaseline {
    async fn take(container: &tackle_container::Container) -> Result<ContainerBaseline, ChangesError> {
        let script = format!(
            r#"set -e
command -v git >/dev/null 2>&1 || {{ echo "no git in the container" >&2; exit 90; }}
git rev-parse --git-dir >/dev/null 2>&1 || {{ echo "the workdir is not a git repository" >&2; exit 91; }}
d=$(mktemp -d /tmp/tackle-diff.XXXXXX)
idx=$(git rev-parse --git-path index)
if [ -f "$idx" ]; then cp "$idx" "$d/index"; fi
{CONTAINER_GIT_SETUP}printf '%s %s
' "$d" "$(git $O write-tree)"
"#
        );
        let out = run(container, &script, 4096).await?;
        let text = String::from_utf8_lossy(&out);
        let (scratch, tree) = text
            .trim()
            .split_once(' ')
            .filter(|(d, t)| {
                d.starts_with("/tmp/tackle-diff.") && t.len() >= 40 && t.bytes().all(|b| b.is_ascii_hexdigit())
            })
            .ok_or_else(|| ChangesError::Git { action: "write-tree", detail: format!("unexpected output: {text}") })?;
        Ok(ContainerBaseline { container: container.clone(), scratch: scratch.to_owned(), tree: tree.to_owned() })
    }

    async fn diff(&self) -> Result<String, ChangesError> {
        let script = format!(
            r#"set -e
d='{}'
{CONTAINER_GIT_SETUP}t=$(git $O write-tree)
git $O diff-tree -p -r --no-color --no-ext-diff --no-textconv --no-renames {} "$t"
rm -rf "$d"
"#,
            self.scratch, self.tree
        );
        Ok(cut(String::from_utf8_lossy(&run(&self.container, &script, MAX_DIFF_BYTES + 1).await?).into_owned()))
    }
}

/// `script` in `container`: its standard output, or why it failed.
async fn run(container: &tackle_container::Container, script: &str, max: usize) -> Result<Vec<u8>, ChangesError> {
    let out = container
        .run_script(script, max)
        .await
        .map_err(|err| ChangesError::Git { action: "run in the container", detail: err.to_string() })?;
    if out.code != 0 {
        return Err(ChangesError::Git { action: "run in the container", detail: out.stderr.trim().to_owned() });
    }
    Ok(out.stdout)
}

/// `diff` cut at [`MAX_DIFF_BYTES`], at a line end, with a last line saying so.
fn cut(mut diff: String) -> String {
    if diff.len() <= MAX_DIFF_BYTES {
        return diff;
    }
    let total = diff.len();
    let mut end = MAX_DIFF_BYTES;
    while !diff.is_char_boundary(end) {
        end -= 1;
    }
    let end = diff[..end].rfind('\n').map_or(0, |i| i + 1);
    diff.truncate(end);
    diff.push_str(&format!("[diff cut at {end} of {total} bytes]\n"));
    diff
}

/// A git state: the scratch directory with the private index and objects, and the tree.
#[derive(Debug)]
struct GitBaseline {
    scratch: tempfile::TempDir,
    tree: String,
}

impl GitBaseline {
    fn take(workspace: &Path) -> Result<GitBaseline, ChangesError> {
        let scratch = tempfile::Builder::new().prefix("tackle-diff-").tempdir()?;
        std::fs::create_dir(scratch.path().join("objects"))?;
        let git = Git::new(workspace, scratch.path())?;
        // Start from the repository's own index, so files git already knows unchanged (by
        // their stat data) are not read again.
        let index = git.plain(&["rev-parse", "--git-path", "index"], "rev-parse")?;
        let index = workspace.join(index.trim());
        if let Ok(bytes) = std::fs::read(&index) {
            std::fs::write(scratch.path().join("index"), bytes)?;
        }
        let tree = git.tree()?;
        Ok(GitBaseline { scratch, tree })
    }

    fn diff(&self, workspace: &Path) -> Result<String, ChangesError> {
        let git = Git::new(workspace, self.scratch.path())?;
        let now = git.tree()?;
        git.output(
            &[
                "diff-tree",
                "-p",
                "-r",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--no-renames",
                &self.tree,
                &now,
            ],
            "diff-tree",
        )
    }
}

/// git, run on the workspace with a private index and object directory and none of the
/// repository's configuration that executes.
struct Git {
    workspace: PathBuf,
    scratch: PathBuf,
    /// `-c` settings that switch off what the repository's configuration could run.
    overrides: Vec<String>,
    /// The repository's object directory, read behind the private one.
    objects: Option<PathBuf>,
}

impl Git {
    fn new(workspace: &Path, scratch: &Path) -> Result<Git, ChangesError> {
        let mut git =
            Git { workspace: workspace.to_owned(), scratch: scratch.to_owned(), overrides: Vec::new(), objects: None };
        git.overrides = [
            "core.fsmonitor=false",
            "core.hooksPath=/dev/null",
            "core.untrackedCache=false",
            "core.attributesFile=/dev/null",
            "diff.external=",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        // Every filter driver any configuration names gets empty commands: git then runs none.
        let listed = git.plain(&["config", "--name-only", "--get-regexp", r"^filter\."], "config");
        for name in listed.unwrap_or_default().lines() {
            let Some(driver) = name.strip_prefix("filter.").and_then(|rest| rest.rsplit_once('.')).map(|(d, _)| d)
            else {
                continue;
            };
            for key in ["clean", "smudge", "process"] {
                git.overrides.push(format!("filter.{driver}.{key}="));
            }
            git.overrides.push(format!("filter.{driver}.required=false"));
        }
        let common = git.plain(&["rev-parse", "--git-common-dir"], "rev-parse")?;
        git.objects = Some(workspace.join(common.trim()).join("objects"));
        Ok(git)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("git");
        command.env_clear();
        for keep in ["PATH", "HOME", "USER", "TMPDIR"] {
            if let Some(value) = std::env::var_os(keep) {
                command.env(keep, value);
            }
        }
        let objects = self.scratch.join("objects");
        command
            // The workspace, whatever `core.worktree` the repository's configuration names.
            .env("GIT_WORK_TREE", &self.workspace)
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_INDEX_FILE", self.scratch.join("index"))
            .env("GIT_OBJECT_DIRECTORY", &objects)
            .current_dir(&self.workspace)
            .stdin(Stdio::null());
        // The repository's own objects, read-only, behind the private directory.
        if let Some(objects) = &self.objects {
            command.env("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects);
        }
        for setting in &self.overrides {
            command.args(["-c", setting]);
        }
        command.args(args);
        command
    }

    /// `git ARGS` in the workspace with the overrides but without the private index and
    /// objects (for the questions about the repository itself).
    fn plain(&self, args: &[&str], action: &'static str) -> Result<String, ChangesError> {
        let mut command = Command::new("git");
        command.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        if let Some(home) = std::env::var_os("HOME") {
            command.env("HOME", home);
        }
        for setting in &self.overrides {
            command.args(["-c", setting]);
        }
        command.env("GIT_WORK_TREE", &self.workspace);
        let out = command.args(args).current_dir(&self.workspace).stdin(Stdio::null()).output()?;
        if !out.status.success() {
            return Err(ChangesError::Git { action, detail: stderr_of(&out) });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn output(&self, args: &[&str], action: &'static str) -> Result<String, ChangesError> {
        let out = self.command(args).output()?;
        if !out.status.success() {
            return Err(ChangesError::Git { action, detail: stderr_of(&out) });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The workspace's files now (what `git add -A` would stage, `.tackle/` left out) as a tree.
    fn tree(&self) -> Result<String, ChangesError> {
        self.output(&["add", "-A", "--ignore-errors"], "add")?;
        // Out of the private index whether or not an ignore rule already keeps it out (a
        // pathspec that names an ignored directory makes `git add` fail).
        self.output(&["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", TACKLE_DIR], "rm")?;
        Ok(self.output(&["write-tree"], "write-tree")?.trim().to_owned())
    }
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

/// One file of a snapshot.
#[derive(Debug, Clone, PartialEq)]
enum Entry {
    /// Its bytes, kept whole.
    Kept(Vec<u8>),
    /// Too large to keep: its size and a hash of its bytes.
    Large { size: u64, hash: [u8; 32] },
    /// A symbolic link, by its target.
    Link(PathBuf),
}

/// What is left of the snapshot's byte allowance.
struct Allowance(u64);

/// The workspace's files by relative path (`/`-separated), `.git` and `.tackle` left out.
///
/// Files are opened beneath the workspace with no link followed: the session's background
/// processes may still run while the snapshot is taken, and a file swapped for a link between
/// the walk and the read must not bring an outside file into the diff.
fn snapshot(workspace: &Path, allowance: &mut Allowance) -> BTreeMap<String, Entry> {
    let mut files = BTreeMap::new();
    let Ok(workspace) = workspace.canonicalize() else { return files };
    let Ok(root) = Beneath::open(&workspace) else { return files };
    let walk = ignore::WalkBuilder::new(&workspace)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .filter_entry(|entry| entry.depth() != 1 || !matches!(entry.file_name().to_str(), Some(".git" | TACKLE_DIR)))
        .build();
    for entry in walk.flatten() {
        let Some(kind) = entry.file_type() else { continue };
        let Ok(relative) = entry.path().strip_prefix(&workspace) else { continue };
        let Some(name) = relative.to_str().map(str::to_owned) else { continue };
        let read = if kind.is_symlink() {
            std::fs::read_link(entry.path()).map(Entry::Link)
        } else if kind.is_file() {
            read_entry(&root, entry.path(), allowance)
        } else {
            continue;
        };
        if let Ok(read) = read {
            files.insert(name, read);
        }
    }
    files
}

/// Reads the regular file at `path` through `root` (no link followed, never blocking on a
/// FIFO swapped in); anything else is an error and left out.
fn read_entry(root: &Beneath, path: &Path, allowance: &mut Allowance) -> std::io::Result<Entry> {
    use std::io::Read as _;
    let fd = root.open_at(path, OFlags::RDONLY | OFlags::NONBLOCK, Links::None).map_err(std::io::Error::other)?;
    let mut file = std::fs::File::from(fd);
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let size = metadata.len();
    if size <= SNAPSHOT_FILE_BYTES && size <= allowance.0 {
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        allowance.0 = allowance.0.saturating_sub(bytes.len() as u64);
        return Ok(Entry::Kept(bytes));
    }
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let read = file.read(&mut chunk)?;
        if read == 0 {
            break;
        }
        hasher.update(&chunk[..read]);
    }
    Ok(Entry::Large { size, hash: hasher.finalize().into() })
}

/// The unified diff from `before` to `after`, file by file in path order, in git's layout.
fn snapshot_diff(before: &BTreeMap<String, Entry>, after: &BTreeMap<String, Entry>) -> String {
    let mut out = Vec::new();
    let names: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for name in names {
        let (old, new) = (before.get(name), after.get(name));
        if old == new {
            continue;
        }
        let _ = write_file_diff(&mut out, name, old, new);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn write_file_diff(out: &mut Vec<u8>, name: &str, old: Option<&Entry>, new: Option<&Entry>) -> std::io::Result<()> {
    writeln!(out, "diff --git a/{name} b/{name}")?;
    let mode = |entry: Option<&Entry>| if matches!(entry, Some(Entry::Link(_))) { "120000" } else { "100644" };
    match (old, new) {
        (None, _) => writeln!(out, "new file mode {}", mode(new))?,
        (_, None) => writeln!(out, "deleted file mode {}", mode(old))?,
        _ => {}
    }
    let text = |entry: Option<&Entry>| -> Option<String> {
        match entry {
            None => Some(String::new()),
            Some(Entry::Kept(bytes)) if !bytes.contains(&0) => String::from_utf8(bytes.clone()).ok(),
            Some(Entry::Link(target)) => Some(format!("{}\n", target.display())),
            Some(_) => None,
        }
    };
    let (a, b) = (
        if old.is_some() { format!("a/{name}") } else { "/dev/null".to_owned() },
        if new.is_some() { format!("b/{name}") } else { "/dev/null".to_owned() },
    );
    match (text(old), text(new)) {
        (Some(old_text), Some(new_text)) => {
            let diff = similar::TextDiff::configure()
                .timeout(std::time::Duration::from_secs(2))
                .diff_lines(old_text.as_str(), new_text.as_str());
            write!(out, "{}", diff.unified_diff().context_radius(3).header(&a, &b))?;
        }
        _ => writeln!(out, "Binary files {a} and {b} differ")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), &["init", "-q"]);
        run(dir.path(), &["config", "user.email", "t@example.com"]);
        run(dir.path(), &["config", "user.name", "t"]);
        std::fs::write(dir.path().join("kept.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        run(dir.path(), &["add", "-A"]);
        run(dir.path(), &["commit", "-qm", "start"]);
        dir
    }

    fn change(dir: &Path) {
        std::fs::write(dir.join("kept.txt"), "one\nTWO\nthree\n").unwrap();
        std::fs::remove_file(dir.join("gone.txt")).unwrap();
        std::fs::write(dir.join("new.txt"), "hello\n").unwrap();
        std::fs::write(dir.join("blob.bin"), [0u8, 1, 2, 255]).unwrap();
        std::fs::create_dir_all(dir.join(".tackle/trajectories")).unwrap();
        std::fs::write(dir.join(".tackle/trajectories/t.jsonl"), "{}\n").unwrap();
        std::fs::create_dir_all(dir.join("build")).unwrap();
        std::fs::write(dir.join("build/out.o"), "ignored\n").unwrap();
    }

    fn assert_changes(diff: &str, ignored_shown: bool) {
        assert!(diff.contains("-two\n+TWO\n"), "{diff}");
        assert!(diff.contains("+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"), "{diff}");
        assert!(diff.contains("deleted file mode") && diff.contains("-bye\n"), "{diff}");
        assert!(diff.contains("Binary files /dev/null and b/blob.bin differ"), "{diff}");
        assert!(!diff.contains(".tackle"), "{diff}");
        assert_eq!(diff.contains("build/out.o"), ignored_shown, "{diff}");
    }

    #[test]
    fn a_repository_diffs_from_the_start_not_from_head() {
        let dir = repo();
        // Uncommitted before the run: not the run's change.
        std::fs::write(dir.path().join("gone.txt"), "bye\nlocal edit\n").unwrap();
        let baseline = Baseline::take(dir.path());
        assert!(matches!(baseline.state, State::Git(_)));
        assert_eq!(baseline.diff().unwrap(), "", "nothing changed yet");
        change(dir.path());
        let diff = baseline.diff().unwrap();
        assert_changes(&diff, false);
        assert!(!diff.contains("+local edit"), "the edit before the run is not the run's: {diff}");
        // Nothing was written into the repository: its index and objects are as they were.
        let status = Command::new("git").args(["status", "--porcelain"]).current_dir(dir.path()).output().unwrap();
        assert!(String::from_utf8_lossy(&status.stdout).contains("?? new.txt"), "still untracked");
    }

    #[test]
    fn nothing_in_the_repository_configuration_runs() {
        let dir = repo();
        let marker = dir.path().join("ran");
        let script = dir.path().join("evil.sh");
        std::fs::write(&script, format!("#!/bin/sh\ntouch {}\ncat\n", marker.display())).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let evil = script.display().to_string();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
        for (key, value) in [
            ("core.fsmonitor", evil.as_str()),
            ("filter.x.clean", evil.as_str()),
            ("filter.x.process", evil.as_str()),
            ("filter.x.required", "true"),
            ("diff.external", evil.as_str()),
            ("diff.x.textconv", evil.as_str()),
            ("diff.x.command", evil.as_str()),
            ("core.hooksPath", dir.path().to_str().unwrap()),
            // Files outside the workspace must not become the run's "changes".
            ("core.worktree", outside.path().to_str().unwrap()),
        ] {
            run(dir.path(), &["config", key, value]);
        }
        std::fs::write(dir.path().join(".gitattributes"), "* filter=x diff=x\n").unwrap();
        let baseline = Baseline::take(dir.path());
        assert!(matches!(baseline.state, State::Git(_)));
        change(dir.path());
        let diff = baseline.diff().unwrap();
        assert!(diff.contains("-two\n+TWO\n"), "{diff}");
        assert!(!diff.contains("secret.txt"), "{diff}");
        assert!(!marker.exists(), "the repository's configuration ran a command");
    }

    #[test]
    fn a_snapshot_reads_no_file_through_a_link_or_a_fifo() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "outside secret\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().canonicalize().unwrap();
        std::fs::create_dir(workspace.join("sub")).unwrap();
        std::fs::write(workspace.join("sub/plain.txt"), "inside\n").unwrap();
        let root = Beneath::open(&workspace).unwrap();
        let mut allowance = Allowance(SNAPSHOT_TOTAL_BYTES);
        let read = |path: &Path, allowance: &mut Allowance| read_entry(&root, path, allowance);
        assert_eq!(read(&workspace.join("sub/plain.txt"), &mut allowance).unwrap(), Entry::Kept(b"inside\n".to_vec()));
        // A file swapped for a link after the walk saw a file (the walk records links as
        // links): the read refuses it, and so does a directory swapped for one on the way.
        std::os::unix::fs::symlink(outside.path().join("secret"), workspace.join("swapped.txt")).unwrap();
        assert!(read(&workspace.join("swapped.txt"), &mut allowance).is_err());
        std::fs::rename(workspace.join("sub"), workspace.join("sub.old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), workspace.join("sub")).unwrap();
        std::fs::write(outside.path().join("plain.txt"), "outside\n").unwrap();
        assert!(read(&workspace.join("sub/plain.txt"), &mut allowance).is_err());
        // A FIFO is neither waited on nor read.
        let status = Command::new("mkfifo").arg(workspace.join("fifo")).status().unwrap();
        assert!(status.success());
        assert!(read(&workspace.join("fifo"), &mut allowance).is_err());
        let files = snapshot(&workspace, &mut Allowance(SNAPSHOT_TOTAL_BYTES));
        assert!(!files.values().any(|entry| matches!(entry, Entry::Kept(bytes) if bytes.starts_with(b"outside"))));
        assert_eq!(files.get("sub"), Some(&Entry::Link(outside.path().to_owned())));
    }

    #[test]
    fn a_plain_directory_diffs_from_a_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("kept.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        let baseline = Baseline::take(dir.path());
        assert!(matches!(baseline.state, State::Snapshot(_)));
        change(dir.path());
        // Without git, ignore files mean nothing: the build output is a change too.
        assert_changes(&baseline.diff().unwrap(), true);
    }

    #[test]
    fn large_files_are_named_and_huge_diffs_cut() {
        let dir = tempfile::tempdir().unwrap();
        let big = vec![b'a'; (SNAPSHOT_FILE_BYTES + 1) as usize];
        std::fs::write(dir.path().join("big.txt"), &big).unwrap();
        let baseline = Baseline::take(dir.path());
        let mut changed = big.clone();
        changed[0] = b'b';
        std::fs::write(dir.path().join("big.txt"), &changed).unwrap();
        assert!(baseline.diff().unwrap().contains("Binary files a/big.txt and b/big.txt differ"));

        let long = "x".repeat(99) + "\n";
        let text = cut(long.repeat(MAX_DIFF_BYTES / 100 + 10));
        assert!(text.len() <= MAX_DIFF_BYTES + 100);
        assert!(text.ends_with("bytes]\n") && text.contains("[diff cut at"), "{}", &text[text.len() - 80..]);
    }
}
