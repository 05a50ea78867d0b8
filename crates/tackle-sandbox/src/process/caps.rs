//! Clearing every capability before a sandboxed program starts (docs/reference/safety.md#process-sandbox).
//!
//! Tackle may run as root (containers, CI). bubblewrap drops every capability itself
//! (`--cap-drop ALL`); Landlock does not, so a root command under Landlock kept all of them
//! (`mknod` of a kernel device, `sethostname`). Between `fork` and `exec` the child empties
//! the bounding set (so `exec` of a root or set-user-id program cannot regain any), the
//! ambient set, and the effective, permitted and inheritable sets. The read-only wrapper
//! (`super::restrict`) does the same. Only async-signal-safe system calls are made.

/// `_LINUX_CAPABILITY_VERSION_3`.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The highest capability number any kernel may know; numbers the running kernel does not
/// know make `PR_CAPBSET_DROP` fail with `EINVAL`, which ends the loop.
const LAST_CAPABILITY: libc::c_ulong = 63;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Clears the bounding, ambient, effective, permitted and inheritable capability sets of the
/// calling process. An error means a capability could not be dropped (the caller must not
/// start the program).
pub(crate) fn drop_all() -> std::io::Result<()> {
    for capability in 0..=LAST_CAPABILITY {
        // SAFETY: PR_CAPBSET_READ / PR_CAPBSET_DROP take an integer argument and no pointer.
        let present = unsafe { libc::prctl(libc::PR_CAPBSET_READ, capability, 0, 0, 0) };
        if present < 0 {
            break; // beyond the kernel's last capability
        }
        // SAFETY: as above. Without CAP_SETPCAP (an unprivileged user, or root in a container
        // that lacks it) the set cannot shrink, and `EPERM` is not an error: such a process gains
        // nothing at `exec` (no_new_privs is set) beyond a bounding set it was given already.
        if present == 1
            && unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0) } < 0
            && std::io::Error::last_os_error().raw_os_error() != Some(libc::EPERM)
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: PR_CAP_AMBIENT_CLEAR_ALL takes no pointer. EINVAL means a kernel without ambient
    // capabilities (before 4.3), which has none to clear.
    let cleared =
        unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong, 0, 0, 0) };
    if cleared < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(std::io::Error::last_os_error());
    }
    let mut header = CapHeader { version: CAPABILITY_VERSION_3, pid: 0 };
    let data = [CapData { effective: 0, permitted: 0, inheritable: 0 }; 2];
    // SAFETY: capset reads a version-3 header and two data structs, which live on this stack
    // frame for the duration of the call.
    let set = unsafe { libc::syscall(libc::SYS_capset, &raw mut header, data.as_ptr()) };
    if set < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
