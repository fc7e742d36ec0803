#![no_main]
//! JSON Lines parsing and application: never panics, whatever the bytes.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ledger = cairn::Ledger::in_memory().expect("ledger");
    let gate = cairn::gate::Gatekeeper::default();
    let mut batch = ledger.batch().expect("batch");
    let seed = br#"{"kind":"span","stream":"s","turn":1,"role":"user","text":"we are still on libfoo 2.3.1"}"#;
    let _ = cairn::ingest::apply_line(&mut batch, &gate, 1, seed);
    for (i, line) in data.split(|b| *b == b'\n').enumerate().take(8) {
        let _ = cairn::ingest::apply_line(&mut batch, &gate, i as u64 + 2, line);
    }
});
