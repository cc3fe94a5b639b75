//! How long to wait before trying a failed model call again.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Exponential backoff with jitter; a provider's `Retry-After` wins over the schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retrying.
    pub max_retries: u32,
    pub initial_delay_ms: u64,
    pub max_delay_ms: u64,
    pub exponential_base: f64,
}

/// The longest `Retry-After` honoured; a larger one is capped so a turn cannot hang for hours.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based).
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(asked) = retry_after {
            return asked.min(MAX_RETRY_AFTER);
        }
        let exponent = retry.saturating_sub(1).min(63) as i32;
        let scheduled = (self.initial_delay_ms as f64) * self.exponential_base.max(1.0).powi(exponent);
        let capped = scheduled.min(self.max_delay_ms as f64);
        // ±20 % jitter so many clients do not retry in lockstep.
        let jittered = capped * (0.8 + 0.4 * fastrand::f64());
        Duration::from_millis(jittered.round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in defaults (config/default.toml).
    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            initial_delay_ms: 1000,
            max_delay_ms: 60_000,
            exponential_base: 2.0,
        }
    }

    #[test]
    fn delays_grow_are_capped_and_jittered() {
        let policy = policy();
        for retry in 1..=10 {
            let delay = policy.delay(retry, None).as_millis() as f64;
            let expected = (1000.0 * 2f64.powi(retry as i32 - 1)).min(60_000.0);
            assert!(
                delay >= expected * 0.8 - 1.0 && delay <= expected * 1.2 + 1.0,
                "retry {retry}: {delay}"
            );
        }
    }

    #[test]
    fn retry_after_wins_and_is_capped() {
        let policy = policy();
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(86_400))),
            MAX_RETRY_AFTER
        );
    }
}
