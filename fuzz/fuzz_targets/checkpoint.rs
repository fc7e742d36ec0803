#![no_main]
//! Checkpoint, signed-note, key and proof parsing: never panics.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = cairn::checkpoint::parse_unverified(s);
        let _ = cairn::checkpoint::InclusionProof::parse(s);
        let _ = cairn::checkpoint::ConsistencyProof::parse(s);
        let _ = cairn::checkpoint::VerifierKey::parse(s);
        let _ = cairn::checkpoint::SignerKey::parse(s);
        if let Ok(key) = cairn::checkpoint::VerifierKey::parse(
            "cairn+54fcf189+Abn2IRfXg11mppdUYa5sLEMJcWVdnXcZ2jydIRufDSuF",
        ) {
            let _ = key.open(s);
        }
    }
});
