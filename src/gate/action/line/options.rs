//! A command's options and operands, as getopt and its long options split them.

use super::*;

pub(in crate::gate::action) struct Opt {
    pub(in crate::gate::action) name: String,
    pub(in crate::gate::action) value: Option<Word>,
}

pub(in crate::gate::action) struct Split {
    pub(in crate::gate::action) opts: Vec<Opt>,
    pub(in crate::gate::action) operands: Vec<usize>,
}

impl Split {
    pub(in crate::gate::action) fn has(&self, name: &str) -> bool {
        self.opts.iter().any(|o| o.name == name)
    }

    pub(in crate::gate::action) fn value(&self, names: &[&str]) -> Option<&Word> {
        self.opts
            .iter()
            .rev()
            .find(|o| names.contains(&o.name.as_str()))
            .and_then(|o| o.value.as_ref())
    }

    pub(in crate::gate::action) fn first_operand(&self, len: usize) -> usize {
        self.operands.first().copied().unwrap_or(len)
    }

    pub(in crate::gate::action) fn words<'w>(&self, args: &'w [Word]) -> Vec<&'w Word> {
        self.operands.iter().filter_map(|&k| args.get(k)).collect()
    }
}

/// Splits arguments into options and operands, as getopt does: `short_arg` are the short
/// options that take a value (attached or the next word), `long_arg` the long options that
/// take the next word when not written `--name=value`; `--` ends the options. `posix`: the
/// first operand ends the options (a prefix such as sudo, whose command follows).
pub(in crate::gate::action) fn options(
    args: &[Word],
    short_arg: &str,
    long_arg: &[&str],
    posix: bool,
) -> Split {
    let mut s = Split {
        opts: Vec::new(),
        operands: Vec::new(),
    };
    let mut k = 0;
    let mut ended = false;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if ended || w.dynamic || !t.starts_with('-') || t == "-" {
            if posix {
                s.operands.extend(k..args.len());
                break;
            }
            s.operands.push(k);
            k += 1;
            continue;
        }
        if t == "--" {
            ended = true;
            k += 1;
            if posix {
                s.operands.extend(k..args.len());
                break;
            }
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(w.tail(t.chars().count() - v.chars().count()))),
                None => (long, None),
            };
            let value = if value.is_none() && long_arg.contains(&name) {
                k += 1;
                args.get(k).cloned()
            } else {
                value
            };
            s.opts.push(Opt {
                name: name.to_string(),
                value,
            });
            k += 1;
            continue;
        }
        let chars: Vec<char> = t.chars().skip(1).collect();
        for (ci, &c) in chars.iter().enumerate() {
            if short_arg.contains(c) {
                let value = if ci + 1 < chars.len() {
                    Some(w.tail(ci + 2))
                } else {
                    k += 1;
                    args.get(k).cloned()
                };
                s.opts.push(Opt {
                    name: c.to_string(),
                    value,
                });
                break;
            }
            s.opts.push(Opt {
                name: c.to_string(),
                value: None,
            });
        }
        k += 1;
    }
    s
}
