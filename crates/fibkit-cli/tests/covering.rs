//! `fibkit lookup --all-matches` and `fibkit routes` (inside prefixes, and
//! `--covering`) against a brute-force scan of the routes, on the cut
//! tables shipped in `data/` and on the 2014 table when present, each read
//! as a table file and as a compiled FIB file with prefixes; formats, and
//! the errors.

mod common;

use std::path::{Path, PathBuf};

use common::{fibkit, shared_data, text, write};
use fibkit::addr::IpPrefix;
use fibkit::load::{self, AnyAddr, LoadOptions, RouteTable};
use fibkit::random::XorShift32;
use fibkit::{Address, NextHop, Prefix};

/// A table's routes of both families, for the scans.
struct Model {
    routes: Vec<(IpPrefix, String)>,
}

impl Model {
    fn new(table: &RouteTable) -> Self {
        let value = |hop: NextHop| table.next_hops.value_text(hop).unwrap();
        let v4 = table.v4.iter().map(|(prefix, hop)| (IpPrefix::V4(prefix), value(hop)));
        let v6 = table.v6.iter().map(|(prefix, hop)| (IpPrefix::V6(prefix), value(hop)));
        Model { routes: v4.chain(v6).collect() }
    }

    /// The routes covering `query` (`inside`: inside it), in address order.
    fn scan(&self, query: IpPrefix, inside: bool) -> impl Iterator<Item = &(IpPrefix, String)> {
        self.routes.iter().filter(move |(route, _)| match (route, query) {
            (IpPrefix::V4(route), IpPrefix::V4(query)) => related(route, &query, inside),
            (IpPrefix::V6(route), IpPrefix::V6(query)) => related(route, &query, inside),
            _ => false,
        })
    }
}

fn related<A: Address>(route: &Prefix<A>, query: &Prefix<A>, inside: bool) -> bool {
    if inside {
        query.covers(route)
    } else {
        route.covers(query)
    }
}

fn prefix_len(prefix: IpPrefix) -> u8 {
    match prefix {
        IpPrefix::V4(prefix) => prefix.prefix_len(),
        IpPrefix::V6(prefix) => prefix.prefix_len(),
    }
}

fn host(text: &str) -> IpPrefix {
    match load::parse_address(text.as_bytes()).unwrap() {
        AnyAddr::V4(addr) => IpPrefix::V4(Prefix::host(addr)),
        AnyAddr::V6(addr) => IpPrefix::V6(Prefix::host(addr)),
    }
}

/// Addresses around the table's routes (each route's first and last
/// address and one past it) and `random` random IPv4 ones, as text.
fn probes(model: &Model, random: usize) -> Vec<String> {
    let mut probes = Vec::new();
    for (route, _) in &model.routes {
        match *route {
            IpPrefix::V4(prefix) => {
                probes.extend([prefix.first(), prefix.last()].map(u32::display));
                probes.extend(prefix.last().checked_next().map(u32::display));
            }
            IpPrefix::V6(prefix) => {
                probes.extend([prefix.first(), prefix.last()].map(u128::display));
                probes.extend(prefix.last().checked_next().map(u128::display));
            }
        }
    }
    let mut generator = XorShift32::new(45);
    probes.extend((0..random).map(|_| generator.next().display()));
    probes
}

/// Prefixes to list: every route's, each cut to a shorter length, and
/// addresses.
fn queries(model: &Model, every: usize) -> Vec<String> {
    let mut generator = XorShift32::new(4);
    let mut queries = Vec::new();
    for (route, _) in model.routes.iter().step_by(every) {
        queries.push(route.to_string());
        let cut = (generator.next() % (u32::from(prefix_len(*route)) + 1)) as u8;
        queries.push(match *route {
            IpPrefix::V4(prefix) => Prefix::truncating(prefix.addr(), cut).to_string(),
            IpPrefix::V6(prefix) => Prefix::truncating(prefix.addr(), cut).to_string(),
        });
        queries.push(match *route {
            IpPrefix::V4(prefix) => prefix.last().display(),
            IpPrefix::V6(prefix) => prefix.last().display(),
        });
    }
    queries
}

fn run(args: &[&str]) -> String {
    let output = fibkit(args);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "fibkit {args:?}: {stderr}");
    stdout
}

/// `fibkit lookup TABLE --all-matches` in CSV, text and JSON against the
/// scan, for every probe.
fn check_all_matches(table: &Path, model: &Model, probes: &[String], dir: &Path) {
    let addresses = write(dir, "addresses.txt", &(probes.join("\n") + "\n"));
    let (mut csv, mut tsv) = (String::from("address,value,prefix,prefix_len\n"), String::new());
    for address in probes {
        let mut routes = model.scan(host(address), false).peekable();
        if routes.peek().is_none() {
            csv += &format!("{address},,,\n");
            tsv += &format!("{address}\t\t\n");
        }
        for (prefix, value) in routes {
            csv += &format!("{address},{value},{prefix},{}\n", prefix_len(*prefix));
            tsv += &format!("{address}\t{value}\t{prefix}\n");
        }
    }
    let args =
        |format| ["lookup", table.to_str().unwrap(), addresses.to_str().unwrap(), "--all-matches", "--format", format];
    assert_eq!(run(&args("csv")), csv, "{}", table.display());
    assert_eq!(run(&args("text")), tsv, "{}", table.display());
    let json = run(&args("json"));
    assert_eq!(json.lines().count(), csv.lines().count() - 1);
    for (object, row) in json.lines().zip(csv.lines().skip(1)) {
        let object: serde_json::Value = serde_json::from_str(object).unwrap();
        let fields: Vec<&str> = row.split(',').collect();
        let text = |key: &str| match &object[key] {
            serde_json::Value::Null => String::new(),
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        assert_eq!([text("address"), text("value"), text("prefix"), text("prefix_len")], fields.as_slice(), "{row}");
    }
}

/// `fibkit routes TABLE QUERIES...` (and `--covering`) in CSV against the
/// scan; in text, every route when no query is given.
fn check_routes(table: &Path, model: &Model, queries: &[String]) {
    for covering in [false, true] {
        let mut expected = String::from("query,prefix,prefix_len,value\n");
        for query in queries {
            let prefix = query.parse::<IpPrefix>().unwrap_or_else(|_| host(query));
            for (route, value) in model.scan(prefix, !covering) {
                expected += &format!("{prefix},{route},{},{value}\n", prefix_len(*route));
            }
        }
        let mut args = vec!["routes", table.to_str().unwrap(), "--format", "csv"];
        args.extend(queries.iter().map(String::as_str));
        if covering {
            args.push("--covering");
        }
        assert_eq!(run(&args), expected, "{} covering: {covering}", table.display());
    }
    let every: String = model.routes.iter().map(|(route, value)| format!("{route}\t{value}\n")).collect();
    assert_eq!(run(&["routes", table.to_str().unwrap()]), every);
}

/// The table file and its compiled FIB file with prefixes.
fn both_forms(table: &Path, dir: &Path) -> [PathBuf; 2] {
    let compiled = dir.join("table.fib");
    run(&["compile", table.to_str().unwrap(), "-o", compiled.to_str().unwrap(), "--prefix"]);
    [table.to_path_buf(), compiled]
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data").join(name)
}

#[test]
fn the_shipped_tables_answer_as_a_scan_loaded_and_compiled() {
    for name in ["routeviews-2014-05-13-cut.ipasn", "linx-p69-2014-12-25-cut.rib6"] {
        let path = shipped(name);
        let table = load::load_path(&path, &LoadOptions::default()).unwrap();
        let model = Model::new(&table);
        let dir = tempfile::tempdir().unwrap();
        let probes = probes(&model, 2000);
        let queries = queries(&model, 7);
        for form in both_forms(&path, dir.path()) {
            check_all_matches(&form, &model, &probes, dir.path());
            check_routes(&form, &model, &queries);
        }
    }
}

#[test]
fn the_2014_table_answers_as_a_scan_loaded_and_compiled() {
    let Some(path) = shared_data("routeviews-2014-05-13.ipasn.gz") else { return };
    let table = load::load_path(&path, &LoadOptions::default()).unwrap();
    let model = Model::new(&table);
    let dir = tempfile::tempdir().unwrap();
    let probes: Vec<String> = probes(&model, 300).into_iter().step_by(3000).collect();
    let queries: Vec<String> = queries(&model, 20_000);
    for form in both_forms(&path, dir.path()) {
        check_all_matches(&form, &model, &probes, dir.path());
        check_routes(&form, &model, &queries);
    }
}

#[test]
fn mapped_addresses_and_prefixes_are_asked_as_ipv4() {
    let path = shipped("routeviews-2014-05-13-cut.ipasn");
    let stdout = run(&["routes", path.to_str().unwrap(), "::ffff:8.8.8.8", "--covering"]);
    assert_eq!(stdout, "8.0.0.0/8\t3356\n8.0.0.0/9\t3356\n8.8.8.0/24\t15169\n");
    let stdout = run(&["routes", path.to_str().unwrap(), "::ffff:8.8.8.0/120", "--format", "csv"]);
    assert_eq!(stdout, "query,prefix,prefix_len,value\n::ffff:8.8.8.0/120,8.8.8.0/24,24,15169\n");
}

#[test]
fn bad_queries_and_files_without_prefixes_are_errors_that_say_so() {
    let path = shipped("routeviews-2014-05-13-cut.ipasn");
    let table = path.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let compiled = dir.path().join("plain.fib");
    run(&["compile", table, "-o", compiled.to_str().unwrap()]);
    let cases: [(&[&str], &str); 5] = [
        (&["routes", table, "10.0.0.1/8"], "host bits set in 10.0.0.1/8 (did you mean 10.0.0.0/8?)"),
        (&["routes", table, "10.0.0.0/33"], "neither a prefix nor an address"),
        (&["routes", "8.0.0.0/8"], "8.0.0.0/8 is a prefix, not a table: fibkit routes TABLE [PREFIXES...]"),
        (&["routes", compiled.to_str().unwrap(), "8.0.0.0/8"], "compile it with fibkit compile --prefix"),
        (
            &["lookup", compiled.to_str().unwrap(), "8.8.8.8", "--all-matches"],
            "fibkit compile --prefix for --all-matches",
        ),
    ];
    for (args, message) in cases {
        let output = fibkit(args);
        let (stdout, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stdout.is_empty() && stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
