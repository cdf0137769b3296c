//! Issue 16: the invariants of every run as property tests, over random small experiments (topologies,
//! schemes, buffers, workloads with incasts, seeds; `bfcsim::arbitrary_run`): every packet delivered, dropped
//! with a reason or in flight, no buffer over its capacity, no counter negative, in-order delivery where the
//! network promises it, no flow faster than alone, and one thread and two giving the same outputs.

use bfcsim::arbitrary_run::SmallRun;
use proptest::prelude::*;

proptest! {
    // Each case is two short runs (a few milliseconds each, optimised test profile); the structured fuzz
    // target explores the same space at length (docs/FUZZING.md).
    #![proptest_config(ProptestConfig {
        cases: 256,
        // A failure prints the overrides that reproduce it; integration tests have no source file to keep
        // proptest's regression seeds next to.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]
    #[test]
    fn every_small_run_keeps_its_invariants(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let run = SmallRun::from_bytes(&bytes);
        if let Err(e) = run.check(true) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// A draw proptest found: trim-tail with packets no larger than its header (a tiny payload), which have nothing
/// to cut. Byte 5 picks the scheme among the presets (its value modulo their number, while there are fewer than
/// 256): it is set to `dctcp-trim`'s place, which a new preset moves.
#[test]
fn a_trim_tail_run_with_packets_smaller_than_a_header() {
    let names = bfcsim::presets::names();
    let trim = names.iter().position(|&n| n == "dctcp-trim").unwrap() as u8;
    let run = SmallRun::from_bytes(&[13, 0, 1, 0, 3, trim, 0, 0, 39, 5, 98, 91, 26, 150, 97, 17]);
    assert!(
        run.overrides.iter().any(|o| o == "scheme.name=dctcp-trim"),
        "{:?}",
        run.overrides
    );
    if let Err(e) = run.check(true) {
        panic!("{e}");
    }
}

/// The draws cover what they claim to: every scheme, runs split over two threads, and runs that drop (checked
/// on a sample, and on every draw with a buffer small enough to overflow).
#[test]
fn the_draws_cover_drops_threads_and_every_scheme() {
    let (mut split, mut dropped) = (0, 0);
    let mut schemes = std::collections::BTreeSet::new();
    for seed in 0..400u32 {
        let bytes: Vec<u8> = (0..48u32)
            .map(|i| (seed.wrapping_mul(2_654_435_761).rotate_left(i) ^ (i * 97)) as u8)
            .collect();
        let run = SmallRun::from_bytes(&bytes);
        schemes.extend(
            run.overrides
                .iter()
                .filter(|o| o.starts_with("scheme.name="))
                .cloned(),
        );
        let small_buffer = run
            .overrides
            .iter()
            .any(|o| o == "switch.buffer=10KB" || o == "switch.buffer=30KB");
        if seed % 8 == 0 || small_buffer {
            let checked = run.check(true).unwrap_or_else(|e| panic!("{e}"));
            split += usize::from(checked.split);
            dropped += usize::from(checked.dropped > 0);
        }
    }
    assert_eq!(schemes.len(), bfcsim::presets::names().len(), "{schemes:?}");
    assert!(
        split > 0 && dropped > 0,
        "{split} split, {dropped} with drops"
    );
}
