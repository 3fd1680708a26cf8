//! Unit tests of the loaders on in-memory bytes.

use std::path::Path;

use super::*;

fn load_text(text: &str) -> Result<RouteTable, LoadError> {
    load_bytes(Path::new("test.txt"), text.as_bytes(), &LoadOptions::default())
}

#[test]
fn ipasn_lines_load() {
    let table = load_text("; comment\n1.0.0.0/24\t15169\n1.0.4.0/22\t56203\n").unwrap();
    assert_eq!(table.v4.len(), 2);
    assert_eq!(table.next_hops.describe(table.v4.lookup(0x0100_0401)), "56203");
}
