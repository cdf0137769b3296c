#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| bfcsim::fuzz_targets::connection_matrix(data));
