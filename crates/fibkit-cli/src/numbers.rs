//! Numeric command-line options, checked when they are parsed: every one
//! goes through [`number_in`], so that `nan`, `inf`, `-1` or `1e30` is a
//! clear usage error naming the option's range, never a panic or a hang
//! later (a duration that overflows, a pace that never comes). An option
//! whose value sizes an allocation (runs, flaps, lookup threads) has a
//! range whose largest value cannot exhaust memory, so that it is refused
//! here rather than aborting on a failed allocation.

use std::fmt::Display;
use std::str::FromStr;

use fibkit::error::shorten;

/// `text` as a number of type `T` from `min` to `max` inclusive (NaN is
/// outside every range); `what` says what the number is, for the message.
pub fn number_in<T>(text: &str, what: &str, min: T, max: T) -> Result<T, String>
where
    T: FromStr + PartialOrd + Display + Copy,
{
    let value: T = text.trim().parse().map_err(|_| format!("{:?} is not {what}", shorten(text)))?;
    if !(value >= min && value <= max) {
        return Err(format!("{what} must be from {min} to {max}, not {}", shorten(text.trim())));
    }
    Ok(value)
}

/// Defines a clap value parser `$name` for a number of type `$type` in
/// `$min..=$max`.
macro_rules! number_option {
    ($(#[$doc:meta])* $name:ident: $type:ty, $what:literal, $min:expr, $max:expr) => {
        $(#[$doc])*
        pub fn $name(text: &str) -> Result<$type, String> {
            $crate::numbers::number_in::<$type>(text, $what, $min, $max)
        }
    };
}

number_option!(
    /// `fibkit lookup --threads`: each thread keeps up to 8 MiB of input
    /// blocks in flight (up to 2 GiB at the most).
    threads: usize, "a thread count", 1, 256
);
number_option!(
    /// `fibkit bench --threads`: workers that hold no buffer of their own.
    bench_threads: usize, "a thread count", 1, 4096
);
number_option!(
    /// Reader threads, or none.
    readers: usize, "a reader count", 0, 4096
);
number_option!(
    /// `--nexthops N`.
    nexthops: u32, "a next-hop count", 1, u32::MAX
);
number_option!(
    /// Seconds of a measurement (up to a day).
    seconds: f64, "a number of seconds", 0.001, 86_400.0
);
number_option!(
    /// Seconds that may be zero (a measurement that may be skipped).
    seconds_or_zero: f64, "a number of seconds", 0.0, 86_400.0
);
number_option!(
    /// Milliseconds of trace time (up to a day).
    milliseconds: f64, "a number of milliseconds", 0.001, 86_400_000.0
);
number_option!(
    /// A speed-up factor of a clock.
    factor: f64, "a speed-up factor", 0.001, 1e9
);
number_option!(
    /// Updates per second.
    rate: f64, "a rate in updates per second", 0.001, 1e9
);
number_option!(
    /// A count of at least one (updates a batch: held as they come, not
    /// reserved ahead).
    count: usize, "a count", 1, 1 << 30
);
number_option!(
    /// `fibkit bench --runs`: each configuration keeps every run's figure.
    runs: usize, "a run count", 1, 1000
);
number_option!(
    /// `fibkit replay --flaps`: two timings kept per flap.
    flaps: usize, "a flap count", 0, 1_000_000
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_and_non_numbers_are_refused_with_the_range() {
        for text in ["0", "nan", "NaN", "-1", "1e-300", "inf", "1e30", "-inf"] {
            let message = factor(text).unwrap_err();
            assert!(message.contains("must be from 0.001 to 1000000000"), "{text}: {message}");
        }
        assert!(factor("x").unwrap_err().contains("\"x\" is not a speed-up factor"));
        assert_eq!(factor(" 2.5 "), Ok(2.5));
        assert_eq!(seconds_or_zero("0"), Ok(0.0));
        assert!(bench_threads("0").unwrap_err().contains("a thread count must be from 1 to 4096, not 0"));
        assert!(threads("257").unwrap_err().contains("a thread count must be from 1 to 256, not 257"));
        assert!(runs("1000000000").unwrap_err().contains("a run count must be from 1 to 1000"));
        assert!(flaps("1000001").unwrap_err().contains("a flap count must be from 0 to 1000000"));
        let long = "9".repeat(10_000);
        assert!(count(&long).unwrap_err().len() < 200);
    }
}
