//! The machine the figures come from: CPU, cores, load and huge pages.

use std::time::Duration;

/// The machine the figures come from.
#[derive(Clone, Debug)]
pub(crate) struct Machine {
    pub(crate) cpu_model: String,
    pub(crate) cores: usize,
    pub(crate) cache_size: Option<String>,
    /// Cores other work kept busy just before the measurements (Linux;
    /// [`busy_cores`]).
    pub(crate) busy_cores: Option<f64>,
    /// Whether big lookup arrays are advised onto huge pages, and the
    /// kernel's transparent-huge-page mode (see `fibkit::mem`).
    pub(crate) huge_pages: String,
}

impl Machine {
    pub(crate) fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            cpuinfo.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                (name.trim() == key).then(|| value.trim().to_string())
            })
        };
        Machine {
            cpu_model: field("model name").unwrap_or_else(|| format!("unknown ({})", std::env::consts::ARCH)),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            cache_size: field("cache size"),
            busy_cores: None,
            huge_pages: huge_pages(),
        }
    }
}

/// `advised` or `off` (`FIBKIT_HUGEPAGES=off`), with the kernel's
/// transparent-huge-page mode, e.g. `advised (THP madvise)`.
fn huge_pages() -> String {
    let advice = if fibkit::mem::huge_pages_enabled() { "advised" } else { "off" };
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok().and_then(|text| {
        let start = text.find('[')? + 1;
        Some(text[start..start + text[start..].find(']')?].to_string())
    });
    match mode {
        Some(mode) => format!("{advice} (THP {mode})"),
        None => format!("{advice} (THP unknown)"),
    }
}

/// How many cores were busy over `window` (Linux, `/proc/stat`; this
/// process idle meanwhile): the load now, where the load average still
/// remembers for minutes the build that ran just before.
pub(crate) fn busy_cores(cores: usize, window: Duration) -> Option<f64> {
    // Busy and total jiffies of all CPUs (idle and iowait are not busy).
    let sample = || -> Option<(u64, u64)> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<u64> = text
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|field| field.parse().ok())
            .collect::<Option<_>>()?;
        let idle = fields.get(3)? + fields.get(4)?;
        let total: u64 = fields.iter().sum();
        Some((total - idle, total))
    };
    let (busy_before, total_before) = sample()?;
    std::thread::sleep(window);
    let (busy_after, total_after) = sample()?;
    let total = total_after.checked_sub(total_before).filter(|&total| total > 0)?;
    Some(busy_after.saturating_sub(busy_before) as f64 / total as f64 * cores as f64)
}

/// Waits up to `patience` for the cores other work keeps busy to drop to
/// half the machine (the build before a bench keeps them busy for a few
/// seconds after it ends); the last figure measured.
pub(crate) fn settled_busy_cores(cores: usize, patience: Duration) -> Option<f64> {
    let window = Duration::from_millis(500);
    let mut waited = Duration::ZERO;
    loop {
        let busy = busy_cores(cores, window)?;
        waited += window;
        if busy <= cores as f64 / 2.0 || waited >= patience {
            return Some(busy);
        }
    }
}
