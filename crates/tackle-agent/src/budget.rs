//! A run's spending limit (`tackle run --max-tokens N`, `--max-cost USD`): the tokens and
//! dollars every request of the run spent, its subagents' included, and whether the next
//! request may still be made. Shared by a run and its children, so a subagent cannot spend past
//! the run's limit either (docs/reference/cli.md#limits-and-budgets).

use std::sync::Mutex;

use tackle_llm::Usage;

/// The limits and what was spent so far.
#[derive(Debug, Default)]
pub struct Budget {
    max_tokens: Option<u64>,
    max_cost_usd: Option<f64>,
    spent: Mutex<Usage>,
}

impl Budget {
    /// A budget of at most `max_tokens` tokens (input, cached input and output, summed over
    /// every request) and `max_cost_usd` US dollars; `None` is no limit of that kind.
    pub fn new(max_tokens: Option<u64>, max_cost_usd: Option<f64>) -> Budget {
        Budget { max_tokens, max_cost_usd, spent: Mutex::new(Usage::default()) }
    }

    /// Counts one response's usage (its `cost` already priced when a price is known).
    pub fn spend(&self, usage: &Usage) {
        self.spent.lock().unwrap_or_else(std::sync::PoisonError::into_inner).add(usage);
    }

    /// What was spent so far.
    pub fn spent(&self) -> Usage {
        *self.spent.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Why no further request may be made, once a limit is reached.
    pub fn reached(&self) -> Option<String> {
        let spent = self.spent();
        if let Some(max) = self.max_tokens
            && spent.total() >= max
        {
            return Some(format!(
                "Stopped: the run used {} tokens, reaching its limit of {max} (--max-tokens).",
                spent.total()
            ));
        }
        if let Some(max) = self.max_cost_usd
            && let Some(cost) = spent.cost
            && cost >= max
        {
            return Some(format!("Stopped: the run cost ${cost:.4}, reaching its limit of ${max:.4} (--max-cost)."));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cost: Option<f64>) -> Usage {
        Usage { input_tokens: input, output_tokens: output, cost, ..Usage::default() }
    }

    #[test]
    fn tokens_are_summed_over_requests_until_the_limit() {
        let budget = Budget::new(Some(1_000), None);
        budget.spend(&usage(400, 100, None));
        assert_eq!(budget.reached(), None);
        budget.spend(&usage(400, 99, None));
        assert_eq!(budget.reached(), None, "999 of 1000");
        budget.spend(&usage(1, 0, None));
        assert!(budget.reached().unwrap().contains("1000 tokens"));
    }

    #[test]
    fn cost_counts_once_priced() {
        let budget = Budget::new(None, Some(0.01));
        budget.spend(&usage(1_000_000, 0, None));
        assert_eq!(budget.reached(), None, "unpriced usage spends no dollars");
        budget.spend(&usage(10, 10, Some(0.004)));
        assert_eq!(budget.reached(), None);
        budget.spend(&usage(10, 10, Some(0.006)));
        assert!(budget.reached().unwrap().contains("--max-cost"));
        assert_eq!(Budget::new(None, None).reached(), None);
    }
}
