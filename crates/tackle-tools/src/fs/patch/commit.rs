//! Writing what a patch computed: every new content is staged next to its file first (a
//! failure there changes nothing), then put in place by rename, then the removed files are
//! removed. A rename that fails puts back the files already replaced. When the patch
//! changes more than one file, a roll-forward journal ([`crate::fs::journal`]) is written
//! before the first file is staged and removed after the last rename, so a Tackle killed in
//! between leaves a state the next session completes: every file patched, or none.

use std::ffi::OsString;

use tackle_core::ToolError;

use crate::fs::atomic::temp_name_for;
use crate::fs::journal::{self, Entry, Journal};
use crate::fs::ledger::content_hash;
use crate::fs::patch::apply::{FAILED, Slot};
use crate::fs::{Before, Existing, FileStamp, Files};

/// What was written, to undo it if a later write fails.
enum Done<'a> {
    Wrote(&'a Slot, FileStamp),
    Removed(&'a Slot),
}

/// Writes every changed file (creations and updates first, then removals), restoring what
/// was already done if one fails; records history and ledger entries once all succeeded.
pub(super) fn commit(files: &Files<'_>, changed: &[&Slot]) -> Result<(), ToolError> {
    let writes: Vec<&Slot> = changed.iter().copied().filter(|s| s.current.is_some()).collect();
    let removals: Vec<&Slot> =
        changed.iter().copied().filter(|s| s.current.is_none() && s.original.is_some()).collect();
    let temps: Vec<OsString> = writes.iter().map(|slot| temp_name_for(&slot.target.path)).collect();
    let journal = if writes.len() + removals.len() > 1 {
        let entries = entries(&writes, &temps, &removals);
        let journal = Journal::begin(files.ctx().paths().workspace(), &entries).map_err(|err| {
            ToolError::Failed(format!("{FAILED}\nThe journal in {} could not be written: {err}", journal::DIR))
        })?;
        Some(journal)
    } else {
        None
    };
    let finish = |journal: Option<Journal>| {
        if let Some(Err(err)) = journal.map(Journal::finish) {
            tracing::warn!(error = %err, "the apply_patch journal could not be removed");
        }
    };

    let mut staged = Vec::with_capacity(writes.len());
    for (slot, temp) in writes.iter().zip(&temps) {
        let content = slot.current.as_deref().unwrap_or_default();
        let mode = if slot.original.is_none() { slot.mode_from } else { None };
        match files.stage(&slot.target, temp, &[content.as_bytes()], mode) {
            Ok(file) => staged.push((*slot, file)),
            Err(err) => {
                drop(staged);
                finish(journal);
                return Err(ToolError::Failed(format!("{FAILED}\n{}: {err}", slot.target.raw)));
            }
        }
    }

    let mut done: Vec<Done<'_>> = Vec::new();
    let mut failure = None;
    for (slot, file) in staged {
        if failure.is_some() {
            continue; // dropped: its temporary file is removed
        }
        let content = slot.current.as_deref().unwrap_or_default();
        match files.commit(&slot.target, file, &[content.as_bytes()]) {
            Ok(stamp) => done.push(Done::Wrote(slot, stamp)),
            Err(err) => failure = Some(format!("{}: {err}", slot.target.raw)),
        }
    }
    for slot in removals.iter().filter(|_| failure.is_none()) {
        match files.delete(&slot.target) {
            Ok(()) => done.push(Done::Removed(slot)),
            Err(err) => {
                failure = Some(format!("{}: {err}", slot.target.raw));
                break;
            }
        }
    }
    if let Some(reason) = failure {
        let unrestored = roll_back(files, &done);
        finish(journal);
        if unrestored.is_empty() {
            return Err(ToolError::Failed(format!("{FAILED}\n{reason}")));
        }
        return Err(ToolError::Failed(format!(
            "apply_patch failed partway ({reason}), and these files could not be restored: {}. Check them before \
             going on.",
            unrestored.join(", ")
        )));
    }
    finish(journal);
    for item in &done {
        match item {
            Done::Wrote(slot, stamp) => {
                let before = slot.original.as_ref().map_or(Before::Absent, Existing::before);
                files.record_edit(&slot.target, before, Some(*stamp));
            }
            Done::Removed(slot) => {
                if let Some(original) = &slot.original {
                    files.record_edit(&slot.target, original.before(), None);
                }
            }
        }
    }
    Ok(())
}

/// The journal entries of a commit: each write with its staged name, then each removal.
fn entries(writes: &[&Slot], temps: &[OsString], removals: &[&Slot]) -> Vec<Entry> {
    let before = |slot: &Slot| slot.original.as_ref().map(|o| content_hash(&o.bytes));
    let written = writes.iter().zip(temps).map(|(slot, temp)| Entry {
        path: slot.target.raw.clone(),
        temp: Some(temp.to_string_lossy().into_owned()),
        before: before(slot),
        after: slot.current.as_deref().map(|text| content_hash(text.as_bytes())),
    });
    let removed = removals.iter().map(|slot| Entry {
        path: slot.target.raw.clone(),
        temp: None,
        before: before(slot),
        after: None,
    });
    written.chain(removed).collect()
}

/// Puts back what `done` changed; returns the paths that could not be restored.
fn roll_back(files: &Files<'_>, done: &[Done<'_>]) -> Vec<String> {
    let mut unrestored = Vec::new();
    for item in done.iter().rev() {
        let (slot, result) = match item {
            Done::Wrote(slot, _) => match &slot.original {
                Some(original) => (slot, files.put(&slot.target, &original.bytes, None).map(drop)),
                None => (slot, files.delete(&slot.target)),
            },
            Done::Removed(slot) => {
                let bytes = slot.original.as_ref().map(|o| o.bytes.as_slice()).unwrap_or_default();
                (slot, files.put(&slot.target, bytes, slot.mode()).map(drop))
            }
        };
        if result.is_err() {
            unrestored.push(slot.target.raw.clone());
        }
    }
    unrestored
}
