//! The flow-size distributions shipped with bfcsim, embedded from `data/` (byte-for-byte copies of the reference
//! repositories' files; `data/SOURCES.md` gives each one's repository, commit, blob id and format).
//!
//! | name (aliases) | file | notes |
//! |---|---|---|
//! | `google` | `bfc_W3_GoogleAllRPC.txt` | BFC §6 W3 (Google all-RPC); BFC's `min_size` = 100 B rule |
//! | `hadoop` (`facebook-hadoop`) | `bfc_W4_FacebookHadoop.txt` | BFC §6 W4 (Facebook Hadoop); `min_size` = 100 B |
//! | `websearch-bfc` | none: the table hard-coded in BFC's `nsdifinal.cc` | BFC's "DCTCP" web search; `min_size` = 100 B |
//! | `websearch` | `hpcc_WebSearch_distribution.txt` | DCTCP web search, HPCC's file (percent CDF) |
//! | `hpcc-fbhdp` | `hpcc_FbHdp_distribution.txt` | Facebook Hadoop, HPCC's coarse 20-point version |
//! | `hpcc-google-rpc` | `hpcc_GoogleRPC2008.txt` | Google all-RPC, HPCC's copy |
//! | `alistorage` | `hpcc_AliStorage2019.txt` | Alibaba storage 2019 |
//! | `google-rpc-homa` | `homa_Google_AllRPC.txt` | Google all-RPC (Homa W3) |
//! | `google-search` | `homa_Google_SearchRPC.txt` | Google search RPC (Homa W2) |
//! | `homa-hadoop` | `homa_Facebook_HadoopDist_All.txt` | Facebook Hadoop (Homa W4) |
//! | `fb-webserver` | `homa_Facebook_WebServerDist_IntraCluster.txt` | Facebook web server, intra-cluster |
//! | `fb-cachefollower` | `homa_Facebook_CacheFollowerDist_IntraCluster.txt` | Facebook cache follower, intra-cluster |
//! | `memcached` (`fb-keyvalue`) | `homa_FacebookKeyValue_Sampled.txt` | Facebook key-value (Homa W1), tabulated to 100 KB |
//! | `fb-keyvalue-gpd` | `homa_FacebookKeyValueMsgSizeDist.txt` | its head (cdf to 0.47) + Homa's generalized Pareto tail |
//! | `homa-dctcp` | `homa_DCTCP_MsgSizeDist.txt` | DCTCP web search (Homa W5), sizes in packets |
//! | `homa-dctcp-original` | `homa_DCTCP_MsgSizeDist_Original.txt` | DCTCP web search, 11 points, sizes in packets |
//! | `websearch-ns2` | `bcc_CDF_websearch.tcl.txt` | DCTCP web search, ns-2 Empirical format |
//! | `datamining` | `bcc_CDF_datamining.tcl.txt` | VL2 data mining |
//! | `cache` | `bcc_CDF_cache.tcl.txt` | "cache" workload of the BCC scripts |
//! | `aditya` | `bcc_CDF_aditya.tcl.txt` | "aditya" workload of the BCC scripts |
//!
//! The packet-unit files (`homa-dctcp*`) default to [`DEFAULT_BYTES_PER_PACKET`] bytes per packet; HomaSimulation
//! multiplies by its `maxDataBytesPerPkt`, so pass the simulated payload size through [`Builtin::options`].

use bfcsim_core::InputError;

use crate::cdf::{CdfFormat, CdfOptions, GpdTail, Interpolation, SizeCdf, SizeUnit};

/// Bytes per packet assumed for the packet-unit built-ins unless the caller says otherwise.
pub const DEFAULT_BYTES_PER_PACKET: u64 = 1000;

/// One embedded distribution.
#[derive(Debug)]
pub struct Builtin {
    /// Its names; the first is the canonical one.
    pub names: &'static [&'static str],
    /// The file in `data/` it was embedded from (BFC's hard-coded web search names `nsdifinal.cc`).
    pub file: &'static str,
    /// The file's text.
    pub text: &'static str,
    format: CdfFormat,
    packets: bool,
    min_size: Option<u64>,
    tail: Option<GpdTail>,
}

impl Builtin {
    /// The canonical name.
    pub fn name(&self) -> &'static str {
        self.names[0]
    }

    /// How this file is read, drawn with `interpolation`; packet-unit files use [`DEFAULT_BYTES_PER_PACKET`].
    pub fn options(&self, interpolation: Interpolation) -> CdfOptions {
        CdfOptions {
            format: self.format,
            unit: if self.packets {
                SizeUnit::Packets {
                    bytes_per_packet: DEFAULT_BYTES_PER_PACKET,
                }
            } else {
                SizeUnit::Bytes
            },
            min_size: self.min_size,
            interpolation,
            tail: self.tail,
        }
    }

    /// Whether the file gives sizes in packets.
    pub fn in_packets(&self) -> bool {
        self.packets
    }

    /// Parses the embedded file with `options` (start from [`Builtin::options`]). Errors name `builtin:<name>`.
    pub fn load_with(&self, options: &CdfOptions) -> Result<SizeCdf, InputError> {
        SizeCdf::parse(self.text, format!("builtin:{}", self.name()), options)
    }

    /// Parses the embedded file with its default options, drawn with `interpolation`.
    pub fn load(&self, interpolation: Interpolation) -> Result<SizeCdf, InputError> {
        self.load_with(&self.options(interpolation))
    }
}

macro_rules! file {
    ($names:expr, $file:literal, $format:ident $(, $field:ident : $value:expr)*) => {
        Builtin {
            names: $names,
            file: $file,
            text: include_str!(concat!("../data/", $file)),
            format: CdfFormat::$format,
            $($field: $value,)*
            ..PLAIN
        }
    };
}

/// The defaults `file!` starts from: bytes, no `min_size`, no tail.
const PLAIN: Builtin = Builtin {
    names: &[],
    file: "",
    text: "",
    format: CdfFormat::Auto,
    packets: false,
    min_size: None,
    tail: None,
};

/// BFC's hard-coded "DCTCP" web-search table (`nsdifinal.cc`, `enterprise_size_dctcp` / `enterprise_prob_dctcp`).
const BFC_WEBSEARCH: &str = "0 0\n100 0\n10000 0.15\n20000 0.2\n30000 0.3\n50000 0.4\n80000 0.53\n200000 0.6\n\
1000000 0.7\n2000000 0.8\n5000000 0.9\n10000000 0.97\n30000000 1\n";

/// Every built-in distribution, in the order of the module documentation's table.
pub static BUILTINS: &[Builtin] = &[
    file!(&["google"], "bfc_W3_GoogleAllRPC.txt", Bfc, min_size: Some(100)),
    file!(&["hadoop", "facebook-hadoop"], "bfc_W4_FacebookHadoop.txt", Bfc, min_size: Some(100)),
    Builtin {
        names: &["websearch-bfc"],
        file: "nsdifinal.cc",
        text: BFC_WEBSEARCH,
        format: CdfFormat::Bfc,
        packets: false,
        min_size: Some(100),
        tail: None,
    },
    file!(&["websearch"], "hpcc_WebSearch_distribution.txt", Hpcc),
    file!(&["hpcc-fbhdp"], "hpcc_FbHdp_distribution.txt", Hpcc),
    file!(&["hpcc-google-rpc"], "hpcc_GoogleRPC2008.txt", Hpcc),
    file!(&["alistorage"], "hpcc_AliStorage2019.txt", Hpcc),
    file!(&["google-rpc-homa"], "homa_Google_AllRPC.txt", Homa),
    file!(&["google-search"], "homa_Google_SearchRPC.txt", Homa),
    file!(&["homa-hadoop"], "homa_Facebook_HadoopDist_All.txt", Homa),
    file!(
        &["fb-webserver"],
        "homa_Facebook_WebServerDist_IntraCluster.txt",
        Homa
    ),
    file!(
        &["fb-cachefollower"],
        "homa_Facebook_CacheFollowerDist_IntraCluster.txt",
        Homa
    ),
    file!(
        &["memcached", "fb-keyvalue"],
        "homa_FacebookKeyValue_Sampled.txt",
        Homa
    ),
    file!(&["fb-keyvalue-gpd"], "homa_FacebookKeyValueMsgSizeDist.txt", Homa,
        tail: Some(GpdTail::HOMA_FACEBOOK_KEY_VALUE)),
    file!(&["homa-dctcp"], "homa_DCTCP_MsgSizeDist.txt", Homa, packets: true),
    file!(&["homa-dctcp-original"], "homa_DCTCP_MsgSizeDist_Original.txt", Homa, packets: true),
    file!(&["websearch-ns2"], "bcc_CDF_websearch.tcl.txt", Ns2),
    file!(&["datamining"], "bcc_CDF_datamining.tcl.txt", Ns2),
    file!(&["cache"], "bcc_CDF_cache.tcl.txt", Ns2),
    file!(&["aditya"], "bcc_CDF_aditya.tcl.txt", Ns2),
];

/// The built-in distribution called `name` (canonical name or alias).
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.names.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bfcsim_core::rng::{Stream, stream};

    fn rel(a: f64, b: f64) -> f64 {
        (a / b - 1.0).abs()
    }

    #[test]
    fn every_builtin_loads_under_both_interpolations() {
        for b in BUILTINS {
            for i in [Interpolation::Linear, Interpolation::Step] {
                let c = b.load(i).unwrap_or_else(|e| panic!("{}: {e}", b.name()));
                assert!(c.mean() > 0.0, "{}", b.name());
            }
            // Auto-detection agrees with the declared format.
            let auto = CdfOptions {
                format: CdfFormat::Auto,
                ..b.options(Interpolation::Linear)
            };
            assert_eq!(
                b.load_with(&auto).unwrap(),
                b.load(Interpolation::Linear).unwrap(),
                "{}",
                b.name()
            );
        }
        let mut names: Vec<&str> = BUILTINS
            .iter()
            .flat_map(|b| b.names.iter().copied())
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate built-in names");
    }

    #[test]
    fn every_data_file_is_a_builtin() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|f| f.ends_with(".txt"))
            .collect();
        files.sort();
        for f in files {
            let b = BUILTINS
                .iter()
                .find(|b| b.file == f)
                .unwrap_or_else(|| panic!("{f} is not built in"));
            assert_eq!(b.text, std::fs::read_to_string(dir.join(&f)).unwrap());
        }
    }

    #[test]
    fn linear_means_match_sources_md() {
        // SOURCES.md's means were computed by linear interpolation.
        for (name, mean) in [
            ("websearch", 1_711_250.0),
            ("websearch-ns2", 1_711_250.0),
            ("hpcc-fbhdp", 120_421.0),
            ("hpcc-google-rpc", 2_892.0),
            ("alistorage", 40_870.0),
            ("datamining", 12.66e6),
            ("cache", 935e3),
            ("aditya", 200e3),
        ] {
            let m = builtin(name)
                .unwrap()
                .load(Interpolation::Linear)
                .unwrap()
                .mean();
            assert!(rel(m, mean) < 0.01, "{name}: {m} vs {mean}");
        }
    }

    #[test]
    fn homa_means_are_close_to_line_one() {
        // Homa draws with a step CDF, and its stated means are the step means (to 0.2%). Linear interpolation
        // comes within 5% except on the 11-point DCTCP original, whose linear mean is 1,140,980 B.
        for b in BUILTINS.iter().filter(|b| b.format == CdfFormat::Homa) {
            for i in [Interpolation::Step, Interpolation::Linear] {
                let c = b.load(i).unwrap();
                let stated = c.stated_mean().unwrap();
                let tolerance = match (i, b.name()) {
                    (Interpolation::Step, _) => 0.002,
                    (Interpolation::Linear, "homa-dctcp-original") => 0.31,
                    (Interpolation::Linear, _) => 0.05,
                };
                assert!(
                    rel(c.mean(), stated) < tolerance,
                    "{} {i:?}: {} vs {stated}",
                    b.name(),
                    c.mean()
                );
            }
        }
    }

    #[test]
    fn homa_dctcp_is_in_packets() {
        let b = builtin("homa-dctcp").unwrap();
        assert!(b.in_packets());
        let c = b.load(Interpolation::Step).unwrap();
        assert!(rel(c.stated_mean().unwrap(), 1_744_700.0) < 1e-9);
        let mut o = b.options(Interpolation::Step);
        o.unit = SizeUnit::Packets {
            bytes_per_packet: 1442,
        };
        let c = b.load_with(&o).unwrap();
        assert_eq!(c.points().next().unwrap().0, 1442.0);
    }

    #[test]
    fn bfc_files_never_draw_100_bytes_or_less() {
        for name in ["google", "hadoop", "websearch-bfc"] {
            for i in [Interpolation::Linear, Interpolation::Step] {
                let c = builtin(name).unwrap().load(i).unwrap();
                let first = if name == "websearch-bfc" {
                    100.0
                } else {
                    101.0
                };
                assert_eq!(c.points().next(), Some((first, 0.0)), "{name}");
                let mut rng = stream(5, Stream::Workload(0));
                let min = (0..200_000).map(|_| c.sample(&mut rng).0).min().unwrap();
                assert!(min > 100, "{name}: {min}");
            }
        }
        // The BFC files are the Homa files with their head replaced: same points above 101 B.
        let bfc = builtin("hadoop")
            .unwrap()
            .load(Interpolation::Linear)
            .unwrap();
        let homa = builtin("homa-hadoop")
            .unwrap()
            .load(Interpolation::Linear)
            .unwrap();
        let above = |c: &SizeCdf| c.points().filter(|p| p.0 > 101.0).collect::<Vec<_>>();
        assert_eq!(above(&bfc), above(&homa));
    }

    #[test]
    fn facebook_key_value_head_with_tail_matches_the_sampled_table() {
        let gpd = builtin("fb-keyvalue-gpd")
            .unwrap()
            .load(Interpolation::Step)
            .unwrap();
        let sampled = builtin("memcached")
            .unwrap()
            .load(Interpolation::Step)
            .unwrap();
        assert!(rel(gpd.mean(), 185.0) < 0.02, "{}", gpd.mean());
        assert!(
            rel(gpd.mean(), sampled.mean()) < 0.05,
            "{} vs {}",
            gpd.mean(),
            sampled.mean()
        );
    }
}
