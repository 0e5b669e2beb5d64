//! Checks the import graph between the `gui` modules (a test only): no module imports an item
//! defined in `gui/mod.rs` (which imports every module), and no cycle among the others. The
//! graph is read from the sources: `use super::…`, `super::x::…` and `crate::gui::…` paths.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The first segment of each path after `super::` / `crate::gui::` in `code`
/// (`super::{a, b::c}` gives `a` and `b`).
fn referenced(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        rest = &rest[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the braced group.
            let (mut depth, mut item, mut items) = (0, String::new(), Vec::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => items.push(std::mem::take(&mut item)),
                    _ => {}
                }
                if depth == 0 && c != ',' {
                    item.push(c);
                }
            }
            items.push(item);
            for i in items {
                let name: String = i
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push(name);
            }
        } else {
            out.push(
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
    }
    out.retain(|n| !n.is_empty() && n != "self" && n != "super");
    out
}

/// A file's code without comments and without its test module (whose `super::` is the file).
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Module name → the code of its files (a folder module: all its files; `super::` counts only
/// in its `mod.rs`, where it means `gui`).
fn modules(gui: &Path) -> BTreeMap<String, Vec<(bool, String)>> {
    let mut m: BTreeMap<String, Vec<(bool, String)>> = BTreeMap::new();
    for e in std::fs::read_dir(gui).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "module_graph" {
            // This checker: its strings are examples, not imports.
            continue;
        }
        if p.is_dir() {
            for f in std::fs::read_dir(&p).unwrap() {
                let f = f.unwrap().path();
                let top = f.file_name().is_some_and(|n| n == "mod.rs");
                let text = std::fs::read_to_string(&f).unwrap();
                m.entry(name.clone())
                    .or_default()
                    .push((top, code_of(&text)));
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            m.entry(name).or_default().push((true, code_of(&text)));
        }
    }
    m
}

/// The edges `module → modules it imports`; items of `mod.rs` resolve through its re-exports
/// (`pub use util::fmt_count` makes `super::fmt_count` an import of `util`), others to "mod".
fn graph(gui: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(gui);
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    // Re-exports of mod.rs: item → module.
    let mut reexport: BTreeMap<String, String> = BTreeMap::new();
    for (_, code) in &mods["mod"] {
        for line in code.lines() {
            let l = line.trim();
            let Some(path) = l
                .strip_prefix("pub use ")
                .or_else(|| l.strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            let module: String = path
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !names.contains(&module) {
                continue;
            }
            let items = path[module.len()..].trim_start_matches("::");
            for item in referenced(&format!("x::{items}"), "x::") {
                reexport.insert(item, module.clone());
            }
        }
    }
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, files) in &mods {
        if name == "mod" {
            continue;
        }
        let deps = g.entry(name.clone()).or_default();
        for (top, code) in files {
            let mut refs = referenced(code, "crate::gui::");
            if *top {
                refs.extend(referenced(code, "super::"));
            }
            for r in refs {
                let target = if names.contains(&r) {
                    r
                } else {
                    reexport.get(&r).cloned().unwrap_or_else(|| "mod".into())
                };
                if &target != name {
                    deps.insert(target);
                }
            }
        }
    }
    g
}

/// A cycle in `g`, if any (as the path of modules around it).
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let at = stack.iter().position(|s| s == n).unwrap_or(0);
                let mut c = stack[at..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, g, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if let Some(c) = visit(n, g, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn gui_module_graph_has_no_cycles() {
    let gui = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gui");
    let g = graph(&gui);
    for (m, deps) in &g {
        assert!(
            !deps.contains("mod"),
            "gui/{m} imports an item defined in gui/mod.rs, which imports every module: \
             move the item into a leaf module (deps: {deps:?})"
        );
    }
    assert_eq!(find_cycle(&g), None, "import cycle in gui/: {g:#?}");
    // The leaves stay leaves; the model imports nothing but the text filter (itself a leaf).
    for leaf in ["util", "filter", "open_folder"] {
        assert!(g[leaf].is_empty(), "gui/{leaf}.rs imports {:?}", g[leaf]);
    }
    assert!(
        g["model"].iter().all(|d| d == "filter"),
        "gui/model.rs imports {:?}",
        g["model"]
    );
}

#[test]
fn the_checker_sees_a_cycle_and_a_braced_import() {
    assert_eq!(
        referenced(
            "use super::{a, b::{c, d}, e::f};\nlet x = super::g::h();",
            "super::"
        ),
        ["a", "b", "e", "g"]
    );
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["a".to_string()].into());
    assert!(find_cycle(&g).is_some());
    g.insert("b".into(), BTreeSet::new());
    assert_eq!(find_cycle(&g), None);
}
