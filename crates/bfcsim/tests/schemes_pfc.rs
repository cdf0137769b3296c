//! Issue 4's acceptance run, `experiments/clos128-incast-pfc.toml` (a 100->1 incast of 20 MB on CLOS-128 with
//! 12 MB buffers), under every scheme that runs over PFC or replaces it: PFC loses nothing and reports its
//! pauses (and writes `pfc.txt`); `hpcc-ideal-retx` drops and still delivers every flow; the §6.4 variants
//! (`hpcc-sfq`, and `hpcc-dqa`: BFC's queue assignment with its backpressure off) run to completion.

mod common;

use bfcsim::experiment::parse_experiment;
use bfcsim::outputs::{OutputFile, write_outputs};
use bfcsim::runner::{prepare, simulate};
use common::{TempDir, workspace_root};

#[test]
fn clos128_incast_under_pfc_and_ideal_retransmission() {
    let path = workspace_root().join("experiments/clos128-incast-pfc.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let tmp = TempDir::new("pfc-schemes");
    for scheme in [
        "dcqcn",
        "dcqcn-rdma",
        "hpcc",
        "dctcp-pfc",
        "hpcc-ideal-retx",
        "hpcc-sfq",
        "hpcc-dqa",
    ] {
        let set = [format!("scheme.name={scheme}")];
        let config = parse_experiment(&path, &text, &set).unwrap();
        let prepared = prepare(&config, &workspace_root()).unwrap();
        assert_eq!(prepared.flows.len(), 100, "one 100->1 incast");
        let out = simulate(&config, prepared, |_| {}).unwrap();
        assert!(out.violations.is_empty(), "{scheme}: {:?}", out.violations);
        assert!(
            out.records.iter().all(|r| r.finish.is_some()),
            "{scheme}: every flow finishes"
        );
        let drops = out.counters.dropped_pkts;
        let fc = out.summary.flow_control.clone();
        println!(
            "{scheme}: {drops} drops, {} timeouts, flow control {:?}",
            out.counters.timeouts,
            fc.as_ref().map(|f| (
                &f.kind,
                f.pause_frames,
                f.link_paused_mean,
                f.link_paused_max
            ))
        );
        let dir = tmp.join(scheme);
        let config = bfcsim::experiment::ExperimentConfig {
            output: bfcsim::outputs::OutputConfig {
                files: vec![OutputFile::PfcTxt],
            },
            ..config
        };
        write_outputs(&dir, &config, None, &out).unwrap();
        match scheme {
            "dcqcn" | "dcqcn-rdma" | "hpcc" | "dctcp-pfc" => {
                assert_eq!(drops, 0, "{scheme}: PFC is lossless");
                let fc = fc.expect("PFC reports");
                assert_eq!(fc.kind, "pfc");
                assert!(fc.pause_frames > 0 && fc.link_paused_max > 0.0, "{fc:?}");
                let lines = std::fs::read_to_string(dir.join("pfc.txt")).unwrap();
                assert_eq!(
                    lines.lines().count(),
                    out.pause_records.as_ref().unwrap().len(),
                    "pfc.txt has a line per frame"
                );
                assert!(lines.lines().count() as u64 >= 2 * fc.pause_frames);
            }
            "hpcc-ideal-retx" => {
                assert!(drops > 0, "without PFC the incast overflows the buffer");
                assert!(fc.is_none() && !dir.join("pfc.txt").exists());
            }
            "hpcc-dqa" => {
                let fc = fc.expect("BFC reports");
                assert_eq!((fc.kind.as_str(), fc.pause_frames), ("bfc", 0));
                assert!(fc.assignments > 0, "dynamic queue assignment ran");
            }
            _ => {}
        }
    }
}
