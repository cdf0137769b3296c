//! Named schemes. A scheme is a preset of the configuration sections it needs (`[cc]`, `[flow_control]`,
//! `[switch]`, `[nic]`), as the paper that evaluates it configures them; the experiment file's own keys
//! override the preset's, key by key. `bfcsim schemes` prints every preset with what it sets.

pub use bfcsim_schemes::fabric::Preset;
use bfcsim_schemes::fabric::TAGGED;

/// The named schemes of congestion control over what the network runs: the presets no scheme module owns.
const CC_PRESETS: &[Preset] = &[
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
        name: "fifo",
        summary: "one FIFO queue per port, unlimited buffers, 1-BDP NIC cap: ideal-fq's FIFO counterpart (BFC §2.3, Fig. 4)",
        config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[switch]\nqueues_per_port = 1\nunlimited_buffer = true\n",
    },
];

/// Every named scheme: the presets above, then each scheme's own ([`bfcsim_sim::FlowControl::catalog`]).
pub fn presets() -> &'static [Preset] {
    static ALL: std::sync::OnceLock<Vec<Preset>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let own = bfcsim_sim::FlowControl::catalog()
            .into_iter()
            .flat_map(|e| e.presets);
        CC_PRESETS.iter().chain(own).copied().collect()
    })
}

/// The text of `bfcsim schemes`: every named scheme with what it sets, then every congestion controller and
/// flow-control mechanism with its parameters and defaults (from the code's own defaults, so it cannot drift).
pub fn describe() -> String {
    use std::fmt::Write;
    let mut out = String::from(
        "Named schemes ([scheme] name = ...; the file's own keys override what they set):\n",
    );
    for p in presets() {
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
    for entry in bfcsim_sim::FlowControl::catalog() {
        let _ = writeln!(out, "  {:<16} {}", entry.kind, entry.summary);
        for (k, v) in bfcsim_schemes::catalog::config_params(&entry.defaults)
            .iter()
            .filter(|(k, _)| k != "kind")
            .chain(&entry.optional)
        {
            let _ = writeln!(out, "      {k:<22} = {v}");
        }
    }
    out
}

/// The preset named `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    presets().iter().find(|p| p.name == name)
}

/// Every preset name, for error messages.
pub fn names() -> Vec<&'static str> {
    presets().iter().map(|p| p.name).collect()
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
        for p in presets() {
            p.table();
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), presets().len());
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
