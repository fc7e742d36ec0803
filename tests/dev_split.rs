//! Issue 23, point 6: the built-in gate on the dev split may not slip below the operating point
//! chosen from its curve (SPEC.md 9.4). The fresh split is never read here.

use crate::pairs::judge;
use cairn::gate::Gatekeeper;
use cairn::record::Status;
use serde_json::Value;

/// The chosen point on the dev split (725 pairs: 422 fabricated, 303 faithful), measured when
/// it was chosen: at most this many fabricated claims end verified, at least this many are
/// caught (refused or struck: fabricated or unanchored), at most this many faithful claims are
/// refused or struck and at least this many are verified. Since 2026-12-03 a contradiction
/// needs a clash (SPEC.md 8.1): 8 fabricated pairs the scorer alone called contradicted (order
/// and event swaps, an added condition) end unverified instead of caught (310 caught before),
/// and 2 faithful pairs are no longer struck (17 before). Since the second session of
/// 2026-12-03 a clash reads only what a text asserts in words (not the passages it quotes, its
/// code, or a value's far neighbours), and an antonym clashes only when each side holds one
/// word of the pair: on the labelled real compactions (tests/data/compactions) that took the
/// wrong refusing findings from 10 to 2; here 2 fabricated pairs fewer are caught (302 before)
/// and one more ends verified (4 before).
const FABRICATED_VERIFIED_AT_MOST: usize = 5;
const FABRICATED_CAUGHT_AT_LEAST: usize = 300;
const FAITHFUL_REFUSED_AT_MOST: usize = 15;
const FAITHFUL_VERIFIED_AT_LEAST: usize = 128;

#[test]
fn the_dev_split_holds_the_chosen_operating_point() {
    let gate = Gatekeeper::default();
    let (mut fab, mut fab_verified, mut caught) = (0, 0, 0);
    let (mut ok, mut ok_refused, mut ok_verified) = (0, 0, 0);
    for file in ["claims_dev", "claims_test"] {
        let path = format!(
            "{}/tests/data/real/{file}.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("the dev split");
        for line in text.lines() {
            let pair: Value = serde_json::from_str(line).expect("a JSON line");
            let (admitted, status) = judge(&gate, &pair).expect("gating a pair");
            let verified = admitted && status == Status::Verified;
            let struck = matches!(status, Status::Fabricated | Status::Unanchored);
            if pair["label"] == "faithful" {
                ok += 1;
                ok_refused += usize::from(!admitted || struck);
                ok_verified += usize::from(verified);
            } else {
                fab += 1;
                fab_verified += usize::from(verified);
                caught += usize::from(!admitted || struck);
            }
        }
    }
    assert_eq!((fab, ok), (422, 303), "the dev split changed size");
    let figures = format!(
        "fabricated: {caught} caught, {fab_verified} verified; faithful: {ok_refused} refused, {ok_verified} verified"
    );
    assert!(fab_verified <= FABRICATED_VERIFIED_AT_MOST, "{figures}");
    assert!(caught >= FABRICATED_CAUGHT_AT_LEAST, "{figures}");
    assert!(ok_refused <= FAITHFUL_REFUSED_AT_MOST, "{figures}");
    assert!(ok_verified >= FAITHFUL_VERIFIED_AT_LEAST, "{figures}");
}
