//! The lexer: a line into words, operators and redirections, with quote removal and
//! `$'...'` decoding.

use super::*;

/// A shell word after quote removal. Expansions are kept as written (so a `-c` body parsed
/// again sees them), and make the word dynamic.
#[derive(Debug, Clone, Default)]
pub(in crate::gate::action) struct Word {
    /// The text, quotes removed, expansions verbatim.
    pub(in crate::gate::action) text: String,
    /// Chars in `text`.
    pub(in crate::gate::action) len: usize,
    /// The char index in `text` of the first unquoted glob character.
    pub(in crate::gate::action) glob_at: Option<usize>,
    /// The value depends on an expansion or `~`: unknown.
    pub(in crate::gate::action) dynamic: bool,
    /// Some quoting was used.
    pub(in crate::gate::action) quoted: bool,
    /// Bodies of command substitutions, to parse as lines.
    pub(in crate::gate::action) subs: Vec<String>,
    /// Char offsets of the word in its line.
    pub(in crate::gate::action) start: usize,
    pub(in crate::gate::action) end: usize,
}

impl Word {
    pub(in crate::gate::action) fn push(&mut self, c: char) {
        self.text.push(c);
        self.len += 1;
    }

    pub(in crate::gate::action) fn glob(&mut self) {
        if self.glob_at.is_none() {
            self.glob_at = Some(self.len);
        }
    }

    /// A word not from the line: `text` with its first glob character (if `globby`) marked.
    pub(in crate::gate::action) fn synthetic(text: &str, dynamic: bool, globby: bool) -> Word {
        let mut w = Word {
            dynamic,
            ..Word::default()
        };
        for c in text.chars() {
            if globby && matches!(c, '*' | '?' | '[') {
                w.glob();
            }
            w.push(c);
        }
        w
    }

    /// The word from char `from` on (an option's attached value).
    pub(in crate::gate::action) fn tail(&self, from: usize) -> Word {
        let text: String = self.text.chars().skip(from).collect();
        Word::synthetic(&text, self.dynamic, self.glob_at.is_some())
    }
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::gate::action) enum RedirKind {
    Write,
    /// `>>`: adds to the file, destroying nothing it holds.
    Append,
    Read,
    Dup,
    DupOrWrite,
    HereString,
}

/// A separator between simple commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::gate::action) enum Sep {
    List,
    Pipe,
    Open,
    Close,
}

#[derive(Debug, Clone)]
pub(in crate::gate::action) enum Tok {
    Word(Word),
    Redir {
        kind: RedirKind,
        target: Word,
        start: usize,
    },
    Sep(Sep),
}

impl Tok {
    pub(in crate::gate::action) fn start(&self) -> usize {
        match self {
            Tok::Word(w) => w.start,
            Tok::Redir { start, .. } => *start,
            Tok::Sep(_) => 0,
        }
    }

    pub(in crate::gate::action) fn end(&self) -> usize {
        match self {
            Tok::Word(w) => w.end,
            Tok::Redir { target, .. } => target.end,
            Tok::Sep(_) => 0,
        }
    }
}

/// The line cannot be lexed.
#[derive(Debug)]
pub(in crate::gate::action) struct Bad;

pub(in crate::gate::action) struct Lexer<'a> {
    pub(in crate::gate::action) s: &'a [char],
    pub(in crate::gate::action) i: usize,
}

pub(in crate::gate::action) fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Lexer<'_> {
    pub(in crate::gate::action) fn at(&self, k: usize) -> Option<char> {
        self.s.get(self.i.saturating_add(k)).copied()
    }

    pub(in crate::gate::action) fn span(&self, from: usize, to: usize) -> String {
        self.s
            .get(from..to)
            .map(|c| c.iter().collect())
            .unwrap_or_default()
    }

    pub(in crate::gate::action) fn tokens(mut self) -> Result<Vec<Tok>, Bad> {
        let mut out = Vec::new();
        loop {
            while let Some(c) = self.at(0) {
                if c == ' ' || c == '\t' || c == '\r' {
                    self.i += 1;
                } else if c == '\\' && self.at(1) == Some('\n') {
                    self.i += 2;
                } else {
                    break;
                }
            }
            let Some(c) = self.at(0) else { break };
            let start = self.i;
            match c {
                '\n' => {
                    self.i += 1;
                    out.push(Tok::Sep(Sep::List));
                }
                ';' => {
                    self.i += if matches!(self.at(1), Some(';' | '&')) {
                        2
                    } else {
                        1
                    };
                    out.push(Tok::Sep(Sep::List));
                }
                '&' => match self.at(1) {
                    Some('&') => {
                        self.i += 2;
                        out.push(Tok::Sep(Sep::List));
                    }
                    Some('>') => {
                        self.i += 2;
                        let kind = if self.at(0) == Some('>') {
                            self.i += 1;
                            RedirKind::Append
                        } else {
                            RedirKind::Write
                        };
                        let target = self.target()?;
                        out.push(Tok::Redir {
                            kind,
                            target,
                            start,
                        });
                    }
                    _ => {
                        self.i += 1;
                        out.push(Tok::Sep(Sep::List));
                    }
                },
                '|' => match self.at(1) {
                    Some('|') => {
                        self.i += 2;
                        out.push(Tok::Sep(Sep::List));
                    }
                    Some('&') => {
                        self.i += 2;
                        out.push(Tok::Sep(Sep::Pipe));
                    }
                    _ => {
                        self.i += 1;
                        out.push(Tok::Sep(Sep::Pipe));
                    }
                },
                '(' => {
                    self.i += 1;
                    out.push(Tok::Sep(Sep::Open));
                }
                ')' => {
                    self.i += 1;
                    out.push(Tok::Sep(Sep::Close));
                }
                '<' | '>' => out.push(self.redirect(start)?),
                '#' => {
                    while let Some(d) = self.at(0) {
                        if d == '\n' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ => {
                    let w = self.word()?;
                    let fd = !w.text.is_empty()
                        && !w.quoted
                        && w.text.chars().all(|d| d.is_ascii_digit())
                        && matches!(self.at(0), Some('<' | '>'));
                    if fd {
                        out.push(self.redirect(start)?);
                    } else {
                        out.push(Tok::Word(w));
                    }
                    if self.i == start {
                        self.i += 1;
                    }
                }
            }
        }
        Ok(out)
    }

    pub(in crate::gate::action) fn redirect(&mut self, start: usize) -> Result<Tok, Bad> {
        let kind = match (self.at(0), self.at(1)) {
            (Some('<' | '>'), Some('(')) => {
                // Process substitution: an argument whose body runs.
                let open = self.i;
                let close = find_close(self.s, self.i + 2).ok_or(Bad)?;
                let body = self.span(self.i + 2, close);
                self.i = close + 1;
                let mut w = Word::synthetic(&self.span(open, self.i), true, false);
                w.subs.push(body);
                w.start = open;
                w.end = self.i;
                return Ok(Tok::Word(w));
            }
            (Some('<'), Some('<')) if self.at(2) == Some('<') => {
                self.i += 3;
                RedirKind::HereString
            }
            // A here-document: its body is on the following lines.
            (Some('<'), Some('<')) => return Err(Bad),
            (Some('<'), Some('&')) => {
                self.i += 2;
                RedirKind::Dup
            }
            (Some('<'), Some('>')) => {
                self.i += 2;
                RedirKind::Write
            }
            (Some('<'), _) => {
                self.i += 1;
                RedirKind::Read
            }
            (Some('>'), Some('>')) => {
                self.i += 2;
                RedirKind::Append
            }
            (Some('>'), Some('|')) => {
                self.i += 2;
                RedirKind::Write
            }
            (Some('>'), Some('&')) => {
                self.i += 2;
                RedirKind::DupOrWrite
            }
            (Some('>'), _) => {
                self.i += 1;
                RedirKind::Write
            }
            _ => return Err(Bad),
        };
        let target = self.target()?;
        let kind = if kind == RedirKind::DupOrWrite {
            if target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()) {
                RedirKind::Dup
            } else {
                RedirKind::Write
            }
        } else {
            kind
        };
        Ok(Tok::Redir {
            kind,
            target,
            start,
        })
    }

    pub(in crate::gate::action) fn target(&mut self) -> Result<Word, Bad> {
        while matches!(self.at(0), Some(' ' | '\t')) {
            self.i += 1;
        }
        match self.at(0) {
            None => Err(Bad),
            // `< <(curl ...)`: a process substitution is the file redirected.
            Some('<' | '>') if self.at(1) == Some('(') => match self.redirect(self.i)? {
                Tok::Word(w) => Ok(w),
                _ => Err(Bad),
            },
            Some(c) if is_meta(c) => Err(Bad),
            _ => self.word(),
        }
    }

    pub(in crate::gate::action) fn word(&mut self) -> Result<Word, Bad> {
        let mut w = Word {
            start: self.i,
            ..Word::default()
        };
        while let Some(c) = self.at(0) {
            match c {
                c if is_meta(c) => break,
                '\\' => {
                    w.quoted = true;
                    match self.at(1) {
                        Some('\n') => self.i += 2,
                        Some(n) => {
                            w.push(n);
                            self.i += 2;
                        }
                        None => {
                            w.push('\\');
                            self.i += 1;
                        }
                    }
                }
                '\'' => {
                    w.quoted = true;
                    self.i += 1;
                    loop {
                        match self.at(0) {
                            None => return Err(Bad),
                            Some('\'') => {
                                self.i += 1;
                                break;
                            }
                            Some(x) => {
                                w.push(x);
                                self.i += 1;
                            }
                        }
                    }
                }
                '"' => {
                    w.quoted = true;
                    self.dquote(&mut w)?;
                }
                '$' => self.dollar(&mut w)?,
                '`' => self.backtick(&mut w)?,
                '*' | '?' | '[' => {
                    w.glob();
                    w.push(c);
                    self.i += 1;
                }
                '{' => {
                    if !matches!(self.at(1), None | Some('}' | ' ' | '\t' | '\n')) {
                        w.glob();
                    }
                    w.push(c);
                    self.i += 1;
                }
                '~' if w.len == 0 && !w.quoted => {
                    w.dynamic = true;
                    w.push(c);
                    self.i += 1;
                }
                _ => {
                    w.push(c);
                    self.i += 1;
                }
            }
        }
        w.end = self.i;
        Ok(w)
    }

    pub(in crate::gate::action) fn dquote(&mut self, w: &mut Word) -> Result<(), Bad> {
        self.i += 1;
        loop {
            match self.at(0) {
                None => return Err(Bad),
                Some('"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some('\\') => match self.at(1) {
                    Some(n @ ('$' | '`' | '"' | '\\')) => {
                        w.push(n);
                        self.i += 2;
                    }
                    Some('\n') => self.i += 2,
                    _ => {
                        w.push('\\');
                        self.i += 1;
                    }
                },
                Some('$') => self.dollar(w)?,
                Some('`') => self.backtick(w)?,
                Some(c) => {
                    w.push(c);
                    self.i += 1;
                }
            }
        }
    }

    pub(in crate::gate::action) fn dollar(&mut self, w: &mut Word) -> Result<(), Bad> {
        let start = self.i;
        match self.at(1) {
            Some('(') => {
                let close = find_close(self.s, self.i + 2).ok_or(Bad)?;
                if self.at(2) != Some('(') {
                    let body = self.span(self.i + 2, close);
                    w.subs.push(body);
                } else {
                    // Arithmetic: a substitution inside it runs all the same.
                    w.subs
                        .extend(opaque::inner_subs(&self.s[self.i + 3..close]));
                }
                self.i = close + 1;
            }
            Some('{') => {
                let mut depth = 0usize;
                let mut k = self.i + 1;
                loop {
                    match self.s.get(k) {
                        None => return Err(Bad),
                        Some('\\') => {
                            k += 2;
                            continue;
                        }
                        Some('{') => depth += 1,
                        Some('}') => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                // A substitution inside a parameter expansion (`${X:-$(...)}`) runs too.
                w.subs.extend(opaque::inner_subs(&self.s[self.i + 2..k]));
                self.i = k + 1;
            }
            Some('\'') => {
                // ANSI-C quoting: a literal, its escapes decoded.
                w.quoted = true;
                self.i += 2;
                loop {
                    match self.at(0) {
                        None => return Err(Bad),
                        Some('\'') => {
                            self.i += 1;
                            return Ok(());
                        }
                        Some('\\') => {
                            if self.at(1).is_none() {
                                return Err(Bad);
                            }
                            let (decoded, taken) = opaque::ansi_c(self.s, self.i + 1);
                            for c in decoded.chars() {
                                w.push(c);
                            }
                            self.i += 1 + taken.max(1);
                        }
                        Some(x) => {
                            w.push(x);
                            self.i += 1;
                        }
                    }
                }
            }
            Some('"') => {
                self.i += 1;
                return self.dquote(w);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut k = self.i + 1;
                while self
                    .s
                    .get(k)
                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_')
                {
                    k += 1;
                }
                self.i = k;
            }
            Some(c) if c.is_ascii_digit() || "?#@*!$-".contains(c) => self.i += 2,
            _ => {
                w.push('$');
                self.i += 1;
                return Ok(());
            }
        }
        w.dynamic = true;
        for c in self.span(start, self.i).chars() {
            w.push(c);
        }
        Ok(())
    }

    pub(in crate::gate::action) fn backtick(&mut self, w: &mut Word) -> Result<(), Bad> {
        let start = self.i;
        self.i += 1;
        let mut body = String::new();
        loop {
            match self.at(0) {
                None => return Err(Bad),
                Some('`') => {
                    self.i += 1;
                    break;
                }
                Some('\\') => match self.at(1) {
                    Some(n @ ('`' | '\\' | '$')) => {
                        body.push(n);
                        self.i += 2;
                    }
                    _ => {
                        body.push('\\');
                        self.i += 1;
                    }
                },
                Some(c) => {
                    body.push(c);
                    self.i += 1;
                }
            }
        }
        w.subs.push(body);
        w.dynamic = true;
        for c in self.span(start, self.i).chars() {
            w.push(c);
        }
        Ok(())
    }
}

/// The index of the `)` closing a `$(` or `(` whose body starts at `pos`, skipping quotes,
/// nested parentheses, backticks and comments; without recursion.
pub(in crate::gate::action) fn find_close(s: &[char], pos: usize) -> Option<usize> {
    #[derive(Clone, Copy)]
    enum Ctx {
        Paren,
        Dq,
        Back,
    }
    let mut stack = vec![Ctx::Paren];
    let mut i = pos;
    let mut word_start = true;
    while let Some(&c) = s.get(i) {
        let top = *stack.last()?;
        let mut next_start = false;
        match top {
            Ctx::Paren => match c {
                '\\' => {
                    i += 2;
                    word_start = false;
                    continue;
                }
                '\'' => {
                    let mut k = i + 1;
                    while s.get(k)? != &'\'' {
                        k += 1;
                    }
                    i = k + 1;
                    word_start = false;
                    continue;
                }
                '"' => stack.push(Ctx::Dq),
                '`' => stack.push(Ctx::Back),
                '(' => {
                    stack.push(Ctx::Paren);
                    next_start = true;
                }
                ')' => {
                    stack.pop();
                    if stack.is_empty() {
                        return Some(i);
                    }
                }
                '#' if word_start => {
                    while s.get(i).is_some_and(|d| *d != '\n') {
                        i += 1;
                    }
                    continue;
                }
                ' ' | '\t' | '\n' | ';' | '&' | '|' => next_start = true,
                _ => {}
            },
            Ctx::Dq => match c {
                '\\' => {
                    i += 2;
                    continue;
                }
                '"' => {
                    stack.pop();
                }
                '`' => stack.push(Ctx::Back),
                '$' if s.get(i + 1) == Some(&'(') => {
                    stack.push(Ctx::Paren);
                    i += 2;
                    word_start = true;
                    continue;
                }
                _ => {}
            },
            Ctx::Back => match c {
                '\\' => {
                    i += 2;
                    continue;
                }
                '`' => {
                    stack.pop();
                }
                _ => {}
            },
        }
        word_start = next_start;
        i += 1;
    }
    None
}
