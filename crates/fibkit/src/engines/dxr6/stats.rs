//! The structure report of D`K`R6.

use super::{DirectEntry, Dxr6, RangeEntry};
use crate::fib::Stats;

/// Thousands separators, as the other reports print counts.
fn grouped(value: usize) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

impl<const K: u32> Dxr6<K> {
    /// The statistics: figures and a report in the style of DXR's `rt.stat`.
    pub fn report(&self) -> Stats {
        let summary = &self.summary;
        let kib = |bytes: usize| bytes as f64 / 1024.0;
        let bytes_direct = std::mem::size_of_val(&*self.direct);
        let bytes_range = std::mem::size_of_val(&*self.range);
        let bytes_total = self.footprint();
        let mut stats = Stats::default();
        stats
            .text("engine", summary.name.as_str())
            .text("family", "IPv6")
            .count("k", u64::from(K))
            .count("prefixes", summary.prefixes as u64)
            .count("direct_entries", self.direct.len() as u64)
            .count("chunks_resolved", summary.chunks_resolved as u64)
            .count("chunks_with_ranges", summary.chunks_with_ranges as u64)
            .count("chunks_shared", summary.chunks_shared as u64)
            .count("range_entries", self.range.len() as u64)
            .count("range_headers", summary.headers as u64)
            .count("largest_chunk", summary.largest_chunk as u64)
            .count("bytes_direct", bytes_direct as u64)
            .count("bytes_range", bytes_range as u64)
            .count("bytes_total", bytes_total as u64)
            .real("build_ms", summary.build_ms);
        stats.report = format!(
            "{name}: DXR (IPv6), K = {K}, long range entries only\n\
             \x20 prefixes      {prefixes:>12}\n\
             \x20 direct        {direct:>12} entries x {direct_size} B  = {direct_kib:>10.2} KiB \
             ({resolved} resolved, {with_ranges} to ranges, {shared} of them shared)\n\
             \x20 ranges        {ranges:>12} entries x {range_size} B = {range_kib:>10.2} KiB \
             ({headers} headers, largest chunk {largest} ranges)\n\
             \x20 Mem.          {total:>12} B              = {total_kib:>10.2} KiB = {total_mib:.2} MiB\n\
             \x20 compilation   {build_ms:>12.2} ms",
            name = summary.name,
            prefixes = grouped(summary.prefixes),
            direct = grouped(self.direct.len()),
            direct_size = std::mem::size_of::<DirectEntry>(),
            direct_kib = kib(bytes_direct),
            resolved = grouped(summary.chunks_resolved),
            with_ranges = grouped(summary.chunks_with_ranges),
            shared = grouped(summary.chunks_shared),
            ranges = grouped(self.range.len()),
            range_size = std::mem::size_of::<RangeEntry>(),
            range_kib = kib(bytes_range),
            headers = summary.headers,
            largest = grouped(summary.largest_chunk),
            total = grouped(bytes_total),
            total_kib = kib(bytes_total),
            total_mib = bytes_total as f64 / (1024.0 * 1024.0),
            build_ms = summary.build_ms,
        );
        stats
    }
}
