#![no_main]
//! Record decoding: never panics, and anything it accepts re-encodes to the same bytes.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = cairn::record::decode(data) {
        assert_eq!(cairn::record::encode(&r), data);
    }
    let _ = cairn::record::decode_trusted(data);
});
