#![no_main]
// The body lives in the library so the stable replay test runs the same code.
libfuzzer_sys::fuzz_target!(|data: &[u8]| leakhound::fuzzing::archive(data));
