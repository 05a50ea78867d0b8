//! Background jobs (docs/reference/tools.md#background_run): the job table of a session, its notifications, and the
//! `background_run`, `job_output` and `job_kill` tools.

mod notify;
mod table;
mod tools;

pub use self::notify::{JobEvents, JobNotification, JobNotifications};
pub use self::table::{Job, JobStart, JobStatus, JobTable, MAX_RUNNING_JOBS, Notify};
pub use self::tools::{
    BackgroundRun, BackgroundRunInput, DEFAULT_JOB_TIMEOUT_MS, JobKill, JobKillInput, JobOutput, JobOutputInput,
};
