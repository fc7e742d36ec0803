//! The pinned reference: a stream's pinned items, the classifier's items no pin covers, and
//! whether an action does what a pinned prohibition forbids (SPEC.md sections 8.3 and 8.4).

use super::action::{line, prohibition};
use crate::error::Result;
use crate::record::{Pin, PinClass, PinItem, Record, Rid, Role, Span};
use crate::store::{Item, Read};
use crate::text::content;
use std::collections::{HashMap, HashSet};

/// Every pinned item of a stream, with its pin's name and whether a retirement lifted it
/// (SPEC.md 8.4b). Items in force hold compactions and actions; every item, retired or not,
/// covers the classifier's items, so a lifted constraint is not asked to be pinned again.
pub(crate) fn pin_items<R: Read>(read: &R, stream: &str) -> Result<Vec<(String, PinItem, bool)>> {
    let mut out = Vec::new();
    for (name, rid) in read.pins(stream)? {
        if let Some(Record::Pin(p)) = read.get(&rid)? {
            let lifted = read.retirements(&rid)?;
            out.extend(p.items.into_iter().map(|i| {
                let retired = lifted.iter().any(|(text, _)| *text == i.text);
                (name.clone(), i, retired)
            }));
        }
    }
    Ok(out)
}

/// The pinned items of a stream in force, with their pin's name.
pub fn pinned_items<R: Read>(read: &R, stream: &str) -> Result<Vec<(String, PinItem)>> {
    Ok(in_force(pin_items(read, stream)?))
}

/// The items no retirement lifted.
pub(crate) fn in_force(items: Vec<(String, PinItem, bool)>) -> Vec<(String, PinItem)> {
    (items.into_iter())
        .filter(|(_, _, retired)| !retired)
        .map(|(name, item, _)| (name, item))
        .collect()
}

/// The classifier's items in a stream's raw spans that no pin covers: a pin item covers an
/// item when it cites the same span, or when most of its words are in the item's text.
pub(crate) fn unpinned<R: Read>(
    read: &R,
    stream: &str,
    pins: &[(String, PinItem, bool)],
) -> Result<Vec<Item>> {
    let witnessed: HashSet<Rid> = pins.iter().filter_map(|(_, p, _)| p.witness).collect();
    let pin_words: Vec<Vec<String>> = pins.iter().map(|(_, p, _)| key_words(&p.text)).collect();
    let items = read.items(stream)?;
    // The stream's spans, read once, when a failed attempt asks for them.
    let mut spans: Vec<(Rid, Span)> = Vec::new();
    if items.iter().any(|i| i.class == PinClass::FailedAttempt) {
        for (_, rid) in read.turns(stream, 0, u64::MAX)? {
            if let Some(Record::Span(s)) = read.get(&rid)? {
                spans.push((rid, s));
            }
        }
    }
    let fixed = fixed_later(&spans, &items);
    let texts: HashMap<Rid, &str> = spans.iter().map(|(r, s)| (*r, s.text.as_str())).collect();
    let mut out = Vec::new();
    for mut item in items {
        if witnessed.contains(&item.span) || fixed.contains(&item.span) {
            continue;
        }
        if item.class == PinClass::FailedAttempt {
            // The failure named by the line that says why a retry would fail.
            match texts.get(&item.span).and_then(|t| stops_a_retry(t)) {
                Some(line) => item.text = line,
                None => continue,
            }
        }
        let have = content(&item.text);
        if !pin_words.iter().any(|want| share_met(want, &have) >= 0.5) {
            out.push(item);
        }
    }
    Ok(out)
}

/// What a failure says when the environment refuses the action itself, so that trying again
/// would fail again: a program that is not there, access refused, a service not reachable at
/// that address, a resource used up. (An HTTP status such as 401 or 403 is the answer of the
/// service under work, which the agent is changing, not the environment's.) Seed 003 puts in the decision-relevant set "prior failed
/// attempts whose failure reason is the only thing preventing a retry"; a failure of the work
/// itself (a test, a type check, a build, an edit that did not apply, a timeout of a step) is
/// mended by changing the work and trying again, so it is history, not a constraint.
const STOPS_A_RETRY: &[&str] = &[
    "command not found",
    "not installed",
    "is not recognized as",
    "no such command",
    "permission denied",
    "access denied",
    "operation not permitted",
    "eacces",
    "authentication failed",
    "connection refused",
    "econnrefused",
    "cannot connect",
    "could not connect",
    "unable to connect",
    "no route to host",
    "network is unreachable",
    "could not resolve host",
    "name or service not known",
    "no space left",
    "out of memory",
    "quota exceeded",
    "rate limit",
    "read-only file system",
];

/// The line of a failed attempt's output that says why a retry would fail ([`STOPS_A_RETRY`]),
/// if one does: what the item then names. A line of code says nothing of the run
/// (`t.Fatal("auth command not found")` in a test file the output shows).
fn stops_a_retry(output: &str) -> Option<String> {
    (output.lines().map(str::trim))
        .find(|l| {
            let lower = l.to_lowercase();
            STOPS_A_RETRY.iter().any(|c| lower.contains(c))
                && !crate::text::is_code_line(l)
                && !refused(l).is_empty()
        })
        .map(|l| l.chars().take(300).collect())
}

/// What a retry-stopping line names as refused: its content words beyond the failure's phrase,
/// such as the program, host or path ("psql" of "(eval):1: command not found: psql"). A line
/// that names nothing ("NOT INSTALLED", which `which gh || echo "NOT INSTALLED"` prints) tells
/// no one what not to try again.
fn refused(line: &str) -> Vec<String> {
    let lower = line.to_lowercase();
    let phrase: Vec<String> = (STOPS_A_RETRY.iter())
        .filter(|c| lower.contains(*c))
        .flat_map(|c| content(c))
        .collect();
    (content(line).into_iter())
        .filter(|w| !phrase.contains(w) && !w.bytes().all(|b| b.is_ascii_digit()))
        .filter(|w| !["error", "eval", "fatal"].contains(&w.as_str()))
        .collect()
}

/// Whether `claim` keeps the retry-stopping failure `line` in its own words: it names what
/// failed (a content word of the line beyond the failure's phrase, such as the program, host or
/// path: "docker" of "command not found: docker") and says that it did not work (a negation or
/// a denying word): "Docker was not accessible from the sandbox".
pub(crate) fn keeps_failure(line: &str, claim: &str) -> bool {
    let said: HashSet<String> = content(claim).into_iter().collect();
    let names = refused(line).iter().any(|w| said.contains(w));
    names && crate::text::clash::denies(claim)
}

/// The tool outputs whose failed attempt was fixed later (issue 36, point 10): the tool call
/// just before the output ran a command that a later tool call of the stream ran again, word
/// for word, and the output of that later call reports no failure. A failure that was fixed
/// is history, not a constraint a summary must keep.
fn fixed_later(spans: &[(Rid, Span)], items: &[Item]) -> HashSet<Rid> {
    let failing: HashSet<Rid> = (items.iter())
        .filter(|i| i.class == PinClass::FailedAttempt)
        .map(|i| i.span)
        .collect();
    let mut fixed = HashSet::new();
    if failing.is_empty() {
        return fixed;
    }
    // Each tool call's command and whether its output (the next span, a tool's) failed. A
    // call that reads a background task's output stands for the command that started the task.
    let mut started: HashMap<String, String> = HashMap::new();
    let mut runs: Vec<(usize, String, bool)> = Vec::new();
    for (i, w) in spans.windows(2).enumerate() {
        if w[0].1.role != Role::ToolCall || w[1].1.role != Role::Tool {
            continue;
        }
        let args: Option<serde_json::Value> = serde_json::from_str(&w[0].1.text).ok();
        let cmd = command(args.as_ref(), &w[0].1.text);
        if let Some(id) = background_id(&w[1].1.text) {
            started.insert(id, cmd.clone());
        }
        let cmd = (args.as_ref().and_then(task_read))
            .and_then(|id| started.get(id).cloned())
            .unwrap_or(cmd);
        runs.push((i + 1, cmd, failing.contains(&w[1].0)));
    }
    for (k, (at, cmd, failed)) in runs.iter().enumerate() {
        let again = runs[k + 1..].iter().any(|(_, c, f)| c == cmd && !f);
        if *failed && again {
            fixed.insert(spans[*at].0);
        }
    }
    fixed
}

/// The id a tool's output gives to a command it started in the background: "... running in
/// background with ID: b2620ef ...".
fn background_id(output: &str) -> Option<String> {
    let (_, rest) = output.split_once("in background with ID:")?;
    let id: String = (rest.trim_start().chars())
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    (!id.is_empty()).then_some(id)
}

/// The background task a tool call reads the output of: its `task_id`, `bash_id` or
/// `shell_id` argument.
fn task_read(args: &serde_json::Value) -> Option<&str> {
    ["task_id", "bash_id", "shell_id"]
        .iter()
        .find_map(|k| args.get(k).and_then(|v| v.as_str()))
}

/// A tool call's command: its `command` argument when it has one, else its arguments whole.
fn command(args: Option<&serde_json::Value>, call: &str) -> String {
    let cmd = args.and_then(|a| a.get("command")).and_then(|c| c.as_str());
    cmd.unwrap_or(call)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A pin of classifier items, each witnessed by the span it was found in: what
/// `cairn pin --auto` writes.
pub fn pin_of(stream: &str, name: &str, items: &[Item]) -> Pin {
    Pin {
        stream: stream.to_string(),
        name: name.to_string(),
        items: items
            .iter()
            .map(|i| PinItem {
                class: i.class,
                text: i.text.clone(),
                witness: Some(i.span),
            })
            .collect(),
    }
}

/// The decision-relevant items of a stream that no pin covers, from a committed snapshot or a
/// batch: what `cairn pin --auto` pins.
pub fn unpinned_items<R: Read>(read: &R, stream: &str) -> Result<Vec<Item>> {
    let pins = pin_items(read, stream)?;
    unpinned(read, stream, &pins)
}

const CUES: &[&str] = &[
    "run", "ever", "please", "use", "again", "any", "must", "avoid",
];

/// Verbs that do the same thing to a system, for matching actions against prohibitions.
const SAME_DEED: &[&[&str]] = &[
    &["bump", "upgrade", "update", "install", "raise"],
    &[
        "drop", "delete", "remove", "truncate", "rm", "purge", "wipe",
    ],
    &["push", "deploy", "publish", "release", "ship"],
    &["restart", "reboot", "kill", "stop"],
];

fn key_words(item: &str) -> Vec<String> {
    content(item)
        .into_iter()
        .filter(|w| !CUES.contains(&w.as_str()))
        .collect()
}

fn meets(want: &str, have: &[String]) -> bool {
    let same = |h: &str| {
        h == want || (want.len() >= 4 && h.len() >= 4 && h.chars().take(4).eq(want.chars().take(4)))
    };
    have.iter().any(|h| {
        same(h)
            || SAME_DEED
                .iter()
                .any(|g| g.contains(&want) && g.contains(&h.as_str()))
    })
}

/// The share of `want` met in `have` (0 when `want` is empty).
fn share_met(want: &[String], have: &[String]) -> f64 {
    if want.is_empty() {
        return 0.0;
    }
    want.iter().filter(|w| meets(w, have)).count() as f64 / want.len() as f64
}

/// Whether a pin item's words are mostly present in a text.
fn mostly_contains(item: &str, text: &str, share: f64) -> bool {
    let want = key_words(item);
    !want.is_empty() && share_met(&want, &content(text)) >= share
}

/// How an action does what a prohibition forbids, or `None`. The action is read as a shell
/// command line (`gate::action::line`): a command of the table whose effect the prohibition forbids
/// matches, and a line that cannot be parsed but holds a deleting or writing verb matches any
/// prohibition of such deeds (fail closed). A command whose effect the line does not tell
/// (`pip install ...`, prose) matches when the prohibition's words do: its forbidden deed
/// (first key word, or a verb that does the same) and at least `share` of its key words. A
/// prohibition that names no deed the table knows is matched by words alone.
///
/// An irreversible action the line cannot read ([`line::Parsed::opaque`]: code built at run
/// time, inline interpreter code that is not plainly read-only, a command named by an
/// expansion) matches every prohibition: it fails closed, and the reason says how to state it.
pub(crate) fn prohibits(
    prohibition: &str,
    action: &str,
    irreversible: bool,
    share: f64,
) -> Option<String> {
    let forbidden = prohibition::forbidden(prohibition);
    let parsed = line::parse(action);
    if !forbidden.is_empty() {
        if let Some(how) = prohibition::violation(&forbidden, &parsed) {
            return Some(how);
        }
    }
    if let Some(why) = parsed.opaque.first().filter(|_| irreversible) {
        return Some(format!(
            "{why}, so the gate cannot tell whether it does what the prohibition forbids (fail closed); write the command it runs plainly, with its operands, to have it judged"
        ));
    }
    if !forbidden.is_empty() {
        // A prohibition that names a command ("never run terraform apply") was matched by the
        // command table: its words are not matched again ("terraform plan" is not it).
        if !forbidden.commands.is_empty() {
            return None;
        }
        // The table reads this prohibition's deeds where they are done, so a command it does
        // not know matches only by stating every key word of the prohibition itself: a word
        // that shares a stem or a synonym with one of them ("release", "dropout") is no match.
        return (parsed.unknown.iter())
            .find(|command| states_every_word(prohibition, command))
            .map(|command| format!("`{command}` says what the prohibition forbids"));
    }
    words_match(prohibition, action, share).then(|| "it names the forbidden deed".to_string())
}

/// Whether a text holds every key word of a prohibition, each as written.
fn states_every_word(prohibition: &str, text: &str) -> bool {
    let want = key_words(prohibition);
    let have = content(text);
    !want.is_empty() && want.iter().all(|w| have.contains(w))
}

/// Whether an action's words do what a prohibition forbids: the forbidden deed (its first key
/// word, or a verb that does the same) is in the action, and most of the prohibition's words
/// are.
fn words_match(prohibition: &str, action: &str, share: f64) -> bool {
    let want = key_words(prohibition);
    let have: Vec<String> = content(action);
    want.first().is_some_and(|deed| meets(deed, &have))
        && mostly_contains(prohibition, action, share)
}
