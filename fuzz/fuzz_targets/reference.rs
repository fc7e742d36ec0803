#![no_main]
//! Reference parsing: never panics; what parses as a rid prints back to itself.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = cairn::ingest::parse_ref(s);
        if let Ok(rid) = s.parse::<cairn::record::Rid>() {
            assert_eq!(rid.to_hex(), s.to_ascii_lowercase());
        }
    }
});
