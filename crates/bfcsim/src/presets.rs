//! Named schemes. A scheme is a preset of the configuration sections it needs (`[cc]`, `[flow_control]`,
//! `[switch]`, `[nic]`), as the paper that evaluates it configures them; the experiment file's own keys
//! override the preset's, key by key. `bfcsim schemes` prints every preset with what it sets.

/// One named scheme.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Name used in `[scheme] name = ...` and `--scheme`.
    pub name: &'static str,
    /// What it is and where it comes from.
    pub summary: &'static str,
    /// The configuration it sets, as TOML.
    pub config: &'static str,
}

/// Sections whose first key is a tag naming a variant: a file that names another variant replaces the
/// preset's table instead of merging into it.
const TAGGED: &[(&str, &str)] = &[
    ("cc", "name"),
    ("flow_control", "kind"),
    ("topology", "kind"),
];

/// A Homa preset's configuration: `$levels` priority levels (switch classes and queues), `$lb` load balancing,
/// no congestion control, unlimited buffers (BFC App. A.2: "The Homa simulator assumes unbounded buffers"), SRPT
/// at the NIC, and whole-message ACKs with RESEND-driven selective repeat.
macro_rules! homa {
    ($levels:literal, $lb:literal) => {
        concat!(
            "[cc]\nname = \"none\"\n[flow_control]\nkind = \"homa\"\npriorities = ", $levels,
            "\n[switch]\nclasses = ", $levels, "\nqueues_per_port = ", $levels,
            "\nunlimited_buffer = true\nload_balancing = \"", $lb,
            "\"\n[nic]\nscheduler = \"srf\"\nack_every = 0\nrecovery = \"selective\"\nnack = false\n"
        )
    };
}

/// Every named scheme.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "dctcp",
        summary: "DCTCP (Alizadeh et al. 2010) starting at line rate with one BDP (BFC §6.2.1), ECN at 100/400 KB",
        config: "[cc]\nname = \"dctcp\"\n",
    },
    Preset {
        name: "dctcp-ss",
        summary: "DCTCP with TCP slow start from 10 packets (BFC App. A.6)",
        config: "[cc]\nname = \"dctcp\"\nstart = \"slow-start\"\ninitial_window = 10\n",
    },
    Preset {
        name: "dctcp-pfc",
        summary: "DCTCP over PFC (BFC §6.2.1: the same PFC thresholds as HPCC's), ECN at 100/400 KB",
        config: "[cc]\nname = \"dctcp\"\n[flow_control]\nkind = \"pfc\"\n",
    },
    Preset {
        name: "dctcp-rate",
        summary: "rate-based DCTCP over PFC, as HPCC's ns-3 runs DCTCP (rdma-hw.cc CC_MODE 8), ECN at 100/400 KB",
        config: "[cc]\nname = \"dctcp-rate\"\n[flow_control]\nkind = \"pfc\"\n",
    },
    Preset {
        name: "dcqcn",
        summary: "DCQCN (Zhu et al. 2015) over PFC, HPCC ns-3's DCQCN profile, ECN at 100/400 KB (BFC §6.2.1)",
        config: "[cc]\nname = \"dcqcn\"\n[flow_control]\nkind = \"pfc\"\n",
    },
    // BFC §6.2 runs DCQCN on Yibo Zhu's ns3-rdma ([5]), whose mix/config.txt sets these (the switch's ECN
    // thresholds stay BFC §6.2.1's; ns3-rdma's per-CNP cut is approximated by the 4 µs decrease check
    // after CNPs at most every 50 µs, see the dcqcn.rs module doc).
    Preset {
        name: "dcqcn-rdma",
        summary: "DCQCN over PFC with the parameters of ns3-rdma, the DCQCN simulator BFC §6.2 names, ECN at 100/400 KB",
        config: "[cc]\nname = \"dcqcn\"\nrate_increase_interval = \"60us\"\nfast_recovery_times = 5\n\
                 rate_ai = \"40Mbps\"\nbyte_counter = \"300KB\"\nclamp_target_rate = true\n\
                 alpha_resume_interval = \"55us\"\ncnp_interval = \"50us\"\n[flow_control]\nkind = \"pfc\"\n",
    },
    Preset {
        name: "hpcc",
        summary: "HPCC (Li et al. 2019) over PFC: INT, eta 0.95, maxStage 5, 80 B INT per packet (BFC §6.2.1, §6.3)",
        config: "[cc]\nname = \"hpcc\"\n[flow_control]\nkind = \"pfc\"\n",
    },
    Preset {
        name: "hpcc-ideal-retx",
        summary: "BFC's HPCC-PFC: HPCC without PFC; a switch that drops a packet tells its sender at once, which resends \
                  that packet alone (BFC §6.2.1)",
        config: "[cc]\nname = \"hpcc\"\n[switch]\ndrop_notification = true\n[nic]\nrecovery = \"selective\"\n",
    },
    Preset {
        name: "hpcc-sfq",
        summary: "HPCC-PFC with stochastic fair queuing over 32 queues per port (BFC §6.4)",
        config: "[cc]\nname = \"hpcc\"\n[switch]\ndrop_notification = true\nqueues_per_port = 32\n\
                 [nic]\nrecovery = \"selective\"\n",
    },
    Preset {
        name: "hpcc-dqa",
        summary: "HPCC-PFC with BFC's dynamic queue assignment over 32 queues and no backpressure (BFC §6.4)",
        config: "[cc]\nname = \"hpcc\"\n[flow_control]\nkind = \"bfc\"\nbackpressure = false\n\
                 [switch]\ndrop_notification = true\nqueues_per_port = 32\n[nic]\nrecovery = \"selective\"\n",
    },
    // BCC (Bai et al., IEEE/ACM ToN) §V-B: DCTCP at the hosts (slow start from 20 packets), the standard per-port
    // threshold K = 720 KB (0.72 BDP at 100 Gb/s and 80 µs) and shared-buffer ECN/RED on each pool's occupancy,
    // its thresholds derived from the pool (§IV-C: Kmax = B − B_R/α, Kmin = Kmax − C·N·h, Pmax 10%, h 8 µs).
    Preset {
        name: "bcc",
        summary: "BCC (Bai et al., ToN, §IV-B/C): DCTCP from 20 packets in slow start, per-port ECN at 720 KB plus \
                  shared-buffer ECN/RED on each pool (derived Kmin/Kmax, Pmax 10%, h 8 us)",
        config: "[cc]\nname = \"dctcp\"\nstart = \"slow-start\"\ninitial_window = 20\n\
                 [switch.ecn]\nkmin = \"720KB\"\nkmax = \"720KB\"\n[switch.ecn.shared]\nenabled = true\n",
    },
    Preset {
        name: "bcc-cutoff",
        summary: "BCC with cut-off shared-buffer marking (§V-C.1): one pool threshold, the middle of the derived \
                  band (2.2 MB for a 3 MB pool of 8 ports)",
        config: "[cc]\nname = \"dctcp\"\nstart = \"slow-start\"\ninitial_window = 20\n\
                 [switch.ecn]\nkmin = \"720KB\"\nkmax = \"720KB\"\n[switch.ecn.shared]\nenabled = true\n\
                 cutoff = true\n",
    },
    Preset {
        name: "none",
        summary: "no congestion or flow control: every flow at line rate",
        config: "[cc]\nname = \"none\"\n",
    },
    Preset {
        name: "bfc",
        summary: "Backpressure Flow Control (Goyal et al. 2022, §3.3): 32 data queues, paper defaults, no end-to-end CC",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\n[switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "aquarius",
        summary: "Aquarius (Li et al. 2023): contribution-aware pausing of single flows in shared queues and \
                  opportunistic re-assigning to a reserved queue (Alg. 1-2, §3.2-3.3); 8 data queues, no end-to-end CC",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"aquarius\"\n[switch]\nqueues_per_port = 8\n",
    },
    Preset {
        name: "bfc-single",
        summary: "BFC's backpressure with every flow in one queue, like PFC (BFC §6.1 'BFC + single')",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nassignment = \"single\"\n\
                 [switch]\nqueues_per_port = 1\n",
    },
    Preset {
        name: "bfc-stochastic",
        summary: "BFC with flows hashed to fixed queues, as SFQ (BFC App. A.10)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nassignment = \"stochastic\"\n\
                 [switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-cc",
        summary: "BFC plus the simple delay-based window of App. A.1 (RTT target 2.5 × base RTT)",
        config: "[cc]\nname = \"rtt-target\"\n[flow_control]\nkind = \"bfc\"\n[switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-incastlabel",
        summary: "BFC with labelled incast flows sharing one queue per egress (BFC App. A.7)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nincast_label = true\n\
                 [switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-nic-unaware",
        summary: "BFC in the switches only: NICs ignore pauses and cap in-flight data at 1 BDP (BFC App. A.8)",
        config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[flow_control]\nkind = \"bfc\"\nnic_obeys_pause = false\n\
                 [switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-sampling",
        summary: "BFC recirculating half the packets for its bookkeeping (BFC App. A.8)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nsampling = 0.5\n\
                 [switch]\nqueues_per_port = 32\n",
    },
    Preset {
        name: "bfc-artifact",
        summary: "BFC as the authors' public ns-3 code runs it (docs/FIDELITY.md)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\nthreshold = \"artifact\"\n\
                 sticky = \"6us\"\nflow_table_per_queue = 200\nframe_size = 156\n\
                 [switch]\nqueues_per_port = 31\nscheduler = \"round-robin\"\nunlimited_buffer = true\n\
                 [nic]\nheader = 20\nack_size = 30\nack_every = 256\n",
    },
    Preset {
        name: "bfc-srf",
        summary: "BFC with shortest-remaining-first scheduling at switches and NICs by the remaining size in each packet (BFC App. A.2)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"bfc\"\n\
                 [switch]\nqueues_per_port = 32\nscheduler = \"srf\"\n[nic]\nscheduler = \"srf\"\n",
    },
    Preset {
        name: "ideal-fq",
        summary: "ideal fair queuing: a queue per flow at every switch, unlimited buffers, 1-BDP NIC cap (BFC §6.2.1)",
        config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[flow_control]\nkind = \"bfc\"\nbackpressure = false\n\
                 exact_flow_table = true\nsticky = \"0ns\"\n\
                 [switch]\nqueues_per_port = 1024\nunlimited_buffer = true\n",
    },
    Preset {
        name: "ideal-srf",
        summary: "ideal shortest remaining first: ideal-fq with SRF at switches and NICs (BFC App. A.2 'IdealSRF')",
        config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[flow_control]\nkind = \"bfc\"\nbackpressure = false\n\
                 exact_flow_table = true\nsticky = \"0ns\"\n\
                 [switch]\nqueues_per_port = 1024\nunlimited_buffer = true\nscheduler = \"srf\"\n\
                 [nic]\nscheduler = \"srf\"\n",
    },
    Preset {
        name: "expresspass",
        summary: "ExpressPass (Cho et al. 2017): receiver-paced credits rate-limited at every port, one data packet per \
                  credit; alpha 0.5, w_init 1/16, 16-credit queues, 12 MB shared buffer (BFC §6.2.1)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"expresspass\"\n\
                 [switch]\nclasses = 2\nqueues_per_port = 2\n[nic]\nack_every = 0\n",
    },
    Preset {
        name: "expresspass-75mb",
        summary: "ExpressPass on switches with a dedicated 75 MB buffer per port, as BFC §6.2.1 ran it (no drops)",
        config: "[cc]\nname = \"none\"\n[flow_control]\nkind = \"expresspass\"\n\
                 [switch]\nclasses = 2\nqueues_per_port = 2\nports_per_pool = 1\npool_size = \"75MB\"\n\
                 alpha = 1000000.0\n[nic]\nack_every = 0\n",
    },
    Preset {
        name: "homa",
        summary: "Homa (Montazeri et al. 2018): unscheduled RTTbytes at levels cut from the workload, receiver grants (SRPT, \
                  overcommitment = scheduled levels), SRPT at the sender, RESEND; 32 levels, packet spraying, unlimited \
                  buffers (BFC App. A.2)",
        config: homa!(32, "spray"),
    },
    Preset {
        name: "homa-ecmp",
        summary: "homa with flow-level ECMP instead of packet spraying (BFC App. A.2's Homa ECMP)",
        config: homa!(32, "ecmp"),
    },
    Preset {
        name: "homa-8",
        summary: "homa with the 8 priority levels of the Homa paper",
        config: homa!(8, "spray"),
    },
    Preset {
        name: "fifo",
        summary: "one FIFO queue per port, unlimited buffers, 1-BDP NIC cap: ideal-fq's FIFO counterpart (BFC §2.3, Fig. 4)",
        config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[switch]\nqueues_per_port = 1\nunlimited_buffer = true\n",
    },
];

/// The text of `bfcsim schemes`: every named scheme with what it sets, then every congestion controller and
/// flow-control mechanism with its parameters and defaults (from the code's own defaults, so it cannot drift).
pub fn describe() -> String {
    use std::fmt::Write;
    let mut out = String::from(
        "Named schemes ([scheme] name = ...; the file's own keys override what they set):\n",
    );
    for p in PRESETS {
        let _ = writeln!(out, "  {:<16} {}", p.name, p.summary);
        let sets: Vec<String> = p
            .table()
            .iter()
            .flat_map(|(section, t)| {
                t.as_table()
                    .into_iter()
                    .flatten()
                    .map(move |(k, v)| format!("{section}.{k}={v}"))
            })
            .collect();
        let _ = writeln!(out, "  {:<16}   sets {}", "", sets.join(" "));
    }
    out.push_str("\nCongestion control ([cc] name = ...):\n");
    for s in bfcsim_schemes::catalog::catalog() {
        let _ = writeln!(out, "  {:<16} {}", s.name, s.summary);
        for (k, v) in &s.params {
            let _ = writeln!(out, "      {k:<22} = {v}");
        }
    }
    out.push_str("\nPer-hop flow control ([flow_control] kind = ...):\n");
    use bfcsim_sim::FlowControl;
    for (summary, fc) in [
        (
            "Backpressure Flow Control (BFC §3.3)",
            FlowControl::Bfc(Default::default()),
        ),
        (
            "Priority Flow Control (IEEE 802.1Qbb), HPCC ns-3's thresholds",
            FlowControl::Pfc(Default::default()),
        ),
        (
            "ExpressPass credits (Cho et al. 2017), the authors' ns-2 defaults",
            FlowControl::ExpressPass(Default::default()),
        ),
        (
            "Homa's priorities and grants (Montazeri et al. 2018)",
            FlowControl::Homa(Default::default()),
        ),
        (
            "Aquarius (Li et al. 2023, Alg. 1-2, §3.2-3.3)",
            FlowControl::Aquarius(Default::default()),
        ),
    ] {
        let _ = writeln!(out, "  {:<16} {summary}", fc.name());
        for (k, v) in bfcsim_schemes::catalog::config_params(&fc)
            .iter()
            .filter(|(k, _)| k != "kind")
        {
            let _ = writeln!(out, "      {k:<22} = {v}");
        }
    }
    let _ = writeln!(out, "  {:<16} none: queues only drop", "none");
    out
}

/// The preset named `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Every preset name, for error messages.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

impl Preset {
    /// The preset's configuration as a table.
    pub fn table(&self) -> toml::Table {
        toml::from_str(self.config).expect("presets are valid TOML")
    }

    /// The tag the preset gives tagged section `section` (e.g. `flow_control` → `bfc`).
    pub fn tag(&self, section: &str) -> Option<String> {
        let (_, key) = TAGGED.iter().find(|(s, _)| *s == section)?;
        self.table()
            .get(section)?
            .get(key)?
            .as_str()
            .map(str::to_owned)
    }
}

/// Lays `over` on top of `base`, key by key; a tagged section that names another variant replaces the base's.
pub fn merge(base: &mut toml::Table, over: toml::Table) {
    merge_at(base, over, true);
}

fn merge_at(base: &mut toml::Table, over: toml::Table, top: bool) {
    for (key, value) in over {
        let replace = top
            && TAGGED.iter().any(|&(section, tag)| {
                section == key && {
                    let theirs = value.get(tag).and_then(|v| v.as_str());
                    let ours = base
                        .get(section)
                        .and_then(|t| t.get(tag))
                        .and_then(|v| v.as_str());
                    theirs.is_some() && theirs != ours
                }
            });
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) if !replace => {
                merge_at(b, o, false)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_have_unique_names() {
        let mut names = names();
        for p in PRESETS {
            p.table();
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PRESETS.len());
    }

    #[test]
    fn file_keys_override_preset_keys_and_other_variants_replace() {
        let mut base = find("bfc").unwrap().table();
        let over: toml::Table =
            toml::from_str("[switch]\nbuffer = \"6MB\"\n[flow_control]\nsampling = 0.5\n").unwrap();
        merge(&mut base, over);
        assert_eq!(base["switch"]["queues_per_port"].as_integer(), Some(32));
        assert_eq!(base["switch"]["buffer"].as_str(), Some("6MB"));
        assert_eq!(base["flow_control"]["kind"].as_str(), Some("bfc"));
        assert_eq!(base["flow_control"]["sampling"].as_float(), Some(0.5));
        let over: toml::Table = toml::from_str("[cc]\nname = \"dctcp\"\ng = 0.1\n").unwrap();
        let mut base = find("bfc-nic-unaware").unwrap().table();
        merge(&mut base, over);
        assert!(
            base["cc"].get("window").is_none(),
            "dctcp has no window key"
        );
        assert_eq!(
            find("ideal-fq").unwrap().tag("flow_control").as_deref(),
            Some("bfc")
        );
    }
}
