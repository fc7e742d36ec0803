//! Tools that read their operands unless told to replace or write one: compressors, `tar`,
//! `openssl` and `curl`. Each writes, deletes or adds to only what its options say; an option
//! the reading does not know makes the command unknown, so it fails closed as before.

use super::*;

/// `gzip`, `bzip2`, `xz`, `lzma`, `zstd`: a compressor replaces each file operand with its
/// compressed (or decompressed) form, deleting the original, unless it writes to standard
/// output (`-c`), keeps the original (`-k`; zstd keeps it unless `--rm`) or only tests or lists
/// (`-t`, `-l`). `-r` reaches everything under a directory; zstd's `-o FILE` writes FILE.
pub(in crate::gate::action) fn compressor(
    name: &str,
    args: &[Word],
    cwd: &Cwd,
    cx: &Cx,
    out: &mut Acc,
) -> bool {
    let s = options(args, "bSoT", &["suffix", "output", "threads"], false);
    let known_short = "cdfhklnNqrtvV123456789ozTeSbM";
    let known_long = [
        "stdout",
        "to-stdout",
        "decompress",
        "uncompress",
        "force",
        "keep",
        "list",
        "test",
        "quiet",
        "verbose",
        "recursive",
        "suffix",
        "best",
        "fast",
        "rm",
        "output",
        "threads",
        "no-name",
        "name",
        "rsyncable",
        "extreme",
    ];
    if (s.opts.iter()).any(|o| {
        let n = o.name.as_str();
        if n.len() == 1 {
            !known_short.contains(n)
        } else {
            !known_long.contains(&n)
        }
    }) {
        return false;
    }
    if let Some(o) = s.value(&["o", "output"]) {
        cx.eff(out, Op::Write, cwd, o);
    }
    let reads_only = [
        "c",
        "stdout",
        "to-stdout",
        "t",
        "test",
        "l",
        "list",
        "o",
        "output",
    ]
    .iter()
    .any(|n| s.has(n));
    let keeps = s.has("k") || s.has("keep") || (name == "zstd" && !s.has("rm"));
    if reads_only || keeps {
        return true;
    }
    let recursive = s.has("r") || s.has("recursive");
    for w in s.words(args) {
        cx.eff(out, Op::Delete, cwd, w);
        if recursive {
            if let Some(t) = resolve(cwd, w) {
                out.put(Op::Delete, under(&t), cx.text);
            }
        }
    }
    true
}

/// `tar`: `-c` writes its archive (`-f FILE`) and reads its sources; `-r`, `-u` and `-A` add to
/// the archive; `--delete` rewrites it; `-x` writes everything under its directory (`-C DIR`,
/// or the working directory); `-t` and `-d` read. `--remove-files` deletes the sources. The
/// first word may bundle its letters without a dash (`tar czf out.tgz dir`).
pub(in crate::gate::action) fn tar(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
    // A first word of bundled letters is a dash-bundle.
    let mut words: Vec<Word> = args.to_vec();
    if let Some(first) = words.first_mut() {
        let t = first.text.clone();
        if !first.dynamic && !t.starts_with('-') && t.chars().all(|c| c.is_ascii_alphabetic()) {
            first.text = format!("-{t}");
        }
    }
    let with_value = "fCTXbIKLNVg";
    let long_value = [
        "file",
        "directory",
        "files-from",
        "exclude-from",
        "exclude",
        "blocking-factor",
        "use-compress-program",
        "starting-file",
        "newer",
        "label",
        "listed-incremental",
        "transform",
        "xform",
        "owner",
        "group",
        "mode",
        "mtime",
        "format",
        "strip-components",
    ];
    let s = options(&words, with_value, &long_value, false);
    let flags = "cxtrudAfCvzjJaZpPkhSwWOmGMTXbIKLNVg";
    let long_flags = [
        "create",
        "extract",
        "get",
        "list",
        "append",
        "update",
        "catenate",
        "concatenate",
        "delete",
        "diff",
        "compare",
        "verbose",
        "gzip",
        "bzip2",
        "xz",
        "zstd",
        "lzma",
        "auto-compress",
        "preserve-permissions",
        "same-permissions",
        "keep-old-files",
        "skip-old-files",
        "keep-newer-files",
        "dereference",
        "remove-files",
        "no-recursion",
        "numeric-owner",
        "absolute-names",
        "one-file-system",
        "totals",
        "to-stdout",
        "wildcards",
        "anchored",
        "exclude-vcs",
        "overwrite",
    ];
    if (s.opts.iter()).any(|o| {
        let n = o.name.as_str();
        if n.len() == 1 {
            !flags.contains(n)
        } else {
            !long_flags.contains(&n) && !long_value.contains(&n)
        }
    }) {
        return false;
    }
    let mode = |names: &[&str]| names.iter().any(|n| s.has(n));
    let archive = s.value(&["f", "file"]).filter(|w| w.text != "-");
    let dir = match s.value(&["C", "directory"]) {
        Some(d) => cd_to(cwd, Some(d)),
        None => cwd.clone(),
    };
    if mode(&["c", "create"]) {
        if let Some(a) = archive {
            cx.eff(out, Op::Write, cwd, a);
        }
    } else if mode(&["r", "u", "A", "append", "update", "catenate", "concatenate"]) {
        if let Some(a) = archive {
            cx.eff(out, Op::Add, cwd, a);
        }
    } else if mode(&["delete"]) {
        if let Some(a) = archive {
            cx.eff(out, Op::Write, cwd, a);
        }
    } else if mode(&["x", "get", "extract"]) {
        if !mode(&["O", "to-stdout"]) {
            let here = Word::synthetic(".", false, false);
            match resolve(&dir, &here) {
                Some(t) => out.put(Op::Write, under(&t), cx.text),
                None => out.put(Op::Write, Target::Anything, cx.text),
            }
        }
    } else if !mode(&["t", "list", "d", "diff", "compare"]) {
        return false;
    }
    if mode(&["remove-files"]) {
        for w in s.words(&words) {
            cx.eff(out, Op::Delete, &dir, w);
            if let Some(t) = resolve(&dir, w) {
                out.put(Op::Delete, under(&t), cx.text);
            }
        }
    }
    true
}

/// `openssl`: every subcommand reads its input; `-out FILE` and `-keyout FILE` write FILE.
pub(in crate::gate::action) fn openssl(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
    let mut k = 0;
    while let Some(w) = args.get(k) {
        k += 1;
        if matches!(w.text.as_str(), "-out" | "-keyout") {
            match args.get(k) {
                Some(v) => cx.eff(out, Op::Write, cwd, v),
                None => return false,
            }
            k += 1;
        }
    }
    true
}

/// `curl`: it reads what it uploads (`-T`, `-d @FILE`) and writes only where an option says:
/// `-o FILE`, `--output`, the cookie jar, dumped headers, a trace, `--stderr`, the HSTS,
/// alt-svc and ETag caches, `--libcurl`; `-O`, `-J` and `--remote-name-all` write a file named
/// by the URL under `--output-dir` (or the working directory).
pub(in crate::gate::action) fn curl(args: &[Word], cwd: &Cwd, cx: &Cx, out: &mut Acc) -> bool {
    const WRITES: &[&str] = &[
        "-o",
        "--output",
        "-c",
        "--cookie-jar",
        "-D",
        "--dump-header",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--etag-save",
        "--hsts",
        "--alt-svc",
        "--libcurl",
    ];
    let mut named_by_url = false;
    let mut dir: Option<&Word> = None;
    let mut k = 0;
    while let Some(w) = args.get(k) {
        k += 1;
        let t = w.text.as_str();
        if w.dynamic {
            continue;
        }
        if let Some((opt, v)) = t.split_once('=').filter(|(o, _)| o.starts_with("--")) {
            if WRITES.contains(&opt) {
                let v = Word::synthetic(v, false, false);
                cx.eff(out, Op::Write, cwd, &v);
            }
            continue;
        }
        if WRITES.contains(&t) {
            match args.get(k) {
                Some(v) => cx.eff(out, Op::Write, cwd, v),
                None => return false,
            }
            k += 1;
        } else if t == "--output-dir" {
            dir = args.get(k);
            k += 1;
        } else if matches!(t, "-O" | "--remote-name" | "--remote-name-all" | "-J") {
            named_by_url = true;
        } else if t.starts_with('-') && !t.starts_with("--") && t.len() > 2 {
            // Bundled short flags: `-sSLO`, or `-o` with its value attached.
            let letters = &t[1..];
            if let Some(at) = letters.find(['o', 'c', 'D']) {
                let rest = &letters[at + 1..];
                let v = if rest.is_empty() {
                    k += 1;
                    args.get(k - 1).cloned()
                } else {
                    Some(Word::synthetic(rest, false, false))
                };
                match v {
                    Some(v) => cx.eff(out, Op::Write, cwd, &v),
                    None => return false,
                }
            }
            named_by_url |= letters.contains(['O', 'J']);
        }
    }
    if named_by_url {
        let at = match dir {
            Some(d) => cd_to(cwd, Some(d)),
            None => cwd.clone(),
        };
        let here = Word::synthetic(".", false, false);
        match resolve(&at, &here) {
            Some(t) => out.put(Op::Write, under(&t), cx.text),
            None => out.put(Op::Write, Target::Anything, cx.text),
        }
    }
    true
}

/// What `docker run` or `podman run` (also `container run`) runs, read from its words after
/// `run`: the host directories it mounts, as (the path in the container, the host path), both
/// normalised; and the command it runs, `None` when the image's own command runs. `Err` when
/// an option the reading does not know stands before the image (its value could be taken for
/// the image), so the caller fails closed.
#[allow(clippy::type_complexity)]
pub(in crate::gate::action) fn container_run(
    args: &[Word],
    cwd: &Cwd,
) -> Result<(Vec<(String, String)>, Option<Vec<Word>>), ()> {
    const VALUE: &[&str] = &[
        "-v",
        "--volume",
        "--mount",
        "-e",
        "--env",
        "--env-file",
        "-w",
        "--workdir",
        "--name",
        "-p",
        "--publish",
        "--network",
        "--net",
        "--entrypoint",
        "-u",
        "--user",
        "-h",
        "--hostname",
        "-l",
        "--label",
        "--platform",
        "--pull",
        "--restart",
        "-m",
        "--memory",
        "--cpus",
        "--add-host",
        "--device",
        "--dns",
        "--cap-add",
        "--cap-drop",
        "--log-driver",
        "--log-opt",
        "--security-opt",
        "--ulimit",
        "--tmpfs",
        "--gpus",
        "--shm-size",
        "--stop-signal",
        "--ipc",
        "--pid",
        "--uts",
        "--runtime",
        "--cidfile",
        "--volumes-from",
        "--expose",
        "--group-add",
        "--userns",
        "--cgroupns",
        "--memory-swap",
    ];
    const FLAGS: &[&str] = &[
        "--rm",
        "-d",
        "--detach",
        "-i",
        "--interactive",
        "-t",
        "--tty",
        "-it",
        "-ti",
        "--init",
        "--privileged",
        "--read-only",
        "-P",
        "--publish-all",
        "-q",
        "--quiet",
        "--no-healthcheck",
    ];
    let mut mounts = Vec::new();
    let mut entrypoint: Option<Word> = None;
    let bind = |spec: &str, mounts: &mut Vec<(String, String)>| {
        let host = |p: &str| resolve(cwd, &Word::synthetic(p, false, false));
        if let Some((src, rest)) = spec.split_once(':') {
            let dst = rest.split(':').next().unwrap_or(rest);
            if src.starts_with('/') || src.starts_with('.') {
                if let Some(Target::Path(h)) = host(src) {
                    mounts.push((normalise("/", dst), h));
                }
            }
        } else if spec.contains("type=bind") || spec.contains("source=") || spec.contains("src=") {
            let field = |names: &[&str]| {
                spec.split(',').find_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    names.contains(&k).then_some(v)
                })
            };
            if let (Some(src), Some(dst)) = (
                field(&["source", "src"]),
                field(&["target", "destination", "dst"]),
            ) {
                if let Some(Target::Path(h)) = host(src) {
                    mounts.push((normalise("/", dst), h));
                }
            }
        }
    };
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if !t.starts_with('-') {
            break;
        }
        k += 1;
        let (opt, inline) = match t.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ => (t, None),
        };
        if FLAGS.contains(&opt) {
            continue;
        }
        if !VALUE.contains(&opt) {
            return Err(());
        }
        let value = match inline {
            Some(v) => v,
            None => {
                let v = args.get(k).ok_or(())?;
                k += 1;
                if v.dynamic && matches!(opt, "-v" | "--volume" | "--mount") {
                    return Err(());
                }
                v.text.clone()
            }
        };
        match opt {
            "-v" | "--volume" | "--mount" => bind(&value, &mut mounts),
            "--entrypoint" => entrypoint = Some(Word::synthetic(&value, false, false)),
            _ => {}
        }
    }
    // The image, then the command.
    let rest = args.get(k + 1..).unwrap_or_default();
    let mut command: Vec<Word> = entrypoint.into_iter().collect();
    command.extend(rest.iter().cloned());
    let image_dynamic = args.get(k).is_some_and(|w| w.dynamic);
    if image_dynamic {
        return Err(());
    }
    Ok((mounts, (!command.is_empty()).then_some(command)))
}
