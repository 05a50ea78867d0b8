//! Scheduling: which admitted calls of a turn may run together. Consecutive
//! concurrency-safe calls form one batch; every other call is a batch of its own; batches run
//! one after another in call order. So an unsafe call never overlaps any other call, and
//! safe calls never run across an unsafe one.

/// Groups call indices into batches. `safe[i]` is `Some(concurrency_safe)` for a runnable
/// call and `None` for one already answered (it takes no part).
pub fn batches(safe: &[Option<bool>]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut open_safe_batch = false;
    for (index, flag) in safe.iter().enumerate() {
        match flag {
            None => {}
            Some(true) if open_safe_batch => {
                if let Some(last) = out.last_mut() {
                    last.push(index);
                }
            }
            Some(true) => {
                out.push(vec![index]);
                open_safe_batch = true;
            }
            Some(false) => {
                out.push(vec![index]);
                open_safe_batch = false;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_runs_share_and_unsafe_calls_stand_alone() {
        let safe = [Some(true), Some(true), Some(false), None, Some(true), Some(false), Some(false), Some(true)];
        assert_eq!(batches(&safe), vec![vec![0, 1], vec![2], vec![4], vec![5], vec![6], vec![7]]);
    }

    #[test]
    fn answered_calls_do_not_split_a_safe_run() {
        assert_eq!(batches(&[Some(true), None, Some(true)]), vec![vec![0, 2]]);
        assert_eq!(batches(&[]), Vec::<Vec<usize>>::new());
    }
}
