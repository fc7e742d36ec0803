//! Shell variables the line sets itself to a plain value (`p=/srv/prod-archive; rm -rf
//! "$p"/2019`): a later `$p` or `${p}` is read as that value. Anything less plain leaves the
//! variable unknown, so its expansions stay values decided at run time (fail closed): a value
//! with an expansion the line cannot resolve, a glob or `~`; a variable set twice to different
//! values (one may sit in a branch not taken); and one that `for`, `read`, `select`,
//! `getopts`, `mapfile`, `printf -v`, `let`, `unset` or `NAME+=` touches.

use super::*;
use std::collections::HashMap;

/// What the line has set: a name's plain value, or `None` once it is unknown.
pub(in crate::gate::action) type Vars = HashMap<String, Option<String>>;

/// Commands that set the variables named among their operands to values the line does not
/// show.
const SETS_UNSEEN: &[&str] = &[
    "for",
    "read",
    "select",
    "getopts",
    "mapfile",
    "readarray",
    "let",
    "unset",
];

/// Commands whose `NAME=VALUE` operands set variables, as a bare assignment does.
const DECLARES: &[&str] = &["export", "local", "declare", "typeset", "readonly"];

/// Records what a simple command's `words` set: bare assignments, and those of `export` and
/// its kin; the variables it sets to unseen values become unknown.
pub(in crate::gate::action) fn record(words: &[Word], vars: &mut Vars) {
    // `then b=main`, `do p=x`: the keywords before a command are not part of it.
    let keywords = words
        .iter()
        .take_while(|w| KEYWORDS.contains(&w.text.as_str()))
        .count();
    let words = words.get(keywords..).unwrap_or_default();
    let lead = words.iter().take_while(|w| is_assignment(&w.text)).count();
    let rest = words.get(lead..).unwrap_or_default();
    let (assigns, unseen): (Vec<&Word>, Vec<&Word>) = match rest.first().map(|w| w.text.as_str()) {
        // Assignments before a command are its environment, not the shell's.
        None => (words.iter().collect(), Vec::new()),
        Some(c) if DECLARES.contains(&c) => (
            rest.iter()
                .skip(1)
                .filter(|w| is_assignment(&w.text))
                .collect(),
            Vec::new(),
        ),
        Some(c) if SETS_UNSEEN.contains(&c) => (Vec::new(), rest.iter().skip(1).collect()),
        Some("printf") => {
            let v = rest.iter().position(|w| w.text == "-v");
            let named = v.and_then(|k| rest.get(k + 1));
            (Vec::new(), named.into_iter().collect())
        }
        Some(_) => (Vec::new(), Vec::new()),
    };
    for w in unseen {
        forget(&w.text, vars);
    }
    for w in assigns {
        let Some((name, value)) = w.text.split_once('=') else {
            continue;
        };
        if name.ends_with('+') {
            forget(name.trim_end_matches('+'), vars);
            continue;
        }
        let plain = (w.glob_at.is_none() && !value.starts_with('~'))
            .then(|| {
                if w.dynamic {
                    expand(value, vars)
                } else {
                    Some(value.to_string())
                }
            })
            .flatten();
        set(name, plain, vars);
    }
}

fn forget(name: &str, vars: &mut Vars) {
    let name = name.trim_start_matches('$');
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        vars.insert(name.to_string(), None);
    }
}

fn set(name: &str, value: Option<String>, vars: &mut Vars) {
    let now = match (vars.get(name), value) {
        (None, v) => v,
        // Set twice to one value is still that value; to another, it depends on the path taken.
        (Some(Some(old)), Some(v)) if *old == v => Some(v),
        _ => None,
    };
    vars.insert(name.to_string(), now);
}

/// `text` with each `$NAME` and `${NAME}` replaced by its plain value; `None` when any
/// expansion in it is something else (`$1`, `${X:-y}`, `$(...)`) or names a variable that is
/// not plainly set.
pub(in crate::gate::action) fn expand(text: &str, vars: &Vars) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, used) = match after.strip_prefix('{') {
            Some(inner) => {
                let end = inner.find('}')?;
                (&inner[..end], end + 2)
            }
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        let plain = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain {
            return None;
        }
        out.push_str(vars.get(name)?.as_deref()?);
        rest = &after[used..];
    }
    out.push_str(rest);
    Some(out)
}

/// `w` with the variables the line set plainly put in, when every expansion of it is one of
/// them, and a leading `~` read as a home directory ([`home`]); otherwise `w` as it was.
pub(in crate::gate::action) fn resolved(w: &Word, vars: &Vars) -> Word {
    let homed = home(w, vars);
    let w = homed.as_ref().unwrap_or(w);
    // An unquoted expansion is split into words at IFS: a value with white space, or any
    // value once the line sets IFS, may become several words (`IFS=_; c=rm_-rf_x; $c`).
    let plain = !vars.contains_key("IFS")
        && w.dynamic
        && w.subs.is_empty()
        && w.glob_at.is_none()
        && !w.text.starts_with('~')
        && !w.text.contains('`');
    let text = plain.then(|| expand(&w.text, vars)).flatten();
    match text.filter(|t| !t.contains(char::is_whitespace)) {
        Some(text) => Word {
            len: text.chars().count(),
            text,
            dynamic: false,
            ..w.clone()
        },
        None => w.clone(),
    }
}

/// A leading `~` (`~`, `~/x`, `~user/x`) is a home directory: `/root` for `~root`, and for any
/// other the path `/~` or `/~user`, which no prohibition names and which `..` climbs out of
/// (`~/../../srv/prod` is `/srv/prod`). Once the line sets `HOME`, `~` stays unknown.
/// `None` when `w` has no such `~`.
fn home(w: &Word, vars: &Vars) -> Option<Word> {
    let plain = w.dynamic
        && w.text.starts_with('~')
        && w.subs.is_empty()
        && w.glob_at.is_none()
        && !vars.contains_key("HOME");
    if !plain {
        return None;
    }
    let (head, rest) = w.text.split_at(w.text.find('/').unwrap_or(w.text.len()));
    let user = &head[1..];
    if !user
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return None;
    }
    let dir = match user {
        "root" => "/root".to_string(),
        u => format!("/~{u}"),
    };
    let text = format!("{dir}{rest}");
    Some(Word {
        len: text.chars().count(),
        dynamic: text.contains('$'),
        text,
        ..w.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &[&str]) -> Vec<Word> {
        line.iter()
            .map(|t| Word::synthetic(t, t.contains('$'), false))
            .collect()
    }

    #[test]
    fn a_variable_set_plainly_is_read_and_anything_else_stays_unknown() {
        let mut vars = Vars::new();
        record(&words(&["p=/srv/prod-archive"]), &mut vars);
        record(&words(&["export", "b=feature/x", "-n"]), &mut vars);
        record(&words(&["q=$p/2019"]), &mut vars);
        assert_eq!(
            expand("$p/2019", &vars).as_deref(),
            Some("/srv/prod-archive/2019")
        );
        assert_eq!(expand("${b}", &vars).as_deref(), Some("feature/x"));
        assert_eq!(
            expand("$q", &vars).as_deref(),
            Some("/srv/prod-archive/2019")
        );
        // The near misses: another expansion, a variable the line never set, one set twice
        // to different values, one a loop or `read` sets, and a command's own environment.
        assert_eq!(expand("${p:-/srv/prod}", &vars), None);
        assert_eq!(expand("$1", &vars), None);
        assert_eq!(expand("$HOME/x", &vars), None);
        record(&words(&["then", "b=main"]), &mut vars);
        assert_eq!(expand("$b", &vars), None);
        record(&words(&["for", "p", "in", "a"]), &mut vars);
        assert_eq!(expand("$p", &vars), None);
        record(&words(&["D=/srv/prod", "make"]), &mut vars);
        assert_eq!(expand("$D", &vars), None);
        // A value with white space is split into words: the expansion stays unknown.
        record(&words(&["c=rm -rf /srv/prod"]), &mut vars);
        let c = Word::synthetic("$c", true, false);
        assert!(resolved(&c, &vars).dynamic);
        record(&words(&["d=/tmp/x"]), &mut vars);
        let d = Word::synthetic("$d/y", true, false);
        assert_eq!(resolved(&d, &vars).text, "/tmp/x/y");
        record(&words(&["IFS=_"]), &mut vars);
        assert!(resolved(&d, &vars).dynamic);
    }

    #[test]
    fn a_home_directory_is_a_path_of_its_own_until_the_line_sets_home() {
        let mut vars = Vars::new();
        let at = |t: &str, vars: &Vars| {
            let r = resolved(&Word::synthetic(t, true, false), vars);
            (!r.dynamic).then_some(r.text)
        };
        assert_eq!(at("~/src/app", &vars).as_deref(), Some("/~/src/app"));
        assert_eq!(
            at("~root/../srv/prod", &vars).as_deref(),
            Some("/root/../srv/prod")
        );
        assert_eq!(at("~deploy", &vars).as_deref(), Some("/~deploy"));
        assert_eq!(at("~$USER/x", &vars), None);
        record(&words(&["HOME=/srv/prod"]), &mut vars);
        assert_eq!(at("~/x", &vars), None);
    }
}
