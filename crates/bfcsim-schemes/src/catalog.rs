//! The list of schemes with their parameters and defaults, printed by `bfcsim schemes`. Parameters and their
//! defaults come from serializing each scheme's default configuration, so the list cannot drift from the code.

use serde::Serialize;

use crate::cc::dcqcn::DcqcnConfig;
use crate::cc::dctcp::DctcpConfig;
use crate::cc::dctcp_rate::DctcpRateConfig;
use crate::cc::hpcc::HpccConfig;
use crate::cc::rtt_target::RttTargetConfig;
use crate::cc::{CcConfig, FixedConfig};

/// One scheme: its name, what it is, and its parameters with default values.
#[derive(Clone, Debug, Serialize)]
pub struct SchemeInfo {
    /// Name used in `[scheme] name = ...` and `--scheme`.
    pub name: &'static str,
    /// One line on what it is and where it comes from.
    pub summary: &'static str,
    /// `(parameter, default)` pairs, as TOML values.
    pub params: Vec<(String, String)>,
}

/// A configuration's parameters with their values as TOML, in declaration order; the optional ones left unset
/// (which TOML writes as nothing) follow as `unset`, so that every key a file may give is listed.
pub fn config_params<T: Serialize>(cfg: &T) -> Vec<(String, String)> {
    let value = toml::Value::try_from(cfg).expect("configs serialize");
    let mut params: Vec<(String, String)> = value
        .as_table()
        .expect("configs are tables")
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    let json = serde_json::to_value(cfg).expect("configs serialize");
    for (k, v) in json.as_object().into_iter().flatten() {
        if v.is_null() {
            params.push((k.clone(), "unset".into()));
        }
    }
    params
}

fn params(cfg: &CcConfig) -> Vec<(String, String)> {
    config_params(cfg)
        .into_iter()
        .filter(|(k, _)| k.as_str() != "name")
        .collect()
}

/// Every scheme bfcsim implements.
pub fn catalog() -> Vec<SchemeInfo> {
    vec![
        SchemeInfo {
            name: "dctcp",
            summary: "DCTCP (Alizadeh et al. 2010): ECN-fraction window control; line-rate start (BFC §6.2.1)",
            params: params(&CcConfig::Dctcp(DctcpConfig::default())),
        },
        SchemeInfo {
            name: "dctcp-rate",
            summary: "rate-based DCTCP as HPCC's ns-3 runs it for RDMA (rdma-hw.cc CC_MODE 8); defaults from its 100 Gb/s config",
            params: params(&CcConfig::DctcpRate(DctcpRateConfig::default())),
        },
        SchemeInfo {
            name: "dcqcn",
            summary: "DCQCN (Zhu et al. 2015): ECN/CNP-driven rate control, modelled on HPCC's ns-3 rdma-hw.cc; defaults from its 100 Gb/s config",
            params: params(&CcConfig::Dcqcn(DcqcnConfig::default())),
        },
        SchemeInfo {
            name: "hpcc",
            summary: "HPCC (Li et al. 2019): INT-driven window and rate, Algorithm 1 with ns-3's fast react; η = 0.95, maxStage = 5 (BFC §6.2.1)",
            params: params(&CcConfig::Hpcc(HpccConfig::default())),
        },
        SchemeInfo {
            name: "rtt-target",
            summary: "BFC App. A.1 Algorithm 1 (Goyal et al. 2022): delay-based window keeping the RTT near 2.5 × base RTT",
            params: params(&CcConfig::RttTarget(RttTargetConfig::default())),
        },
        SchemeInfo {
            name: "none",
            summary: "no end-to-end congestion control: send at line rate, optionally capped at a fixed window",
            params: params(&CcConfig::None(FixedConfig::default())),
        },
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_dctcp_parameters() {
        let c = super::catalog();
        let dctcp = c.iter().find(|s| s.name == "dctcp").unwrap();
        let names: Vec<&str> = dctcp.params.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "g",
                "initial_alpha",
                "start",
                "initial_window",
                "max_window"
            ]
        );
        assert_eq!(dctcp.params[4].1, "unset");
    }

    #[test]
    fn lists_every_scheme_the_config_accepts() {
        use bfcsim_core::tagged::Tagged;
        let c = super::catalog();
        let mut listed: Vec<&str> = c.iter().map(|s| s.name).collect();
        listed.sort_unstable();
        let mut accepted = super::CcConfig::VARIANTS.to_vec();
        accepted.sort_unstable();
        assert_eq!(listed, accepted);
        let hpcc = c.iter().find(|s| s.name == "hpcc").unwrap();
        assert!(hpcc.params.iter().any(|(k, v)| k == "eta" && v == "0.95"));
    }
}
