//! Finding and ending the processes a command left behind, by process session and by parent
//! (docs/reference/safety.md#command-environment).
//!
//! Every shell session and background job starts in its own process session, and bubblewrap's
//! `--new-session` adds one more inside the sandbox. Processes that leave their parent
//! (`(sleep 100 &)`) keep their session id; processes that start a session of their own
//! (`setsid sleep 100 &`) keep a parent below the shell, because every process Tackle starts is
//! a child subreaper ([`super::spawn_session`]) that adopts the orphans below it. So "every
//! process of our sessions, and every descendant of those" is what `close` and `restart` kill,
//! as long as the shell is still there to hold its orphans. What escapes even that (a
//! `setsid` child of a shell or job that then exited) still carries `TACKLE_SESSION_ID`:
//! [`ProcessSessions::carrying`] finds it by its environment when the tool session ends. The
//! kill procedure is SIGTERM, then SIGKILL after a grace period (`[tools] kill_grace_ms`, 2 s).
//! Tackle's own process and every process of Tackle's own session are never followed.
//!
//! Everything here reads `/proc` from outside any sandbox, so the ids are those of Tackle's own
//! PID namespace.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::time::{Duration, Instant};

/// The default grace period between SIGTERM and SIGKILL.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(2);

/// How often the kill procedure looks again whether the processes are gone.
const RECHECK: Duration = Duration::from_millis(10);

/// One line of `/proc/PID/stat`, as far as process control needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// Exited but not yet reaped: it holds no resources and cannot be signalled away.
    pub zombie: bool,
}

/// Reads `/proc/PID/stat`.
pub fn stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<ProcStat> {
    // `pid (comm) state ppid pgrp session …`; comm may hold spaces and parentheses.
    let pid = text.split_once(' ')?.0.parse().ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    let sid = fields.next()?.parse().ok()?;
    Some(ProcStat { pid, ppid, pgid, sid, zombie: state == "Z" || state == "X" })
}

/// Every process visible in `/proc`.
pub fn snapshot() -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()))
        .filter_map(stat)
        .collect()
}

/// The processes below `root` (children, grandchildren, …), in breadth-first order.
pub fn descendants(processes: &[ProcStat], root: i32) -> Vec<ProcStat> {
    let mut children: HashMap<i32, Vec<ProcStat>> = HashMap::new();
    for process in processes {
        children.entry(process.ppid).or_default().push(*process);
    }
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if child.pid != root && !found.iter().any(|p: &ProcStat| p.pid == child.pid) {
                found.push(*child);
                queue.insert(0, child.pid);
            }
        }
    }
    found
}

/// The processes that belong to one started command: the sessions it and its descendants are
/// in, and the processes that must not be signalled when only the command's children are
/// stopped (the shell itself and the sandbox processes above it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessSessions {
    /// The session ids.
    pub sids: BTreeSet<i32>,
    /// Processes spared by [`ProcessSessions::kill_children`].
    pub keep: BTreeSet<i32>,
    /// Processes followed (with their descendants) whatever their session.
    pub pids: BTreeSet<i32>,
}

impl ProcessSessions {
    /// The sessions of `root` and of every process below it now.
    pub fn of_tree(root: i32) -> ProcessSessions {
        let processes = snapshot();
        let mut sids: BTreeSet<i32> = descendants(&processes, root).iter().map(|p| p.sid).collect();
        sids.insert(root);
        if let Some(own) = processes.iter().find(|p| p.pid == root) {
            sids.insert(own.sid);
        }
        ProcessSessions { sids, ..ProcessSessions::default() }
    }

    /// The session `sid` (a process started by [`super::spawn_session`], whose pid is its
    /// session id); the kill procedure follows every descendant and their sessions from there.
    pub fn of_session(sid: i32) -> ProcessSessions {
        ProcessSessions { sids: BTreeSet::from([sid]), ..ProcessSessions::default() }
    }

    /// Every live process whose environment holds `name=value`, with its descendants (the
    /// last sweep at the end of a tool session: `TACKLE_SESSION_ID` marks everything its
    /// commands started, even what left every session and parent of ours).
    pub fn carrying(name: &str, value: &OsStr) -> ProcessSessions {
        let mut needle = name.as_bytes().to_vec();
        needle.push(b'=');
        needle.extend_from_slice(value.as_bytes());
        let pids = snapshot()
            .into_iter()
            .filter(|process| !process.zombie)
            .filter(|process| {
                std::fs::read(format!("/proc/{}/environ", process.pid))
                    .is_ok_and(|environ| environ.split(|b| *b == 0).any(|var| var == needle))
            })
            .map(|process| process.pid)
            .collect();
        ProcessSessions { pids, ..ProcessSessions::default() }
    }

    /// The live (not zombie) processes of these sessions and their descendants.
    pub fn members(&self) -> Vec<ProcStat> {
        Sweep::new(self).look()
    }

    /// Ends every process of these sessions except the kept ones: SIGTERM to their groups,
    /// SIGKILL after `grace` to whatever is left. Returns when they are gone (or shortly after
    /// the SIGKILL, for processes that cannot die at once).
    pub async fn kill_children(&self, grace: Duration) {
        self.kill(grace, true).await;
    }

    /// Ends every process of these sessions, kept ones included.
    pub async fn kill_all(&self, grace: Duration) {
        self.kill(grace, false).await;
    }

    /// SIGKILL to every member at once, without waiting (for `Drop`).
    pub fn kill_now(&self) {
        let mut sweep = Sweep::new(self);
        freeze(&mut sweep);
        self.signal(&mut sweep, false, libc::SIGKILL);
    }

    async fn kill(&self, grace: Duration, spare_kept: bool) {
        let mut sweep = Sweep::new(self);
        // Ending everything: freeze it first, so no process forks, starts a session of its own
        // or loses its parent between our looks (a sandbox that is still setting up does all
        // three); the SIGTERM is delivered when they continue.
        let stopped = if spare_kept { Vec::new() } else { freeze(&mut sweep) };
        let signalled = self.signal(&mut sweep, spare_kept, libc::SIGTERM);
        for pid in stopped {
            send(pid, libc::SIGCONT);
        }
        if signalled == 0 {
            return;
        }
        let deadline = Instant::now() + grace;
        loop {
            tokio::time::sleep(RECHECK).await;
            if self.targets(&mut sweep, spare_kept).is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        // SIGKILL is not refused; give the kernel a moment to tear the processes down, and
        // catch what they forked meanwhile.
        let settle = Instant::now() + Duration::from_millis(500);
        while self.signal(&mut sweep, spare_kept, libc::SIGKILL) > 0 && Instant::now() < settle {
            tokio::time::sleep(RECHECK).await;
        }
    }

    fn targets(&self, sweep: &mut Sweep, spare_kept: bool) -> Vec<ProcStat> {
        sweep.look().into_iter().filter(|p| !(spare_kept && self.keep.contains(&p.pid))).collect()
    }

    /// Sends `signal` to the targets (to their process groups, except groups shared with a
    /// kept process, whose members are signalled one by one); returns how many there were.
    fn signal(&self, sweep: &mut Sweep, spare_kept: bool, signal: i32) -> usize {
        let members = sweep.look();
        let kept_groups: BTreeSet<i32> =
            members.iter().filter(|p| spare_kept && self.keep.contains(&p.pid)).map(|p| p.pgid).collect();
        let mut groups = BTreeSet::new();
        let mut count = 0;
        for member in members.iter().filter(|p| !(spare_kept && self.keep.contains(&p.pid))) {
            count += 1;
            send(member.pid, signal);
            if member.pgid > 1 && !kept_groups.contains(&member.pgid) && groups.insert(member.pgid) {
                send(-member.pgid, signal);
            }
        }
        count
    }
}

/// Stops every followed process, looking again until a look finds nothing new; returns the
/// stopped processes.
fn freeze(sweep: &mut Sweep) -> Vec<i32> {
    let mut stopped: Vec<i32> = Vec::new();
    for _ in 0..64 {
        let new: Vec<i32> = sweep.look().iter().map(|p| p.pid).filter(|pid| !stopped.contains(pid)).collect();
        if new.is_empty() {
            break;
        }
        for &pid in &new {
            send(pid, libc::SIGSTOP);
        }
        stopped.extend(new);
    }
    stopped
}

/// What one kill procedure follows: the processes of the sessions, their descendants, and every
/// process seen on an earlier look, even after it started a session of its own or lost its
/// parent (a sandbox's first child does both while it sets up).
struct Sweep {
    sids: BTreeSet<i32>,
    seen: BTreeSet<i32>,
    /// Tackle's own process and session, never followed.
    own: ProcStat,
}

impl Sweep {
    fn new(sessions: &ProcessSessions) -> Sweep {
        let pid = std::process::id() as i32;
        // SAFETY: getsid and getpgrp only read the calling process's ids.
        let (sid, pgid) = unsafe { (libc::getsid(0), libc::getpgrp()) };
        let own = ProcStat { pid, ppid: 0, pgid, sid, zombie: false };
        let mut sids = sessions.sids.clone();
        sids.remove(&own.sid);
        let mut seen = sessions.pids.clone();
        seen.remove(&own.pid);
        Sweep { sids, seen, own }
    }

    /// The live processes followed now.
    fn look(&mut self) -> Vec<ProcStat> {
        let own = self.own;
        let all: Vec<ProcStat> = snapshot()
            .into_iter()
            .filter(|p| !p.zombie && p.pid != own.pid && p.sid != own.sid && p.pgid != own.pgid)
            .collect();
        loop {
            let before = (self.sids.len(), self.seen.len());
            for process in &all {
                let followed = self.sids.contains(&process.sid)
                    || self.seen.contains(&process.pid)
                    || self.seen.contains(&process.ppid);
                if followed {
                    self.seen.insert(process.pid);
                    self.sids.insert(process.sid);
                }
            }
            if (self.sids.len(), self.seen.len()) == before {
                break;
            }
        }
        all.into_iter().filter(|p| self.seen.contains(&p.pid)).collect()
    }
}

/// `kill(2)`, ignoring a process that is already gone.
pub fn send(pid: i32, signal: i32) {
    // SAFETY: kill has no memory effects; a stale pid yields ESRCH, which is ignored.
    unsafe {
        libc::kill(pid, signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The bounds table of `tackle_policy::config::rules` states this default for its notices.
    #[test]
    #[allow(clippy::cast_precision_loss)]
    fn the_bounds_table_knows_the_default_grace() {
        let rule = tackle_policy::config::rules::number_rule("tools.kill_grace_ms").unwrap();
        assert_eq!(rule.default, Some(DEFAULT_KILL_GRACE.as_millis() as f64));
    }

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let line = "4242 (a (weird) name) S 4000 4100 4200 0 -1 4194304 96 0 0 0";
        assert_eq!(parse_stat(line), Some(ProcStat { pid: 4242, ppid: 4000, pgid: 4100, sid: 4200, zombie: false }));
        assert!(parse_stat("7 (z) Z 1 7 7 0").unwrap().zombie);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn descendants_follow_parent_links() {
        let p = |pid, ppid| ProcStat { pid, ppid, pgid: pid, sid: pid, zombie: false };
        let all = [p(1, 0), p(10, 1), p(11, 10), p(12, 11), p(13, 10), p(20, 1)];
        let pids: Vec<i32> = descendants(&all, 10).iter().map(|p| p.pid).collect();
        assert_eq!(pids, [11, 13, 12]);
    }

    #[test]
    fn our_own_process_is_visible() {
        let me = stat(std::process::id() as i32).unwrap();
        assert_eq!(me.pid, std::process::id() as i32);
        assert!(snapshot().iter().any(|p| p.pid == me.pid));
    }
}
