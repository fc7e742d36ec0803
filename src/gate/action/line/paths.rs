//! Paths: normalising, resolving against the working directory, and how two paths relate.

use super::*;

/// Normalises `path` against the directory `cwd` ("" or "." is the project root): joins them
/// (an absolute path ignores `cwd`), drops `.` and empty components, resolves `..` (one above
/// the root of a relative path stays, one above `/` is dropped), and drops a trailing `/`. The
/// root comes out as `.`.
pub fn normalise(cwd: &str, path: &str) -> String {
    // `/proc/self/root/srv` and `/proc/PID/root/srv` are `/srv` (the process's own root).
    let path = match path.strip_prefix("/proc/") {
        Some(rest) => match rest.split_once('/') {
            Some((_, tail)) if tail == "root" || tail.starts_with("root/") => {
                let after = &tail["root".len()..];
                if after.is_empty() {
                    "/"
                } else {
                    after
                }
            }
            _ => path,
        },
        None => path,
    };
    let joined = if path.starts_with('/') || cwd.is_empty() || cwd == "." {
        path.to_string()
    } else {
        format!("{cwd}/{path}")
    };
    let abs = joined.starts_with('/');
    let mut stack: Vec<&str> = Vec::new();
    for c in joined.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if stack.last().is_some_and(|l| *l != "..") {
                    stack.pop();
                } else if !abs {
                    stack.push("..");
                }
            }
            _ => stack.push(c),
        }
    }
    if abs {
        format!("/{}", stack.join("/"))
    } else if stack.is_empty() {
        ".".to_string()
    } else {
        stack.join("/")
    }
}

/// Devices a write to changes nothing.
pub(in crate::gate::action) fn is_device(p: &str) -> bool {
    matches!(
        p,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty" | "/dev/zero"
    ) || p.starts_with("/dev/fd/")
}

/// What a path word names, from directory `cwd`; `None` for nothing (an empty word, a device).
pub(in crate::gate::action) fn resolve(cwd: &Cwd, w: &Word) -> Option<Target> {
    if w.dynamic {
        return Some(Target::Anything);
    }
    if w.text.is_empty() {
        return None;
    }
    let abs = w.text.starts_with('/');
    let norm = |p: &str| -> Option<String> {
        if p.starts_with('/') {
            Some(normalise("", p))
        } else {
            cwd.as_ref().map(|c| normalise(c, p))
        }
    };
    match w.glob_at {
        Some(g) => {
            let lit: String = w.text.chars().take(g).collect();
            let cut = lit.rfind('/').map_or(0, |k| k + 1);
            let dir = lit.get(..cut).unwrap_or("");
            let rest: String = w.text.chars().skip(dir.chars().count()).collect();
            let dir = if dir.is_empty() { "." } else { dir };
            let Some(d) = norm(dir) else {
                return Some(Target::Anything);
            };
            let mut comps: Vec<&str> = rest
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .collect();
            if comps.contains(&"..") {
                comps = vec!["**"];
            }
            if comps.is_empty() {
                return Some(Target::Path(d));
            }
            Some(Target::Glob(join(&d, &comps.join("/"))))
        }
        None => {
            let p = if abs {
                normalise("", &w.text)
            } else {
                match cwd {
                    Some(c) => normalise(c, &w.text),
                    None => return Some(Target::Anything),
                }
            };
            if is_device(&p) {
                None
            } else {
                Some(Target::Path(p))
            }
        }
    }
}

/// `rest` under the normalised directory `dir`.
pub(in crate::gate::action) fn join(dir: &str, rest: &str) -> String {
    match dir {
        "." | "" => rest.to_string(),
        "/" => format!("/{rest}"),
        _ => format!("{dir}/{rest}"),
    }
}

/// Everything under a target.
pub(in crate::gate::action) fn under(t: &Target) -> Target {
    match t {
        Target::Path(p) => Target::Glob(join(p, "**")),
        Target::Glob(g) if g.ends_with("**") => Target::Glob(g.clone()),
        Target::Glob(g) => Target::Glob(join(g, "**")),
        other => other.clone(),
    }
}

/// Where `src` lands when copied, moved or linked into directory `dest`.
pub(in crate::gate::action) fn into(dest: &Target, src: &Word) -> Option<Target> {
    match dest {
        Target::Anything => Some(Target::Anything),
        Target::Glob(g) => Some(Target::Glob(join(g, "**"))),
        Target::Path(d) => {
            let t = src.text.as_str();
            if t == "." || t.ends_with("/.") {
                return Some(Target::Path(d.clone()));
            }
            if src.dynamic || src.glob_at.is_some() {
                return Some(Target::Glob(join(d, "*")));
            }
            let n = normalise("", t);
            let b = n.rsplit('/').next().unwrap_or("");
            if b.is_empty() || b == "." || b == ".." {
                return None;
            }
            Some(Target::Path(join(d, b)))
        }
        _ => None,
    }
}

/// The sources and the destination of a copy or move: `-t DIR`, else the last operand.
pub(in crate::gate::action) fn split_dest<'w>(
    ops: Vec<&'w Word>,
    dir: Option<&'w Word>,
) -> (Vec<&'w Word>, Option<&'w Word>) {
    if dir.is_some() {
        return (ops, dir);
    }
    match ops.split_last() {
        Some((last, rest)) if !rest.is_empty() => (rest.to_vec(), Some(*last)),
        _ => (ops, None),
    }
}

/// The writes of a copy, move or link to `dest`: the destination itself, and where each source
/// lands in it (with everything below, for a recursive copy). `whole`: `-T`, the destination
/// is the target itself; `contents`: a source ending in `/` copies its contents (rsync).
/// `op`: [`Op::Write`], or [`Op::Add`] for a copy that never replaces a file (`cp -n`, `mv -n`,
/// `ln` without `-f`).
#[allow(clippy::too_many_arguments)]
pub(in crate::gate::action) fn landing(
    cx: &Cx,
    out: &mut Acc,
    cwd: &Cwd,
    dest: &Word,
    srcs: &[&Word],
    whole: bool,
    recursive: bool,
    contents: bool,
    op: Op,
) {
    let Some(d) = resolve(cwd, dest) else { return };
    out.put(op, d.clone(), cx.text);
    if whole {
        if recursive {
            out.put(op, under(&d), cx.text);
        }
        return;
    }
    for s in srcs {
        let t = if contents && s.text.ends_with('/') {
            Some(d.clone())
        } else {
            into(&d, s)
        };
        if let Some(t) = t {
            if recursive {
                out.put(op, under(&t), cx.text);
            }
            out.put(op, t, cx.text);
        }
    }
}

/// The directory `cd WORD` moves to from `cwd`.
pub(in crate::gate::action) fn cd_to(cwd: &Cwd, w: Option<&Word>) -> Cwd {
    let w = w?;
    if w.dynamic || w.glob_at.is_some() || w.text.is_empty() {
        return None;
    }
    if w.text.starts_with('/') {
        Some(normalise("", &w.text))
    } else {
        cwd.as_ref().map(|c| normalise(c, &w.text))
    }
}

/// The repository a git command works on: the project when the directory is inside it.
pub(in crate::gate::action) fn repo_root(cwd: &Cwd) -> Target {
    match cwd {
        Some(c) if c.starts_with('/') => Target::Path(normalise("", c)),
        Some(_) => Target::Path(".".into()),
        None => Target::Anything,
    }
}

/// How an effect's path stands to a prohibited path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::gate::action) enum Rel {
    Disjoint,
    Equal,
    Under,
    Above,
}

pub(in crate::gate::action) fn split_path(p: &str) -> (bool, Vec<&str>) {
    (
        p.starts_with('/'),
        p.split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect(),
    )
}

pub(in crate::gate::action) fn has_glob(c: &str) -> bool {
    c.contains(['*', '?', '[', '{'])
}

pub(in crate::gate::action) fn comp_match(a: &str, b: &str) -> bool {
    match (has_glob(a), has_glob(b)) {
        (false, false) => a == b,
        (true, false) => fnmatch(a, b),
        (false, true) => fnmatch(b, a),
        (true, true) => true,
    }
}

pub(in crate::gate::action) fn rel_lists(e: &[&str], p: &[&str]) -> Rel {
    for (a, b) in e.iter().zip(p.iter()) {
        if *a == "**" || *b == "**" {
            return Rel::Equal;
        }
        if !comp_match(a, b) {
            return Rel::Disjoint;
        }
    }
    match e.len().cmp(&p.len()) {
        std::cmp::Ordering::Equal => Rel::Equal,
        std::cmp::Ordering::Greater => Rel::Under,
        std::cmp::Ordering::Less => Rel::Above,
    }
}

/// How the (normalised, maybe glob) path `e` stands to the prohibited path `p`.
pub(in crate::gate::action) fn relation(e: &str, p: &str) -> Rel {
    let (ea, ec) = split_path(e);
    let (pa, pc) = split_path(p);
    if ea && ec.is_empty() {
        return if pa && pc.is_empty() {
            Rel::Equal
        } else {
            Rel::Above
        };
    }
    let e_up = ec.iter().take_while(|c| **c == "..").count();
    let p_up = pc.iter().take_while(|c| **c == "..").count();
    if !ea && e_up > 0 && e_up == ec.len() {
        return Rel::Above;
    }
    if let (false, [only]) = (pa, pc.as_slice()) {
        if has_glob(only) {
            // "never delete *.sql": a file name pattern, wherever the file is; a path whose
            // last part has no extension may be a directory holding such files.
            return match ec.last() {
                Some(last) if comp_match(last, only) => Rel::Equal,
                Some(last) if !last.contains('.') || *last == "**" => Rel::Above,
                None => Rel::Above,
                _ => Rel::Disjoint,
            };
        }
        if *only != ".." && !only.contains('.') {
            // "the migrations folder": a bare directory name, wherever it is.
            if let Some(at) = ec.iter().position(|c| c == only) {
                return if at + 1 == ec.len() {
                    Rel::Equal
                } else {
                    Rel::Under
                };
            }
        }
    }
    if ea == pa && e_up == p_up {
        return rel_lists(&ec, &pc);
    }
    if !pa && p_up == 0 {
        // A path outside the project's frame: the project may be anywhere in it.
        let tail = ec.get(e_up..).unwrap_or_default();
        for s in 0..tail.len() {
            let from = tail.get(s..).unwrap_or_default();
            if from.first() == Some(&"**") {
                // Anything below an outside directory is not taken for the project.
                break;
            }
            let r = rel_lists(from, &pc);
            if r != Rel::Disjoint {
                return r;
            }
        }
    }
    Rel::Disjoint
}

/// Whether `s` matches the glob `pat` (`*`, `?`, `[...]`; `{...}` matches like `*`).
pub(in crate::gate::action) fn fnmatch(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if let Some(&c) = p.get(pi) {
            match c {
                '*' => {
                    star = Some((pi + 1, ti));
                    pi += 1;
                    continue;
                }
                '{' => {
                    // Skip the braces, then behave as a star.
                    let close = p.iter().skip(pi).position(|&d| d == '}').map(|k| pi + k);
                    if let Some(cl) = close {
                        star = Some((cl + 1, ti));
                        pi = cl + 1;
                        continue;
                    }
                }
                _ => {}
            }
            if let Some(&x) = t.get(ti) {
                let (ok, width) = match c {
                    '?' => (true, 1),
                    '[' => class_match(&p, pi, x),
                    '{' => (c == x, 1),
                    _ => (c == x, 1),
                };
                if ok {
                    pi += width;
                    ti += 1;
                    continue;
                }
            }
        } else if ti >= t.len() {
            return true;
        }
        match star {
            Some((sp, st)) if st < t.len() => {
                star = Some((sp, st + 1));
                pi = sp;
                ti = st + 1;
            }
            _ => return false,
        }
    }
}

/// Whether `x` is in the class starting at `p[at] == '['`, and the class's width (an
/// unterminated `[` is a literal).
pub(in crate::gate::action) fn class_match(p: &[char], at: usize, x: char) -> (bool, usize) {
    let mut k = at + 1;
    let negate = matches!(p.get(k), Some('!' | '^'));
    if negate {
        k += 1;
    }
    let first = k;
    let mut hit = false;
    loop {
        let Some(&c) = p.get(k) else {
            return (x == '[', 1);
        };
        if c == ']' && k > first {
            break;
        }
        if p.get(k + 1) == Some(&'-') && p.get(k + 2).is_some_and(|d| *d != ']') {
            let hi = p.get(k + 2).copied().unwrap_or(c);
            if c <= x && x <= hi {
                hit = true;
            }
            k += 3;
        } else {
            if c == x {
                hit = true;
            }
            k += 1;
        }
    }
    (hit != negate, k + 1 - at)
}
