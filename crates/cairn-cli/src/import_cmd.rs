//! `cairn import --from FORMAT FILE|DIR` (SPEC.md section 5.3).

use crate::{count, Failure, Outcome};
use cairn::gate::Gatekeeper;
use cairn::import::{self, Format, ImportError, Report};
use cairn::Ledger;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

pub fn run(db: &Path, gate: &Gatekeeper, format: &str, path: &Path, as_json: bool) -> Outcome {
    let Some(format) = Format::from_name(format) else {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        return Err(Failure::usage(format!(
            "unknown format {format:?}; use --from {}",
            names.join(" or --from ")
        )));
    };
    let files = logs(path)?;
    // A Claude Code log that begins with the compaction of another log of the directory
    // continues it: that one is imported first, and this one goes on in its stream.
    let order: Vec<(usize, Option<usize>)> = if format == Format::ClaudeCode {
        import::continuations(&files).map_err(|e| {
            Failure::usage(format!(
                "cannot read the logs under {} ({e})",
                path.display()
            ))
        })?
    } else {
        (0..files.len()).map(|i| (i, None)).collect()
    };
    // A first import that fails leaves no empty ledger behind (issue 37).
    let fresh = !db.to_string_lossy().contains("://") && !db.exists();
    let ledger = Ledger::open(db)?;
    let result = import_all(&ledger, gate, format, &files, order, as_json);
    if result.is_err() && fresh && ledger.len().is_ok_and(|n| n == 0) {
        drop(ledger);
        let _ = std::fs::remove_file(db);
    }
    result
}

/// Imports `files` in `order` into `ledger`, printing each log's report.
fn import_all(
    ledger: &Ledger,
    gate: &Gatekeeper,
    format: Format,
    files: &[PathBuf],
    order: Vec<(usize, Option<usize>)>,
    as_json: bool,
) -> Outcome {
    let mut refused = 0;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut reports: Vec<Option<Report>> = vec![None; files.len()];
    for (at, parent) in order {
        let file = files[at].clone();
        let continues = parent.and_then(|p| {
            let earlier = reports[p].as_ref()?;
            let stream = (earlier.streams.iter()).find(|s| !s.contains(":sidechain:"))?;
            Some((
                p,
                import::Continues {
                    stream: stream.clone(),
                    ends: earlier.ends.clone(),
                },
            ))
        });
        let before = ledger.len()?;
        // A bar on a terminal only: piped or --json output stays quiet.
        let bar = if !as_json && std::io::stderr().is_terminal() {
            let bar = ProgressBar::new_spinner();
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} {pos} messages ({per_sec})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(file.display().to_string());
            Some(bar)
        } else {
            None
        };
        let link = continues.as_ref().map(|(_, c)| c);
        let result = import::import_continuing(ledger, gate, format, &file, link, |n| {
            if let Some(b) = &bar {
                b.set_position(n);
            }
        });
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        let report = result.map_err(failure)?;
        let appended = ledger.len()? - before;
        // A compaction already in the ledger was judged when it was first imported: a log
        // imported again appends nothing and refuses nothing anew (exit 0).
        refused += (report.compactions.iter())
            .filter(|c| !c.judged_before && (!c.admitted || c.struck > 0))
            .count();
        let earlier = continues
            .as_ref()
            .map(|(p, c)| (files[*p].as_path(), c.stream.as_str()));
        print(&mut out, &file, &report, appended, as_json, earlier);
        reports[at] = Some(report);
    }
    Ok(u8::from(refused > 0))
}

/// The logs under `path`: the file itself, or the `*.jsonl`, `*.json` and `*.traj` files of a
/// directory and its sub-folders, in path order (Claude Code keeps a project's sessions side by
/// side, Codex keeps its sessions in folders by date). Links are not followed: a link to a
/// folder elsewhere, or back up the tree, is not walked.
fn logs(path: &Path) -> Result<Vec<PathBuf>, Failure> {
    let cannot = |p: &Path, e: std::io::Error| {
        Failure::usage(format!("cannot read {} ({e}); check the path", p.display()))
    };
    if !path.is_dir() {
        std::fs::metadata(path).map_err(|e| cannot(path, e))?;
        return Ok(vec![path.to_path_buf()]);
    }
    let is_log = |p: &Path| {
        p.extension()
            .is_some_and(|e| e == "jsonl" || e == "json" || e == "traj")
    };
    let mut out: Vec<PathBuf> = Vec::new();
    let mut folders = vec![path.to_path_buf()];
    while let Some(dir) = folders.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| cannot(&dir, e))? {
            let entry = entry.map_err(|e| cannot(&dir, e))?;
            let kind = entry.file_type().map_err(|e| cannot(&entry.path(), e))?;
            if kind.is_dir() {
                folders.push(entry.path());
            } else if kind.is_file() && is_log(&entry.path()) {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(Failure::usage(format!(
            "{} holds no .jsonl, .json or .traj log, nor do its sub-folders; give a log file or its directory",
            path.display()
        )));
    }
    Ok(out)
}

fn failure(e: ImportError) -> Failure {
    Failure {
        code: if e.integrity { 3 } else { 2 },
        message: format!("cannot import {e}"),
    }
}

/// One log's report; `continues` names the earlier log it continues and that log's stream.
fn print(
    out: &mut impl Write,
    file: &Path,
    r: &Report,
    appended: u64,
    as_json: bool,
    continues: Option<(&Path, &str)>,
) {
    if as_json {
        let mut v = r.to_json(file, appended);
        if let (Some((earlier, _)), Some(o)) = (continues, v.as_object_mut()) {
            o.insert("continues".into(), earlier.display().to_string().into());
        }
        let _ = writeln!(out, "{v}");
        return;
    }
    if let Some((earlier, stream)) = continues {
        let _ = sayln!(
            out,
            "{} continues {}: its messages go on in stream {stream}",
            file.display(),
            earlier.display()
        );
    }
    for (from, to) in &r.renamed {
        let _ = sayln!(
            out,
            "{}: stream {from} already holds another log's messages, so this log's went to stream {to}",
            file.display()
        );
    }
    let _ = sayln!(
        out,
        "imported {}: {} of {}, {} appended, {} already present; {}",
        file.display(),
        count(r.messages, "message", "messages"),
        count(r.log_lines, "line", "lines"),
        count(appended, "record", "records"),
        count(r.present, "line", "lines"),
        count(r.streams.len() as u64, "stream", "streams"),
    );
    for c in &r.compactions {
        let verdict = if c.admitted { "admitted" } else { "refused" };
        // The findings counted by gate: the verdict record holds them all (`cairn replay`).
        let found: Vec<String> = c.findings.iter().map(|(g, n)| format!("{n} {g}")).collect();
        let struck = if c.struck > 0 {
            format!(" ({} struck)", c.struck)
        } else {
            String::new()
        };
        let before = if c.judged_before {
            " when first imported"
        } else {
            ""
        };
        let _ = sayln!(
            out,
            "  compaction at line {}: {verdict}{before}, {}{struck}, {}{}",
            c.line,
            count(c.claims as u64, "claim", "claims"),
            c.note,
            if found.is_empty() {
                String::new()
            } else {
                format!("; findings: {}", found.join(", "))
            }
        );
        if let Some((rid, admitted, _)) = &c.repair {
            let _ = sayln!(
                out,
                "    repaired: cairn's summary {} {} (cairn replay shows it)",
                rid.short(),
                if *admitted { "admitted" } else { "refused" }
            );
        }
    }
    if r.invalid_utf8 > 0 {
        let _ = sayln!(
            out,
            "  {} held bytes that are not UTF-8, each read as U+FFFD (the log's text there is not what was written)",
            count(r.invalid_utf8, "line", "lines")
        );
    }
    for (why, n) in &r.skipped {
        let _ = sayln!(out, "  skipped {n}: {why}");
    }
}
