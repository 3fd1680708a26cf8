//! The machine the figures come from: CPU, cores, load and huge pages.

/// The machine the figures come from.
#[derive(Clone, Debug)]
pub(super) struct Machine {
    pub(super) cpu_model: String,
    pub(super) cores: usize,
    pub(super) cache_size: Option<String>,
    /// One-minute load average when the bench started (Linux).
    pub(super) load_average: Option<f64>,
    /// Whether big lookup arrays are advised onto huge pages, and the
    /// kernel's transparent-huge-page mode (see `fibkit::mem`).
    pub(super) huge_pages: String,
}

impl Machine {
    pub(super) fn detect() -> Machine {
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
            load_average: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|text| text.split_whitespace().next()?.parse().ok()),
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
