//! Text analysis shared by the lexical scorer, the classifier and the gates: tokens,
//! identifiers, sentences, the word lists behind negation, hedges and failures, and the
//! decision-relevant classifier. The bottom layer beside `record`: it imports nothing else of
//! the crate (SPEC.md section 15).

pub mod clash;
pub mod classify;
pub mod code;
pub mod prose;
pub mod terms;
pub mod verbatim;
pub mod visible;
pub(crate) mod wordnet;

/// A fast hasher for the scorer's own words and texts, where SipHash's flood resistance buys
/// nothing (the keys are the ledger's own words, not a server's input): eight bytes at a time
/// with a multiply and rotate, the last few bytes as FNV-1a, and a final mix.
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut v = [0u8; 8];
            v.copy_from_slice(c);
            h = (h ^ u64::from_le_bytes(v))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29);
        }
        for b in chunks.remainder() {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// A fixed list of words with a membership test that costs one hash, not a scan: the lists
/// are asked about every word of every span the gates read.
pub struct WordList {
    words: &'static [&'static str],
    set: std::sync::OnceLock<
        std::collections::HashSet<&'static str, std::hash::BuildHasherDefault<Fnv>>,
    >,
}

impl WordList {
    /// A list of the given words.
    pub const fn new(words: &'static [&'static str]) -> WordList {
        WordList {
            words,
            set: std::sync::OnceLock::new(),
        }
    }

    /// The words, in the order given.
    pub(crate) fn words(&self) -> &'static [&'static str] {
        self.words
    }

    /// Whether `w` is in the list.
    pub fn contains(&self, w: &str) -> bool {
        self.set
            .get_or_init(|| self.words.iter().copied().collect())
            .contains(w)
    }
}

/// Words that carry no content for coverage.
pub(crate) static STOP: WordList = WordList::new(&[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that",
    "these", "those", "there", "here", "we", "i", "you", "he", "she", "they", "them", "our", "us",
    "my", "your", "his", "her", "their", "me", "so", "if", "then", "than", "do", "does", "did",
    "has", "have", "had", "will", "would", "shall", "should", "can", "could", "may", "also",
    "just", "very", "into", "about", "which", "who", "whom", "what", "when", "where", "how", "all",
    "any", "some", "such", "only", "own", "same", "too", "s", "t", "now", "up", "out", "over",
    "again", "further", "once", "during", "while", "after", "before", "said",
]);

/// Words that negate what they govern.
pub static NEGATIONS: WordList = WordList::new(&[
    "not",
    "except",
    "no",
    "never",
    "cannot",
    "without",
    "none",
    "nobody",
    "nothing",
    "neither",
    "nor",
    "dont",
    "don't",
    "doesnt",
    "doesn't",
    "didnt",
    "didn't",
    "isnt",
    "isn't",
    "wasnt",
    "wasn't",
    "arent",
    "aren't",
    "werent",
    "weren't",
    "wont",
    "won't",
    "cant",
    "can't",
    "shouldnt",
    "shouldn't",
    "mustnt",
    "mustn't",
    "havent",
    "haven't",
    "hasnt",
    "hasn't",
]);

/// Words that mark the number after them as an estimate ("about 392").
const APPROXIMATE: &[&str] = &[
    "about",
    "around",
    "roughly",
    "approximately",
    "approx",
    "nearly",
    "almost",
    "circa",
    "some",
];

/// Whether `sentence` gives `value` as an estimate: after a word of [`APPROXIMATE`] (`before`,
/// the word just before it) or a tilde or `≈` ("~392 step files"). An estimate binds nothing,
/// and allows a value near it.
pub(crate) fn estimated(sentence: &str, value: &str, before: Option<&str>) -> bool {
    fn marked(t: &str) -> Option<&str> {
        t.strip_prefix(['~', '\u{2248}'])
    }
    // The tokens of the sentence, bare: "(~392," is "~392".
    let tokens: Vec<&str> = (sentence.split_whitespace())
        .map(|t| t.trim_start_matches(['(', '[', '|']))
        .map(|t| t.trim_end_matches([',', ';', ':', '.', ')', ']', '|', '!', '?']))
        .collect();
    marked(value).is_some()
        || before.is_some_and(|b| APPROXIMATE.iter().any(|a| b.eq_ignore_ascii_case(a)))
        || (tokens.iter()).any(|t| marked(t) == Some(value))
        || (tokens.windows(2)).any(|w| marked(w[0]) == Some("") && w[1] == value)
}

/// Numbers written as words: values, as digits are.
pub(crate) const NUMBER_WORDS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

/// Words that mark a statement as a guess.
pub static HEDGES: WordList = WordList::new(&[
    "think",
    "maybe",
    "probably",
    "might",
    "perhaps",
    "possibly",
    "guess",
    "seems",
    "seem",
    "likely",
    "unsure",
    "suppose",
    "believe",
    "assume",
    "apparently",
    "presumably",
    "roughly",
]);

/// Words that report a failure.
pub static FAILURES: WordList = WordList::new(&[
    "failed",
    "fails",
    "failure",
    "fail",
    "refused",
    "error",
    "errors",
    "denied",
    "timeout",
    "unable",
    "exception",
    "traceback",
    "panicked",
    "panic",
    "crashed",
    "aborted",
    "fatal",
    "unreachable",
    "rejected",
]);

/// Words that deny what follows them as "not" does, beyond `text::NEGATIONS`: "lacks vertical
/// space" says what "not enough vertical room" says.
/// Verbs of forbidding and refusing deny what follows them too: "forbade using --no-git" says
/// what "don't use --no-git" says.
pub(crate) const DENYING: &[&str] = &[
    "lack",
    "lacks",
    "lacked",
    "lacking",
    "without",
    "forbid",
    "forbids",
    "forbade",
    "forbidden",
    "prohibit",
    "prohibits",
    "prohibited",
    "refuse",
    "refuses",
    "refused",
    "decline",
    "declines",
    "declined",
];

/// Pairs of words that assert opposite things: each is an antonym pair in WordNet 3.1 (a test
/// in `text::wordnet` enforces it); WordNet's other antonyms are read from the lexicon.
pub(crate) const ANTONYMS: &[(&str, &str)] = &[
    ("upgrade", "downgrade"),
    ("increase", "decrease"),
    ("rise", "fall"),
    ("enable", "disable"),
    ("open", "close"),
    ("true", "false"),
    ("success", "failure"),
    ("accept", "reject"),
    ("win", "lose"),
    ("more", "less"),
    ("higher", "lower"),
    ("larger", "smaller"),
    ("start", "stop"),
    ("first", "last"),
    ("buy", "sell"),
    ("up", "down"),
    ("above", "below"),
    ("positive", "negative"),
    ("agree", "disagree"),
    ("include", "exclude"),
    ("all", "none"),
    // Size, amount, speed and price.
    ("cheap", "expensive"),
    ("big", "small"),
    ("bigger", "smaller"),
    ("biggest", "smallest"),
    ("largest", "smallest"),
    ("long", "short"),
    ("longer", "shorter"),
    ("longest", "shortest"),
    ("fast", "slow"),
    ("faster", "slower"),
    ("quick", "slow"),
    ("add", "subtract"),
    ("maximum", "minimum"),
    ("highest", "lowest"),
    ("most", "least"),
    ("full", "empty"),
    ("heavy", "light"),
    ("wide", "narrow"),
    ("hot", "cold"),
    // Time.
    ("day", "night"),
    ("early", "late"),
    ("earlier", "later"),
    ("earliest", "latest"),
    ("new", "old"),
    ("newer", "older"),
    ("newest", "oldest"),
    // Place and direction.
    ("left", "right"),
    ("top", "bottom"),
    ("north", "south"),
    ("east", "west"),
    ("import", "export"),
    ("upload", "download"),
    // Kind and state.
    ("private", "public"),
    ("domestic", "international"),
    ("single", "double"),
    ("same", "different"),
    ("correct", "incorrect"),
    ("valid", "invalid"),
    ("available", "unavailable"),
    ("paid", "unpaid"),
    ("possible", "impossible"),
    ("connect", "disconnect"),
    ("lock", "unlock"),
    ("begin", "end"),
    ("visible", "hidden"),
    // Events and outcomes.
    ("succeeded", "failed"),
];

/// A reduced word form, so that "dropped" meets "drop" and "tables" meets "table".
pub fn stem(w: &str) -> String {
    let w = w.trim_matches('\'');
    for suffix in ["ing", "ed", "es", "s", "ly"] {
        if let Some(base) = w.strip_suffix(suffix) {
            if base.len() >= 3 && !w.ends_with("ss") {
                let mut b = base.to_string();
                // "dropped" -> "dropp" -> "drop"
                let bytes = b.as_bytes();
                if bytes.len() >= 2 && bytes[bytes.len() - 1] == bytes[bytes.len() - 2] {
                    b.pop();
                }
                return b;
            }
        }
    }
    w.to_string()
}

/// Lower-case word tokens: runs of letters, digits and apostrophes, with dots kept inside
/// numbers (`2.3.1`), and apostrophes trimmed from both ends.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w.to_string()));
    out
}

/// Calls `f` with each token [`words`] would return, without allocating a string for each.
pub fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut cur = String::new();
    // Whether the last character of `cur` is an ASCII digit, for dots inside numbers.
    let mut digit = false;
    let mut emit = |cur: &mut String| {
        let w = cur.trim_matches('\'');
        if !w.is_empty() {
            f(w);
        }
        cur.clear();
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let keep = c.is_alphanumeric()
            || c == '\''
            || (c == '.' && digit && chars.peek().is_some_and(char::is_ascii_digit));
        if keep {
            if c.is_ascii() {
                cur.push(c.to_ascii_lowercase());
            } else {
                cur.extend(c.to_lowercase());
            }
            digit = cur.ends_with(|p: char| p.is_ascii_digit());
        } else if !cur.is_empty() {
            emit(&mut cur);
            digit = false;
        }
    }
    if !cur.is_empty() {
        emit(&mut cur);
    }
}

/// Content tokens: stemmed words that are not stop words.
pub fn content(text: &str) -> Vec<String> {
    content_of(&words(text))
}

/// The content tokens of words already split by [`words`].
pub fn content_of(words: &[String]) -> Vec<String> {
    words
        .iter()
        .filter(|w| is_content(w))
        .map(|w| stem(w))
        .collect()
}

/// Whether a word carries content: neither a stop word nor a negation.
pub(crate) fn is_content(w: &str) -> bool {
    !STOP.contains(w) && !NEGATIONS.contains(w)
}

/// The kind of an identifier, for same-kind conflicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `2.3.1`
    Version,
    /// `5433`
    Number,
    /// `src/net/client.rs`
    Path,
    /// `https://...`
    Url,
    /// A hex hash of 7 or more digits.
    Hash,
    /// Anything else with a digit in it: `E0599`, `v2`.
    Code,
}

/// Words that number items: the number after one names the item, it is no value of it.
pub(crate) const NUMBERING: &[&str] = &[
    "test", "tests", "step", "steps", "task", "tasks", "phase", "section", "chapter", "item",
    "issue", "pr", "line", "lines", "figure", "table", "part", "turn", "round", "attempt", "run",
    "commit", "ticket", "number", "no", "#",
];

/// An identifier found in text: verbatim, with its kind and the word before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// The identifier as written.
    pub text: String,
    /// Its kind.
    pub kind: IdKind,
    /// The lower-case word just before it, if any.
    pub before: Option<String>,
}

fn id_kind(tok: &str) -> Option<IdKind> {
    // Every kind needs a digit or a slash: most words leave here.
    if !tok.bytes().any(|b| b.is_ascii_digit() || b == b'/') {
        return None;
    }
    if tok.contains("://") {
        return Some(IdKind::Url);
    }
    let has_digit = tok.chars().any(|c| c.is_ascii_digit());
    if tok.contains('/') && tok.chars().filter(|c| c.is_alphanumeric()).count() >= 2 {
        return Some(IdKind::Path);
    }
    if !has_digit {
        return None;
    }
    if tok.chars().all(|c| c.is_ascii_digit()) {
        return Some(IdKind::Number);
    }
    let v = tok.trim_start_matches(['v', 'V']);
    if v.split('.').count() >= 2
        && v.split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    {
        return Some(IdKind::Version);
    }
    if tok.len() >= 7 && tok.chars().all(|c| c.is_ascii_hexdigit()) {
        return Some(IdKind::Hash);
    }
    Some(IdKind::Code)
}

/// The tokens of a text as [`identifiers`] reads them: split at whitespace and at the
/// punctuation no identifier holds, with sentence punctuation trimmed off the ends.
fn id_tokens(text: &str) -> impl Iterator<Item = &str> {
    let separator = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '=' | ','
                    | ';'
                    | '('
                    | ')'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '<'
                    | '>'
                    | '"'
                    | '\''
                    | '`'
                    | '|'
            )
    };
    text.split(separator)
        .map(|raw| raw.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?' | '*')))
        .filter(|tok| !tok.is_empty())
}

/// The identifiers in a text: versions, numbers, ports, paths, URLs, hashes and codes.
pub fn identifiers(text: &str) -> Vec<Ident> {
    let mut out = Vec::new();
    // The token before, whose last word is the word before an identifier.
    let mut prev = "";
    for tok in id_tokens(text) {
        if let Some(kind) = id_kind(tok) {
            let mut before = None;
            for_each_word(prev, |w| before = Some(w.to_string()));
            out.push(Ident {
                text: tok.to_string(),
                kind,
                before,
            });
        }
        prev = tok;
    }
    out
}

/// An identifier and the word that binds it: the stem of the last content word before it in
/// its sentence, after any identifier before it ("reservation" in "cancel reservation M20IZO
/// and upgrade IFOYYZ"). Snake-case names (`cmd_clipboard`) and codes in capitals (`IFOYYZ`)
/// count as identifiers here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The identifier as written.
    pub id: String,
    /// The stem that binds it, if a content word comes before it.
    pub head: Option<String>,
}

/// The identifiers of a text with the words that bind each, in order (see [`Binding`]).
pub fn bindings(text: &str) -> Vec<Binding> {
    let mut out = Vec::new();
    for sentence in sentences(text) {
        let mut head: Option<String> = None;
        for tok in id_tokens(sentence) {
            let letters = tok.chars().filter(|c| c.is_alphabetic()).count();
            // `cmd_clipboard`, and booking codes in capitals (`IFOYYZ`).
            let snake = tok.contains('_') && letters >= 2;
            let code = letters >= 5
                && tok
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
            if id_kind(tok).is_some() || snake || code {
                out.push(Binding {
                    id: tok.to_string(),
                    head: head.take(),
                });
            } else {
                for_each_word(tok, |w| {
                    if is_content(w) && !has_digit(w) {
                        head = Some(stem(w));
                    }
                });
            }
        }
    }
    out
}

/// Sentences: split after `.`, `!` or `?` followed by whitespace, and at line breaks.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for i in 0..bytes.len() {
        let end = match bytes[i] {
            b'\n' => Some(i),
            b'.' | b'!' | b'?' if bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) => {
                Some(i + 1)
            }
            _ => None,
        };
        if let Some(e) = end {
            let s = text[start..e].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = e;
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// Whether any word of `words` is in `list`.
pub fn has_any(words: &[String], list: &WordList) -> bool {
    words.iter().any(|w| list.contains(w))
}

/// Whether the text is hedged ("I think", "maybe", "probably" ...).
pub fn is_hedged(text: &str) -> bool {
    is_hedged_words(text, &words(text))
}

/// [`is_hedged`] for a text already split by [`words`].
pub fn is_hedged_words(text: &str, words: &[String]) -> bool {
    has_any(words, &HEDGES) || says_not_sure(text)
}

/// Whether a line is code or a numbered file listing, which states nothing: a line number and
/// `→` or a tab open it (`57→ ...`, `57\t...`, as file readers and `cat -n` print), it holds
/// three or more of `{}[]();<>`, or it is one call (`t.Fatal("auth command not found")`,
/// `log.error("...");`), after a diff's `+` or `-` if any: a name, dotted or not, then `(`, and
/// the line ends with `)` or `);`.
/// The clash rules and the classifier read no statement in it.
pub(crate) fn is_code_line(line: &str) -> bool {
    let t = line.trim_start();
    let numbered =
        |(n, _): (&str, &str)| !n.is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit());
    let listing = line
        .trim_start_matches(' ')
        .split_once('\t')
        .is_some_and(numbered)
        || t.split_once('\u{2192}').is_some_and(numbered);
    let call = {
        let c = t.trim_start_matches(['+', '-']).trim_start();
        let name = c.find('(').map_or("", |i| &c[..i]);
        !name.is_empty()
            && name
                .chars()
                .all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '.' | ':'))
            && name.chars().next().is_some_and(char::is_alphabetic)
            && c.trim_end()
                .strip_suffix(';')
                .unwrap_or(c.trim_end())
                .ends_with(')')
    };
    listing || call || t.chars().filter(|c| "{}[]();<>".contains(*c)).count() >= 3
}

/// Whether the text hedges a statement: a sentence of it is hedged and states rather than
/// asks or requests. "can we maybe run the tests locally" softens a request, and "is it maybe
/// port 5433?" asks; neither hedges a fact a summary could strip the hedge from.
pub fn hedges_a_statement(text: &str) -> bool {
    const ASKING: &[[&str; 2]] = &[
        ["can", "we"],
        ["could", "we"],
        ["can", "you"],
        ["could", "you"],
        ["would", "you"],
        ["shall", "we"],
        ["should", "we"],
        ["let's", ""],
        ["please", ""],
    ];
    sentences(text).into_iter().any(|s| {
        let w = words(s);
        let asks = s.trim_end().ends_with('?')
            || (w.iter().enumerate()).any(|(i, x)| {
                ASKING
                    .iter()
                    .any(|[a, b]| x == a && (b.is_empty() || w.get(i + 1).is_some_and(|y| y == b)))
            });
        !asks && is_hedged_words(s, &w)
    })
}

/// Whether `text` hedges the statement `claim` rests on: the sentences of the text that share
/// the most content words with the claim (its source in the text) hedge a statement. A long
/// report with one hedged sentence somewhere does not hedge what its other sentences state.
/// When no sentence shares a word with the claim, the whole text is read.
pub fn hedges_for(claim: &str, text: &str) -> bool {
    let want: std::collections::HashSet<String> = content(claim).into_iter().collect();
    let all = sentences(text);
    let shared: Vec<usize> = (all.iter())
        .map(|s| content(s).iter().filter(|w| want.contains(*w)).count())
        .collect();
    let best = shared.iter().copied().max().unwrap_or(0);
    if best == 0 {
        return hedges_a_statement(text);
    }
    (all.iter().zip(&shared)).any(|(s, n)| *n == best && hedges_a_statement(s))
}

/// Whether the text says "not sure", in any case (no character outside ASCII lower-cases to
/// one of these letters, so comparing ASCII case-insensitively is exact).
pub fn says_not_sure(text: &str) -> bool {
    text.as_bytes()
        .windows(8)
        .any(|w| w.eq_ignore_ascii_case(b"not sure"))
}

/// Whether a word holds an ASCII digit.
pub fn has_digit(w: &str) -> bool {
    w.bytes().any(|b| b.is_ascii_digit())
}

/// Who a claim can say spoke, by the word that names them: the gate checks that word against
/// the roles of the spans the claim cites (SPEC.md 8.1), and the scorer reads a claim without
/// the frame that names them (9.1).
pub(crate) const SPEAKERS: &[(&str, Speaker)] = &[
    ("user", Speaker::User),
    ("customer", Speaker::User),
    ("caller", Speaker::User),
    ("guest", Speaker::User),
    ("client", Speaker::User),
    ("assistant", Speaker::Assistant),
    ("agent", Speaker::Assistant),
    ("bot", Speaker::Assistant),
    ("representative", Speaker::Assistant),
    ("tool", Speaker::Tool),
    ("test", Speaker::Tool),
    ("tests", Speaker::Tool),
    ("build", Speaker::Tool),
    ("commit", Speaker::Tool),
    ("linter", Speaker::Tool),
    ("compiler", Speaker::Tool),
    ("pytest", Speaker::Tool),
    ("flake8", Speaker::Tool),
    ("cargo", Speaker::Tool),
    ("command", Speaker::Tool),
    ("output", Speaker::Tool),
];

/// A speaker a claim names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Speaker {
    /// The user (or whoever speaks for them).
    User,
    /// The assistant.
    Assistant,
    /// A tool's output.
    Tool,
}

/// Verbs of saying, asking, wanting and showing, which report what a speaker said rather than
/// add to it.
static REPORTING: WordList = WordList::new(&[
    "said",
    "says",
    "say",
    "asked",
    "asks",
    "ask",
    "wants",
    "wanted",
    "want",
    "needs",
    "needed",
    "reported",
    "reports",
    "suggested",
    "suggests",
    "told",
    "tells",
    "mentioned",
    "mentions",
    "noted",
    "notes",
    "stated",
    "states",
    "explained",
    "explains",
    "requested",
    "requests",
    "replied",
    "replies",
    "answered",
    "answers",
    "responded",
    "responds",
    "added",
    "adds",
    "wrote",
    "writes",
    "showed",
    "shows",
    "printed",
    "prints",
    "indicated",
    "indicates",
    "specified",
    "specifies",
]);

/// Verbs of keeping a thing, and verbs of doing away with it: a verb of one class asserts the
/// opposite of a verb of the other about the same thing ("the users table was kept" against "the
/// users table was dropped"). WordNet opposes "keep" only to "lose", and lists no antonym of
/// "drop" or "delete", so the two classes are written here (SPEC.md 8.1); the second class is the
/// destructive deeds the action gate reads in prohibitions.
pub(crate) const KEEPING: &[&str] = &["keep", "kept", "retain", "preserve"];
/// See [`KEEPING`].
pub(crate) const DISCARDING: &[&str] = &[
    "drop", "delete", "remove", "discard", "destroy", "purge", "wipe", "erase", "truncate",
];

/// Every pair of words that assert opposite things: [`ANTONYMS`], and each verb of
/// [`KEEPING`] with each of [`DISCARDING`].
pub(crate) fn opposed() -> impl Iterator<Item = (&'static str, &'static str)> {
    let kept = KEEPING
        .iter()
        .flat_map(|k| DISCARDING.iter().map(move |d| (*k, *d)));
    ANTONYMS.iter().copied().chain(kept)
}

/// Light verbs, which take their meaning from the words after them ("go to Paris", "get a
/// refund", "make a reservation"): a witness says the same with another or none.
static LIGHT_VERBS: WordList = WordList::new(&[
    "go", "goes", "going", "went", "get", "gets", "getting", "got", "make", "makes", "making",
    "made", "take", "takes", "taking", "took", "put", "puts", "putting", "keep", "keeps",
]);

/// The forms of [`REPORTING`] that are verbs wherever they stand ("said", "asked", "wants"),
/// unlike "requests" or "shows", which may be nouns or tell what a thing does.
static REPORTED: WordList = WordList::new(&[
    "said",
    "says",
    "asked",
    "wants",
    "wanted",
    "needs",
    "needed",
    "reported",
    "suggested",
    "told",
    "mentioned",
    "noted",
    "stated",
    "explained",
    "requested",
    "replied",
    "answered",
    "responded",
    "wrote",
    "showed",
    "indicated",
    "specified",
    "found",
    "offered",
    "gave",
    "listed",
]);

/// Words that may stand between a speaker and the verb reporting them ("the user also said").
static FRAME_ADVERBS: WordList = WordList::new(&[
    "also",
    "then",
    "first",
    "again",
    "later",
    "initially",
    "originally",
    "explicitly",
    "specifically",
    "clearly",
    "just",
]);

/// Words that may close a reporting frame ("said that", "asked to", "asked whether").
static FRAME_LINKS: WordList = WordList::new(&[
    "that", "to", "whether", "if", "for", "about", "how", "why", "when",
]);

/// Whether a word is a light verb ("keep", "get"): a frame word, unless a negation denies it
/// ("did not keep the table" states "keep").
pub(crate) fn light_verb(w: &str) -> bool {
    LIGHT_VERBS.contains(w)
}

/// Whether a claim word belongs to its frame rather than to what it states: a party to the
/// conversation ("the user", "the customer": a witness says "I" or "you"), a verb of saying,
/// asking or wanting, a light verb, or "because" and "whether", which join what is stated.
pub(crate) fn frame_word(w: &str) -> bool {
    REPORTED.contains(w)
        || matches!(w, "because" | "whether")
        || LIGHT_VERBS.contains(w)
        || SPEAKERS.iter().any(|(s, p)| *s == w && *p != Speaker::Tool)
}

/// The speaker a sentence begins with ("The user ...", "Customer ..."), if any. A word joined
/// on by a hyphen names no one: "Client-side rendering", "User-facing errors".
pub(crate) fn named_speaker(sentence: &str) -> Option<Speaker> {
    let lower = sentence.trim_start().to_lowercase();
    let subject = lower.strip_prefix("the ").unwrap_or(&lower);
    let word: String = subject
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    if subject[word.len()..].starts_with('-') {
        return None;
    }
    SPEAKERS.iter().find(|(w, _)| *w == word).map(|(_, s)| *s)
}

/// Closed classes of values: a claim that names one member where its witness names another of
/// the same class has swapped the value (a weekday for a weekday, "before" for "after"). A
/// member may have several forms ("minute/minutes"). "May" is left out of the months: it is more
/// often the verb.
pub(crate) const VALUE_CLASSES: &[&[&str]] = &[
    &[
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ],
    &[
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ],
    &["am", "pm"],
    &["morning", "afternoon", "evening", "night"],
    &[
        "second/seconds",
        "minute/minutes",
        "hour/hours",
        "day/days",
        "week/weeks",
        "month/months",
        "year/years",
    ],
    &["before", "after"],
    &["yesterday", "today", "tomorrow", "tonight"],
    &[
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth", "last",
    ],
];

/// The id of a rule set of version `rules` that reads word lists: `cairn-NAME-RULES-` and the
/// first 8 hex digits of BLAKE3 over `domain`, each list (its name, then its words, each ended
/// by NUL, then a newline), and `extra`. A changed list is a new id (SPEC.md 8.3, 9.1).
pub(crate) fn lists_id<'a>(
    name: &str,
    rules: u32,
    lists: impl IntoIterator<Item = (&'a str, &'a [&'a str])>,
    extra: &[u8],
) -> String {
    let mut h = blake3::Hasher::new();
    h.update(format!("cairn-{name}-lists\0").as_bytes());
    for (list, words) in lists {
        h.update(list.as_bytes());
        h.update(b"\0");
        for w in words {
            h.update(w.as_bytes());
            h.update(b"\0");
        }
        h.update(b"\n");
    }
    h.update(extra);
    let hex: String = h.finalize().as_bytes()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("cairn-{name}-{rules}-{hex}")
}

/// Every word list the built-in scorer reads from this module, by name, for its id
/// (`score::Lexical`): a changed list is a changed scorer.
pub(crate) fn scorer_lists() -> Vec<(&'static str, Vec<&'static str>)> {
    let pairs = |v: &[(&'static str, &'static str)]| v.iter().flat_map(|(a, b)| [*a, *b]).collect();
    vec![
        ("stop", STOP.words().to_vec()),
        ("negations", NEGATIONS.words().to_vec()),
        ("hedges", HEDGES.words().to_vec()),
        ("failures", FAILURES.words().to_vec()),
        ("antonyms", pairs(ANTONYMS)),
        ("keeping", KEEPING.to_vec()),
        ("discarding", DISCARDING.to_vec()),
        ("speakers", SPEAKERS.iter().map(|(w, _)| *w).collect()),
        ("reporting", REPORTING.words().to_vec()),
        ("reported", REPORTED.words().to_vec()),
        ("light-verbs", LIGHT_VERBS.words().to_vec()),
        ("frame-adverbs", FRAME_ADVERBS.words().to_vec()),
        ("frame-links", FRAME_LINKS.words().to_vec()),
        (
            "value-classes",
            VALUE_CLASSES
                .iter()
                .flat_map(|c| c.iter().copied().chain(["|"]))
                .collect(),
        ),
    ]
}

/// The byte length of the reporting frame a claim sentence begins with: "The user said (that)",
/// "The assistant asked the user to", "The tool showed". The rest is what the speaker said,
/// and is what a witness must support; who spoke is the gate's to check against the cited
/// span's role. Zero when the sentence has no frame, or nothing after it.
pub(crate) fn reporting_frame(sentence: &str) -> usize {
    if named_speaker(sentence).is_none() {
        return 0;
    }
    // Words with their end offsets, lower-cased.
    let mut words = Vec::new();
    let mut at = 0;
    for tok in sentence.split_inclusive(char::is_whitespace) {
        at += tok.len();
        let w = tok.trim().trim_end_matches([',', ':']).to_lowercase();
        words.push((w, at));
        if words.len() > 8 {
            break;
        }
    }
    let mut i = usize::from(words.first().is_some_and(|(w, _)| w == "the"));
    i += 1; // the speaker
    while words.get(i).is_some_and(|(w, _)| FRAME_ADVERBS.contains(w)) {
        i += 1;
    }
    if !words.get(i).is_some_and(|(w, _)| REPORTING.contains(w)) {
        return 0;
    }
    i += 1;
    // "asked the assistant to", "told the user that"
    let object = |j: usize| {
        let k = j + usize::from(words.get(j).is_some_and(|(w, _)| w == "the"));
        words
            .get(k)
            .is_some_and(|(w, _)| SPEAKERS.iter().any(|(s, _)| s == w) || w == "them")
            .then_some(k + 1)
    };
    if let Some(k) = object(i) {
        i = k;
    }
    if words.get(i).is_some_and(|(w, _)| FRAME_LINKS.contains(w)) {
        i += 1;
    }
    let end = words.get(i.wrapping_sub(1)).map_or(0, |(_, e)| *e);
    if sentence[end..].trim().is_empty() {
        0
    } else {
        end
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_hyphenated_speaker_word_names_no_one() {
        use crate::text::{named_speaker, Speaker};
        assert_eq!(
            named_speaker("The user asked for a rollback."),
            Some(Speaker::User)
        );
        assert_eq!(
            named_speaker("Client-side encryption: the server never sees keys."),
            None
        );
        assert_eq!(named_speaker("User-facing errors are logged."), None);
    }

    use crate::text::hedges_a_statement;

    #[test]
    fn a_softened_request_or_a_question_hedges_no_statement() {
        assert!(hedges_a_statement(
            "I think the staging DB is on port 5433."
        ));
        assert!(!hedges_a_statement(
            "ok the tests are still failing - can we maybe run them locally"
        ));
        assert!(!hedges_a_statement("is it maybe port 5433?"));
        assert!(hedges_a_statement(
            "Can you look at it? The port is probably 5433."
        ));
    }
}
