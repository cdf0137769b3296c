//! ExpressPass on CLOS-128 (BFC §6.2.1; Fig. 9's setup): at 60% load with a 100→1 incast, credits are dropped
//! and data never is; data barely queue (ExpressPass §3.1: bounded queues); every packet is accounted for; the
//! report counts the wasted credits. The run is
//! shortened to keep the suite fast.

use std::path::Path;

use bfcsim::experiment::load_experiment;
use bfcsim::runner::{prepare, simulate};
use bfcsim_schemes::receiver_driven::expresspass::CreditReport;

#[test]
fn sixty_percent_load_drops_credits_never_data() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments/clos128-google-incast-bfc.toml");
    let set = ["workload.duration=300us", "scheme.name=expresspass"].map(String::from);
    let config = load_experiment(&path, &set).unwrap();
    let prepared = prepare(&config, path.parent().unwrap()).unwrap();
    let out = simulate(&config, prepared, |_| {}).unwrap();
    assert!(out.violations.is_empty(), "{:?}", out.violations);
    assert_eq!(out.summary.unfinished, 0);
    let credit_drops = out.summary.drops.get("credit-queue-full");
    assert!(credit_drops > 0);
    assert_eq!(
        out.summary.drops.total(),
        credit_drops,
        "only credits are dropped: {:?}",
        out.summary.drops
    );
    let credits = out
        .summary
        .flow_control
        .as_ref()
        .and_then(|f| f.scheme.as_ref()?.get::<CreditReport>().copied())
        .expect("ExpressPass reports its credits");
    eprintln!("{credits}");
    assert_eq!(credits.dropped, credit_drops);
    // Near-zero data queuing: a 1048 B packet takes 83.84 ns at 100 Gb/s; the 99th percentile of the per-hop
    // queuing delays stays within a few of them, and no packet waits much longer than the data a full credit
    // queue and a full token bucket (16 + 2 credits, 1.5 us) call for.
    let q = out.summary.queuing_delay.expect("measured");
    eprintln!("per-hop queuing delay {q:?}");
    assert!(q.p99_ns < 500.0 && q.max_ns < 2000.0, "{q:?}");
    assert!(
        credits.wasted > 0 && credits.wasted_fraction < 0.5,
        "{credits}"
    );
}
