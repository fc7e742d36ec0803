#![no_main]
//! The built-in scorer and the classifier on arbitrary text: never panic; scores lie in
//! [0, 1] and are the same when asked twice (a unit test checks them across cache resets).
use cairn::gate::classify;
use cairn::record::{Rid, Role, Span};
use cairn::score::{Lexical, Scorer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mid = (0..=text.len() / 2)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    let (claim, source) = text.split_at(mid);
    let first = Lexical
        .score(claim, source)
        .expect("the built-in scorer never fails");
    for x in [first.entailment, first.contradiction, first.similarity] {
        assert!((0.0..=1.0).contains(&x), "score {x} out of range");
    }
    let again = Lexical.score(claim, source).expect("score");
    assert_eq!(first, again);
    for role in [Role::User, Role::System, Role::Tool, Role::Assistant] {
        let span = Span {
            stream: "s".into(),
            turn: 0,
            role,
            tool: None,
            text: source.to_string(),
        };
        let _ = classify(Rid([0; 32]), &span);
    }
});
