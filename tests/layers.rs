//! The layering rule of SPEC.md section 15: each module of the library uses only modules of
//! lower layers. The layer table is read from SPEC.md, so the table and the code cannot drift
//! apart: a module missing from the table, or an import of a higher or equal layer, fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layer of each module, from the rows of SPEC.md's layer table: `| N | `module` | ...`.
fn layers() -> BTreeMap<String, u32> {
    let spec = std::fs::read_to_string(root().join("SPEC.md")).expect("SPEC.md");
    let section = spec
        .split("\n## ")
        .find(|s| s.starts_with("15. Architecture"))
        .expect("SPEC.md has a section 15. Architecture");
    let mut out = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let (Ok(layer), Some(module)) = (
            cells[1].parse::<u32>(),
            cells[2].strip_prefix('`').and_then(|m| m.strip_suffix('`')),
        ) else {
            continue;
        };
        out.insert(module.to_string(), layer);
    }
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (doc links may name any module).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("read file");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules a file's code names after `crate::`, including grouped imports
/// (`use crate::{a::X, b}`), and whether it names anything through the crate root.
fn used(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut item, mut end) = (0, String::new(), group.len());
            for (k, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = k;
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(first_segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(ch);
            }
            out.push(first_segment(&item));
            rest = &group[end..];
        } else {
            out.push(first_segment(rest));
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

fn first_segment(path: &str) -> String {
    path.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn no_module_imports_a_higher_layer() {
    let layers = layers();
    assert!(
        layers.len() >= 10,
        "the layer table is too short: {layers:?}"
    );
    let src = root().join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut broken = Vec::new();
    for path in all {
        let rel = path.strip_prefix(&src).expect("under src");
        let module = rel
            .components()
            .next()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .expect("a module");
        if module == "lib" {
            continue;
        }
        let Some(own) = layers.get(&module) else {
            broken.push(format!(
                "{}: module `{module}` is not in SPEC.md's layer table",
                rel.display()
            ));
            continue;
        };
        let code = code(&path);
        // `super::` in a module's own top file would reach the crate root, past the table.
        let top = rel.components().count() == 1
            || (rel.components().count() == 2 && rel.ends_with("mod.rs"));
        if top && code.contains("super::") {
            broken.push(format!(
                "{}: `super::` from a module's top file names the crate root; name the module",
                rel.display()
            ));
        }
        for used in used(&code) {
            if used == module {
                continue;
            }
            match layers.get(&used) {
                Some(l) if l < own => {}
                Some(l) => broken.push(format!(
                    "{}: `{module}` (layer {own}) uses `{used}` (layer {l}); a module may use only lower layers",
                    rel.display()
                )),
                None => broken.push(format!(
                    "{}: `{module}` uses `crate::{used}`, which is no module of the layer table; name the module it comes from",
                    rel.display()
                )),
            }
        }
    }
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

/// The check reads what it should: a plain import, a grouped import, and a name through the
/// crate root, on code written here.
#[test]
fn the_layer_check_reads_plain_and_grouped_imports() {
    let code =
        "use crate::store::Read;\nuse crate::{gate::Gate, record};\nlet e: crate::Error = x;";
    assert_eq!(used(code), ["store", "gate", "record", "Error"]);
    assert!(used("let x = 1;").is_empty());
}

/// Only the store knows where a ledger's log lives (SPEC.md section 17): no module outside
/// `src/store/` names the shared log, its server or the server's client, and neither do the MCP
/// server's or the Python package's sources. They read a ledger through `Read`, the same on a
/// file and on PostgreSQL.
#[test]
fn only_the_store_knows_which_backend_holds_the_log() {
    let store = root().join("src").join("store");
    let mut sources = Vec::new();
    files(&root().join("src"), &mut sources);
    files(&root().join("crates/cairn-mcp/src"), &mut sources);
    files(&root().join("crates/cairn-python/src"), &mut sources);
    let mut checked = 0;
    for path in sources.iter().filter(|p| !p.starts_with(&store)) {
        let code = code(path);
        for word in [
            "store::postgres",
            "store::shared",
            "postgres::",
            "SharedLog",
        ] {
            assert!(
                !code.contains(word),
                "{} names `{word}`: only src/store/ may know which backend holds the log",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked > 40, "the check read the sources ({checked} files)");
    // The near miss: the store itself does name them.
    assert!(code(&store.join("mod.rs")).contains("mod postgres;"));
}
