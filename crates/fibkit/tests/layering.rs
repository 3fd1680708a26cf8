//! The crate's layering, checked: every module file of `src/` is read, its
//! paths into the crate (`crate::...`, `$crate::...`, `super::...`, use
//! groups expanded) are resolved to the file that defines them, and
//!
//! - no file imports a file of a higher layer ([`LAYERS`], the order
//!   `lib.rs`'s crate map describes);
//! - in no folder do sibling modules of one layer import each other in a
//!   circle (a parent and its children may: the parent declares, the
//!   children implement).
//!
//! Comments, string literals and test code are left out: `#[cfg(test)]`
//! items (inline `mod tests { ... }` blocks and the files of modules
//! declared `#[cfg(test)] mod tests;`, with their subfolders), which may
//! use any layer to set up what they check. `lib.rs` is the crate root: it
//! declares and re-exports every module, and is read only to resolve its
//! re-exports (`crate::Rib` is `base/rib/mod.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: a file belongs to the layer of the longest
/// prefix of its path (relative to `src/`) listed here, and imports only
/// from its own layer and those below.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &["base/", "lib.rs"]),
    ("error", &["error.rs"]),
    ("file format", &["file/"]),
    ("fib", &["fib.rs"]),
    ("live", &["live/"]),
    ("engines", &["engines/"]),
    ("engine catalogue", &["registry/catalogue.rs"]),
    ("auto", &["auto.rs"]),
    ("registry", &["registry/"]),
    ("router", &["router/"]),
    ("records", &["records/"]),
    ("load", &["load/"]),
    ("compiled", &["compiled/"]),
    ("measure", &["measure/"]),
];

/// One module file: where it is, its module path, and its code with
/// comments, literals and test items blanked (line numbers kept).
struct Module {
    file: String,
    path: Vec<String>,
    code: String,
}

/// A path into the crate found in a file: the line it starts on and its
/// segments, resolved to start at the crate root.
struct Reference {
    line: usize,
    text: String,
    segments: Vec<String>,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let (modules, aliases) = read_crate(&src());
    let files: BTreeSet<&str> = modules.iter().map(|module| module.file.as_str()).collect();
    let mut arrows_up = Vec::new();
    for module in &modules {
        let from = layer_of(&module.file);
        for reference in references(module) {
            let target = resolve(&reference.segments, &modules, &aliases);
            let to = layer_of(&target);
            if to.0 > from.0 {
                arrows_up.push(format!(
                    "src/{}:{}: `{}` is {} (layer {:?}), above this file's layer {:?}",
                    module.file, reference.line, reference.text, target, to.1, from.1
                ));
            }
        }
    }
    assert!(files.contains("fib.rs") && files.contains("base/addr.rs"), "the crate's files were not found");
    assert!(arrows_up.is_empty(), "{} arrow(s) point up:\n{}", arrows_up.len(), arrows_up.join("\n"));
}

#[test]
fn no_sibling_modules_import_each_other_in_a_circle() {
    let (modules, aliases) = read_crate(&src());
    let by_file: BTreeMap<&str, &Module> = modules.iter().map(|module| (module.file.as_str(), module)).collect();
    // Folder (module path) -> sibling -> the siblings it imports, with the first line that does.
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for module in &modules {
        for reference in references(module) {
            let target = resolve(&reference.segments, &modules, &aliases);
            let Some(target_path) = by_file.get(target.as_str()).map(|target| &target.path) else {
                continue; // the crate root
            };
            let common = module.path.iter().zip(target_path).take_while(|(a, b)| a == b).count();
            if common == module.path.len() || common == target_path.len() {
                continue; // the same module, or a parent and its descendant
            }
            if layer_of(&module.file) != layer_of(&target) {
                continue; // across layers: the other test orders them
            }
            graphs
                .entry(module.path[..common].to_vec())
                .or_default()
                .entry(module.path[common].clone())
                .or_default()
                .entry(target_path[common].clone())
                .or_insert_with(|| format!("src/{}:{}: `{}`", module.file, reference.line, reference.text));
        }
    }
    let mut circles = Vec::new();
    for (folder, graph) in &graphs {
        if let Some(circle) = find_circle(graph) {
            let folder = if folder.is_empty() { "the crate root".to_string() } else { folder.join("::") };
            let steps: Vec<String> = circle
                .windows(2)
                .map(|pair| format!("  {} -> {} ({})", pair[0], pair[1], graph[&pair[0]][&pair[1]]))
                .collect();
            circles.push(format!("in {folder}:\n{}", steps.join("\n")));
        }
    }
    assert!(circles.is_empty(), "sibling modules import each other in a circle:\n{}", circles.join("\n"));
}

/// A circle of `graph`, as its nodes with the first repeated at the end.
fn find_circle(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeMap<String, String>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|&open| open == node) {
            let mut circle: Vec<String> = stack[at..].iter().map(|name| name.to_string()).collect();
            circle.push(node.to_string());
            return Some(circle);
        }
        if !done.insert(node) {
            return None;
        }
        stack.push(node);
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if let Some(circle) = visit(next, graph, stack, done) {
                return Some(circle);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// The layer of a file (relative to `src/`): its rank and name.
fn layer_of(file: &str) -> (usize, &'static str) {
    let mut best: Option<(usize, usize, &'static str)> = None;
    for (rank, (name, prefixes)) in LAYERS.iter().enumerate() {
        for prefix in *prefixes {
            if file.starts_with(prefix) && best.is_none_or(|(_, len, _)| prefix.len() > len) {
                best = Some((rank, prefix.len(), name));
            }
        }
    }
    let (rank, _, name) = best.unwrap_or_else(|| panic!("src/{file} is in no layer: add it to LAYERS"));
    (rank, name)
}

/// Every module file under `root` except the crate root and test modules,
/// and the crate root's re-exports (name -> the path it stands for).
fn read_crate(root: &Path) -> (Vec<Module>, BTreeMap<String, Vec<String>>) {
    let mut files = Vec::new();
    collect(root, root, &mut files);
    let mut modules = Vec::new();
    let mut test_files: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut aliases = BTreeMap::new();
    files.sort();
    for file in files {
        let text = fs::read_to_string(root.join(&file)).unwrap();
        let path = module_path(&file);
        let (code, test_children) = strip_tests(&blank_comments_and_literals(&text));
        test_files.extend(test_children.into_iter().map(|child| [path.clone(), vec![child]].concat()));
        if file == "lib.rs" {
            aliases = root_reexports(&code);
            continue;
        }
        modules.push(Module { file, path, code });
    }
    modules.retain(|module| !test_files.iter().any(|test| module.path.starts_with(test)));
    (modules, aliases)
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}

/// `load/mrt/peers.rs` -> `[load, mrt, peers]`; `load/mod.rs` -> `[load]`.
fn module_path(file: &str) -> Vec<String> {
    let mut segments: Vec<String> = file.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
        segments.pop();
    }
    segments
}

/// The file defining the item (or module) at `segments` from the crate
/// root: the deepest module file the path reaches, after the root's
/// re-exports are followed.
fn resolve(segments: &[String], modules: &[Module], aliases: &BTreeMap<String, Vec<String>>) -> String {
    let mut segments = segments.to_vec();
    for _ in 0..8 {
        match segments.first().and_then(|first| aliases.get(first)) {
            Some(target) => segments = [target.clone(), segments[1..].to_vec()].concat(),
            None => break,
        }
    }
    (1..=segments.len())
        .rev()
        .find_map(|len| modules.iter().find(|module| module.path == segments[..len]))
        .map_or_else(|| "lib.rs".to_string(), |module| module.file.clone())
}

/// The crate root's `pub use` re-exports: the name each makes and the path
/// (from the root) it stands for.
fn root_reexports(code: &str) -> BTreeMap<String, Vec<String>> {
    let tokens = tokenize(code);
    let mut aliases = BTreeMap::new();
    for at in 0..tokens.len() {
        if tokens[at].1 == "pub" && tokens.get(at + 1).is_some_and(|token| token.1 == "use") {
            let mut position = at + 2;
            for path in use_tree(&tokens, &mut position, Vec::new()) {
                let name = path.alias.unwrap_or_else(|| path.segments.last().unwrap().clone());
                aliases.insert(name, path.segments);
            }
        }
    }
    aliases
}

/// The paths into the crate that `module` names, resolved from the root.
fn references(module: &Module) -> Vec<Reference> {
    let tokens = tokenize(&module.code);
    let mut found = Vec::new();
    let mut at = 0;
    while at < tokens.len() {
        let (line, word) = (tokens[at].0, tokens[at].1.as_str());
        let starts = matches!(word, "crate" | "$crate" | "super")
            && tokens.get(at + 1).is_some_and(|token| token.1 == "::")
            && (at == 0 || tokens[at - 1].1 != "::");
        if !starts {
            at += 1;
            continue;
        }
        let mut position = at;
        for path in use_tree(&tokens, &mut position, Vec::new()) {
            if let Some(segments) = absolute(&module.path, &path.segments) {
                found.push(Reference { line, text: path.segments.join("::"), segments });
            }
        }
        at = position.max(at + 1);
    }
    found
}

/// `segments` (starting with `crate`, `$crate`, `super` or `self`) from the
/// crate root, for a path written in the module at `path`.
fn absolute(path: &[String], segments: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = path.to_vec();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate" | "$crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super" | "self") => {
            // `super` in `a/b.rs` is `a`; in `a/b/mod.rs` (module `a::b`) also `a`.
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    Some([base, rest.to_vec()].concat())
}

/// A path of a use tree, expanded.
struct UsePath {
    segments: Vec<String>,
    alias: Option<String>,
}

/// Parses a path or use tree at `*at` (`a::b`, `a::{b, c::d}`, `a as b`,
/// `a::*`), every branch prefixed with `prefix`; leaves `*at` after it.
fn use_tree(tokens: &[(usize, String)], at: &mut usize, prefix: Vec<String>) -> Vec<UsePath> {
    let mut segments = prefix;
    loop {
        match tokens.get(*at).map(|token| token.1.as_str()) {
            Some("{") => {
                *at += 1;
                let mut paths = Vec::new();
                while tokens.get(*at).is_some_and(|token| token.1 != "}") {
                    paths.extend(use_tree(tokens, at, segments.clone()));
                    if tokens.get(*at).is_some_and(|token| token.1 == ",") {
                        *at += 1;
                    }
                }
                *at += 1;
                return paths;
            }
            Some("*") => {
                *at += 1;
                return vec![UsePath { segments, alias: None }];
            }
            Some(word) if is_identifier(word) => {
                if word != "self" || segments.is_empty() {
                    segments.push(word.to_string());
                }
                *at += 1;
                if tokens.get(*at).is_some_and(|token| token.1 == "::") {
                    *at += 1;
                    continue;
                }
                let alias = (tokens.get(*at).is_some_and(|token| token.1 == "as"))
                    .then(|| {
                        *at += 2;
                        tokens.get(*at - 1).map(|token| token.1.clone())
                    })
                    .flatten();
                return vec![UsePath { segments, alias }];
            }
            _ => return if segments.is_empty() { Vec::new() } else { vec![UsePath { segments, alias: None }] },
        }
    }
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|first| first == '_' || first == '$' || first.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// Identifiers (with `$crate`), `::`, and single punctuation characters,
/// each with its line number.
fn tokenize(code: &str) -> Vec<(usize, String)> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let (mut at, mut line) = (0, 1);
    while at < chars.len() {
        let c = chars[at];
        if c == '\n' {
            line += 1;
            at += 1;
        } else if c.is_whitespace() {
            at += 1;
        } else if c == '_' || c == '$' || c.is_alphanumeric() {
            let start = at;
            at += 1;
            while at < chars.len() && (chars[at] == '_' || chars[at].is_alphanumeric()) {
                at += 1;
            }
            tokens.push((line, chars[start..at].iter().collect()));
        } else if c == ':' && chars.get(at + 1) == Some(&':') {
            tokens.push((line, "::".to_string()));
            at += 2;
        } else {
            tokens.push((line, c.to_string()));
            at += 1;
        }
    }
    tokens
}

/// `text` with comments, string and character literals replaced by spaces
/// (newlines kept, so line numbers stay).
fn blank_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                blank(&mut out, chars[at]);
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            loop {
                if at >= chars.len() {
                    break;
                }
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[at]);
                    at += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(&chars, at) {
            // r"...", r#"..."#, br"...": up to the quote and as many hashes.
            let open = chars[at..].iter().position(|&c| c == '"').unwrap() + at;
            for &c in &chars[at..=open] {
                blank(&mut out, c);
            }
            at = open + 1;
            while at < chars.len() {
                if chars[at] == '"' && chars[at + 1..].iter().take(hashes).filter(|&&c| c == '#').count() == hashes {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    at += 1 + hashes;
                    break;
                }
                blank(&mut out, chars[at]);
                at += 1;
            }
        } else if c == '"' {
            out.push(' ');
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                if chars[at] == '\\' {
                    blank(&mut out, chars[at]);
                    at += 1;
                }
                if at < chars.len() {
                    blank(&mut out, chars[at]);
                    at += 1;
                }
            }
            out.push(' ');
            at += 1;
        } else if c == '\'' && char_literal_len(&chars, at).is_some() {
            let len = char_literal_len(&chars, at).unwrap();
            for _ in 0..len {
                out.push(' ');
            }
            at += len;
        } else {
            out.push(c);
            at += 1;
        }
    }
    out
}

/// The number of hashes of a raw string literal starting at `at`, if one does.
fn raw_string_start(chars: &[char], at: usize) -> Option<usize> {
    if at > 0 && (chars[at - 1] == '_' || chars[at - 1].is_alphanumeric()) {
        return None;
    }
    let mut position = at;
    if chars.get(position) == Some(&'b') {
        position += 1;
    }
    if chars.get(position) != Some(&'r') {
        return None;
    }
    position += 1;
    let hashes = chars[position..].iter().take_while(|&&c| c == '#').count();
    (chars.get(position + hashes) == Some(&'"')).then_some(hashes)
}

/// The length of a character literal at `at` (`'a'`, `'\n'`, `'\u{1F600}'`),
/// or `None` for a lifetime or label.
fn char_literal_len(chars: &[char], at: usize) -> Option<usize> {
    match chars.get(at + 1)? {
        '\\' => {
            let close = chars[at + 2..].iter().take(12).position(|&c| c == '\'')?;
            Some(close + 3)
        }
        _ => (chars.get(at + 2) == Some(&'\'')).then_some(3),
    }
}

/// `code` with its `#[cfg(test)]` items blanked, and the names of the
/// child modules declared `#[cfg(test)] mod name;`.
fn strip_tests(code: &str) -> (String, Vec<String>) {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let mut chars: Vec<char> = code.chars().collect();
    let mut children = Vec::new();
    let mut search = 0;
    loop {
        let text: String = chars.iter().collect();
        let Some(found) = text[search..].find(ATTRIBUTE) else { break };
        let start = text[..search + found].chars().count();
        // The item: up to its `;` or through its `{ ... }` block.
        let mut at = start + ATTRIBUTE.chars().count();
        let mut depth = 0usize;
        while at < chars.len() {
            match chars[at] {
                ';' if depth == 0 => break,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            at += 1;
        }
        let end = at.min(chars.len() - 1);
        let item: String = chars[start..=end].iter().collect();
        let words: Vec<&str> = item[ATTRIBUTE.len()..].split_whitespace().collect();
        if let ["mod", name, ..] | ["pub", "mod", name, ..] = words[..] {
            if let Some(name) = name.strip_suffix(';') {
                children.push(name.to_string());
            }
        }
        for c in &mut chars[start..=end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        let blanked: String = chars[..=end].iter().collect();
        search = blanked.len();
    }
    (chars.into_iter().collect(), children)
}
